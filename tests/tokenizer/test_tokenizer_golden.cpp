// Conformance with Hugging Face's tokenizers library: ids and decodes recorded once by
// tests/reference/encode.js on tests/fixtures/tokenizer_corpus.txt, compared record by record.
#include <catch2/catch.hpp>

#include <chrono>

#include "test_tokenizer_support.h"

using namespace specd;
using namespace specd::test;

namespace {

void check_golden(const std::string& tokenizer_name, const std::string& golden_name) {
  if (!reference_tokenizers_installed()) {
    WARN("tests/reference/node_modules is missing (run scripts/setup.sh): skipping "
         << tokenizer_name);
    return;
  }
  const Tokenizer& tokenizer = load_tokenizer_once(reference_tokenizer_path(tokenizer_name));
  const auto records =
      read_golden(std::string(SPECD_SOURCE_DIR) + "/tests/fixtures/golden/" + golden_name);
  REQUIRE(records.size() >= 2000);

  const auto start = std::chrono::steady_clock::now();
  const ConformanceReport report = check_conformance(tokenizer, records);
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  INFO(report.records << " records in " << seconds << " s");
  INFO("first id mismatch: " << report.first_id_mismatch);
  INFO("first decode mismatch: " << report.first_decode_mismatch);
  CHECK(report.id_mismatches == 0);
  CHECK(report.decode_mismatches == 0);
}

}  // namespace

TEST_CASE("Qwen3 byte-level BPE matches Hugging Face on the corpus", "[tokenizer]") {
  check_golden("qwen3", "qwen3.jsonl");
}

TEST_CASE("Mistral SentencePiece-style BPE matches Hugging Face on the corpus", "[tokenizer]") {
  check_golden("llama2", "mistral.jsonl");
}
