#pragma once
// ARC-Decode's risk-bounded acceptance (the ARC-Decode paper, ICML 2026, §3.3, A.2; its hard
// rule). Verification is SamplingAcceptor's lossless test,
// step for step and draw for draw from the same random stream (GreedyAcceptor's at temperature
// 0). Only where every child of a node u was rejected, each child t_d is scored against
// t_m = argmax of the processed target distribution p~ at u (sampling/sampler.h's
// shaped_distribution; at temperature 0 the point mass at the argmax, as greedy decoding uses):
//   U_emb   = c'_s * ||W (e_td - e_tm)||^2        (W: the artifact's diagonal whitening)
//   U_logit = alpha*kappa * (log p~(t_m) - log p~(t_d))^2, p~ clamped below at epsilon
//   U = min(U_emb, U_logit),  LTS = 1 - U / tau_delta.
// The child with the highest LTS (ties: lowest index) is accepted as Relaxed when LTS >= theta,
// and lossless verification goes on below it (the next token drawn from the target at the
// relaxed node, or a child accepted there); otherwise the next token is drawn from the remainder
// exactly as SamplingAcceptor draws it. No random draw depends on LTS, so with theta > 1 (LTS
// never exceeds 1) the result and the sampler's state equal SamplingAcceptor's.
// LOSSY: AcceptResult::lossless is false; scores hold the LTS of relaxed nodes; detail holds
// every evaluated node's U_emb, U_logit and LTS.
#include <cstdint>
#include <functional>
#include <utility>
#include <vector>

#include "artifact/artifact.h"
#include "speculative/acceptor.h"
#include "speculative/embedding_lookup.h"

namespace specd {

// The calibrated constants one deployment uses (the artifact's ArcCalibration): bucket "all", and
// the buckets beside it, each serving the children whose depth and root H_m its name matches
// (artifact/arc_buckets.h).
struct ArcLtsConstants {
  double c_s = 0;          // c'_s
  double alpha_kappa = 0;  // alpha * kappa
  double tau_delta = 0;    // > 0
  double epsilon = 1e-6;   // clamp of p~ before the log, > 0
  std::vector<float> whitening;  // W's diagonal, one entry per embedding dimension
  std::vector<ArcConstants> buckets;  // "all" first, then the fitted buckets (empty: "all" alone)
};

// One rejected child's bound terms.
struct LtsTerms {
  int32_t target = -1;  // t_m
  double u_emb = 0, u_logit = 0, lts = 0;
};

class ArcAcceptor : public Acceptor {
 public:
  // std::invalid_argument when the constants are unusable (tau_delta or epsilon not > 0, a
  // whitening size other than the embeddings' hidden size, no embedding lookup).
  ArcAcceptor(ArcLtsConstants constants, EmbeddingLookup embeddings, double theta);
  std::string name() const override { return "arc"; }
  AcceptResult accept(const DraftTree& tree, const float* logits, int64_t vocab, Sampler& sampler) override;
  bool lossless() const override { return false; }
  bool uses_root_entropy() const override { return constants_.buckets.size() > 1; }
  void set_root_entropy(double normalized) override { root_entropy_ = normalized; }

  // The terms for drafted token `draft` at a node whose logits row is `row`, a child of the root
  // (depth 1; the bucket serving it under the last root entropy given).
  LtsTerms terms(const float* row, int64_t vocab, const SamplingParams& params, int32_t draft);

 private:
  // Per child of `node` (all rejected): its terms; appends them to `evaluated` for the trace.
  int32_t best_relaxed(const DraftTree& tree, const std::vector<int32_t>& children, const float* row, int64_t vocab,
                       const SamplingParams& params, std::vector<std::pair<int32_t, LtsTerms>>& evaluated, double& lts);

  ArcLtsConstants constants_;
  double root_entropy_ = 0;
  EmbeddingLookup embeddings_;
  double theta_;
  std::vector<float> target_row_, draft_row_;
};

}  // namespace specd
