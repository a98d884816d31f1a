#pragma once
// ByteLevel pre-tokenizer: optional leading space, optional GPT-2 regex split, then every byte
// turned into its byte-level symbol.
#include "tokenizer/pre_tokenizer.h"
#include "tokenizer/regex.h"

namespace specd {

class ByteLevelPreTokenizer : public PreTokenizer {
 public:
  ByteLevelPreTokenizer(bool add_prefix_space, bool use_regex);
  void split(const TextPiece& piece, std::vector<TextPiece>& out) const override;

 private:
  bool add_prefix_space_;
  bool use_regex_;
};

}  // namespace specd
