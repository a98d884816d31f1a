// The learning-rate schedule: linear warmup, then cosine decay to the minimum at the last step.
#include "catch_torch.h"

#include "lr_schedule.h"

using specd::training::LrSchedule;

TEST_CASE("warmup rises linearly to the peak", "[training]") {
  LrSchedule s{1e-3, 1e-4, 10, 110};
  CHECK(s.at(0) == Approx(1e-4));
  CHECK(s.at(4) == Approx(5e-4));
  CHECK(s.at(9) == Approx(1e-3));
}

TEST_CASE("cosine decay runs from the peak after warmup to the minimum at the last step", "[training]") {
  LrSchedule s{1e-3, 1e-4, 10, 111};  // 100 decay intervals: steps 10..110
  CHECK(s.at(10) == Approx(1e-3));
  CHECK(s.at(60) == Approx(5.5e-4));  // halfway: the mean of peak and minimum
  CHECK(s.at(35) == Approx(1e-4 + 0.5 * 9e-4 * (1 + std::cos(M_PI / 4))));
  CHECK(s.at(110) == Approx(1e-4));
  for (int step = 11; step <= 110; ++step) CHECK(s.at(step) < s.at(step - 1));
}

TEST_CASE("without warmup the first step runs at the peak", "[training]") {
  LrSchedule s{2e-3, 0.0, 0, 5};
  CHECK(s.at(0) == Approx(2e-3));
  CHECK(s.at(4) == Approx(0.0).margin(1e-12));
}
