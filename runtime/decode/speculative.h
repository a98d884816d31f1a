#pragma once
// The speculative decoding loop: prefill, then steps of draft -> one target forward over the tree
// -> accept -> commit the accepted path in the KV cache, until EOS or the token budget. A step
// commits the accepted drafted tokens plus one token from the target (bonus or correction), so
// plain autoregressive decoding is the special case of an empty draft.
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "decode/autoregressive.h"
#include "speculative/acceptor.h"
#include "speculative/draft_budget.h"
#include "speculative/drafter.h"
#include "speculative/pruner.h"
#include "trace/trace_records.h"

namespace specd {

class LlamaModel;

struct SpeculativeOptions {
  GenerateOptions generate;    // budget, sampling, stop tokens, on_token
  int32_t max_draft_nodes = 16;  // drafted nodes per step besides the root
  int32_t max_draft_depth = 8;
  // Optional: caps each step's drafted nodes (and depth) by expected tokens per ms; reset at the
  // start of the request and fed every step's outcome.
  DraftBudget* budget = nullptr;
  // Record the target's entropy at each root in the step traces (a pass over the vocabulary,
  // a few % of a small model's step).
  bool root_entropy = true;
  // Whether the output keeps a StepTrace per step (AR, which has no use for them, does not build them).
  bool record_steps = true;
  // Optional: drops drafted nodes before verification (design.md's pruner stage).
  Pruner* pruner = nullptr;
  // Optional: sees every step's verified tree, its verdicts and the target's logits rows
  // ([tree.size(), vocab]) before the drafter does; calibration records rejections with it.
  std::function<void(const DraftTree& tree, const AcceptResult& result, const float* logits, int64_t vocab)> on_step;
};

struct SpeculativeOutput {
  std::vector<int32_t> tokens;
  GenerateStats stats;
  std::vector<StepTrace> steps;
};

SpeculativeOutput generate_speculative(const LlamaModel& target, Drafter& drafter, Acceptor& acceptor,
                                       const std::vector<int32_t>& prompt, const SpeculativeOptions& options);

}  // namespace specd
