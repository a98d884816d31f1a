#include "calibrate/calibration_runs.h"

#include <chrono>
#include <limits>
#include <stdexcept>

#include "decode/autoregressive.h"
#include "model/llama_model.h"
#include "methods/method_registry.h"
#include "tokenizer/tokenizer.h"
#include "util/error.h"

namespace specd {

std::vector<CalibrationUnit> shard_units(int64_t prompt_count, int32_t samples_per_prompt, int32_t shard_index, int32_t shard_count) {
  const int64_t total = prompt_count * samples_per_prompt;
  if (total > std::numeric_limits<int32_t>::max()) throw std::invalid_argument("shard_units: more than 2^31 units");
  std::vector<CalibrationUnit> units;
  for (int64_t u = shard_index; u < total; u += shard_count)
    units.push_back(CalibrationUnit{static_cast<int32_t>(u), static_cast<int32_t>(u % prompt_count), static_cast<int32_t>(u / prompt_count)});
  return units;
}

std::vector<int32_t> encode_prompt(const LlamaModel& target, const Tokenizer& tokenizer, const WorkloadItem& item) {
  const std::vector<int32_t> prompt = tokenizer.encode(item.turns.front(), /*add_special_tokens=*/true);
  if (static_cast<int64_t>(prompt.size()) + 1 >= target.context_length())
    input_error("calibration prompt " + item.id, "does not fit the target's context of " + std::to_string(target.context_length()) + " tokens");
  return prompt;
}

CalibratedPrompt prompt_record(int32_t index, const WorkloadItem& item, size_t prompt_tokens, size_t new_tokens) {
  CalibratedPrompt record;
  record.index = index;
  record.id = item.id;
  record.category = item.category;
  record.prompt_tokens = static_cast<int64_t>(prompt_tokens);
  record.new_tokens = static_cast<int64_t>(new_tokens);
  return record;
}

void collect_csd_rejections(const LlamaModel& target, std::shared_ptr<const LlamaModel> draft, const Tokenizer& tokenizer,
                            const std::vector<WorkloadItem>& items, const std::vector<int32_t>& stop_tokens,
                            const CalibrationRunOptions& options, CalibrationJournal& journal, Progress& progress) {
  const std::set<int32_t> done = journal.finished_prompts(kCsdPolicy);
  MethodOptions sd;
  sd.gamma = options.gamma;
  sd.adaptive_budget = false;  // rejections at every depth, as the paper's fixed gamma
  for (const CalibrationUnit& unit : shard_units(static_cast<int64_t>(items.size()), options.samples_per_prompt, options.shard_index,
                                                 options.shard_count)) {
    const int32_t index = unit.index;
    if (done.count(index)) continue;
    const WorkloadItem& item = items[unit.prompt];
    GenerateOptions generate;
    generate.max_new_tokens = options.max_new_tokens ? options.max_new_tokens : item.max_new_tokens;
    generate.sampling = options.sampling;
    generate.sampling.seed = options.sampling.seed + static_cast<uint64_t>(index);
    generate.stop_tokens = stop_tokens;
    // A fresh policy per unit: the draft chain's own random stream starts from the unit's seed.
    Policy policy = make_policy("sd", MethodContext{target, draft, generate.sampling, sd, nullptr});
    const std::vector<int32_t> prompt = encode_prompt(target, tokenizer, item);

    std::vector<CsdRejection> rejections;
    int32_t step = 0;
    auto on_step = [&](const DraftTree& tree, const AcceptResult& result, const float* logits, int64_t vocab) {
      for (int32_t node = 1; node < tree.size(); ++node) {
        if (result.verdicts[node] != NodeVerdict::Rejected) continue;
        const float* row = logits + static_cast<int64_t>(tree.parents[node]) * vocab;
        const int32_t x = tree.tokens[node], t = result.next_token;
        rejections.push_back(CsdRejection{index, step, tree.depths[node], x, t, row[x] - row[t]});
      }
      ++step;
    };
    const auto start = std::chrono::steady_clock::now();
    SpeculativeOutput out = decode_with(target, policy, prompt, generate, on_step);
    CalibratedPrompt record = prompt_record(index, item, prompt.size(), out.tokens.size());
    record.steps = static_cast<int64_t>(out.steps.size());
    for (const StepTrace& s : out.steps) record.drafted += s.draft_size, record.accepted += s.accepted_length;
    record.rejections = static_cast<int64_t>(rejections.size());
    record.wall_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
    journal.record_prompt(kCsdPolicy, record, rejections);
    progress.step("prompt");
  }
}

void collect_sam_corpus(const LlamaModel& target, const Tokenizer& tokenizer, const std::vector<WorkloadItem>& items,
                        const std::vector<int32_t>& stop_tokens, const CalibrationRunOptions& options, CalibrationJournal& journal,
                        Progress& progress) {
  const std::set<int32_t> done = journal.finished_prompts(kSamCorpusPolicy);
  for (const CalibrationUnit& unit : shard_units(static_cast<int64_t>(items.size()), 1, options.shard_index, options.shard_count)) {
    const int32_t index = unit.index;
    if (done.count(index)) continue;
    const WorkloadItem& item = items[index];
    GenerateOptions generate;
    generate.max_new_tokens = options.max_new_tokens ? options.max_new_tokens : item.max_new_tokens;
    generate.stop_tokens = stop_tokens;
    const std::vector<int32_t> prompt = encode_prompt(target, tokenizer, item);
    const GenerateOutput out = generate_autoregressive(target, prompt, generate);
    CalibratedPrompt record = prompt_record(index, item, prompt.size(), out.tokens.size());
    record.steps = record.new_tokens;
    record.wall_ms = out.stats.prefill_ms + out.stats.decode_ms;
    journal.record_document(kSamCorpusPolicy, record, out.tokens);
    progress.step("answer");
  }
}

}  // namespace specd
