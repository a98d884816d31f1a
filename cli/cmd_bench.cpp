// specd bench (first form): autoregressive decode speed and the cost of one forward of n new
// tokens on a warm cache. Medians over repeats; nothing here is a pass/fail threshold.
#include <sys/resource.h>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstdio>
#include <iostream>
#include <random>

#include "bench/forward_cost.h"
#include "bench/statistics.h"
#include "decode/autoregressive.h"
#include "model/cpu_threads.h"
#include "model/kv_memory.h"
#include "model/llama_model.h"
#include "method_options.h"
#include "options.h"
#include "tokenizer/tokenizer.h"
#include "util/error.h"
#include "util/progress.h"

namespace specd::cli {
namespace {

double peak_rss_mib() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  return usage.ru_maxrss / 1024.0;  // ru_maxrss is in KiB on Linux
}

// Deterministic prompts of the given lengths: the cost of a step does not depend on which
// tokens it sees, and this needs no tokenizer (random-weight benchmark models have none).
std::vector<std::vector<int32_t>> synthetic_prompts(const std::vector<int64_t>& lengths, int64_t vocab) {
  std::mt19937 rng(1234);
  std::uniform_int_distribution<int32_t> token(0, static_cast<int32_t>(vocab - 1));
  std::vector<std::vector<int32_t>> prompts;
  for (int64_t length : lengths) {
    std::vector<int32_t> prompt(static_cast<size_t>(length));
    for (auto& t : prompt) t = token(rng);
    prompts.push_back(std::move(prompt));
  }
  return prompts;
}

}  // namespace

