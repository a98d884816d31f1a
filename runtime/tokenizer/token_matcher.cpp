#include "tokenizer/token_matcher.h"

namespace specd {

int32_t TokenMatcher::child(int32_t node, unsigned char byte) const {
  for (const auto& [edge, target] : nodes_[node].children) {
    if (edge == byte) return target;
  }
  return -1;
}

void TokenMatcher::add(const std::string& pattern, int32_t value) {
  if (pattern.empty()) return;
  first_bytes_[static_cast<unsigned char>(pattern[0])] = true;
  int32_t node = 0;
  for (unsigned char byte : pattern) {
    int32_t next = child(node, byte);
    if (next < 0) {
      next = static_cast<int32_t>(nodes_.size());
      nodes_[node].children.emplace_back(byte, next);
      nodes_.emplace_back();
    }
    node = next;
  }
  if (nodes_[node].value < 0) nodes_[node].value = value;
}

std::vector<TokenMatcher::Match> TokenMatcher::find_all(std::string_view text) const {
  std::vector<Match> matches;
  std::size_t pos = 0;
  while (pos < text.size()) {
    if (!first_bytes_[static_cast<unsigned char>(text[pos])]) {
      ++pos;
      continue;
    }
    Match longest{pos, pos, -1};
    int32_t node = 0;
    for (std::size_t at = pos; at < text.size(); ++at) {
      node = child(node, static_cast<unsigned char>(text[at]));
      if (node < 0) break;
      if (nodes_[node].value >= 0) longest = {pos, at + 1, nodes_[node].value};
    }
    if (longest.value >= 0) {
      matches.push_back(longest);
      pos = longest.end;
    } else {
      ++pos;
    }
  }
  return matches;
}

}  // namespace specd
