#pragma once
// SAM-Decoding's static corpus (Hu et al., arXiv:2411.10666): token documents the target
// itself generated offline (`specd calibrate sam-corpus`: greedy answers to the calibration
// prompts, stored in the pair's artifact), indexed once by a suffix automaton that decoding never
// updates. Per request only a match cursor moves, fed the prompt and every committed token.
#include <cstdint>
#include <vector>

#include "speculative/suffix_automaton.h"

namespace specd {

// The automaton over all documents, each followed by `separator` (the EOS id, as in the
// reference).
class StaticSam {
 public:
  StaticSam(const std::vector<std::vector<int32_t>>& documents, int32_t separator);
  const SuffixAutomaton& automaton() const { return automaton_; }
  int64_t tokens() const { return automaton_.size(); }

 private:
  SuffixAutomaton automaton_;
};

}  // namespace specd
