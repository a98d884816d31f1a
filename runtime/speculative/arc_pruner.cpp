#include "speculative/arc_pruner.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "speculative/method_params.h"

namespace specd {
namespace {

constexpr double kNoThreshold = -std::numeric_limits<double>::infinity();

// The smallest log-score whose nodes {log q~ >= it} hold at least 1 - uncovered of the mass of
// `log_scores` (sorted descending). Computed on exp(log q~ - max) so deep nodes do not underflow;
// the coverage ratio does not depend on that scale.
double coverage_threshold(const std::vector<double>& log_scores, double uncovered) {
  if (log_scores.empty() || log_scores.front() == kNoThreshold) return kNoThreshold;  // no mass
  const double top = log_scores.front();
  std::vector<double> tail(log_scores.size() + 1, 0.0);  // tail[j]: mass of the nodes from j on
  for (size_t j = log_scores.size(); j-- > 0;) tail[j] = tail[j + 1] + std::exp(log_scores[j] - top);
  const double allowed = uncovered * tail[0];
  size_t count = 1;
  while (count < log_scores.size() && tail[count] > allowed) ++count;
  return log_scores[count - 1];
}

}  // namespace

// The ranges are the parameter table's (method_params.cpp).
void validate(const ArcPruneOptions& prune) {
  MethodOptions options;
  options.arc_prune = prune;
  check_params(options, "arc", "arc");
}

std::vector<char> arc_keep_set(const DraftTree& tree, double root_entropy_normalized, const ArcPruneOptions& options) {
  const int32_t n = tree.size();
  if (options.epsilon <= 0.0) return std::vector<char>(n, 1);
  std::vector<char> keep(n, 0);
  keep[0] = 1;

  std::vector<char> scored(n, 0), has_child(n, 0);
  std::vector<double> log_q(n, kNoThreshold);
  int32_t max_depth = 0;
  for (int32_t i = 1; i < n; ++i) {
    has_child[tree.parents[i]] = 1;
    max_depth = std::max(max_depth, tree.depths[i]);
    // Sampled children (their parent has child_q) stay: dropping i.i.d. draws by value would break
    // the multi-candidate rejection test's losslessness. Deterministic children may go.
    const bool sampled = tree.child_q[tree.parents[i]] && !tree.child_q[tree.parents[i]]->empty() && tree.sources[i] == DraftSource::Model;
    if (std::isnan(tree.scores[i]) || sampled) continue;
    scored[i] = 1;
    log_q[i] = static_cast<double>(tree.scores[i]) - options.lambda * tree.depths[i] * root_entropy_normalized;
  }

  // 1-2: per-depth thresholds theta_d (coverage 1 - epsilon) and leaf thresholds tau_d (1 - 2 epsilon).
  std::vector<std::vector<int32_t>> at_depth(max_depth + 1);
  for (int32_t i = 1; i < n; ++i)
    if (scored[i]) at_depth[tree.depths[i]].push_back(i);
  std::vector<double> theta(max_depth + 1, kNoThreshold), tau(max_depth + 1, kNoThreshold);
  for (int32_t d = 1; d <= max_depth; ++d) {
    std::vector<double> sorted;
    for (int32_t i : at_depth[d]) sorted.push_back(log_q[i]);
    std::sort(sorted.begin(), sorted.end(), std::greater<double>());
    theta[d] = coverage_threshold(sorted, options.epsilon);
    tau[d] = std::max(theta[d], coverage_threshold(sorted, std::min(1.0, 2.0 * options.epsilon)));
  }

  // 3: thresholds with top-down prefix closure (parents precede children); unscored nodes stay.
  for (int32_t i = 1; i < n; ++i) {
    if (!scored[i]) {
      keep[i] = 1;
      continue;
    }
    const int32_t d = tree.depths[i];
    keep[i] = keep[tree.parents[i]] && log_q[i] >= theta[d] && (has_child[i] || log_q[i] >= tau[d]);
  }

  // 4: a kept node that lost every child gets its best child back.
  const std::vector<char> kept_by_rules = keep;
  std::vector<int32_t> best_child(n, -1);
  std::vector<char> child_kept(n, 0);
  for (int32_t i = 1; i < n; ++i) {
    const int32_t p = tree.parents[i];
    if (keep[i]) child_kept[p] = 1;
    if (scored[i] && (best_child[p] < 0 || log_q[i] > log_q[best_child[p]])) best_child[p] = i;  // ties: lowest index
  }
  for (int32_t u = 0; u < n; ++u)
    if (kept_by_rules[u] && has_child[u] && !child_kept[u] && best_child[u] >= 0) keep[best_child[u]] = 1;

  // 5: no depth that had scored nodes ends up empty.
  auto keep_with_ancestors = [&](int32_t node) {
    for (; node >= 0 && !keep[node]; node = tree.parents[node]) keep[node] = 1;
  };
  for (int32_t d = 1; d <= max_depth; ++d) {
    if (at_depth[d].empty()) continue;
    bool any = false;
    for (int32_t i = 1; i < n && !any; ++i) any = keep[i] && tree.depths[i] == d;
    if (any) continue;
    int32_t best = at_depth[d].front();
    for (int32_t i : at_depth[d])
      if (log_q[i] > log_q[best]) best = i;
    keep_with_ancestors(best);
  }

  // 6: every kept node's ancestors (unscored nodes below a dropped one pull their path back).
  for (int32_t i = n - 1; i >= 1; --i)
    if (keep[i]) keep[tree.parents[i]] = 1;
  return keep;
}

ArcPruner::ArcPruner(ArcPruneOptions options) : options_(options) { validate(options_); }

DraftTree ArcPruner::prune(const DraftTree& tree, const PruneContext& context) {
  return tree.keep_only(arc_keep_set(tree, context.root_entropy_normalized, options_));
}

}  // namespace specd
