#pragma once
// ARC-Decode's entropy-guided pre-verification pruning (the ARC-Decode paper §3.2). Each drafted node c
// scores q~(c) = exp(l(c)) * exp(-lambda * d(c) * H_m), with l(c) the drafter's cumulative
// log-probability (DraftTree::scores) and H_m the root's normalized entropy (PruneContext). Then:
//  1. per depth d, theta_d is the smallest score whose nodes {q~ >= theta_d} hold at least
//     1 - epsilon of the depth's total q~ mass (Eq. 3; ties at theta_d are all kept);
//  2. leaf safety: a leaf of the drafted tree (a node the drafter did not expand) must also reach
//     tau_d, the threshold that covers 1 - 2 epsilon of the depth's mass (so tau_d >= theta_d:
//     a leaf carries only its own acceptance, an inner node also its descendants', so leaves get
//     the stricter bar; the paper leaves tau_d open);
//  3. prefix closure, top-down as Eq. 4: a node is kept only when its parent is;
//  4. reinsertion: a node kept by 1-3 whose children were all dropped gets its best child back
//     (one level: the reinserted child does not pull in its own child);
//  5. a depth that had scored nodes but lost them all gets its best node back with its
//     ancestors, so pruning never empties a depth (the oracle; Eq. 4 alone could, when a
//     depth's mass hangs below a dropped node);
//  6. nodes without a score (NaN: retrieval drafts) are never pruned, nor are sampled children
//     (their parent has child_q: selecting i.i.d. draws by value would make the multi-candidate
//     rejection test lossy); their ancestors are kept. The top-k children of sd-tree's drafter
//     are deterministic, so pruning them keeps sampling-mode verification lossless.
// epsilon = 0 keeps every node. The root is always kept. With epsilon = 0.05 per depth the
// paper's budget sum_d epsilon_d <= delta does not hold for trees deeper than one level (§4.1
// uses these values).
#include <cstdint>
#include <vector>

#include "speculative/pruner.h"

namespace specd {

struct ArcPruneOptions {
  double epsilon = 0.05;  // per-depth mass left uncovered, in [0, 1)
  double lambda = 1.0;    // entropy-depth weight, >= 0
};

// InputError naming the field for epsilon outside [0, 1) or lambda < 0 (or not finite).
void validate(const ArcPruneOptions& options);

// Which nodes the rules above keep (keep[0] is always 1); exposed for tests and traces.
std::vector<char> arc_keep_set(const DraftTree& tree, double root_entropy_normalized, const ArcPruneOptions& options);

class ArcPruner : public Pruner {
 public:
  explicit ArcPruner(ArcPruneOptions options);
  std::string name() const override { return "arc"; }
  DraftTree prune(const DraftTree& tree, const PruneContext& context) override;

 private:
  ArcPruneOptions options_;
};

}  // namespace specd
