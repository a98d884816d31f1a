# README's calibrate -> verify -> deploy workflow on the demo pair, as a user runs it
# (scripts/workflow.sh), into a scratch artifact under the build directory: every step must
# succeed (a refused artifact, a failed verify or a crashed policy fails the test).
add_test(NAME workflow.demo-pair
  COMMAND ${CMAKE_COMMAND} -E env SPECD=$<TARGET_FILE:specd> ARTIFACT=${CMAKE_BINARY_DIR}/workflow-artifact
    CALIBRATION_PROMPTS=40 BENCH_PROMPTS=2 ${PROJECT_SOURCE_DIR}/scripts/workflow.sh)
set_tests_properties(workflow.demo-pair PROPERTIES TIMEOUT 600)
