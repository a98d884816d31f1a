#include "decode/autoregressive.h"

#include <algorithm>
#include <chrono>

#include "model/llama_model.h"
#include "util/error.h"

namespace specd {
namespace {

double ms_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
}

}  // namespace

int64_t new_token_budget(const LlamaModel& model, const std::vector<int32_t>& prompt, int64_t max_new_tokens) {
  const int64_t context = model.context_length();
  if (prompt.empty()) input_error("prompt", "is empty");
  if (static_cast<int64_t>(prompt.size()) >= context)
    input_error("prompt", std::to_string(prompt.size()) + " tokens do not fit the model's context of " +
                              std::to_string(context) + " tokens (one position is needed for a new token)");
  for (int32_t t : prompt)
    if (t < 0 || t >= model.config().vocab_size) input_error("prompt", "token id " + std::to_string(t) + " is outside the vocabulary");
  return std::min<int64_t>(max_new_tokens, context - static_cast<int64_t>(prompt.size()));
}

GenerateOutput generate_autoregressive(const LlamaModel& model, const std::vector<int32_t>& prompt,
                                       const GenerateOptions& options) {
  const int64_t budget = new_token_budget(model, prompt, options.max_new_tokens);
  Sampler sampler(options.sampling);
  KvCache cache = model.new_cache(static_cast<int64_t>(prompt.size()) + budget);

  GenerateOutput out;
  out.stats.prompt_tokens = static_cast<int64_t>(prompt.size());
  if (budget <= 0) return out;

  auto start = std::chrono::steady_clock::now();
  ForwardRequest request;
  request.tokens.assign(prompt.begin(), prompt.end());
  request.logits = LogitsWanted::Last;
  FloatRows logits = model.forward(cache, request).logits;
  out.stats.prefill_ms = ms_since(start);

  auto decode_start = std::chrono::steady_clock::now();
  double callback_ms = 0;
  request.logits = LogitsWanted::Last;
  while (true) {
    int32_t token = sampler.sample(logits.row(0), logits.cols);
    out.tokens.push_back(token);
    if (options.on_token) {
      // Printing is the caller's cost, not the model's: keep it out of decode_ms.
      auto callback_start = std::chrono::steady_clock::now();
      options.on_token(token);
      callback_ms += ms_since(callback_start);
    }
    if (std::find(options.stop_tokens.begin(), options.stop_tokens.end(), token) != options.stop_tokens.end()) {
      out.stats.stopped = true;
      break;
    }
    if (static_cast<int64_t>(out.tokens.size()) >= budget) break;
    request.tokens.assign(1, token);
    logits = model.forward(cache, request).logits;
  }
  out.stats.new_tokens = static_cast<int64_t>(out.tokens.size());
  out.stats.decode_ms = ms_since(decode_start) - callback_ms;
  return out;
}

}  // namespace specd
