#include "speculative/tree_acceptance.h"

#include <algorithm>

namespace specd {
namespace {

constexpr double kEdges[TreeAcceptance::kBuckets - 1] = {0.05, 0.1, 0.2, 0.4, 0.7};
// Before evidence: the draft budget's prior for its first token (0.6), a sibling rarely (0.15);
// worth two observations, so a few verified steps outweigh it.
constexpr double kPriorFirst = 0.6, kPriorSibling = 0.15, kPriorWeight = 2.0;
// Evidence kept per verified step: an effective window of ~50 steps, each of which observes a
// few (bucket, rank) cells.
constexpr double kDecay = 0.98;

}  // namespace

int TreeAcceptance::bucket(double top_probability) {
  int b = 0;
  while (b < kBuckets - 1 && !(top_probability < kEdges[b])) ++b;
  return b;
}

int TreeAcceptance::cell(int bucket, int rank) {
  return std::clamp(bucket, 0, kBuckets - 1) * kRanks + std::clamp(rank, 0, kRanks - 1);
}

double TreeAcceptance::rate(int bucket, int rank) const {
  const int c = cell(bucket, rank);
  const double prior = rank == 0 ? kPriorFirst : kPriorSibling;
  return (accepted_[c] + kPriorWeight * prior) / (tried_[c] + kPriorWeight);
}

double TreeAcceptance::best_first_rate() const {
  double best = 0;
  for (int b = 0; b < kBuckets; ++b) best = std::max(best, rate(b, 0));
  return best;
}

double TreeAcceptance::child_share(int bucket, int rank) const {
  double share = rate(bucket, rank);
  for (int s = 0; s < rank; ++s) share *= 1.0 - rate(bucket, s);
  return share;
}

void TreeAcceptance::observe(int bucket, int rank, bool accepted) {
  const int c = cell(bucket, rank);
  tried_[c] += 1;
  if (accepted) accepted_[c] += 1;
}

void TreeAcceptance::decay() {
  for (double& v : accepted_) v *= kDecay;
  for (double& v : tried_) v *= kDecay;
}

}  // namespace specd
