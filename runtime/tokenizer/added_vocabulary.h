#pragma once
// tokenizer.json "added_tokens": tokens matched in the text before anything else runs, so the
// model never splits or merges across them (chat markers, <s>, </s>, ...).
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "tokenizer/normalizer.h"
#include "tokenizer/regex.h"
#include "tokenizer/token_matcher.h"

namespace specd {

struct AddedToken {
  int32_t id = 0;
  std::string content;
  bool special = false;
  bool lstrip = false;       // the match swallows the whitespace before it
  bool rstrip = false;       // ... and after it
  bool single_word = false;  // matches only when not inside a word
  bool normalized = false;   // matched in the normalized text rather than the raw input
};

class AddedVocabulary {
 public:
  // `normalizer` (may be null) rewrites the content of tokens with normalized = true.
  AddedVocabulary(std::vector<AddedToken> tokens, const Normalizer* normalizer);

  struct Segment {
    std::size_t begin;
    std::size_t end;
    int32_t token;  // an added token's id, or -1 for ordinary text
  };
  // Cuts `text` at the tokens matched raw (normalized_tokens = false) or those matched after
  // normalization (true). The segments cover the whole text; empty text gives one empty segment.
  std::vector<Segment> split(std::string_view text, bool normalized_tokens) const;

  std::optional<int32_t> token_to_id(std::string_view content) const;
  const AddedToken* find(int32_t id) const;
  bool is_special_content(std::string_view content) const;
  std::optional<int32_t> max_id() const;

 private:
  bool fits_single_word(std::string_view text, std::size_t begin, std::size_t end) const;

  std::vector<AddedToken> tokens_;
  std::unordered_map<int32_t, std::size_t> index_of_id_;
  std::unordered_map<std::string, int32_t> id_of_content_;
  TokenMatcher raw_matcher_;         // values are indices into tokens_
  TokenMatcher normalized_matcher_;
  // Rust's regex crate (which HF uses here) spelled out: its \w and \s in Unicode properties.
  Regex word_at_end_{R"([\p{Alphabetic}\p{M}\p{Nd}\p{Pc}\x{200C}\x{200D}]\z)", "added tokens"};
  Regex word_at_start_{R"(\A[\p{Alphabetic}\p{M}\p{Nd}\p{Pc}\x{200C}\x{200D}])", "added tokens"};
  Regex spaces_at_end_{R"(\p{White_Space}*\z)", "added tokens"};
  Regex spaces_at_start_{R"(\A\p{White_Space}*)", "added tokens"};
};

}  // namespace specd
