#pragma once
// Training throughput of a model shape on random tokens, for planning runs: no corpus needed.
#include <cstdint>
#include <string>

#include "trainer.h"

namespace specd::training {

struct SpeedOptions {
  ModelShape shape;
  int64_t vocab = 4096;
  int64_t batch = 16;
  int64_t seq = 256;
  int64_t steps = 5;  // measured, after one warm-up step
  int threads = 2;
  ModelShape teacher;           // used when distill is set
  bool distill = false;
};

struct SpeedResult {
  int64_t parameters = 0;
  double seconds_per_step = 0;
  double tokens_per_second = 0;
};

SpeedResult measure_training_speed(const SpeedOptions& options);

}  // namespace specd::training
