# One step of the live tokenizer cross-check (see tests/tokenizer_live.cmake), run as
#   cmake -DSTEP=prepare|compare ... -P live_check.cmake
# Every step: SKIP_MARKER (the text ctest's SKIP_REGULAR_EXPRESSION matches).
# prepare: NODE, REFERENCE_DIR, CORPUS, OUT_DIR -> variant tokenizer.json files and
#          OUT_DIR/live_corpus.txt (the committed corpus plus a seeded fuzz corpus).
# compare: NODE, REFERENCE_DIR, TOKENIZER, CORPUS, RECORDS, TEST_BINARY, optional NO_SPECIAL ->
#          Hugging Face's ids for every record, then specd's Catch2 test compares them all.
# Without node or node_modules (scripts/setup.sh installs both) there is nothing to compare with:
# the step prints the skip marker that tests/tokenizer_live.cmake gives ctest, which then reports
# the test as Skipped, not Passed.
cmake_minimum_required(VERSION 3.18)

function(run)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE status)
  if(NOT status EQUAL 0)
    list(JOIN ARGN " " command)
    message(FATAL_ERROR "live tokenizer check: '${command}' failed (${status})")
  endif()
endfunction()

if(NOT SKIP_MARKER)
  message(FATAL_ERROR "live tokenizer check: SKIP_MARKER must be set")
endif()
if(NOT NODE OR NOT EXISTS "${NODE}")
  message(STATUS "${SKIP_MARKER}: live tokenizer check: node not found; run scripts/setup.sh")
  return()
endif()
if(NOT EXISTS "${REFERENCE_DIR}/node_modules/tokenizers/package.json")
  message(STATUS "${SKIP_MARKER}: live tokenizer check: ${REFERENCE_DIR}/node_modules is missing; "
                 "run scripts/setup.sh")
  return()
endif()

if(STEP STREQUAL "prepare")
  file(MAKE_DIRECTORY "${OUT_DIR}")
  run("${NODE}" "${REFERENCE_DIR}/make_variants.js" "${OUT_DIR}")
  run("${NODE}" "${REFERENCE_DIR}/make_fuzz_corpus.js" "${OUT_DIR}/fuzz_corpus.txt")
  file(READ "${CORPUS}" real_text)
  file(READ "${OUT_DIR}/fuzz_corpus.txt" fuzz_text)
  file(WRITE "${OUT_DIR}/live_corpus.txt" "${real_text}${fuzz_text}")
elseif(STEP STREQUAL "compare")
  set(flags "")
  if(NO_SPECIAL)
    set(flags "--no-special")
  endif()
  run("${NODE}" "${REFERENCE_DIR}/encode.js" "${TOKENIZER}" "${CORPUS}" "${RECORDS}" ${flags})
  run("${CMAKE_COMMAND}" -E env "SPECD_TOKENIZER_LIVE_JSON=${TOKENIZER}"
      "SPECD_TOKENIZER_LIVE_RECORDS=${RECORDS}" "${TEST_BINARY}" "[tokenizer-live]")
else()
  message(FATAL_ERROR "live tokenizer check: STEP must be prepare or compare")
endif()
