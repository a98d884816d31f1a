#pragma once
// Random-weight Hugging Face checkpoints of any Llama-family shape: benchmark models with the
// shapes of published anchors, and test fixtures. Same seed, same shape: same bytes.
#include <cstdint>
#include <string>

#include "io/dtype.h"
#include "io/model_config.h"

namespace specd {

struct RandomCheckpointOptions {
  DType dtype = DType::F32;
  double stddev = 0.02;         // weights ~ N(0, stddev^2)
  double norm_gain_jitter = 0;  // norm gains ~ 1 + N(0, jitter^2); 0 gives HF's initial gains of 1
  uint64_t seed = 0;
  size_t max_shard_bytes = 0;   // > 0: write shards + index instead of model.safetensors
};

// Writes DIR/config.json and the weights; DIR is created if needed.
void write_random_checkpoint(const std::string& dir, const ModelConfig& config, const RandomCheckpointOptions& options);

}  // namespace specd
