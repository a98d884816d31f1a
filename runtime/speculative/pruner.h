#pragma once
// Pruning between drafting and verification (design.md: ARC-Decode's entropy-guided pruning):
// drops nodes of a drafted tree before the target sees them, so verification pays for fewer rows.
// The result must stay prefix-closed (DraftTree::keep_only) and keep the root.
#include <string>

#include "speculative/draft_tree.h"

namespace specd {

class Pruner {
 public:
  virtual ~Pruner() = default;
  virtual std::string name() const = 0;
  virtual DraftTree prune(const DraftTree& tree) = 0;
};

}  // namespace specd
