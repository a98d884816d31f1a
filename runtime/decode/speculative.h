#pragma once
// The speculative decoding loop: prefill, then steps of draft -> one target forward over the tree
// -> accept -> commit the accepted path in the KV cache, until EOS or the token budget. A step
// commits the accepted drafted tokens plus one token from the target (bonus or correction), so
// plain autoregressive decoding is the special case of an empty draft.
#include <cstdint>
#include <string>
#include <vector>

#include "decode/autoregressive.h"
#include "spec/acceptor.h"
#include "spec/draft_budget.h"
#include "spec/drafter.h"
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
};

struct SpeculativeOutput {
  std::vector<int32_t> tokens;
  GenerateStats stats;
  std::vector<StepTrace> steps;
};

SpeculativeOutput generate_speculative(const LlamaModel& target, Drafter& drafter, Acceptor& acceptor,
                                       const std::vector<int32_t>& prompt, const SpeculativeOptions& options);

}  // namespace specd
