#include "serve/drafting_guard.h"

#include <algorithm>
#include <cmath>

namespace specd::serve {

void DraftingGuard::Arm::add(double rate, double forget) {
  weight = forget * weight + 1;
  weight_sq = forget * forget * weight_sq + 1;
  sum = forget * sum + rate;
  sum_sq = forget * sum_sq + rate * rate;
  ++windows;
}

double DraftingGuard::Arm::variance() const {
  const double n = effective_n();
  if (windows < 2 || n <= 1) return -1;  // unknown
  const double m = mean();
  return std::max(0.0, sum_sq / weight - m * m) * n / (n - 1);
}

bool DraftingGuard::drafting(const std::string& mix) const {
  const auto it = mixes_.find(mix);
  return it == mixes_.end() || it->second.drafting;  // a new mix starts as planned
}

void DraftingGuard::observe(const std::string& mix, double tokens, double ms) {
  Mix& m = mixes_[mix];
  if (!m.drafting) ++off_steps_;
  if (m.settle > 0) {
    --m.settle;
    return;
  }
  m.tokens += tokens;
  m.ms += ms;
  if (++m.steps >= options_.window_steps) close_window(m);
}

double DraftingGuard::rate(const std::string& mix, bool drafting) const {
  const auto it = mixes_.find(mix);
  return it == mixes_.end() ? 0 : it->second.arms[drafting ? 1 : 0].mean();
}

double DraftingGuard::lead(const Mix& m) const {
  const Arm& off = m.arms[0];
  const Arm& drafted = m.arms[1];
  if (off.windows == 0 || drafted.windows == 0) return 0;
  double vp = off.variance(), vd = drafted.variance();
  if (vp < 0) vp = vd;
  if (vd < 0) vd = vp;
  if (vp < 0) return 0;
  const double se = std::sqrt(vp / off.effective_n() + vd / drafted.effective_n());
  const double difference = off.mean() - drafted.mean();
  if (se <= 0) return difference > 0 ? HUGE_VAL : difference < 0 ? -HUGE_VAL : 0;
  return difference / se;
}

void DraftingGuard::close_window(Mix& m) {
  m.arms[m.drafting ? 1 : 0].add(m.tokens / m.ms, options_.forget);
  m.steps = 0;
  m.tokens = m.ms = 0;
  const bool was_drafting = m.drafting;
  decide(m);
  if (m.drafting != was_drafting) m.settle = m.drafting ? options_.settle_steps : options_.settle_off_steps;
}

void DraftingGuard::decide(Mix& m) {
  // A first look at the off arm after the first drafting window: two windows, so that its
  // spread is known when the arms are first compared.
  if (m.arms[0].windows < 2) {
    m.drafting = false;
    m.gap = options_.min_gap;
    return;
  }
  const double t = lead(m);
  const bool ahead = t <= options_.z;  // drafting ahead
  if (m.exploring) {
    // The explored arm won: the other is now behind, explored every min_gap windows. It lost
    // again: explore it twice as far apart, and at least as far as its deficit in standard
    // errors says (the gap grows as t^2: a change in the machine's load has to be that much
    // larger to reverse the order).
    const double behind = std::fabs(t) / options_.z;
    const double by_deficit = std::min(static_cast<double>(options_.max_gap), options_.min_gap * behind * behind);
    m.gap = ahead == m.drafting ? options_.min_gap
                                : std::min(std::max(2 * m.gap, static_cast<int32_t>(by_deficit)), options_.max_gap);
  }
  m.exploring = ++m.since >= m.gap;
  if (m.exploring) m.since = 0;
  m.drafting = m.exploring ? !ahead : ahead;
}

}  // namespace specd::serve
