#include "serve/batch_planner.h"

#include <algorithm>

namespace specd::serve {
namespace {

constexpr double kForget = 0.995;   // an observation's weight after each later one (~200 steps)
constexpr int64_t kWarmUp = 32;     // observations before a fit without a prior is trusted
constexpr double kPrior = 8;        // a measured curve's weight in the fits, in steps

}  // namespace

void LinearCost::Sums::add(double weight, double px, double py) {
  w += weight;
  x += weight * px;
  xx += weight * px * px;
  y += weight * py;
  xy += weight * px * py;
}

void LinearCost::observe(double x, double ms) {
  seen_ = Sums{kForget * seen_.w, kForget * seen_.x, kForget * seen_.xx, kForget * seen_.y, kForget * seen_.xy};
  seen_.add(1, x, ms);
  ++n_;
}

void LinearCost::set_prior(const std::vector<std::pair<double, double>>& points, double weight) {
  prior_ = Sums{};
  for (const auto& [x, ms] : points) prior_.add(weight / static_cast<double>(points.size()), x, ms);
}

LinearCost::Sums LinearCost::total() const {
  return Sums{seen_.w + prior_.w, seen_.x + prior_.x, seen_.xx + prior_.xx, seen_.y + prior_.y, seen_.xy + prior_.xy};
}

bool LinearCost::ready() const {
  const Sums s = total();
  return (prior_.w > 0 || n_ >= kWarmUp) && s.w * s.xx - s.x * s.x > 1e-6 * s.w * s.w;
}

double LinearCost::slope() const {
  const Sums s = total();
  return std::max(0.0, (s.w * s.xy - s.x * s.y) / (s.w * s.xx - s.x * s.x));
}

double LinearCost::intercept() const {
  const Sums s = total();
  return std::max(0.0, (s.y - slope() * s.x) / s.w);
}

void GroupLevels::observe(int32_t group, double x, double ms) {
  Sums& s = groups_[group];
  s = Sums{kForget * s.w + 1, kForget * s.x + x, kForget * s.y + ms};
}

double GroupLevels::at(const LinearCost& line, int32_t group, double x) const {
  const auto it = groups_.find(group);
  if (it == groups_.end()) return line.at(x);
  const Sums& s = it->second;
  const double slope = line.slope();
  const double own = (s.y - slope * s.x) / s.w;
  return std::max(0.0, (s.w * own + kPrior * line.intercept()) / (s.w + kPrior) + slope * x);
}

void GroupMeans::observe(int32_t group, double value) {
  auto& [w, sum] = groups_[group];
  w = kForget * w + 1;
  sum = kForget * sum + value;
}

double GroupMeans::at(int32_t group) const {
  const auto it = groups_.find(group);
  return it == groups_.end() ? 0.0 : it->second.second / (it->second.first + kPrior);
}

void BatchPlanner::observe_drafted(int32_t requests, double ms) {
  if (priced_ms_ > 0) surprise_.observe(requests, ms - priced_ms_);
  priced_ms_ = 0;
}

void BatchPlanner::observe_target(int32_t rows, double ms, int32_t requests) {
  target_.observe(target_x(rows), ms);
  if (requests > 0) target_levels_.observe(requests, target_x(rows), ms);
}

void BatchPlanner::observe_plain(int32_t rows, double ms, int32_t requests) {
  plain_.observe(target_x(rows), ms);
  if (requests > 0) plain_levels_.observe(requests, target_x(rows), ms);
}

double BatchPlanner::target_ms(bool draft_model, int32_t requests, int32_t rows) const {
  const double x = target_x(rows);
  if (draft_model) return target_levels_.at(target_, requests, x);
  if (plain_.observations() < kWarmUp) return target_.at(x);
  return plain_levels_.at(plain_, requests, x);
}

const LinearCost& BatchPlanner::fit(bool draft_model) const {
  return draft_model || plain_.observations() < kWarmUp ? target_ : plain_;
}

BatchLoad BatchPlanner::priced(BatchLoad load) const {
  const LinearCost& rows = fit(false);
  if (rows.ready()) {
    load.fixed_ms = rows.intercept();
    load.scale = rows.slope();
    load.shape = target_shape_.empty() ? nullptr : &target_shape_;
  }
  return load;
}

void BatchPlanner::seed(const CostCurve& target, const CostCurve& draft, int32_t max_rows) {
  // The prior: each curve's points up to max_rows (two at least), worth kPrior steps.
  auto prior = [&](const CostCurve& curve, LinearCost& fit) {
    std::vector<std::pair<double, double>> points;
    for (const auto& [rows, ms] : curve.points())
      if (rows <= max_rows || points.size() < 2) points.emplace_back(ms, ms);
    fit.set_prior(points, kPrior);
  };
  target_shape_ = target;
  draft_shape_ = draft;
  prior(target, target_);
  prior(target, plain_);
  prior(draft, draft_);
}

BatchPlanner::Step BatchPlanner::evaluate(const std::vector<Chain>& chains, const Fixed& fixed, int32_t k,
                                          const std::vector<bool>& drafting) const {
  Step step{fixed.tokens, fixed.draft_ms};
  int32_t rows = fixed.rows;
  bool model = false;  // a chain's draft model runs in this step
  for (size_t c = 0; c < chains.size(); ++c) {
    const int32_t own = drafting[c] ? std::min(k, chains[c].max_nodes) : 0;
    step.tokens += expected_committed(own, chains[c].acceptance);
    rows += own + 1;
    model = model || own > 0;
  }
  // Level by level, one draft-model row per chain still drafting.
  for (int32_t level = 1; level <= k; ++level) {
    int32_t level_rows = 0;
    for (size_t c = 0; c < chains.size(); ++c) level_rows += drafting[c] && chains[c].max_nodes >= level ? 1 : 0;
    if (level_rows > 0) step.ms += draft_.at(draft_x(level_rows));
  }
  const int32_t requests = static_cast<int32_t>(chains.size()) + fixed.requests;
  step.ms += target_ms(model, requests, rows);
  if (model) step.surprise_ms = surprise_.at(requests);
  step.ms += step.surprise_ms;
  return step;
}

std::vector<BatchPlanner::Decision> BatchPlanner::choose(const std::vector<Chain>& chains, const Fixed& fixed) {
  prediction_ = Prediction{};
  priced_ms_ = 0;
  if (chains.empty() || !target_.ready() || !draft_.ready()) return {};
  const std::vector<bool> all(chains.size(), true);
  int32_t longest = 0;
  for (const Chain& c : chains) longest = std::max(longest, c.max_nodes);
  const Step plain = evaluate(chains, fixed, 0, all);

  int32_t k = 0;
  Step best = plain;
  for (int32_t length = 1; length <= longest; ++length) {
    const Step step = evaluate(chains, fixed, length, all);
    if (step.rate() > best.rate()) {
      k = length;
      best = step;
    }
  }
  runs_.step(k > 0);
  prediction_ = Prediction{plain.tokens, plain.ms, plain.tokens, plain.ms};
  std::vector<Decision> decisions(chains.size());  // drafting does not pay: nothing forgone
  if (k == 0) return decisions;
  // What drafting saves each chain this step: plain steps' time for the same tokens, less the
  // step's, shared evenly. A chain behind pays its catch-up beyond the root once it would have
  // saved that much and its tokens left would save it again, or at once where the steps drafting
  // is expected to stay worth it (p / (1 - p) more) would save it.
  const double gain = (best.tokens / plain.rate() - best.ms) / static_cast<double>(chains.size());
  std::vector<bool> drafting(chains.size());
  for (size_t c = 0; c < chains.size(); ++c) {
    const Chain& chain = chains[c];
    const double catch_up_ms = draft_.slope() * (draft_x(static_cast<int32_t>(chain.catch_up_rows)) - draft_x(1));
    const double steps_left = static_cast<double>(chain.remaining_tokens) / expected_committed(std::min(k, chain.max_nodes), chain.acceptance);
    drafting[c] = pays_catch_up(catch_up_ms, gain, chain.forgone_ms, steps_left, runs_.expected_steps());
  }
  // The chains that switch on must pay on their own.
  const Step switched_on = evaluate(chains, fixed, k, drafting);
  const bool pays = switched_on.rate() > plain.rate();
  if (pays) {
    prediction_.tokens = switched_on.tokens;
    prediction_.ms = switched_on.ms;
    priced_ms_ = switched_on.ms - switched_on.surprise_ms;
  }
  for (size_t c = 0; c < chains.size(); ++c)
    decisions[c] = drafting[c] && pays ? Decision{k, 0} : Decision{0, chains[c].forgone_ms + gain};
  return decisions;
}

}  // namespace specd::serve
