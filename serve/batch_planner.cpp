#include "serve/batch_planner.h"

#include <algorithm>

namespace specd::serve {
namespace {

constexpr double kForget = 0.995;   // an observation's weight after each later one (~200 steps)
constexpr int64_t kWarmUp = 32;     // observations before the fit is trusted

}  // namespace

void LinearCost::observe(double rows, double ms) {
  w_ = kForget * w_ + 1;
  x_ = kForget * x_ + rows;
  xx_ = kForget * xx_ + rows * rows;
  y_ = kForget * y_ + ms;
  xy_ = kForget * xy_ + rows * ms;
  ++n_;
}

bool LinearCost::ready() const { return n_ >= kWarmUp && w_ * xx_ - x_ * x_ > 1e-6 * w_ * w_; }

double LinearCost::at(double rows) const {
  const double det = w_ * xx_ - x_ * x_;
  const double b = std::max(0.0, (w_ * xy_ - x_ * y_) / det);
  const double a = std::max(0.0, (y_ - b * x_) / w_);
  return a + b * rows;
}

BatchLoad BatchPlanner::priced(BatchLoad load) const {
  if (target_.ready()) {
    load.fixed_ms = target_.at(0);
    load.row_ms = target_.at(1) - target_.at(0);
  }
  return load;
}

int32_t BatchPlanner::choose(const std::vector<Chain>& chains, const Fixed& fixed) const {
  if (chains.empty() || !target_.ready() || !draft_.ready()) return -1;
  int32_t longest = 0;
  for (const Chain& c : chains) longest = std::max(longest, c.max_nodes);
  int32_t best = 0;
  double best_rate = 0;
  for (int32_t k = 0; k <= longest; ++k) {
    double tokens = fixed.tokens, draft_ms = fixed.draft_ms;
    int32_t rows = fixed.rows;
    for (const Chain& c : chains) {
      const int32_t own = std::min(k, c.max_nodes);
      double expected = 1, reach = c.acceptance.first;
      for (int32_t i = 1; i <= own; ++i, reach *= c.acceptance.next) expected += reach;
      tokens += expected;
      rows += own + 1;
    }
    // Level 1 feeds each chain's catch-up; each later level one row per chain still drafting.
    for (int32_t level = 1; level <= k; ++level) {
      int32_t level_rows = 0;
      for (const Chain& c : chains)
        if (c.max_nodes >= level) level_rows += level == 1 ? c.catch_up_rows : 1;
      if (level_rows > 0) draft_ms += draft_.at(level_rows);
    }
    const double rate = tokens / (target_.at(rows) + draft_ms);
    if (rate > best_rate) {
      best = k;
      best_rate = rate;
    }
  }
  return best;
}

}  // namespace specd::serve
