#include "serve/drafting_guard.h"

#include <algorithm>

namespace specd::serve {

bool DraftingGuard::drafting(const std::string& mix) const {
  const auto it = mixes_.find(mix);
  return it == mixes_.end() || it->second.drafting;  // a new mix starts as planned
}

void DraftingGuard::observe(const std::string& mix, double tokens, double ms) {
  Mix& m = mixes_[mix];
  if (!m.drafting) ++plain_steps_;
  m.tokens += tokens;
  m.ms += ms;
  if (++m.steps >= options_.window_steps) close_window(m);
}

double DraftingGuard::rate(const std::string& mix, bool drafting) const {
  const auto it = mixes_.find(mix);
  return it == mixes_.end() ? 0 : it->second.arms[drafting ? 1 : 0].rate();
}

void DraftingGuard::close_window(Mix& m) {
  Arm& arm = m.arms[m.drafting ? 1 : 0];
  arm.tokens = options_.forget * arm.tokens + m.tokens;
  arm.ms = options_.forget * arm.ms + m.ms;
  ++arm.windows;
  m.steps = 0;
  m.tokens = m.ms = 0;
  const Arm& plain = m.arms[0];
  const Arm& drafted = m.arms[1];
  if (plain.windows == 0) {  // one look at plain decoding after the first drafting window
    m.drafting = false;
    m.gap = options_.min_gap;
    return;
  }
  // Ties go to drafting: where both arms deliver the same, the planner's choice stands.
  const bool ahead = drafted.rate() >= plain.rate();
  if (m.exploring) m.gap = ahead == m.drafting ? options_.min_gap : std::min(2 * m.gap, options_.max_gap);
  m.exploring = ++m.since >= m.gap;
  if (m.exploring) m.since = 0;
  m.drafting = m.exploring ? !ahead : ahead;
}

}  // namespace specd::serve
