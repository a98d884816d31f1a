#pragma once
// The calibration runs that decode with the models, prompt by prompt into a journal:
// - CSD (the CSD paper §4.2, Phase 1): standard speculative decoding with the draft chain over the
//   calibration prompts, recording every rejection as (drafted token x, target token t*, logit
//   gap z(x) - z(t*) on the target's raw logits), where t* is the token the lossless rule emitted
//   instead (the residual draw at T > 0, the argmax at T = 0): the artifact's correction memory.
// - SAM-Decoding's static corpus: the target's greedy answer to each calibration prompt.
// A calibration decodes each prompt K times (--samples-per-prompt), each with its own seed: a
// unit is one (prompt, sample) decode and each unit's result depends only on the models, the
// options and its index, so a resumed or sharded run equals an uninterrupted one.
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
  SamplingParams sampling;     // CSD: the paper calibrates at T = 0.6; unit u is decoded with seed + u
  int64_t max_new_tokens = 0;  // per prompt; 0: each prompt's own max_new_tokens
  int32_t samples_per_prompt = 1;            // K: decodes of each prompt, each with its own seed
  int32_t shard_index = 0, shard_count = 1;  // this run decodes the units with index % count == index
};

// One decode of a calibration: sample k of prompt i among P prompts is unit k * P + i, so the
// first P units are the K = 1 calibration and a larger K extends a corpus without changing what
// it holds. The unit's index is its row in the artifact's prompts table and its seed offset.
struct CalibrationUnit {
  int32_t index = 0, prompt = 0, sample = 0;
};

// The units of P prompts with K samples each that a shard owns (index % count == shard), by index.
// std::invalid_argument when K * P does not fit an int32 index.
std::vector<CalibrationUnit> shard_units(int64_t prompt_count, int32_t samples_per_prompt, int32_t shard_index, int32_t shard_count);

// The prompt's ids (its first turn, with the tokenizer's special tokens); InputError naming the
// prompt when it does not fit the target's context.
std::vector<int32_t> encode_prompt(const LlamaModel& target, const Tokenizer& tokenizer, const WorkloadItem& item);
// A prompts-table row with the counts every calibration has.
CalibratedPrompt prompt_record(int32_t index, const WorkloadItem& item, size_t prompt_tokens, size_t new_tokens);

// Both decode every unit of the shard that the journal does not hold yet and record it there
// (one transaction per unit, so an interrupted run loses at most the unit in flight).
// InputError naming the prompt when it does not fit the target's context.
void collect_csd_rejections(const LlamaModel& target, std::shared_ptr<const LlamaModel> draft, const Tokenizer& tokenizer,
                            const std::vector<WorkloadItem>& items, const std::vector<int32_t>& stop_tokens,
                            const CalibrationRunOptions& options, CalibrationJournal& journal, Progress& progress);

// Greedy answers: options.gamma, options.sampling and options.samples_per_prompt are unused (one
// answer per prompt).
void collect_sam_corpus(const LlamaModel& target, const Tokenizer& tokenizer, const std::vector<WorkloadItem>& items,
                        const std::vector<int32_t>& stop_tokens, const CalibrationRunOptions& options, CalibrationJournal& journal,
                        Progress& progress);

}  // namespace specd
