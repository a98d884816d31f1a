#pragma once
// Finds added tokens in text: leftmost match first, the longest one where several start at the
// same place, never overlapping (Aho-Corasick's LeftmostLongest, which Hugging Face uses).
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace specd {

class TokenMatcher {
 public:
  struct Match {
    std::size_t begin;
    std::size_t end;
    int32_t value;
  };

  void add(const std::string& pattern, int32_t value);
  std::vector<Match> find_all(std::string_view text) const;
  bool empty() const { return nodes_.size() <= 1; }

 private:
  struct Node {
    std::vector<std::pair<unsigned char, int32_t>> children;  // byte -> node index
    int32_t value = -1;                                       // >= 0 where a pattern ends
  };
  int32_t child(int32_t node, unsigned char byte) const;

  std::vector<Node> nodes_{Node{}};
  bool first_bytes_[256] = {};
};

}  // namespace specd
