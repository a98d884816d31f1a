#include "tokenizer/byte_level_pre_tokenizer.h"

#include "tokenizer/byte_level_alphabet.h"
#include "tokenizer/regex_dialect.h"
#include "tokenizer/split_behavior.h"

namespace specd {
namespace {

const Regex& gpt2_pattern() {
  static const Regex pattern(
      oniguruma_to_pcre2(
          R"('s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+)"),
      "GPT-2 byte-level pattern");
  return pattern;
}

}  // namespace

ByteLevelPreTokenizer::ByteLevelPreTokenizer(bool add_prefix_space, bool use_regex)
    : add_prefix_space_(add_prefix_space), use_regex_(use_regex) {}

void ByteLevelPreTokenizer::split(const TextPiece& piece, std::vector<TextPiece>& out) const {
  TextPiece spaced = piece;
  if (add_prefix_space_ && (spaced.text.empty() || spaced.text[0] != ' ')) {
    spaced.text.insert(0, " ");
  }
  const std::size_t first = out.size();
  if (use_regex_) {
    split_at_matches(spaced, gpt2_pattern().find_all(spaced.text), SplitBehavior::Isolated, false,
                     out);
  } else if (!spaced.text.empty()) {
    out.push_back(std::move(spaced));
  }
  for (std::size_t i = first; i < out.size(); ++i) out[i].text = to_byte_level(out[i].text);
}

}  // namespace specd
