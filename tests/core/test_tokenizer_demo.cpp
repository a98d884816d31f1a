// The demo tokenizer (data/tokenizer/tokenizer.json) against Hugging Face's tokenizers library:
// ids and decodes recorded by scripts/corpus/make_demo_golden.sh on eval-split text.
#include <catch2/catch.hpp>

#include <string>

#include "test_tokenizer_support.h"

using namespace specd;
using namespace specd::test;

namespace {

const Tokenizer& demo_tokenizer() {
  return load_tokenizer_once(std::string(SPECD_SOURCE_DIR) + "/data/tokenizer/tokenizer.json");
}

}  // namespace

TEST_CASE("demo tokenizer matches Hugging Face on the eval split", "[tokenizer][demo]") {
  const auto records =
      read_golden(std::string(SPECD_SOURCE_DIR) + "/tests/fixtures/golden/demo_eval.jsonl");
  REQUIRE(records.size() >= 3000);
  const ConformanceReport report = check_conformance(demo_tokenizer(), records);
  INFO(report.records << " records");
  INFO("first id mismatch: " << report.first_id_mismatch);
  INFO("first decode mismatch: " << report.first_decode_mismatch);
  CHECK(report.id_mismatches == 0);
  CHECK(report.decode_mismatches == 0);
}

TEST_CASE("demo tokenizer special tokens", "[tokenizer][demo]") {
  const Tokenizer& tokenizer = demo_tokenizer();
  CHECK(tokenizer.vocab_size() == 4096);
  CHECK(tokenizer.token_to_id("<|endoftext|>") == 0);
  CHECK(tokenizer.token_to_id("<|pad|>") == 1);
  CHECK(tokenizer.is_special(0));
  CHECK(tokenizer.is_special(1));
  // add_special_tokens prepends <|endoftext|> as BOS; the text itself decodes back exactly.
  const std::string text = "def f(x):\n\treturn x + 42  \r\n";
  const auto with_bos = tokenizer.encode(text, true);
  const auto without = tokenizer.encode(text, false);
  REQUIRE(with_bos.size() == without.size() + 1);
  CHECK(with_bos.front() == 0);
  CHECK(tokenizer.decode(with_bos, true) == text);
  CHECK(tokenizer.decode(without, false) == text);
}
