#include "speculative/respec_acceptor.h"

#include <limits>
#include <stdexcept>


#include "speculative/greedy_acceptor.h"
#include "speculative/sampling_acceptor.h"

namespace specd {
namespace {

// Top-beta membership with argmax's tie rule (a tied lower id ranks first), and the gap
// log p(top1) - log p(token) = z(top1) - z(token): log-softmax shares the normaliser.
bool relaxed_ok(const float* z, int64_t vocab, int32_t token, const RelaxedRule& rule, double& gap) {
  const float zt = z[token];
  int64_t ahead = 0;
  for (int64_t v = 0; v < vocab; ++v) ahead += z[v] > zt || (z[v] == zt && v < token);
  gap = static_cast<double>(z[argmax(z, vocab)]) - zt;
  return ahead < rule.beta && gap <= rule.tau;
}

}  // namespace

LookaheadResult relaxed_lookahead(const std::vector<int32_t>& tokens, const std::function<const float*(int32_t)>& row,
                                  int64_t vocab, const RelaxedRule& rule) {
  const int32_t length = static_cast<int32_t>(tokens.size());
  std::vector<int32_t> target(length, -1);
  auto greedy = [&](int32_t i) {
    if (target[i] < 0) target[i] = argmax(row(i), vocab);
    return tokens[i] == target[i];
  };
  LookaheadResult out;
  while (out.greedy_prefix < length && greedy(out.greedy_prefix)) ++out.greedy_prefix;
  int32_t current = out.greedy_prefix, last = out.greedy_prefix;
  std::vector<double> gap_at(length, 0);
  std::vector<char> relaxed_at(length, 0);
  while (out.tries < rule.phi && current < length) {
    ++out.tries;
    double gap = 0;
    if (!relaxed_ok(row(current), vocab, tokens[current], rule, gap)) break;  // a failure ends it
    if (!greedy(current)) {
      relaxed_at[current] = 1;
      gap_at[current] = gap;
    }
    int32_t xi = 0;
    while (current + 1 + xi < length && greedy(current + 1 + xi)) ++xi;
    if (xi >= rule.min_matches) {
      last = current + 1 + xi;
      current = last;
    } else {
      current += 1;
    }
  }
  out.accepted = last;
  for (int32_t i = 0; i < last; ++i) {
    out.relaxed.push_back(relaxed_at[i]);
    if (relaxed_at[i]) out.gaps.push_back(gap_at[i]);
  }
  return out;
}

RespecAcceptor::RespecAcceptor(const RespecOptions& options)
    : rule_{options.tau, options.phi, options.min_matches, options.beta}, relaxing_(options.relaxed && options.phi > 0) {}

AcceptResult RespecAcceptor::accept(const DraftTree& tree, const float* logits, int64_t vocab, Sampler& sampler) {
  check_tree_for_acceptance(tree, vocab);
  const int32_t n = tree.size();
  bool retrieved = n > 1;
  for (int32_t i = 1; i < n; ++i) retrieved = retrieved && tree.sources[i] == DraftSource::Retrieval;
  if (!relaxing_ || !retrieved) return SamplingAcceptor().accept(tree, logits, vocab, sampler);
  if (sampler.params().temperature != 0.0)
    throw std::logic_error("respec: relaxed verification is defined for greedy decoding (T=0)");

  auto row_of = [&](int32_t node) { return logits + static_cast<int64_t>(node) * vocab; };
  std::vector<char> has_child(n, 0);
  for (int32_t i = 1; i < n; ++i) has_child[tree.parents[i]] = 1;
  // Each leaf's chain, in index order (the trie adds candidates best-ranked first).
  std::vector<int32_t> best_nodes{0};
  LookaheadResult best;
  int32_t chains = 0;
  for (int32_t leaf = 1; leaf < n; ++leaf) {
    if (has_child[leaf]) continue;
    ++chains;
    std::vector<int32_t> nodes = tree.path_to(leaf);
    std::vector<int32_t> tokens;
    for (size_t i = 1; i < nodes.size(); ++i) tokens.push_back(tree.tokens[nodes[i]]);
    LookaheadResult r = relaxed_lookahead(tokens, [&](int32_t i) { return row_of(nodes[i]); }, vocab, rule_);
    if (chains == 1 || r.accepted > best.accepted) {  // the first chain reports when none accepts
      best = std::move(r);
      best_nodes = std::move(nodes);
    }
  }

  AcceptResult result;
  result.lossless = false;
  result.verdicts.assign(n, NodeVerdict::NotReached);
  result.scores.assign(n, std::numeric_limits<float>::quiet_NaN());
  result.path.assign(best_nodes.begin(), best_nodes.begin() + best.accepted + 1);
  std::vector<char> on_path(n, 0);
  for (int32_t node : result.path) on_path[node] = 1;
  result.verdicts[0] = NodeVerdict::Accepted;
  size_t gap = 0;
  for (int32_t i = 1; i <= best.accepted; ++i) {
    const int32_t node = result.path[i];
    if (best.relaxed[i - 1]) {
      result.verdicts[node] = NodeVerdict::Relaxed;
      result.scores[node] = static_cast<float>(best.gaps[gap++]);
    } else {
      result.verdicts[node] = NodeVerdict::Accepted;
    }
  }
  for (int32_t i = 1; i < n; ++i)
    if (!on_path[i] && on_path[tree.parents[i]]) result.verdicts[i] = NodeVerdict::Rejected;
  result.next_token = argmax(row_of(result.path.back()), vocab);
  result.detail = RespecAcceptance{chains, best.greedy_prefix, best.accepted, best.tries, best.gaps};
  return result;
}

}  // namespace specd
