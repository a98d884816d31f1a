# README's calibrate -> verify -> deploy workflow on the demo pair, as a user runs it
# (scripts/workflow.sh), into a scratch artifact under the build directory: every step must
# succeed (a refused artifact, a failed verify or a crashed policy fails the test).
# Under the sanitizers (the portable build: scalar kernels, ASan, -O1; one calibration prompt
# there costs about a minute of CPU) every step runs, on fewer prompts.
set(SPECD_WORKFLOW_CALIBRATION_PROMPTS 40)
set(SPECD_WORKFLOW_BENCH_PROMPTS 2)
set(SPECD_WORKFLOW_TIMEOUT 600)
if(SPECD_SANITIZE)
  set(SPECD_WORKFLOW_CALIBRATION_PROMPTS 2)
  set(SPECD_WORKFLOW_BENCH_PROMPTS 1)
  set(SPECD_WORKFLOW_TIMEOUT 1500)
endif()
add_test(NAME workflow.demo-pair
  COMMAND ${CMAKE_COMMAND} -E env SPECD=$<TARGET_FILE:specd> ARTIFACT=${CMAKE_BINARY_DIR}/workflow-artifact
    CALIBRATION_PROMPTS=${SPECD_WORKFLOW_CALIBRATION_PROMPTS} BENCH_PROMPTS=${SPECD_WORKFLOW_BENCH_PROMPTS}
    ${PROJECT_SOURCE_DIR}/scripts/workflow.sh)
set_tests_properties(workflow.demo-pair PROPERTIES TIMEOUT ${SPECD_WORKFLOW_TIMEOUT})
