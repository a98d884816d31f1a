#pragma once
// The calibration runs that decode with the models, prompt by prompt into a journal:
// - CSD (the CSD paper §4.2, Phase 1): standard speculative decoding with the draft chain over the
//   calibration prompts, recording every rejection as (drafted token x, target token t*, logit
//   gap z(x) - z(t*) on the target's raw logits), where t* is the token the lossless rule emitted
//   instead (the residual draw at T > 0, the argmax at T = 0): the artifact's correction memory.
// - SAM-Decoding's static corpus: the target's greedy answer to each calibration prompt.
// Each prompt's result depends only on the models, the options and its index, so a resumed or
// sharded run equals an uninterrupted one.
#include <cstdint>
#include <functional>
#include <memory>
#include <vector>

#include "artifact/artifact.h"
#include "calibrate/calibration_journal.h"
#include "sampling/sampler.h"
#include "util/progress.h"
#include "workload/workload.h"

namespace specd {

class LlamaModel;
class Tokenizer;

struct CalibrationRunOptions {
  int32_t gamma = 6;           // CSD: draft chain length (the paper's)
  SamplingParams sampling;     // CSD: the paper calibrates at T = 0.6; prompt i is decoded with seed + i
  int64_t max_new_tokens = 0;  // per prompt; 0: each prompt's own max_new_tokens
  int32_t shard_index = 0, shard_count = 1;  // this run decodes the prompts with index % count == index
};

// The prompt indices a shard owns.
std::vector<int32_t> shard_prompts(int64_t prompt_count, int32_t shard_index, int32_t shard_count);

// The prompt's ids (its first turn, with the tokenizer's special tokens); InputError naming the
// prompt when it does not fit the target's context.
std::vector<int32_t> encode_prompt(const LlamaModel& target, const Tokenizer& tokenizer, const WorkloadItem& item);
// A prompts-table row with the counts every calibration has.
CalibratedPrompt prompt_record(int32_t index, const WorkloadItem& item, size_t prompt_tokens, size_t new_tokens);

// Both decode every prompt of the shard that the journal does not hold yet and record it there
// (one transaction per prompt, so an interrupted run loses at most the prompt in flight).
// InputError naming the prompt when it does not fit the target's context.
void collect_csd_rejections(const LlamaModel& target, std::shared_ptr<const LlamaModel> draft, const Tokenizer& tokenizer,
                            const std::vector<WorkloadItem>& items, const std::vector<int32_t>& stop_tokens,
                            const CalibrationRunOptions& options, CalibrationJournal& journal, Progress& progress);

// Greedy answers: options.gamma and options.sampling are unused.
void collect_sam_corpus(const LlamaModel& target, const Tokenizer& tokenizer, const std::vector<WorkloadItem>& items,
                        const std::vector<int32_t>& stop_tokens, const CalibrationRunOptions& options, CalibrationJournal& journal,
                        Progress& progress);

}  // namespace specd
