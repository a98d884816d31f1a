# Calibration as a Slurm job array on a real single-node cluster started and stopped by the test
# (tests/slurm/array_calibration.sh, scripts/slurm/). Skipped where Slurm cannot start. Not in the
# sanitizer build: its scalar kernels make the demo pair's calibrations minutes long, and the
# shards' code paths are the CLI tests' there.
if(SPECD_SANITIZE)
  return()
endif()
add_test(NAME slurm.array-calibration
  COMMAND ${PROJECT_SOURCE_DIR}/tests/slurm/array_calibration.sh $<TARGET_FILE:specd> ${CMAKE_BINARY_DIR}/slurm-array-calibration)
set_tests_properties(slurm.array-calibration PROPERTIES TIMEOUT 900 SKIP_REGULAR_EXPRESSION ${SPECD_SKIP_REGEX} LABELS slurm)
