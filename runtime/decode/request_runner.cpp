#include "decode/request_runner.h"

#include "decode/autoregressive.h"
#include "decode/speculative.h"
#include "model/llama_model.h"
#include "tokenizer/tokenizer.h"
#include "util/error.h"

namespace specd {

RequestRun run_request(const LlamaModel& target, Policy& policy, const Tokenizer& tokenizer, const WorkloadItem& item,
                       const SamplingParams& sampling, const std::vector<int32_t>& stop_tokens) {
  RequestRun run;
  std::string conversation;
  for (size_t turn = 0; turn < item.turns.size(); ++turn) {
    conversation += (turn ? "\n" : "") + item.turns[turn];
    std::vector<int32_t> prompt = tokenizer.encode(conversation, /*add_special_tokens=*/true);
    if (turn == 0) run.prompt_tokens = static_cast<int64_t>(prompt.size());
    if (static_cast<int64_t>(prompt.size()) + 1 >= target.context_length())
      input_error("workload " + item.id, "turn " + std::to_string(turn + 1) + " is " + std::to_string(prompt.size()) +
                                             " tokens; the context is " + std::to_string(target.context_length()));
    GenerateOptions options;
    options.max_new_tokens = item.max_new_tokens;
    options.sampling = sampling;
    options.sampling.seed = sampling.seed + turn;  // each turn its own stream, the same for every method
    options.stop_tokens = stop_tokens;

    std::vector<int32_t> produced;
    if (policy.autoregressive) {
      GenerateOutput out = generate_autoregressive(target, prompt, options);
      produced = out.tokens;
      run.wall_ms += out.stats.prefill_ms + out.stats.decode_ms;
      run.prefill_ms += out.stats.prefill_ms;
      run.steps += static_cast<int64_t>(out.tokens.size());
    } else {
      SpeculativeOutput out = decode_with(target, policy, prompt, options);
      produced = out.tokens;
      run.wall_ms += out.stats.prefill_ms + out.stats.decode_ms;
      run.prefill_ms += out.stats.prefill_ms;
      run.steps += static_cast<int64_t>(out.steps.size()) + 1;  // + the prefill's token
      for (const StepTrace& step : out.steps) {
        run.drafted += step.draft_size;
        run.accepted += step.accepted_length;
      }
      run.traces.insert(run.traces.end(), out.steps.begin(), out.steps.end());
    }
    run.tokens.insert(run.tokens.end(), produced.begin(), produced.end());
    std::vector<int32_t> stop_free = produced;
    if (!stop_free.empty() && std::find(stop_tokens.begin(), stop_tokens.end(), stop_free.back()) != stop_tokens.end()) stop_free.pop_back();
    conversation += tokenizer.decode(stop_free, /*skip_special_tokens=*/true);
  }
  return run;
}

}  // namespace specd
