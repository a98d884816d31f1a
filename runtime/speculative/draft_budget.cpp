#include "speculative/draft_budget.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace specd {

CostCurve::CostCurve(std::vector<std::pair<int32_t, double>> points) : points_(std::move(points)) {
  if (points_.empty()) throw std::invalid_argument("cost curve: no points");
  for (size_t i = 0; i < points_.size(); ++i) {
    if (points_[i].first < 1 || !(points_[i].second > 0)) throw std::invalid_argument("cost curve: n >= 1 and ms > 0 expected");
    if (i > 0 && points_[i].first <= points_[i - 1].first) throw std::invalid_argument("cost curve: n must ascend");
  }
  // Timing noise can make a larger forward look cheaper (two rows ride on one's weight reads on a
  // CPU), and a curve that dips would price a drafted row below nothing.
  for (size_t i = 1; i < points_.size(); ++i) points_[i].second = std::max(points_[i].second, points_[i - 1].second);
}

double CostCurve::at(int32_t n) const {
  if (points_.empty()) throw std::logic_error("cost curve: empty");
  if (points_.size() == 1 || n <= points_.front().first) {
    // One point, or below the first: scale it (a lower bound on the per-token cost).
    const auto& [n0, ms0] = points_.front();
    return n <= n0 ? ms0 : ms0 * n / n0;
  }
  size_t hi = 1;
  while (hi + 1 < points_.size() && points_[hi].first < n) ++hi;
  const auto& [n0, ms0] = points_[hi - 1];
  const auto& [n1, ms1] = points_[hi];
  return ms0 + (ms1 - ms0) * (n - n0) / static_cast<double>(n1 - n0);
}

DraftBudget::DraftBudget(CostCurve target_cost, DraftBudgetOptions options)
    : cost_(std::move(target_cost)), options_(options), prior_{options.prior_acceptance, options.prior_acceptance} {
  if (cost_.empty()) throw std::invalid_argument("draft budget: empty cost curve");
  if (!(options_.prior_acceptance > 0 && options_.prior_acceptance < 1)) throw std::invalid_argument("draft budget: prior in (0, 1)");
  if (!(options_.decay > 0 && options_.decay <= 1)) throw std::invalid_argument("draft budget: decay in (0, 1]");
}

void DraftBudget::reset() {
  constexpr double kHistoryKept = 0.9;  // of the history, per request: about the last 10 requests
  for (auto& [cls, h] : history_)
    for (double* count : {&h.first_accepted, &h.first_tried, &h.next_accepted, &h.next_tried}) *count *= kHistoryKept;
  if (options_.history)
    for (const auto& [cls, c] : classes_) {
      Counts& h = history_[cls];
      h.first_accepted += c.first_accepted, h.first_tried += c.first_tried;
      h.next_accepted += c.next_accepted, h.next_tried += c.next_tried;
    }
  classes_.clear();
  step_ = 0;
  forgone_ms_ = 0;
}

void DraftBudget::set_prior(Acceptance prior) {
  if (!(prior.first > 0 && prior.first < 1 && prior.next > 0 && prior.next < 1)) throw std::invalid_argument("draft budget: prior in (0, 1)");
  prior_ = prior;
}

Acceptance DraftBudget::class_prior(int32_t cls) const {
  const auto found = history_.find(cls);
  if (found == history_.end()) return prior_;
  constexpr double kPriorWorth = 8;  // the options' prior against the history, in tried levels
  const Counts& h = found->second;
  return Acceptance{(h.first_accepted + kPriorWorth * prior_.first) / (h.first_tried + kPriorWorth),
                    (h.next_accepted + kPriorWorth * prior_.next) / (h.next_tried + kPriorWorth)};
}

Acceptance DraftBudget::acceptance(int32_t cls) const {
  const double w = options_.prior_weight;
  const Acceptance prior = class_prior(cls);
  const auto found = classes_.find(cls);
  const Counts counts = found == classes_.end() ? Counts{} : found->second;
  return Acceptance{(counts.first_accepted + w * prior.first) / (counts.first_tried + w),
                    (counts.next_accepted + w * prior.next) / (counts.next_tried + w)};
}

