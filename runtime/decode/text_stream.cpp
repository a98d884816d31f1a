#include "decode/text_stream.h"

#include "tokenizer/tokenizer.h"

namespace specd {
namespace {

const std::string kReplacement = "\xEF\xBF\xBD";  // U+FFFD: what decode gives for partial bytes

bool ends_with(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

}  // namespace

TextStream::TextStream(const Tokenizer& tokenizer, std::vector<int32_t> prompt)
    : tokenizer_(tokenizer), ids_(std::move(prompt)), prompt_text_(tokenizer.decode(ids_, true)) {}

std::string TextStream::text_after_prompt() const {
  std::string all = tokenizer_.decode(ids_, true);
  // A tokenizer may rewrite the prompt's tail once more tokens follow; fall back to the common prefix.
  size_t common = 0;
  while (common < prompt_text_.size() && common < all.size() && all[common] == prompt_text_[common]) ++common;
  return all.substr(common);
}

std::string TextStream::push(int32_t token) {
  ids_.push_back(token);
  std::string text = text_after_prompt();
  if (ends_with(text, kReplacement) || text.size() <= printed_) return "";
  std::string piece = text.substr(printed_);
  printed_ = text.size();
  return piece;
}

std::string TextStream::finish() {
  std::string text = text_after_prompt();
  if (text.size() <= printed_) return "";
  std::string piece = text.substr(printed_);
  printed_ = text.size();
  return piece;
}

}  // namespace specd
