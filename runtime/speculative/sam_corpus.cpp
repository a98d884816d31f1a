#include "speculative/sam_corpus.h"

namespace specd {

StaticSam::StaticSam(const std::vector<std::vector<int32_t>>& documents, int32_t separator) {
  size_t total = 0;
  for (const auto& document : documents) total += document.size() + 1;
  automaton_.reserve(total);
  for (const auto& document : documents) {
    for (int32_t token : document) automaton_.extend(token);
    automaton_.extend(separator);
  }
}

}  // namespace specd
