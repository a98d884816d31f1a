#include "speculative/sampling_acceptor.h"

#include <stdexcept>

#include "speculative/greedy_acceptor.h"

namespace specd {

namespace {

// Divides by the total mass; returns false (leaving p alone) when nothing is left.
bool normalize(std::vector<double>& p) {
  double total = 0.0;
  for (double v : p) total += v;
  if (!(total > 0.0)) return false;
  for (double& v : p) v /= total;
  return true;
}

}  // namespace

std::vector<double> drafter_row(const DraftTree& tree, int32_t node, int64_t vocab) {
  const auto& row = *tree.child_q[node];
  if (static_cast<int64_t>(row.size()) != vocab)
    throw std::logic_error("SamplingAcceptor: child_q row size differs from the target vocabulary");
  std::vector<double> q(row.begin(), row.end());
  if (!normalize(q)) throw std::logic_error("SamplingAcceptor: child_q row has no mass");
  return q;
}

// Point-mass rule for a token that carries no drafter distribution. On rejection p becomes p
// conditioned on "not x".
bool try_deterministic(std::vector<double>& p, int32_t x, Sampler& sampler) {
  if (sampler.uniform() < p[x]) return true;
  const double px = p[x];
  p[x] = 0.0;
  if (normalize(p)) return false;
  p[x] = px;  // x held all the mass and lost only to rounding: it is the target's token
  return true;
}

// SpecInfer's rule for a token sampled from q. On rejection p becomes norm(max(0, p - q)).
bool try_sampled(std::vector<double>& p, const std::vector<double>& q, int32_t x, Sampler& sampler) {
  if (!(q[x] > 0.0)) throw std::logic_error("SamplingAcceptor: a sampled child has drafter probability 0");
  if (sampler.uniform() * q[x] < p[x]) return true;
  std::vector<double> residual(p.size());
  for (size_t i = 0; i < p.size(); ++i) residual[i] = p[i] > q[i] ? p[i] - q[i] : 0.0;
  // An empty residual means p == q, where every draw is accepted: only rounding gets here, and
  // keeping p is then exact to rounding.
  if (normalize(residual)) p.swap(residual);
  return false;
}

int32_t try_children(const DraftTree& tree, int32_t node, const std::vector<int32_t>& children, std::vector<double>& p,
                     int64_t vocab, Sampler& sampler, std::vector<NodeVerdict>& verdicts) {
  const bool has_q = tree.child_q[node] != nullptr && !tree.child_q[node]->empty();
  std::vector<int32_t> deterministic, sampled;
  for (int32_t c : children) (has_q && tree.sources[c] == DraftSource::Model ? sampled : deterministic).push_back(c);

  for (int32_t c : deterministic) {
    if (try_deterministic(p, tree.tokens[c], sampler)) return c;
    verdicts[c] = NodeVerdict::Rejected;
  }
  if (sampled.empty()) return -1;
  const std::vector<double> q = drafter_row(tree, node, vocab);
  while (!sampled.empty()) {
    size_t pick = static_cast<size_t>(sampler.uniform() * static_cast<double>(sampled.size()));
    if (pick >= sampled.size()) pick = sampled.size() - 1;
    const int32_t c = sampled[pick];
    sampled.erase(sampled.begin() + static_cast<std::ptrdiff_t>(pick));
    if (try_sampled(p, q, tree.tokens[c], sampler)) return c;
    verdicts[c] = NodeVerdict::Rejected;
  }
  return -1;
}

AcceptResult SamplingAcceptor::accept(const DraftTree& tree, const float* logits, int64_t vocab, Sampler& sampler) {
  if (sampler.params().temperature == 0.0) return GreedyAcceptor().accept(tree, logits, vocab);
  check_tree_for_acceptance(tree, vocab);

  const int32_t n = tree.size();
  std::vector<std::vector<int32_t>> children(n);
  for (int32_t i = 1; i < n; ++i) children[tree.parents[i]].push_back(i);

  AcceptResult result;
  result.verdicts.assign(n, NodeVerdict::NotReached);
  result.verdicts[0] = NodeVerdict::Accepted;
  result.path.push_back(0);
  result.lossless = true;

  int32_t node = 0;
  std::vector<double> p = shaped_distribution(logits, vocab, sampler.params());
  while (!children[node].empty()) {
    const int32_t chosen = try_children(tree, node, children[node], p, vocab, sampler, result.verdicts);
    if (chosen < 0) break;
    result.verdicts[chosen] = NodeVerdict::Accepted;
    result.path.push_back(chosen);
    node = chosen;
    p = shaped_distribution(logits + static_cast<int64_t>(node) * vocab, vocab, sampler.params());
  }
  result.next_token = draw(p, sampler.uniform());
  return result;
}

}  // namespace specd
