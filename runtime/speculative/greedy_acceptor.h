#pragma once
// Exact greedy verification (temperature 0): accept the longest root-to-node path on which every
// drafted token equals the target's argmax at its parent; the next token is the argmax at the last
// accepted node. The committed text is therefore exactly what autoregressive greedy decoding emits.
#include "speculative/acceptor.h"

namespace specd {

class GreedyAcceptor : public Acceptor {
 public:
  std::string name() const override { return "greedy"; }
  // Ignores the sampler (greedy needs no randomness). Ties between equally long matching paths
  // (possible only with duplicate sibling tokens) go to the path ending at the lowest node index.
  // Verdicts: the path is Accepted; every other child of a path node is Rejected; the rest are
  // NotReached. Throws std::logic_error for a malformed tree or a token outside the vocabulary.
  AcceptResult accept(const DraftTree& tree, const float* logits, int64_t vocab, Sampler& sampler) override;
  AcceptResult accept(const DraftTree& tree, const float* logits, int64_t vocab) const;
};

// Shared by the acceptors: tree.check() plus every token inside [0, vocab).
void check_tree_for_acceptance(const DraftTree& tree, int64_t vocab);

}  // namespace specd
