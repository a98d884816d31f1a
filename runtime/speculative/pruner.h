#pragma once
// Pruning between drafting and verification (design.md: ARC-Decode's entropy-guided pruning):
// drops nodes of a drafted tree before the target sees them, so verification pays for fewer rows.
// The result must stay prefix-closed (DraftTree::keep_only) and keep the root.
#include <string>

#include "speculative/draft_tree.h"

namespace specd {

// What the engine knows about the step before verification.
struct PruneContext {
  // H_m: the normalized entropy (entropy / log V, in [0, 1]) of the target distribution the root
  // was drawn from: the softmax at temperature 1 of the logits row that produced the root (the
  // previous step's row at its last accepted node; the prefill's last row at the first step).
  // Temperature 1 so that it is defined (not 0) in greedy decoding too, as the traces' root_entropy.
  double root_entropy_normalized = 0;
};

class Pruner {
 public:
  virtual ~Pruner() = default;
  virtual std::string name() const = 0;
  virtual DraftTree prune(const DraftTree& tree, const PruneContext& context) = 0;
};

}  // namespace specd
