#pragma once
// Training and evaluation batches cut from a token stream.
#include <torch/torch.h>

#include <cstdint>
#include <vector>

namespace specd::training {

struct Batch {
  torch::Tensor inputs;   // [batch, seq] int64
  torch::Tensor targets;  // [batch, seq] int64: the inputs shifted by one token
};

// `batch` windows at uniformly random offsets. The draw depends only on (seed, step), so a resumed
// run reads exactly the batches an uninterrupted one would, with no generator state to save.
Batch sample_batch(const std::vector<int32_t>& ids, int64_t batch, int64_t seq, uint64_t seed, int64_t step);

// Consecutive non-overlapping windows from the start of the stream, at most `max_tokens` targets in
// all, in batches of at most `batch` windows.
std::vector<Batch> evaluation_batches(const std::vector<int32_t>& ids, int64_t batch, int64_t seq, int64_t max_tokens);

}  // namespace specd::training
