# One chat-template cross-check (see tests/chat_template.cmake), run as
#   cmake -DNODE=... -DREFERENCE_DIR=... -DCONFIG=... -DCONVERSATIONS=... -DOUT=... -DTEST_BINARY=... -DSKIP_MARKER=... -P chat_check.cmake
# Hugging Face's Jinja engine renders every conversation with CONFIG's chat_template into OUT;
# then specd's Catch2 test renders them with its own template and compares. Without node or
# node_modules (scripts/setup.sh installs both) it prints the skip marker: Skipped, not Passed.
cmake_minimum_required(VERSION 3.18)

if(NOT NODE OR NOT EXISTS "${NODE}")
  message(STATUS "${SKIP_MARKER}: chat template check: node not found; run scripts/setup.sh")
  return()
endif()
if(NOT EXISTS "${REFERENCE_DIR}/node_modules/@huggingface/jinja/package.json")
  message(STATUS "${SKIP_MARKER}: chat template check: ${REFERENCE_DIR}/node_modules is missing; run scripts/setup.sh")
  return()
endif()
execute_process(COMMAND "${NODE}" "${REFERENCE_DIR}/render_chat.js" "${CONFIG}" "${CONVERSATIONS}"
                OUTPUT_FILE "${OUT}" RESULT_VARIABLE status)
if(NOT status EQUAL 0)
  message(FATAL_ERROR "chat template check: render_chat.js failed (${status})")
endif()
execute_process(COMMAND ${CMAKE_COMMAND} -E env SPECD_CHAT_CONFIG=${CONFIG} SPECD_CHAT_CONVERSATIONS=${CONVERSATIONS}
                        SPECD_CHAT_RENDERS=${OUT} "${TEST_BINARY}" "[chat-live]"
                RESULT_VARIABLE status)
if(NOT status EQUAL 0)
  message(FATAL_ERROR "chat template check: specd's rendering differs from Hugging Face's (${CONFIG})")
endif()
