# The calibrate -> verify -> deploy workflow (docs/workflow.md) on the demo pair, as a user runs it
# (scripts/workflow.sh), into a scratch artifact under the build directory: every step must
# succeed (a refused artifact, a failed verify or a crashed policy fails the test).
# Not in the sanitizer build (scripts/sanitize.sh): its portable kernels are scalar and built at
# -O1 with ASan, where the workflow's decodes cost tens of times what they cost here; the CLI
# tests run the same commands there on tiny models.
if(SPECD_SANITIZE)
  return()
endif()
set(SPECD_WORKFLOW_CALIBRATION_PROMPTS 40)
set(SPECD_WORKFLOW_BENCH_PROMPTS 2)
set(SPECD_WORKFLOW_ARC_PROMPTS 10)
set(SPECD_WORKFLOW_AUDIT_PROMPTS 1)
set(SPECD_WORKFLOW_SWEEP_PROMPTS 5)
set(SPECD_WORKFLOW_TIMEOUT 600)
# The small demo pair: the large one's calibrations would take most of CI's time.
add_test(NAME workflow.demo-pair
  COMMAND ${CMAKE_COMMAND} -E env SPECD=$<TARGET_FILE:specd> ARTIFACT=${CMAKE_BINARY_DIR}/workflow-artifact
    TARGET=${PROJECT_SOURCE_DIR}/data/models/demo-target DRAFT=${PROJECT_SOURCE_DIR}/data/models/demo-draft
    REPORT=${CMAKE_BINARY_DIR}/workflow-report
    CALIBRATION_PROMPTS=${SPECD_WORKFLOW_CALIBRATION_PROMPTS} BENCH_PROMPTS=${SPECD_WORKFLOW_BENCH_PROMPTS}
    ARC_PROMPTS=${SPECD_WORKFLOW_ARC_PROMPTS} AUDIT_PROMPTS=${SPECD_WORKFLOW_AUDIT_PROMPTS}
    SWEEP_PROMPTS=${SPECD_WORKFLOW_SWEEP_PROMPTS} SWEEP_REPEATS=1
    ${PROJECT_SOURCE_DIR}/scripts/workflow.sh)
# Its artifact is the calibrated pair specd serve's test deploys (tests/serve.cmake).
set_tests_properties(workflow.demo-pair PROPERTIES TIMEOUT ${SPECD_WORKFLOW_TIMEOUT} FIXTURES_SETUP specd_workflow_artifact)
# The same run again with RESUME=1 skips every finished step (the ten calibrations, sweeps and
# benches) and redoes the checks, deploys and report from what they left.
add_test(NAME workflow.resume
  COMMAND bash -c "set -o pipefail; \"$@\" 2>&1 | tee /dev/stderr | grep -c 'finished before' | grep -qx 10" workflow
    ${CMAKE_COMMAND} -E env RESUME=1 SPECD=$<TARGET_FILE:specd> ARTIFACT=${CMAKE_BINARY_DIR}/workflow-artifact
    TARGET=${PROJECT_SOURCE_DIR}/data/models/demo-target DRAFT=${PROJECT_SOURCE_DIR}/data/models/demo-draft
    REPORT=${CMAKE_BINARY_DIR}/workflow-report
    ${PROJECT_SOURCE_DIR}/scripts/workflow.sh)
set_tests_properties(workflow.resume PROPERTIES TIMEOUT 120 FIXTURES_REQUIRED specd_workflow_artifact)
