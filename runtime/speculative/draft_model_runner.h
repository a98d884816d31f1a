#pragma once
// A draft model with its own KV cache, kept in step with the committed text: sync() makes the
// cache hold exactly a given token sequence, reusing the longest cached prefix, and returns the
// logits after its last token.
#include <ATen/core/Tensor.h>

#include <cstdint>
#include <memory>
#include <vector>

#include "model/kv_cache.h"

namespace specd {

class LlamaModel;

class DraftModelRunner {
 public:
  static constexpr int64_t kTreeRows = 1024;

  explicit DraftModelRunner(std::shared_ptr<const LlamaModel> model);

  const LlamaModel& model() const { return *model_; }
  void reset();  // empties the cache for a new request (keeps its memory)
  // Logits [vocab] (CPU, float32) after the last of `tokens`.
  at::Tensor sync(const std::vector<int32_t>& tokens);
  // Drops cached rows past the first `length` (also rows a caller appended beyond the synced tokens).
  void truncate(int64_t length);
  KvCache& cache() { return cache_; }
  int64_t length() const { return static_cast<int64_t>(cached_.size()); }

 private:
  std::shared_ptr<const LlamaModel> model_;
  KvCache cache_;
  std::vector<int32_t> cached_;  // the tokens whose rows the cache holds
};

}  // namespace specd
