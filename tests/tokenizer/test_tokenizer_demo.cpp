// The demo tokenizer (data/tokenizer/tokenizer.json) against Hugging Face's tokenizers library
// (ids and decodes recorded by scripts/corpus/make_demo_golden.sh on eval-split text), and the
// workload and calibration prompts measured with it against the demo models' 512-token context.
#include <catch2/catch.hpp>

#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

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

namespace {

std::vector<nlohmann::json> read_jsonl(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  REQUIRE(in);
  std::vector<nlohmann::json> items;
  std::string line;
  while (std::getline(in, line)) {
    if (!line.empty()) items.push_back(nlohmann::json::parse(line));
  }
  return items;
}

// Prompt tokens as the workload builder counts them: one BOS, then every turn's text.
std::size_t prompt_tokens(const Tokenizer& tokenizer, const nlohmann::json& item) {
  if (!item.contains("turns")) return tokenizer.encode(item.at("prompt").get<std::string>(), true).size();
  std::size_t total = 1;
  for (const auto& turn : item.at("turns")) total += tokenizer.encode(turn.get<std::string>(), false).size();
  return total;
}

}  // namespace

TEST_CASE("workload and calibration prompts fit the demo context", "[tokenizer][demo]") {
  const Tokenizer& tokenizer = demo_tokenizer();
  const std::string root = std::string(SPECD_SOURCE_DIR) + "/data/";
  const std::vector<std::string> files = {
      "workloads/multi_turn.jsonl", "workloads/translation.jsonl", "workloads/summarization.jsonl",
      "workloads/qa.jsonl",         "workloads/math.jsonl",        "workloads/rag.jsonl",
      "workloads/code_editing.jsonl", "calibration/prompts.jsonl"};
  for (const auto& file : files) {
    const auto items = read_jsonl(root + file);
    INFO(file);
    CHECK(items.size() >= (file == "calibration/prompts.jsonl" ? 100u : 20u));
    for (const auto& item : items) {
      INFO(item.at("id").get<std::string>());
      REQUIRE(item.contains("category"));
      REQUIRE(item.contains("source"));
      REQUIRE(item.contains("license"));
      const std::size_t turns = item.contains("turns") ? item.at("turns").size() : 1;
      const std::size_t tokens = prompt_tokens(tokenizer, item);
      CHECK(tokens == item.at("prompt_tokens").get<std::size_t>());
      CHECK(tokens + turns * item.at("max_new_tokens").get<std::size_t>() <= 512);
    }
  }
}