int run_bench(const Args& args) {
  for (const auto& arg : args)
    if (arg == "--methods" || arg.rfind("--methods=", 0) == 0) return run_bench_methods(args);
  std::string model_dir;
  std::vector<int64_t> prompt_lengths{32, 128}, forward_sizes{1, 8, 32};
  int64_t new_tokens = 64, prefix = 64;
  int repeats = 5;
  bool json = false;
  DeviceSpec device;
  po::options_description desc("specd bench");
  desc.add_options()
      ("model", po::value(&model_dir)->default_value(default_model_dir()), "Hugging Face model directory")
      ("prompt-lengths", po::value(&prompt_lengths)->multitoken(), "prompt lengths in tokens for the decode runs")
      ("new-tokens", po::value(&new_tokens)->default_value(64), "tokens decoded per run (EOS ignored)")
      ("forward-sizes", po::value(&forward_sizes)->multitoken(), "new-token counts whose forward cost is measured")
      ("prefix", po::value(&prefix)->default_value(64), "cached tokens before each measured forward")
      ("repeats", po::value(&repeats)->default_value(5), "repeats per measurement (the median is reported)")
      ("json", po::bool_switch(&json), "print one JSON object instead of a table");
  add_device_options(desc, device);
  po::variables_map vm;
  if (!parse(args, desc, vm, "usage: specd bench --model DIR [options]")) return 0;
  if (repeats < 1) input_error("--repeats", "must be at least 1");
  if (new_tokens < 2) input_error("--new-tokens", "must be at least 2");
  if (prefix < 1) input_error("--prefix", "must be at least 1");
  for (int64_t n : forward_sizes)
    if (n < 1) input_error("--forward-sizes", "sizes must be at least 1");

  auto model = LlamaModel::load(model_dir, device);
  const auto& cfg = model->config();
  const int64_t context = model->context_length();
  for (int64_t length : prompt_lengths)
    if (length < 1 || length + new_tokens > context) input_error("--prompt-lengths", std::to_string(length) + " + --new-tokens do not fit the context of " + std::to_string(context));
  for (int64_t n : forward_sizes)
    if (prefix + n > context) input_error("--forward-sizes", "prefix + " + std::to_string(n) + " exceeds the context");
  const int64_t longest_prompt = prompt_lengths.empty() ? 0 : *std::max_element(prompt_lengths.begin(), prompt_lengths.end());
  check_request_memory(*model, nullptr, {}, longest_prompt, new_tokens);

  Progress progress(static_cast<int64_t>(repeats) * (prompt_lengths.size() + forward_sizes.size()), "bench", "measurements");
  nlohmann::json report;
  report["model"] = model_dir;
  report["device"] = device.name;
  report["threads"] = resolve_thread_count(device.threads);
  report["shape"] = {{"layers", cfg.num_hidden_layers}, {"hidden", cfg.hidden_size}, {"heads", cfg.num_attention_heads},
                     {"kv_heads", cfg.num_key_value_heads}, {"ffn", cfg.intermediate_size}, {"vocab", cfg.vocab_size}};

  // Autoregressive decode: ms per new token, median over prompts x repeats.
  std::vector<double> decode_ms_per_token;
  GenerateOptions options;
  options.max_new_tokens = new_tokens;
  generate_autoregressive(*model, synthetic_prompts({prompt_lengths[0]}, cfg.vocab_size)[0], options);  // warm-up
  for (const auto& prompt : synthetic_prompts(prompt_lengths, cfg.vocab_size)) {
    for (int r = 0; r < repeats; ++r) {
      GenerateOutput out = generate_autoregressive(*model, prompt, options);
      decode_ms_per_token.push_back(out.stats.decode_ms / (out.stats.new_tokens - 1));
      progress.step("decode");
    }
  }
  report["decode_ms_per_token"] = median(decode_ms_per_token);
  report["decode_tokens_per_s"] = 1000.0 / median(decode_ms_per_token);
  report["decode_new_tokens"] = new_tokens;
  report["prompt_lengths"] = prompt_lengths;

  // One forward of n tokens (a chain, all logits, as verification needs) on `prefix` cached tokens.
  nlohmann::json forward = nlohmann::json::array();
  double one_token_ms = 0;
  const auto samples = time_forwards(*model, prefix, forward_sizes, repeats, [&] { progress.step("forward"); });
  for (size_t s = 0; s < forward_sizes.size(); ++s) {
    const double ms = median(samples[s]);
    if (forward_sizes[s] == 1) one_token_ms = ms;
    forward.push_back({{"tokens", forward_sizes[s]}, {"ms", ms}});
  }
  for (auto& entry : forward)
    if (one_token_ms > 0) entry["vs_one_token"] = entry["ms"].get<double>() / one_token_ms;
  report["forward_prefix"] = prefix;
  report["forward"] = forward;
  // The peak beside what it holds: the weights as the forward keeps them and the most the KV
  // caches reserved at once (their whole capacity, written or not).
  report["peak_rss_mib"] = peak_rss_mib();
  report["weights_mib"] = static_cast<double>(model->weight_bytes()) / (1 << 20);
  report["kv_peak_mib"] = static_cast<double>(kv_memory_peak()) / (1 << 20);
  report["repeats"] = repeats;
  progress.done();

  if (json) {
    std::cout << report.dump(2) << "\n";
    return 0;
  }
  std::printf("model %s on %s (%s), %d threads, median of %d repeats\n", model_dir.c_str(), device.name.c_str(),
              model->uses_cpu_kernels() ? "specd's kernels" : "ATen", report["threads"].get<int>(), repeats);
  std::printf("  autoregressive decode: %.3f ms/token (%.1f tokens/s), %lld new tokens after prompts of", report["decode_ms_per_token"].get<double>(),
              report["decode_tokens_per_s"].get<double>(), static_cast<long long>(new_tokens));
  for (int64_t length : prompt_lengths) std::printf(" %lld", static_cast<long long>(length));
  std::printf(" tokens\n  forward of n new tokens on %lld cached, all logits:\n", static_cast<long long>(prefix));
  for (const auto& entry : forward)
    std::printf("    n=%-3lld %8.3f ms  (%.2fx one token)\n", static_cast<long long>(entry["tokens"].get<int64_t>()),
                entry["ms"].get<double>(), entry.value("vs_one_token", 0.0));
  std::printf("  peak RSS: %.1f MiB (weights %.1f MiB, KV caches at most %.1f MiB at once)\n", report["peak_rss_mib"].get<double>(),
              report["weights_mib"].get<double>(), report["kv_peak_mib"].get<double>());
  return 0;
}

}  // namespace specd::cli
