#pragma once
// ReSpec's source-aware verification (the ReSpec paper §3.4). A tree of draft-model nodes is verified
// by the lossless SamplingAcceptor. A tree of retrieved nodes at temperature 0 is verified by
// relaxed verification with look-ahead tolerance, chain by chain (each root-to-leaf path of the
// trie is one candidate's continuation):
//   l0 = the greedy-match prefix; current = last = l0; up to phi tries, each at `current`:
//   the token is taken when it is in the target's top-beta and log p(top1) - log p(token) <= tau
//   (p: softmax of the raw logits, T = 1, so the gap is the logit difference); a failure ends the
//   procedure; a pass followed by xi >= m greedy matches sets last = current + 1 + xi (the end of
//   those matches) and current = last; a pass followed by fewer advances current by one.
//   The chain's accepted length is `last`.
// The chain with the longest accepted length wins (ties: the first leaf in index order, i.e. the
// best-ranked candidate); the next token is the target's argmax at its last accepted node.
// LOSSY: such steps report lossless = false (a relaxed rule was applied), relaxed tokens are
// NodeVerdict::Relaxed with their log-prob gap as score, and the detail holds the tries.
// Relaxed verification is defined for greedy decoding only; with phi = 0 or relaxed off, retrieved
// nodes go to SamplingAcceptor at any temperature.
#include <cstdint>
#include <functional>
#include <vector>

#include "speculative/acceptor.h"
#include "speculative/respec_options.h"

namespace specd {

struct RelaxedRule {
  double tau = 2.0;
  int32_t phi = 2;
  int32_t min_matches = 2;
  int32_t beta = 5;
};

struct LookaheadResult {
  int32_t greedy_prefix = 0;  // l0
  int32_t accepted = 0;       // last
  int32_t tries = 0;          // relaxed tries made
  std::vector<char> relaxed;  // per accepted chain token: 1 when it failed the greedy test
  std::vector<double> gaps;   // per relaxed token, in order: log p(top1) - log p(token)
};

// One chain: tokens[i] is the chain's (i+1)-th drafted token; row(i) is the target's logits row
// that predicts it (the row of the chain node at depth i, the root's for i = 0).
LookaheadResult relaxed_lookahead(const std::vector<int32_t>& tokens, const std::function<const float*(int32_t)>& row,
                                  int64_t vocab, const RelaxedRule& rule);

class RespecAcceptor : public Acceptor {
 public:
  explicit RespecAcceptor(const RespecOptions& options);
  std::string name() const override { return "respec"; }
  // std::logic_error for a retrieved tree at temperature > 0 with relaxed verification on
  // (make_policy refuses that setting before decoding).
  AcceptResult accept(const DraftTree& tree, const float* logits, int64_t vocab, Sampler& sampler) override;
  bool lossless() const override { return !relaxing_; }

 private:
  RelaxedRule rule_;
  bool relaxing_;  // relaxed verification on and phi > 0
};

}  // namespace specd