double DraftBudget::evidence(int32_t cls) const {
  const auto found = classes_.find(cls);
  return found == classes_.end() ? 0 : found->second.first_tried;
}

double expected_committed(int32_t k, Acceptance a, int32_t max_depth) {
  double expected = 1, reach = a.first;  // reach: the chance that level i is accepted
  for (int32_t i = 1; i <= std::min(k, max_depth); ++i, reach *= a.next) expected += reach;
  return expected;
}

bool pays_catch_up(double catch_up_ms, double gain_ms, double forgone_ms, double steps_left, double expected_steps) {
  if (catch_up_ms > gain_ms * steps_left) return false;
  return catch_up_ms <= forgone_ms + gain_ms || catch_up_ms <= gain_ms * std::min(steps_left, expected_steps);
}

void DraftingRuns::step(bool worth) {
  constexpr double kForget = 0.995;  // a step's weight after each later one (~200 steps)
  if (worth_) {
    followed_ = kForget * followed_ + 1;
    stayed_ = kForget * stayed_ + (worth ? 1 : 0);
  }
  worth_ = worth;
}

double DraftingRuns::expected_steps() const {
  const double stays = std::min(stayed_ / followed_, 0.999);
  return 1 + stays / (1 - stays);
}

double DraftBudget::expected_tokens(int32_t cls, int32_t k, int32_t max_depth) const {
  return expected_committed(k, acceptance(cls), max_depth);
}

double DraftBudget::rate(int32_t k, Acceptance a, int32_t max_depth, double draft_ms_per_node) const {
  if (draft_ms_per_node < 0) draft_ms_per_node = options_.draft_ms_per_node;
  return rate_of(k, expected_committed(k, a, max_depth), draft_ms_per_node);
}

double DraftBudget::rate_of(int32_t k, double expected, double draft_ms_per_node) const {
  const int32_t rows = load_.rows + k + 1;
  const double verify_ms = load_.fixed_ms >= 0 ? load_.step_ms(rows) : cost_ms(rows);
  return (load_.tokens + expected) / (verify_ms + load_.draft_ms + k * draft_ms_per_node);
}

void DraftBudget::observe_cost(int32_t n, double ms) {
  if (n < 1 || !(ms > 0)) return;
  if (observed_ms_.size() <= static_cast<size_t>(n)) observed_ms_.resize(n + 1, 0.0);
  double& mean = observed_ms_[n];
  mean = mean == 0 ? ms : (1 - options_.cost_weight) * mean + options_.cost_weight * ms;
  // Sizes not verified lately drift back to the measured curve (scaled by the observed one-token
  // cost), so one slow outlier does not keep a draft length off for the rest of the run.
  const double scale = observed_ms_[1] > 0 ? observed_ms_[1] / cost_.at(1) : 1.0;
  for (size_t m = 2; m < observed_ms_.size(); ++m)
    if (static_cast<int32_t>(m) != n && observed_ms_[m] > 0)
      observed_ms_[m] += options_.cost_relax * (cost_.at(static_cast<int32_t>(m)) * scale - observed_ms_[m]);
}

void DraftBudget::observe_draft_cost(int32_t cls, int32_t nodes, double ms) {
  if (nodes <= 0 || !(ms >= 0)) return;
  const auto found = draft_ms_per_node_.find(cls);
  const double per_node = ms / nodes;
  if (found == draft_ms_per_node_.end())
    draft_ms_per_node_[cls] = per_node;
  else
    found->second = (1 - options_.cost_weight) * found->second + options_.cost_weight * per_node;
}

double DraftBudget::draft_cost(int32_t cls) const {
  const auto found = draft_ms_per_node_.find(cls);
  if (found != draft_ms_per_node_.end()) return found->second;
  return cls == 0 ? options_.draft_ms_per_node : 0.0;
}

