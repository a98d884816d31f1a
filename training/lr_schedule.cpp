#include "lr_schedule.h"

#include <algorithm>
#include <cmath>

namespace specd::training {

double LrSchedule::at(int64_t step) const {
  if (step < warmup) return peak * static_cast<double>(step + 1) / static_cast<double>(warmup);
  const int64_t decay_steps = std::max<int64_t>(1, total - 1 - warmup);
  const double progress = std::min(1.0, static_cast<double>(step - warmup) / static_cast<double>(decay_steps));
  return min_lr + 0.5 * (peak - min_lr) * (1.0 + std::cos(M_PI * progress));
}

}  // namespace specd::training
