#pragma once
// Learning rate per optimizer step: linear warmup from peak/warmup to the peak over the first
// `warmup` steps, then cosine decay from the peak to `min_lr` at the last step.
#include <cstdint>

namespace specd::training {

struct LrSchedule {
  double peak = 3e-3;
  double min_lr = 3e-4;
  int64_t warmup = 100;
  int64_t total = 1000;

  // The rate for step `step` (0-based, < total).
  double at(int64_t step) const;
};

}  // namespace specd::training
