# specd serve driven by the official OpenAI client from npm (tests/serve/client/check_server.js,
# installed by scripts/setup.sh): completions, chat, streaming, per-request speculation, errors,
# /metrics, a cancelled stream, a full queue, a bounded load and SIGTERM. The answers are checked
# against `specd generate` on the demo pair; the lossy methods deploy the workflow test's CSD
# calibration of that pair, and the queue and drain checks use the slower demo-large-target.
# Not in the sanitizer build (as the workflow it needs; the parser and scheduler tests run there).
if(SPECD_SANITIZE)
  return()
endif()
find_program(SPECD_NODE_EXECUTABLE NAMES node nodejs)
add_test(NAME serve.openai-client
  COMMAND ${SPECD_NODE_EXECUTABLE} ${CMAKE_CURRENT_SOURCE_DIR}/serve/client/check_server.js
    --specd $<TARGET_FILE:specd> --model ${PROJECT_SOURCE_DIR}/data/models/demo-target
    --artifact ${CMAKE_BINARY_DIR}/workflow-artifact --slow-model ${PROJECT_SOURCE_DIR}/data/models/demo-large-target)
set_tests_properties(serve.openai-client PROPERTIES FIXTURES_REQUIRED specd_workflow_artifact TIMEOUT 300 LABELS serve)
