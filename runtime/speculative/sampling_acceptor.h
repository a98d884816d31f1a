#pragma once
// Lossless acceptance under sampling (temperature > 0): the committed tokens are distributed
// exactly as autoregressive sampling from the target would produce them, whatever the drafts.
//
// At each node on the accepted path the target distribution p is shaped_distribution() of the
// node's logits row with the sampler's parameters (temperature, top-k, top-p, as AR sampling).
// The node's children are tried one at a time until one is accepted:
//  * deterministic children (retrieval, top-k expansion, ...) first, in index order, by the
//    point-mass rule: accept token x with probability p[x], otherwise set p[x] = 0 and
//    renormalize (research notes 5.2);
//  * then sampled children, in uniformly random order, by SpecInfer's multi-candidate rule:
//    accept x with probability min(1, p[x] / q[x]), otherwise p = norm(max(0, p - q)), the
//    residual carried over to the next sibling (5.1).
// Each try splits the current p into "this child" and a remainder so that the mixture is p, so
// any order and any mix of the two kinds is lossless, provided sampled children really are
// i.i.d. draws from q. A random visiting order makes that hold even when the drafter stores them
// sorted or grouped (a uniformly shuffled i.i.d. multiset is again an i.i.d. sequence); visiting
// in index order would silently depend on the drafter keeping its sampling order.
//
// A child of node u counts as sampled when tree.child_q[u] is non-empty (the full q row, one
// entry per vocabulary token) and the child's source is DraftSource::Model; every other child is
// deterministic. Duplicate siblings need no special case: once x is rejected its mass is zero in
// the remainder, so a later copy is rejected too.
//
// After the last accepted node the next token is drawn from the current p: the remainder when
// children were rejected there, the full target distribution at a leaf. All randomness comes from
// sampler.uniform(), so a seed reproduces a run. At temperature 0 this is exactly GreedyAcceptor.
#include "speculative/acceptor.h"

namespace specd {

// The single-child rules above, for acceptors that start from the lossless test (CSD):
// each returns true when x is accepted and otherwise leaves p as the remainder to draw from.
// drafter_row: node's child_q row as doubles, normalised (std::logic_error when malformed).
std::vector<double> drafter_row(const DraftTree& tree, int32_t node, int64_t vocab);
bool try_deterministic(std::vector<double>& p, int32_t x, Sampler& sampler);
bool try_sampled(std::vector<double>& p, const std::vector<double>& q, int32_t x, Sampler& sampler);
// One node's children tried by the rules above (deterministic ones first, then sampled ones in
// random order): the accepted child, or -1 with p left as the remainder to draw the next token
// from. Rejected children are marked in `verdicts`.
int32_t try_children(const DraftTree& tree, int32_t node, const std::vector<int32_t>& children, std::vector<double>& p,
                     int64_t vocab, Sampler& sampler, std::vector<NodeVerdict>& verdicts);

class SamplingAcceptor : public Acceptor {
 public:
  std::string name() const override { return "sampling"; }
  // Throws std::logic_error for a malformed tree, a token outside the vocabulary, a q row whose
  // size is not `vocab`, or a sampled child whose token has q = 0 (it cannot have been sampled).
  AcceptResult accept(const DraftTree& tree, const float* logits, int64_t vocab, Sampler& sampler) override;
};

}  // namespace specd
