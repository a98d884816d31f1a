#include "serve/output_text.h"

#include <algorithm>

namespace specd::serve {

OutputText::OutputText(const Tokenizer& tokenizer, std::vector<int32_t> prompt, std::vector<std::string> stop)
    : stream_(tokenizer, std::move(prompt)), stop_(std::move(stop)) {}

std::string OutputText::push(int32_t token) {
  if (stopped_) return "";
  pending_ += stream_.push(token);
  return release(false);
}

std::string OutputText::finish() {
  if (stopped_) return "";
  pending_ += stream_.finish();
  return release(true);
}

// Releases the pending text up to the first stop string (and ends there), or up to where a stop
// string could still begin; at the end nothing more can come, so all of it.
std::string OutputText::release(bool at_end) {
  size_t cut = std::string::npos;
  for (const std::string& s : stop_) cut = std::min(cut, pending_.find(s));
  size_t keep = 0;  // bytes held back: the longest suffix that is a proper prefix of a stop string
  if (cut != std::string::npos) {
    stopped_ = true;
  } else if (!at_end) {
    for (const std::string& s : stop_)
      for (size_t n = std::min(s.size() - 1, pending_.size()); n > keep; --n)
        if (pending_.compare(pending_.size() - n, n, s, 0, n) == 0) {
          keep = n;
          break;
        }
  }
  const size_t end = cut != std::string::npos ? cut : pending_.size() - keep;
  std::string out = pending_.substr(0, end);
  pending_.erase(0, cut != std::string::npos ? pending_.size() : end);
  released_ += out;
  return out;
}

}  // namespace specd::serve
