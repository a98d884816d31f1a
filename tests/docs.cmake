# The documentation: README.md stays a front page (at most 250 lines), and every relative link in
# README.md, docs/ and the folders' READMEs points at a file (and heading) of the repository, none
# outside it, and nothing committed points outside the repository (scripts/check_docs.sh). Needs
# nothing built.
add_test(NAME docs.links COMMAND ${PROJECT_SOURCE_DIR}/scripts/check_docs.sh)
