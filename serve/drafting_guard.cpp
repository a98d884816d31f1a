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

int32_t DraftingGuard::arm(const std::string& mix) const {
  const auto it = mixes_.find(mix);
  return it == mixes_.end() ? 0 : it->second.current;  // a new mix starts as planned
}

void DraftingGuard::observe(const std::string& mix, double tokens, double ms, int32_t arms) {
  auto [it, added] = mixes_.try_emplace(mix);
  Mix& m = it->second;
  if (added) {
    m.arms = std::clamp(arms, 2, kMaxArms);
    std::fill(m.gap, m.gap + kMaxArms, options_.min_gap);
  }
  if (m.current != 0) ++off_steps_;
  if (m.current == m.arms - 1) {  // the plain arm
    Mix::Pace& pace = recovering() ? m.soon : m.late;
    pace.tokens += tokens;
    pace.ms += ms;
    ++pace.steps;
  }
  if (m.settle > 0) {
    --m.settle;
    return;
  }
  if (m.current != 0 && recovering() && m.held < options_.recover_steps && recovery_matters()) {
    ++m.held;
    return;
  }
  m.tokens += tokens;
  m.ms += ms;
  if (++m.steps >= options_.window_steps) close_window(m);
}

bool DraftingGuard::recovery_matters() const {
  // Pooled over the mixes, since the cache is the machine's: each mix's pace ratio alone scatters
  // too much (on the AVX512-BF16 EPYC, whose target does not slow, 9 of 21 mixes delivered over 3%
  // more late than soon, 4-27%, and 'sd', the first to know, 12%; pooled, 0.4%).
  double sum = 0, weight = 0;
  for (const auto& [name, m] : mixes_) {
    if (m.soon.steps < options_.recovery_samples || m.late.steps < options_.recovery_samples || m.soon.tokens <= 0 ||
        m.late.tokens <= 0)
      continue;
    const double w = 1.0 / (1.0 / static_cast<double>(m.soon.steps) + 1.0 / static_cast<double>(m.late.steps));
    sum += w * std::log((m.late.tokens / m.late.ms) / (m.soon.tokens / m.soon.ms));
    weight += w;
  }
  return weight == 0 || sum / weight > std::log1p(options_.recovery_margin);
}

double DraftingGuard::rate(const std::string& mix, int32_t arm) const {
  const auto it = mixes_.find(mix);
  return it == mixes_.end() || arm < 0 || arm >= kMaxArms ? 0 : it->second.stats[arm].mean();
}

double DraftingGuard::lead(const Arm& a, const Arm& b) {
  if (a.windows == 0 || b.windows == 0) return 0;
  double va = a.variance(), vb = b.variance();
  if (va < 0) va = vb;
  if (vb < 0) vb = va;
  if (va < 0) return 0;
  const double se = std::sqrt(va / a.effective_n() + vb / b.effective_n());
  const double difference = a.mean() - b.mean();
  if (se <= 0) return difference > 0 ? HUGE_VAL : difference < 0 ? -HUGE_VAL : 0;
  return difference / se;
}

void DraftingGuard::close_window(Mix& m) {
  m.stats[m.current].add(m.tokens / m.ms, options_.forget);
  m.steps = m.held = 0;
  m.tokens = m.ms = 0;
  const int32_t was = m.current;
  decide(m);
  // Settling after the draft models resume: their catch-up. (After they stop, the recovery counted
  // in forward() holds an off arm's evidence back.)
  if (m.current != was && m.current == 0) m.settle = options_.settle_steps;
}

void DraftingGuard::decide(Mix& m) {
  // A first look at each off arm after the first planned window: two windows each, so that its
  // spread is known when the arms are first compared.
  for (int32_t a = 1; a < m.arms; ++a)
    if (m.stats[a].windows < 2) {
      m.current = a;
      return;
    }
  int32_t leader = 0;
  for (int32_t a = 1; a < m.arms; ++a)
    if (lead(m.stats[a], m.stats[leader]) > options_.z) leader = a;
  if (m.exploring) {
    // The explored arm won: every other arm is now behind, explored every min_gap windows. It lost
    // again: explore it twice as far apart, and at least as far as its deficit in standard errors
    // says (the gap grows as t^2: a change in the machine's load has to be that much larger to
    // reverse the order).
    const int32_t explored = m.current;
    if (leader == explored) {
      std::fill(m.gap, m.gap + m.arms, options_.min_gap);
    } else {
      const double behind = std::fabs(lead(m.stats[explored], m.stats[leader])) / options_.z;
      const double by_deficit = std::min(static_cast<double>(options_.max_gap), options_.min_gap * behind * behind);
      m.gap[explored] = std::min(std::max(2 * m.gap[explored], static_cast<int32_t>(by_deficit)), options_.max_gap);
    }
  }
  if (leader != m.leader) m.since[m.leader] = 0;  // behind from now on
  m.leader = leader;
  // The arm behind that is furthest past its gap gets the next window.
  int32_t next = leader;
  double overdue = 0;
  for (int32_t a = 0; a < m.arms; ++a) {
    if (a == leader) continue;
    const double past = static_cast<double>(++m.since[a]) / m.gap[a];
    if (past >= 1 && past > overdue) {
      next = a;
      overdue = past;
    }
  }
  m.exploring = next != leader;
  if (m.exploring) m.since[next] = 0;
  m.current = next;
}

}  // namespace specd::serve