double DraftBudget::cost_ms(int32_t n) const {
  const double scale = observed_ms_.size() > 1 && observed_ms_[1] > 0 ? observed_ms_[1] / cost_.at(1) : 1.0;
  auto own = [&](int32_t m) {
    return static_cast<size_t>(m) < observed_ms_.size() && observed_ms_[m] > 0 ? observed_ms_[m] : cost_.at(m) * scale;
  };
  // The running means are noisy; a size never costs less than a smaller one (as the curve).
  double ms = own(n);
  for (int32_t m = std::min<int32_t>(n - 1, static_cast<int32_t>(observed_ms_.size()) - 1); m >= 1; --m) ms = std::max(ms, own(m));
  return ms;
}

int32_t DraftBudget::best_nodes(Acceptance a, int32_t max_nodes, int32_t max_depth, double draft_ms_per_node) const {
  int32_t best = 0;
  double best_rate = rate(0, a, max_depth, draft_ms_per_node);
  for (int32_t k = 1; k <= max_nodes; ++k) {
    const double r = rate(k, a, max_depth, draft_ms_per_node);
    if (r > best_rate) {
      best = k;
      best_rate = r;
    }
  }
  return best;
}

int32_t DraftBudget::nodes_for(int32_t cls, int32_t max_nodes, int32_t max_depth) const {
  const int32_t best = best_nodes(acceptance(cls), max_nodes, max_depth, draft_cost(cls));
  if (best > 0 || options_.probe_interval <= 0 || max_nodes < 1 || max_depth < 1) return best;
  if (draft_cost(cls) > options_.probe_max_draft_share * cost_ms(1)) return best;
  const auto found = classes_.find(cls);
  const bool idle = found == classes_.end() || step_ - found->second.last_drafted >= options_.probe_interval;
  return idle ? 1 : 0;
}

int32_t DraftBudget::model_nodes(int32_t max_nodes, int32_t max_depth, int64_t first_rows, int64_t remaining_tokens) {
  const int32_t k = nodes_for(0, max_nodes, max_depth);
  runs_.step(k > 0);
  if (k == 0) {
    forgone_ms_ = 0;
    return 0;
  }
  const double c = draft_cost(0);
  const double catch_up_ms = first_rows <= 1 ? 0.0
                             : options_.draft_cost.empty()
                                 ? c * static_cast<double>(first_rows - 1)
                                 : c * (options_.draft_cost.at(static_cast<int32_t>(first_rows)) / options_.draft_cost.at(1) - 1);
  if (catch_up_ms <= 0) return k;
  // What drafting k saves this step: plain steps' time for the same tokens, less the step's.
  const Acceptance a = acceptance(0);
  const double own = expected_committed(k, a, max_depth);
  const double gain = (load_.tokens + own) * (1 / rate(0, a, max_depth, c) - 1 / rate(k, a, max_depth, c));
  if (gain <= 0) return 0;  // a probe: a draft model is not probed across a catch-up
  if (pays_catch_up(catch_up_ms, gain, forgone_ms_, static_cast<double>(remaining_tokens) / own, runs_.expected_steps())) {
    forgone_ms_ = 0;
    return k;
  }
  forgone_ms_ += gain;
  return 0;
}

void DraftBudget::observe(int32_t cls, int32_t drafted, int32_t accepted) {
  for (auto& entry : classes_) {
    Counts& c = entry.second;
    for (double* count : {&c.first_accepted, &c.first_tried, &c.next_accepted, &c.next_tried}) *count *= options_.decay;
  }
  ++step_;
  if (drafted <= 0) return;
  Counts& counts = classes_[cls];
  counts.last_drafted = step_;
  counts.first_tried += 1;
  counts.first_accepted += accepted > 0 ? 1 : 0;
  // Levels 2..drafted were tried while their parent was accepted: up to the first rejection.
  counts.next_tried += std::max(0, std::min(drafted, accepted + 1) - 1);
  counts.next_accepted += std::max(0, accepted - 1);
}

}  // namespace specd
