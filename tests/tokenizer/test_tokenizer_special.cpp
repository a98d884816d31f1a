// Added and special tokens on the real Qwen3, Mistral and Llama-3 files: matched before any
// other step, never merged with their neighbours, added or skipped as HF does.
#include <catch2/catch.hpp>

#include <algorithm>
#include <stdexcept>

#include "test_tokenizer_support.h"
#include "util/error.h"

using namespace specd;
using namespace specd::test;
using Ids = std::vector<int32_t>;

namespace {

const Tokenizer* reference(const std::string& name) {
  if (!reference_tokenizers_installed()) {
    WARN("tests/reference/node_modules is missing (run scripts/setup.sh): skipping " << name);
    return nullptr;
  }
  return &load_tokenizer_once(reference_tokenizer_path(name));
}

}  // namespace

TEST_CASE("Qwen3 chat markers are single special tokens", "[tokenizer]") {
  const Tokenizer* qwen = reference("qwen3");
  if (!qwen) return;
  const Ids ids = qwen->encode("<|im_start|>user hi<|im_end|>");
  CHECK(ids == Ids{151644, 872, 15588, 151645});
  CHECK(qwen->is_special(151644));
  CHECK(qwen->decode(ids) == "<|im_start|>user hi<|im_end|>");
  CHECK(qwen->decode(ids, true) == "user hi");
  // Back to back, and an unfinished marker that must stay ordinary text.
  CHECK(qwen->encode("<|endoftext|><|endoftext|>") == Ids{151643, 151643});
  const Ids partial = qwen->encode("<|im_start");
  CHECK(std::find(partial.begin(), partial.end(), 151644) == partial.end());
  CHECK(qwen->decode(partial) == "<|im_start");
}

TEST_CASE("Qwen3 non-special added tokens survive skip_special_tokens", "[tokenizer]") {
  const Tokenizer* qwen = reference("qwen3");
  if (!qwen) return;
  const auto think = qwen->token_to_id("<think>");
  REQUIRE(think);
  CHECK(!qwen->is_special(*think));
  const Ids ids = qwen->encode("<think>x</think><|im_end|>");
  CHECK(ids.front() == *think);
  CHECK(qwen->decode(ids, true) == "<think>x</think>");
}

TEST_CASE("Qwen3 vocabulary lookups", "[tokenizer]") {
  const Tokenizer* qwen = reference("qwen3");
  if (!qwen) return;
  CHECK(qwen->vocab_size() == 151669);
  CHECK(qwen->token_to_id("<|im_end|>") == 151645);
  CHECK(qwen->token_to_id("Hello") == 9707);
  CHECK(!qwen->token_to_id("no such token, surely"));
  CHECK(qwen->id_to_token(151645) == "<|im_end|>");
  CHECK(qwen->id_to_token(9707) == "Hello");
  CHECK_THROWS_AS(qwen->id_to_token(-1), std::out_of_range);
  CHECK_THROWS_AS(qwen->id_to_token(qwen->vocab_size()), std::out_of_range);
  CHECK(!qwen->is_special(9707));
  // Ids past the vocabulary are skipped when decoding, as HF does.
  CHECK(qwen->decode({9707, 200000, 1879}) == "Hello world");
}

TEST_CASE("Mistral adds <s> through its template and splits on </s>", "[tokenizer]") {
  const Tokenizer* mistral = reference("llama2");
  if (!mistral) return;
  CHECK(mistral->encode("Hello") == Ids{1, 22557});
  CHECK(mistral->encode("Hello", false) == Ids{22557});
  CHECK(mistral->encode("") == Ids{1});
  CHECK(mistral->encode("Hello <s> world</s>") == Ids{1, 22557, 28705, 1, 28705, 1526, 2});
  CHECK(mistral->decode({1, 22557}) == "<s> Hello");
  CHECK(mistral->decode({1, 22557}, true) == "Hello");
  CHECK(mistral->vocab_size() == 32000);
  CHECK(mistral->is_special(2));
}

TEST_CASE("Mistral byte fallback spells characters outside the vocab in bytes", "[tokenizer]") {
  const Tokenizer* mistral = reference("llama2");
  if (!mistral) return;
  const Ids ids = mistral->encode("\xF0\x9F\x91\xA9", false);  // U+1F469 WOMAN
  CHECK(ids == Ids{28705, 243, 162, 148, 172});
  CHECK(mistral->decode(ids) == "\xF0\x9F\x91\xA9");
  // A cut-off byte sequence decodes to one U+FFFD per byte.
  CHECK(mistral->decode({243, 162}) == "\xEF\xBF\xBD\xEF\xBF\xBD");
}

TEST_CASE("Llama-3 keeps whole words that are in its vocab (ignore_merges)", "[tokenizer]") {
  const Tokenizer* llama = reference("llama3");
  if (!llama) return;
  CHECK(llama->encode("Hello world") == Ids{9906, 1917});
  CHECK(llama->encode("<|begin_of_text|>Hi<|eot_id|>") ==
        Ids{128000, *llama->token_to_id("Hi"), *llama->token_to_id("<|eot_id|>")});
  CHECK(llama->vocab_size() == 128256);
}

TEST_CASE("Byte-level decoding restores whole characters and marks cut ones", "[tokenizer]") {
  const Tokenizer* qwen = reference("qwen3");
  if (!qwen) return;
  const std::string text = "caf\xC3\xA9 \xE6\x97\xA5\xE6\x9C\xAC \xF0\x9F\x98\x80";
  CHECK(qwen->decode(qwen->encode(text)) == text);
  // "\xC3\x83" is the byte-level symbol of the lone byte 0xC3, the first half of "\xC3\xA9":
  // Rust's from_utf8_lossy turns it into one U+FFFD.
  const auto lone_byte = qwen->token_to_id("\xC3\x83");
  REQUIRE(lone_byte);
  CHECK(qwen->decode({*lone_byte}) == "\xEF\xBF\xBD");
  CHECK(qwen->decode({*lone_byte, *lone_byte, 9707}) == "\xEF\xBF\xBD\xEF\xBF\xBDHello");
}

TEST_CASE("encode rejects invalid UTF-8 with InputError", "[tokenizer]") {
  const Tokenizer* qwen = reference("qwen3");
  if (!qwen) return;
  CHECK_THROWS_AS(qwen->encode("abc\xFF"), InputError);
  CHECK_THROWS_WITH(qwen->encode("ab\xC3"), Catch::Contains("invalid UTF-8 at byte 2"));
}
