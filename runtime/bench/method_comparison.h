#pragma once
// specd bench --methods as a library: decoding methods against autoregressive decoding on a set
// of workload items, in the same run, per category and overall. Speed: mean accepted tokens per
// step (MAT, counting the target's own token; AR = 1.00), acceptance rate, tokens/s, speedup (the
// mean over prompts of the method's throughput divided by AR's, as Spec-Bench computes it,
// prefill included) and the same ratio over the decoding time alone; a calibrated policy's
// throughput over its paper's lossless baseline, prompt by prompt, when both ran. Drift and quality, for
// lossy policies beside AR: outputs equal to AR's at T = 0 and where they first differ, the
// target's NLL per generated token, chrF against the workload's references.
#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "bench/quality.h"
#include "bench/request_runner.h"
#include "stats/statistics.h"
#include "util/progress.h"
#include "workload/workload.h"

namespace specd {

class LlamaModel;
class Tokenizer;

struct ComparisonSetup {
  std::vector<std::string> methods;  // "ar" first: every ratio is against it
  std::vector<WorkloadItem> items;
  int repeats = 3;                   // timed runs per prompt and method (median)
  SamplingParams sampling;
  std::vector<int32_t> stop_tokens;
  bool quality = false;              // NLL and chrF (a teacher-forced target forward per run)
  // method -> the method its paired ratio (MethodTally::over_baseline) is against; a method not
  // named here is against its paper's baseline (paper_baseline()).
  std::map<std::string, std::string> baselines;
};

struct MethodTally {
  int64_t prompts = 0, tokens = 0, steps = 0, drafted = 0, accepted = 0, rescued = 0, relaxed = 0, equal_to_ar = 0;
  double wall_ms = 0;
  MeanAccumulator speedup, decode_speedup;
  // Per prompt, the method's throughput over its baseline's (ComparisonSetup::baselines) in the same
  // run: a paired ratio, whose interval excludes the prompts' spread that both share. Empty when
  // the baseline did not run.
  MeanAccumulator over_baseline;
  MeanAccumulator divergence;        // first differing token index, over prompts that differ from AR
  double nll = 0;                    // summed over the scored tokens
  int64_t nll_tokens = 0;
  ChrfStats chrf;
  int64_t chrf_turns = 0;            // turns that had a reference
  void add(const MethodTally& other);
  nlohmann::json to_json(bool greedy, bool quality) const;
  // Every field as it is (sums, not means), to store one request's tally and add it back later
  // (bench --resume). from_record throws nlohmann::json's errors on a malformed record.
  nlohmann::json to_record() const;
  static MethodTally from_record(const nlohmann::json& record);
};

// One workload item measured: each method's first run (its tokens and step traces) and tally.
struct ItemResult {
  size_t index = 0;  // in ComparisonSetup::items
  std::map<std::string, RequestRun> runs;
  std::map<std::string, MethodTally> tallies;
};

struct ComparisonResult {
  // method -> category -> tally, with an "overall" category.
  std::map<std::string, std::map<std::string, MethodTally>> tallies;
  std::vector<std::string> categories;  // in name order, "overall" last
};

// Prompts interleave methods, and repeats interleave within a prompt, so machine drift hits all
// alike; within a prompt and repeat the methods run in a shuffled order (fixed by the prompt's
// index and the repeat), so no method always runs in the same place. `on_item` sees each item as soon as it is measured (traces are written there, so a
// killed bench keeps its finished items). `finished` holds the tallies of items measured by an
// earlier, interrupted run (method -> tally, items 0..finished.size()-1 in order): they are added,
// not measured again. InputError when a prompt does not fit the context.
ComparisonResult compare_methods(const LlamaModel& target, std::map<std::string, Policy>& policies, const Tokenizer& tokenizer,
                                 const ComparisonSetup& setup, Progress& progress,
                                 const std::function<void(const ItemResult&)>& on_item = {},
                                 const std::vector<std::map<std::string, MethodTally>>& finished = {});

}  // namespace specd
