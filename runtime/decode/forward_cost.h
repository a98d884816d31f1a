#pragma once
// A quick measurement of a model's cost curve, for the cost-aware draft budget: the median time of
// one forward of n chain tokens (all logits, as verification needs) on a warm cache.
#include <cstdint>
#include <vector>

#include "model/kv_cache.h"
#include "spec/draft_budget.h"

namespace specd {

class LlamaModel;

// A cache holding `prefix` filler tokens, on which one forward of n chain tokens (all logits, as
// verification needs) is timed at a time; each forward's new rows are dropped again. Shared by
// specd bench's precise timings and the quick curve below.
class ForwardTimer {
 public:
  ForwardTimer(const LlamaModel& model, int64_t prefix, int64_t max_tokens);
  double time_ms(int64_t n);

 private:
  const LlamaModel& model_;
  int64_t prefix_;
  KvCache cache_;
};

// Sizes 1, 2, 3, 4, 6, 8, 12, 16, ... up to max_tokens (and those that fit the context after
// `prefix` cached tokens), `repeats` timed forwards each after a warm-up. A few tens of ms for the
// demo target.
CostCurve measure_cost_curve(const LlamaModel& model, int32_t max_tokens, int64_t prefix = 64, int repeats = 5);

}  // namespace specd
