#pragma once
// How likely a drafted tree node is to be accepted, learned from verification, for choosing the
// tree's nodes. The draft's own probability is a poor estimate of that: a small distilled draft
// has a flat distribution whose argmax is nevertheless right most of the time (on the large demo
// pair the draft's top-1 probability is often 0.05, yet greedy verification accepts it ~80% of
// the time), so EAGLE-2's cumulative log-probability spends the nodes on siblings at every level
// and the tree accepts fewer tokens than a chain of as many nodes.
//
// Instead: a_r(b), the chance that the rank-r child of a reached node (r = 0 for the draft's
// most probable token) is accepted given that no better-ranked sibling was, per bucket b of the
// draft's top-1 probability at that node (how sure the draft is there). A child at rank r is then
// accepted with probability prod_{s<r} (1 - a_s(b)) * a_r(b) once its parent is, and a node's
// value (the chance its whole path is accepted) is its parent's times that. Greedy verification
// tries top-k siblings in rank order; sampled siblings (T > 0) are exchangeable draws tried in a
// random order, so there r is how many were tried before. Counts decay, so the rates follow the text; the drafter starts them afresh per request,
// so a request's trees depend on its own text alone.
#include <array>
#include <cstdint>

namespace specd {

class TreeAcceptance {
 public:
  static constexpr int kBuckets = 6;  // edges of the top-1 probability: 0.05, 0.1, 0.2, 0.4, 0.7
  static constexpr int kRanks = 4;    // ranks from kRanks - 1 on share the last rate

  static int bucket(double top_probability);
  double rate(int bucket, int rank) const;  // a_r(b)
  double best_first_rate() const;            // max over buckets of a_0(b): the surest child's
  // Chance that a child at `rank` is accepted given its parent was: prod_{s<rank} (1 - a_s) * a_rank.
  double child_share(int bucket, int rank) const;
  // A child at `rank` of a reached node in `bucket` was tried (no better-ranked sibling was
  // accepted): it was accepted or not.
  void observe(int bucket, int rank, bool accepted);
  // One verification step has passed: older evidence counts for less.
  void decay();

 private:
  static int cell(int bucket, int rank);
  // Decayed counts per (bucket, rank); the rates add a prior worth two observations.
  std::array<double, kBuckets * kRanks> accepted_{}, tried_{};
};

}  // namespace specd
