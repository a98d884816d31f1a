#include "bench/request_runner.h"

#include <algorithm>
#include <cmath>

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
    const std::string text = tokenizer.decode(stop_free, /*skip_special_tokens=*/true);
    conversation += text;
    run.turn_prompts.push_back(std::move(prompt));
    run.turn_outputs.push_back(std::move(produced));
    run.turn_texts.push_back(text);
  }
  return run;
}

double target_nll(const LlamaModel& target, const RequestRun& run) {
  double total = 0;
  const int64_t vocab = target.config().vocab_size;
  for (size_t turn = 0; turn < run.turn_prompts.size(); ++turn) {
    const auto& prompt = run.turn_prompts[turn];
    const auto& output = run.turn_outputs[turn];
    if (output.empty()) continue;
    KvCache cache = target.new_cache(static_cast<int64_t>(prompt.size() + output.size()));
    ForwardRequest request;
    request.tokens.assign(prompt.begin(), prompt.end());
    request.tokens.insert(request.tokens.end(), output.begin(), output.end() - 1);  // the last token predicts nothing we score
    const FloatRows logits = target.forward(cache, request).logits;
    for (size_t i = 0; i < output.size(); ++i) {
      // -log softmax(row)[token] = log sum exp(row - max) - (row[token] - max)
      const float* row = logits.row(static_cast<int64_t>(prompt.size()) - 1 + static_cast<int64_t>(i));
      const float top = *std::max_element(row, row + vocab);
      double sum = 0;
      for (int64_t v = 0; v < vocab; ++v) sum += std::exp(static_cast<double>(row[v] - top));
      total += std::log(sum) - static_cast<double>(row[output[i]] - top);
    }
  }
  return total;
}

}  // namespace specd
