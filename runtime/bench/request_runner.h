#pragma once
// One workload item decoded by one method, the way specd bench measures it: each turn of a
// multi-turn item is appended to the conversation so far and
// answered in turn (data/workloads/README.md: a newline between the answer and the next turn);
// times and counts add up over the turns.
#include <cstdint>
#include <vector>

#include "methods/method_registry.h"
#include "trace/trace_records.h"
#include "workload/workload.h"

namespace specd {

class Tokenizer;

struct RequestRun {
  std::vector<int32_t> tokens;   // new tokens of every turn, in order
  int64_t prompt_tokens = 0;     // of the first turn
  double wall_ms = 0;            // prefill + decode, all turns
  double prefill_ms = 0;         // the prefill part of wall_ms (the same work for every method)
  int64_t steps = 0;             // AR: one per token
  int64_t drafted = 0;           // drafted tokens verified
  int64_t accepted = 0;          // drafted tokens accepted
  std::vector<StepTrace> traces;
  // Per turn: the prompt as decoded (the conversation so far), the new tokens and their text.
  std::vector<std::vector<int32_t>> turn_prompts, turn_outputs;
  std::vector<std::string> turn_texts;
};

// Throws InputError when a turn does not fit the context.
RequestRun run_request(const LlamaModel& target, Policy& policy, const Tokenizer& tokenizer, const WorkloadItem& item,
                       const SamplingParams& sampling, const std::vector<int32_t>& stop_tokens);

// The target's negative log-likelihood (nats, softmax of the raw logits at T = 1) of every new
// token of the run given what preceded it, by one teacher-forced forward per turn: the quality
// side of a lossy policy's drift. Returns the sum over tokens.
double target_nll(const LlamaModel& target, const RequestRun& run);

}  // namespace specd
