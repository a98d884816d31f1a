#include "batches.h"

#include <random>
#include <stdexcept>
#include <string>

#include "util/splitmix.h"

namespace specd::training {
namespace {

Batch windows(const std::vector<int32_t>& ids, const std::vector<int64_t>& offsets, int64_t seq) {
  const int64_t rows = static_cast<int64_t>(offsets.size());
  Batch b{torch::empty({rows, seq}, torch::kLong), torch::empty({rows, seq}, torch::kLong)};
  auto inputs = b.inputs.accessor<int64_t, 2>();
  auto targets = b.targets.accessor<int64_t, 2>();
  for (int64_t r = 0; r < rows; ++r) {
    for (int64_t t = 0; t < seq; ++t) {
      inputs[r][t] = ids[offsets[r] + t];
      targets[r][t] = ids[offsets[r] + t + 1];
    }
  }
  return b;
}

}  // namespace

Batch sample_batch(const std::vector<int32_t>& ids, int64_t batch, int64_t seq, uint64_t seed, int64_t step) {
  const int64_t last_offset = static_cast<int64_t>(ids.size()) - seq - 1;
  if (last_offset < 0)
    throw std::invalid_argument("the training text has " + std::to_string(ids.size()) + " tokens, fewer than seq + 1");
  std::mt19937_64 rng(splitmix64(seed ^ splitmix64(static_cast<uint64_t>(step))));
  std::uniform_int_distribution<int64_t> offset(0, last_offset);
  std::vector<int64_t> offsets(batch);
  for (auto& o : offsets) o = offset(rng);
  return windows(ids, offsets, seq);
}

std::vector<Batch> evaluation_batches(const std::vector<int32_t>& ids, int64_t batch, int64_t seq, int64_t max_tokens) {
  const int64_t available = (static_cast<int64_t>(ids.size()) - 1) / seq;
  const int64_t count = std::min(available, max_tokens / seq);
  std::vector<Batch> batches;
  for (int64_t first = 0; first < count; first += batch) {
    std::vector<int64_t> offsets;
    for (int64_t w = first; w < std::min(count, first + batch); ++w) offsets.push_back(w * seq);
    batches.push_back(windows(ids, offsets, seq));
  }
  return batches;
}

}  // namespace specd::training
