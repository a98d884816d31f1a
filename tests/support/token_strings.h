#pragma once
// Token strings for the retrieval tests (suffix automaton, PLD, SAM): random ones, and ones that
// mostly copy earlier spans, as code edits and quotes do.
#include <cstdint>
#include <random>
#include <vector>

namespace specd::test {

using Tokens = std::vector<int32_t>;

inline Tokens random_tokens(std::mt19937& rng, int length, int alphabet) {
  std::uniform_int_distribution<int32_t> token(0, alphabet - 1);
  Tokens text(length);
  for (auto& t : text) t = token(rng);
  return text;
}

// Text that mostly copies earlier spans (with the odd changed token).
inline Tokens copy_heavy_tokens(std::mt19937& rng, int length, int alphabet) {
  std::uniform_int_distribution<int32_t> token(0, alphabet - 1);
  Tokens text;
  while (static_cast<int>(text.size()) < length) {
    if (text.size() < 4 || rng() % 4 == 0) {
      text.push_back(token(rng));
      continue;
    }
    const size_t span = 1 + rng() % 30;
    const size_t from = rng() % text.size();
    for (size_t i = 0; i < span && static_cast<int>(text.size()) < length; ++i)
      text.push_back(rng() % 20 == 0 ? token(rng) : text[from + i]);  // from + i < size: copies may overlap
  }
  return text;
}

}  // namespace specd::test
