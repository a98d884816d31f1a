#pragma once
// tokenizer.json "model" of type BPE: vocabulary, merges, and the per-word tokenization with
// unknown-token and byte-fallback handling.
#include <array>
#include <cstdint>
#include <memory>
#include <mutex>
#include <nlohmann/json_fwd.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "tokenizer/bpe_merges.h"

namespace specd {

class BpeModel {
 public:
  static std::unique_ptr<BpeModel> from_json(const nlohmann::json& model, const std::string& where);

  // Appends the ids of one pre-tokenized word.
  void tokenize(std::string_view word, std::vector<int32_t>& out) const;

  std::optional<int32_t> token_to_id(std::string_view token) const;
  // nullptr for ids outside the vocabulary.
  const std::string* id_to_token(int32_t id) const;
  int32_t max_id() const { return max_id_; }

 private:
  BpeModel() = default;
  std::vector<int32_t> merge_word(std::string_view word) const;
  // The ids of one character's bytes as <0xXX> tokens; false if one of them is missing.
  bool append_byte_fallback(std::string_view character, std::vector<int32_t>& ids) const;

  std::unordered_map<std::string, int32_t> vocab_;
  std::unordered_map<int32_t, std::string> tokens_;  // by id
  int32_t max_id_ = -1;
  std::string where_;  // the tokenizer.json path, for errors found while encoding
  MergeTable merges_;
  std::optional<std::string> unk_token_;
  std::string continuing_subword_prefix_;
  std::string end_of_word_suffix_;
  bool fuse_unk_ = false;
  bool byte_fallback_ = false;
  bool ignore_merges_ = false;
  std::array<int32_t, 256> byte_tokens_{};  // id of <0xXX>, -1 where absent

  // Words repeat a lot in real text; their merges are remembered.
  mutable std::mutex cache_mutex_;
  mutable std::unordered_map<std::string, std::vector<int32_t>> cache_;
};

}  // namespace specd
