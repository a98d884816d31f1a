#pragma once
// What a forward of n new tokens costs: timed precisely for specd bench, and quickly as the
// cost-aware draft budget's starting curve (the median time of one forward of n chain tokens,
// all logits as verification needs, on a warm cache).
#include <cstdint>
#include <functional>
#include <utility>
#include <vector>

#include "model/kv_cache.h"
#include "speculative/draft_budget.h"

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

// For each n in `sizes`, `repeats` timings (ms) of one forward of n chain tokens with all logits
// on a cache holding `prefix` tokens; the new rows are truncated away after each. The sizes take
// turns within each repeat, so that a busy spell of the machine hits them alike and their ratios
// (what the draft budget uses) stay right. Includes a warm-up forward per size.
std::vector<std::vector<double>> time_forwards(const LlamaModel& model, int64_t prefix, const std::vector<int64_t>& sizes,
                                               int repeats, const std::function<void()>& on_repeat);

// Whether the machine's caches keep the weights while the model sits idle: for each gap (ms), the
// mean time of the 1st, 2nd, ... `forwards`-th one-token forward after the model was idle that
// long, over `rounds` rounds in which the gaps take turns (each gap comes after 2 x `forwards`
// back-to-back forwards). Where the weights fit the last-level cache only while they are read
// continuously (a shared cache that other cores or tenants also fill), any pause of the target
// (a draft model's forwards among them) makes its next forwards slower, and for several of them.
std::vector<std::vector<double>> time_after_idle(const LlamaModel& model, int64_t prefix, const std::vector<double>& gaps_ms,
                                                 int forwards, int rounds, const std::function<void()>& on_round);

// The precise curve: sizes 1, 2, 4, ..., 64 (those that fit after 64 cached tokens), each the
// median of `repeats` samples of time_forwards (~50 ms of forwards a sample; about a second for
// the large demo target). specd bench prints it and shares it among the methods it compares, and
// calibrate sweep among its runs, so that methods or runs compared with each other decide their
// draft lengths from one curve.
std::vector<std::pair<int32_t, double>> timed_forward_costs(const LlamaModel& model, int repeats);

// Sizes 1, 2, 3, 4, 6, 8, 12, 16, ... up to max_tokens (and those that fit the context after
// `prefix` cached tokens), `repeats` timed forwards each after a warm-up. A few tens of ms for the
// demo target.
CostCurve measure_cost_curve(const LlamaModel& model, int32_t max_tokens, int64_t prefix = 64, int repeats = 5);

}  // namespace specd
