# A portable build (SPECD_NATIVE=OFF; scripts/sanitize.sh builds one) must run on any x86-64:
# specd's own machine code may hold no instruction past baseline x86-64 (tests/sanitizers/portable_isa.sh).
if(NOT SPECD_NATIVE)
  add_test(NAME portable.baseline-isa
    COMMAND ${PROJECT_SOURCE_DIR}/tests/sanitizers/portable_isa.sh $<TARGET_FILE:specd>)
endif()
