#include "speculative/arc_acceptor.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>


#include "artifact/arc_buckets.h"
#include "speculative/greedy_acceptor.h"
#include "speculative/sampling_acceptor.h"

namespace specd {
namespace {

// The processed target distribution at one node: shaped as sampling shapes it, or at
// temperature 0 the greedy point mass (probs empty, `top` holds all the mass).
struct Processed {
  std::vector<double> probs;
  int32_t top = -1;  // t_m: the argmax (ties: lowest id)
  double prob(int32_t token) const { return probs.empty() ? (token == top ? 1.0 : 0.0) : probs[token]; }
};

Processed processed(const float* row, int64_t vocab, const SamplingParams& params) {
  Processed p;
  if (params.temperature == 0.0) {
    p.top = argmax(row, vocab);
    return p;
  }
  p.probs = shaped_distribution(row, vocab, params);
  p.top = static_cast<int32_t>(std::max_element(p.probs.begin(), p.probs.end()) - p.probs.begin());
  return p;
}

// U = min(U_emb, U_logit) from the calibrated scales (runtime/stats/arc_fit.h's arc_bound does
// the same on raw terms; kept here so the acceptor does not depend on the fitting code).
double bound_min(double u_emb, double u_logit) { return std::min(u_emb, u_logit); }

}  // namespace

ArcAcceptor::ArcAcceptor(ArcLtsConstants constants, EmbeddingLookup embeddings, double theta)
    : constants_(std::move(constants)), embeddings_(std::move(embeddings)), theta_(theta) {
  if (!(constants_.tau_delta > 0.0)) throw std::invalid_argument("ArcAcceptor: tau_delta must be positive");
  if (!(constants_.epsilon > 0.0)) throw std::invalid_argument("ArcAcceptor: epsilon must be positive");
  if (!embeddings_.row || embeddings_.hidden_size <= 0) throw std::invalid_argument("ArcAcceptor: no embedding lookup");
  if (static_cast<int64_t>(constants_.whitening.size()) != embeddings_.hidden_size)
    throw std::invalid_argument("ArcAcceptor: the whitening has " + std::to_string(constants_.whitening.size()) +
                                " entries, the embeddings " + std::to_string(embeddings_.hidden_size) + " dimensions");
  target_row_.resize(embeddings_.hidden_size);
  draft_row_.resize(embeddings_.hidden_size);
}

namespace {

// The scales serving a child at `depth` under a root of entropy `root_entropy`.
struct Scales {
  double c_s, alpha_kappa, tau_delta;
};
Scales scales_for(const ArcLtsConstants& k, int32_t depth, double root_entropy) {
  if (k.buckets.size() < 2) return {k.c_s, k.alpha_kappa, k.tau_delta};
  const ArcConstants& c = constants_for(k.buckets, depth, static_cast<float>(root_entropy));
  return {c.c_s, c.alpha_kappa, c.tau_delta};
}

LtsTerms terms_at(const Processed& p, int32_t draft, const ArcLtsConstants& k, const Scales& s, const std::vector<float>& target_row,
                  std::vector<float>& draft_row, const EmbeddingLookup& embeddings) {
  LtsTerms t;
  t.target = p.top;
  embeddings.row(draft, draft_row.data());
  double u_emb_raw = 0;
  for (size_t i = 0; i < draft_row.size(); ++i) {
    const double diff = static_cast<double>(k.whitening[i]) * (static_cast<double>(draft_row[i]) - target_row[i]);
    u_emb_raw += diff * diff;
  }
  const double margin = std::log(std::max(p.prob(p.top), k.epsilon)) - std::log(std::max(p.prob(draft), k.epsilon));
  t.u_emb = s.c_s * u_emb_raw;
  t.u_logit = s.alpha_kappa * margin * margin;
  t.lts = 1.0 - bound_min(t.u_emb, t.u_logit) / s.tau_delta;
  return t;
}

}  // namespace

LtsTerms ArcAcceptor::terms(const float* row, int64_t vocab, const SamplingParams& params, int32_t draft) {
  const Processed p = processed(row, vocab, params);
  embeddings_.row(p.top, target_row_.data());
  return terms_at(p, draft, constants_, scales_for(constants_, 1, root_entropy_), target_row_, draft_row_, embeddings_);
}

int32_t ArcAcceptor::best_relaxed(const DraftTree& tree, const std::vector<int32_t>& children, const float* row, int64_t vocab,
                                  const SamplingParams& params, std::vector<std::pair<int32_t, LtsTerms>>& evaluated, double& lts) {
  const Processed p = processed(row, vocab, params);
  embeddings_.row(p.top, target_row_.data());
  int32_t best = -1;
  for (int32_t c : children) {  // index order: ties keep the lowest index
    const LtsTerms t =
        terms_at(p, tree.tokens[c], constants_, scales_for(constants_, tree.depths[c], root_entropy_), target_row_, draft_row_, embeddings_);
    evaluated.emplace_back(c, t);
    if (best < 0 || t.lts > lts) {
      best = c;
      lts = t.lts;
    }
  }
  return best;
}

AcceptResult ArcAcceptor::accept(const DraftTree& tree, const float* logits, int64_t vocab, Sampler& sampler) {
  check_tree_for_acceptance(tree, vocab);
  const int32_t n = tree.size();
  const SamplingParams& params = sampler.params();
  const bool greedy = params.temperature == 0.0;
  auto row_of = [&](int32_t node) { return logits + static_cast<int64_t>(node) * vocab; };
  std::vector<std::vector<int32_t>> children(n);
  for (int32_t i = 1; i < n; ++i) children[tree.parents[i]].push_back(i);

  AcceptResult result;
  result.verdicts.assign(n, NodeVerdict::NotReached);
  result.scores.assign(n, std::numeric_limits<float>::quiet_NaN());
  result.path.push_back(0);
  result.lossless = false;
  std::vector<std::pair<int32_t, LtsTerms>> evaluated;
  std::vector<char> relaxed(n, 0);

  // Relaxes the best child of `node` (all its children rejected) when its LTS reaches theta.
  auto relax_below = [&](int32_t node) {
    if (children[node].empty()) return -1;
    double lts = 0;
    const int32_t best = best_relaxed(tree, children[node], row_of(node), vocab, params, evaluated, lts);
    if (!(lts >= theta_)) return -1;
    relaxed[best] = 1;
    result.scores[best] = static_cast<float>(lts);
    result.path.push_back(best);
    return best;
  };

  int32_t node = 0;
  if (greedy) {
    // GreedyAcceptor's rule from `node` down: the deepest node whose path from `node` matches the
    // argmax at every parent (ties: lowest index); then relax below it, and again.
    for (;;) {
      std::vector<int32_t> target(n, -1);
      std::vector<char> matched(n, 0);
      matched[node] = 1;
      int32_t best = node;
      for (int32_t i = node + 1; i < n; ++i) {
        const int32_t parent = tree.parents[i];
        if (!matched[parent]) continue;
        if (target[parent] < 0) target[parent] = argmax(row_of(parent), vocab);
        if (tree.tokens[i] != target[parent]) continue;
        matched[i] = 1;
        if (tree.depths[i] > tree.depths[best]) best = i;
      }
      const std::vector<int32_t> full = tree.path_to(best);
      result.path.insert(result.path.end(), std::find(full.begin(), full.end(), node) + 1, full.end());
      node = best;
      const int32_t next = relax_below(node);
      if (next < 0) break;
      node = next;
    }
    std::vector<char> on_path(n, 0);
    for (int32_t i : result.path) on_path[i] = 1;
    for (int32_t i = 0; i < n; ++i) {
      if (on_path[i]) {
        result.verdicts[i] = relaxed[i] ? NodeVerdict::Relaxed : NodeVerdict::Accepted;
      } else if (on_path[tree.parents[i]]) {
        result.verdicts[i] = NodeVerdict::Rejected;
      }
    }
    result.next_token = argmax(row_of(node), vocab);
  } else {
    // SamplingAcceptor's loop, draw for draw; relaxation only where it would stop.
    result.verdicts[0] = NodeVerdict::Accepted;
    std::vector<double> p = shaped_distribution(logits, vocab, params);
    while (!children[node].empty()) {
      int32_t chosen = try_children(tree, node, children[node], p, vocab, sampler, result.verdicts);
      if (chosen >= 0) {
        result.verdicts[chosen] = NodeVerdict::Accepted;
        result.path.push_back(chosen);
      } else {
        chosen = relax_below(node);
        if (chosen < 0) break;
        result.verdicts[chosen] = NodeVerdict::Relaxed;
      }
      node = chosen;
      p = shaped_distribution(row_of(node), vocab, params);
    }
    result.next_token = draw(p, sampler.uniform());
  }

  if (!evaluated.empty()) {
    ArcAcceptance nodes;
    for (const auto& [c, t] : evaluated)
      nodes.lts.push_back(LtsNode{c, tree.depths[c], tree.tokens[c], t.target, t.u_emb, t.u_logit, t.lts, relaxed[c] != 0});
    result.detail = nodes;
  }
  return result;
}

}  // namespace specd
