// specd bench (first form): autoregressive decode speed and the cost of one forward of n new
// tokens on a warm cache. Medians over repeats; nothing here is a pass/fail threshold. Each figure
// also reads as a fraction of the machine's measured limits: the bytes and FLOPs it implies
// (bench/forward_traffic.h) per ms, against the read bandwidth and FLOP/s peak of this CPU
// (bench/machine_limits.h).
#include <sys/resource.h>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstdio>
#include <iostream>
#include <optional>
#include <random>

#include "decode/forward_cost.h"
#include "bench/forward_traffic.h"
#include "bench/kv_precision.h"
#include "bench/machine_limits.h"
#include "stats/statistics.h"
#include "decode/autoregressive.h"
#include "model/cpu/matmul_bf16_dot.h"
#include "model/cpu_threads.h"
#include "model/kv_memory.h"
#include "model/llama_model.h"
#include "method_options.h"
#include "options.h"
#include "run_metadata.h"
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

ModelByteSizes byte_sizes(const LlamaModel& model) {
  return {model.weight_bytes(), model.weight_element_bytes(), kv_read_bytes_per_row(model.kv_bytes(16), model.uses_cpu_kernels())};
}

// The machine (util/machine.h) and the ceilings measured on its CPU.
nlohmann::json limits_json(const DeviceSpec& device, const MachineLimits& m) {
  nlohmann::json out = this_machine(device);
  out.update({{"read_buffer_mib", m.read_buffer_bytes / 1048576.0}, {"read_gbps", m.read_gbps}, {"f32_loop", m.f32_loop},
              {"f32_gflops", m.f32_gflops}, {"bf16_gflops", m.bf16_gflops ? nlohmann::json(*m.bf16_gflops) : nlohmann::json()}});
  return out;
}

// Achieved GB/s and GFLOP/s of `traffic` done in `ms`, and each as a fraction of its ceiling.
void add_rates(nlohmann::json& entry, const std::string& prefix, const ForwardTraffic& traffic, double ms, double read_gbps,
               double peak_gflops) {
  const double gbps = traffic.bytes / ms / 1e6, gflops = traffic.flops / ms / 1e6;  // bytes/ms / 1e6 = GB/s
  entry[prefix + "bytes"] = traffic.bytes;
  entry[prefix + "flops"] = traffic.flops;
  entry[prefix + "gbps"] = gbps;
  entry[prefix + "gflops"] = gflops;
  entry[prefix + "bandwidth_fraction"] = gbps / read_gbps;
  entry[prefix + "flops_fraction"] = gflops / peak_gflops;
}

}  // namespace

int run_bench(const Args& args) {
  for (const auto& arg : args)
    if (arg == "--methods" || arg.rfind("--methods=", 0) == 0) return run_bench_methods(args);
  std::string model_dir;
  std::vector<int64_t> prompt_lengths{32, 128}, forward_sizes{1, 8, 32};
  std::vector<double> idle_gaps;
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
      ("idle-gaps", po::value(&idle_gaps)->multitoken(),
       "idle pauses (ms) after which the next 12 one-token forwards are timed (means over 4 x --repeats rounds): "
       "whether the caches keep the weights")
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
  for (double gap : idle_gaps)
    if (!(gap >= 0 && gap <= 10000)) input_error("--idle-gaps", "gaps must be between 0 and 10000 ms");
  // Back-to-back forwards are the reference every gap is read against.
  if (!idle_gaps.empty() && std::find(idle_gaps.begin(), idle_gaps.end(), 0.0) == idle_gaps.end()) idle_gaps.insert(idle_gaps.begin(), 0.0);
  const int idle_rounds = 4 * repeats;

  auto model = LlamaModel::load(model_dir, device);
  const auto& cfg = model->config();
  const int64_t context = model->context_length();
  for (int64_t length : prompt_lengths)
    if (length < 1 || length + new_tokens > context) input_error("--prompt-lengths", std::to_string(length) + " + --new-tokens do not fit the context of " + std::to_string(context));
  for (int64_t n : forward_sizes)
    if (prefix + n > context) input_error("--forward-sizes", "prefix + " + std::to_string(n) + " exceeds the context");
  const int64_t longest_prompt = prompt_lengths.empty() ? 0 : *std::max_element(prompt_lengths.begin(), prompt_lengths.end());
  check_request_memory(*model, nullptr, {}, longest_prompt, new_tokens);

  const bool narrow_kv = model->kv_type() != KvType::F32;
  Progress progress(static_cast<int64_t>(repeats) * (prompt_lengths.size() + forward_sizes.size()) + 1 + (narrow_kv ? 1 : 0) +
                        (idle_gaps.empty() ? 0 : idle_rounds),
                    "bench",
                    "measurements");
  nlohmann::json report;
  report["model"] = model_dir;
  report["device"] = device.name;
  report["threads"] = resolve_thread_count(device.threads);
  report["kv_dtype"] = kv_type_name(model->kv_type());
  report["shape"] = {{"layers", cfg.num_hidden_layers}, {"hidden", cfg.hidden_size}, {"heads", cfg.num_attention_heads},
                     {"kv_heads", cfg.num_key_value_heads}, {"ffn", cfg.intermediate_size}, {"vocab", cfg.vocab_size}};

  // Autoregressive decode: ms per new token, median over prompts x repeats.
  std::vector<double> decode_ms_per_token;
  GenerateOptions options;
  options.max_new_tokens = new_tokens;
  generate_autoregressive(*model, synthetic_prompts({prompt_lengths[0]}, cfg.vocab_size)[0], options);  // warm-up
  std::vector<int32_t> decoded_text;  // the last prompt and what the model decoded after it
  for (const auto& prompt : synthetic_prompts(prompt_lengths, cfg.vocab_size)) {
    for (int r = 0; r < repeats; ++r) {
      GenerateOutput out = generate_autoregressive(*model, prompt, options);
      decode_ms_per_token.push_back(out.stats.decode_ms / (out.stats.new_tokens - 1));
      decoded_text = prompt;
      decoded_text.insert(decoded_text.end(), out.tokens.begin(), out.tokens.end());
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

  // One-token forwards after an idle pause, against back-to-back ones (gap 0): the extra ms over
  // the first kIdleForwards is what a pause of the model (a draft model's turn) costs it later.
  constexpr int kIdleForwards = 12;
  nlohmann::json after_idle = nlohmann::json::array();
  if (!idle_gaps.empty()) {
    const auto idle_ms = time_after_idle(*model, prefix, idle_gaps, kIdleForwards, idle_rounds, [&] { progress.step("idle gaps"); });
    const size_t warm = static_cast<size_t>(std::find(idle_gaps.begin(), idle_gaps.end(), 0.0) - idle_gaps.begin());
    double warm_sum = 0;
    for (double ms : idle_ms[warm]) warm_sum += ms;
    for (size_t g = 0; g < idle_gaps.size(); ++g) {
      double sum = 0;
      for (double ms : idle_ms[g]) sum += ms;
      after_idle.push_back({{"gap_ms", idle_gaps[g]}, {"forward_ms", idle_ms[g]}, {"extra_ms", sum - warm_sum}});
    }
    report["after_idle"] = after_idle;
    report["after_idle_rounds"] = idle_rounds;
  }
  // The peak beside what it holds: the weights as the forward keeps them and the most the KV
  // caches reserved at once (their whole capacity, written or not).
  report["peak_rss_mib"] = peak_rss_mib();
  report["weights_mib"] = static_cast<double>(model->weight_bytes()) / (1 << 20);
  report["kv_peak_mib"] = static_cast<double>(kv_memory_peak()) / (1 << 20);
  report["repeats"] = repeats;

  // What a 16-bit cache costs in accuracy: the logits of the last decode run's text (prompt and
  // output, every position) against a float32 cache's. After the peak is read: the comparison's
  // two caches are not part of decoding.
  std::optional<KvPrecisionDistance> kv_distance;
  if (narrow_kv) {
    kv_distance = kv_precision_distance(*model, model->kv_type(), decoded_text);
    report["kv_vs_f32"] = {{"positions", kv_distance->positions}, {"max_abs_logit", kv_distance->max_abs_logit},
                           {"mean_abs_logit", kv_distance->mean_abs_logit}, {"mean_kl_nats", kv_distance->mean_kl},
                           {"max_kl_nats", kv_distance->max_kl}, {"top1_agreement", kv_distance->top1_agreement}};
    progress.step("KV precision");
  }

  // The ceilings come last, after the peak RSS is read: their read buffer (4x the last-level
  // cache, 128 MiB here) would otherwise count in it. Same thread count as the model's kernels.
  const MachineLimits limits = measure_machine_limits(resolve_thread_count(device.threads));
  progress.step("machine limits");
  // BF16 weights' forwards run vdpbf16ps (ceiling: bench's BF16 loop), FMA on widened weights
  // from 2 rows or AMX tiles (model/cpu/matmul_bf16_dot.h); the FMA loop is the ceiling of both
  // (AMX's own, ~16x, is not measured).
  const cpu::Bf16Kernel kernel = cpu::bf16_kernel();
  const bool bf16_peak = model->bf16_dot_products() && kernel == cpu::Bf16Kernel::Dot && limits.bf16_gflops.has_value();
  const double peak_gflops = bf16_peak ? *limits.bf16_gflops : limits.f32_gflops;
  report["machine"] = limits_json(device, limits);
  report["flops_ceiling"] = bf16_peak ? "bf16" : "f32";
  if (model->bf16_dot_products()) report["bf16_kernel"] = cpu::bf16_kernel_name(kernel);
  const ModelByteSizes sizes = byte_sizes(*model);
  add_rates(report, "decode_", decode_traffic(cfg, sizes, prompt_lengths, new_tokens), median(decode_ms_per_token), limits.read_gbps,
            peak_gflops);
  for (auto& entry : forward) {
    const int64_t n = entry["tokens"].get<int64_t>();
    add_rates(entry, "", forward_traffic(cfg, sizes, n, prefix, n), entry["ms"].get<double>(), limits.read_gbps, peak_gflops);
  }
  report["forward"] = forward;
  progress.done();

  if (json) {
    std::cout << report.dump(2) << "\n";
    return 0;
  }
  std::printf("model %s on %s (%s), %d threads, KV cache %s, median of %d repeats\n", model_dir.c_str(), device.name.c_str(),
              model->uses_cpu_kernels() ? "specd's kernels" : "ATen", report["threads"].get<int>(), kv_type_name(model->kv_type()),
              repeats);
  std::string features;
  for (const auto& f : limits.cpu.features) features += " " + f;
  std::printf("  CPU: %s (%s)\n", machine_text(report["machine"]).c_str(), features.empty() ? "none of avx2 fma avx512f avx512_bf16" : features.substr(1).c_str());
  std::printf("  measured ceilings, %d threads: read %.1f GB/s (sum of %.0f MiB), F32 FMA %.1f GFLOP/s (%s loop), BF16 dot ",
              limits.threads, limits.read_gbps, limits.read_buffer_bytes / 1048576.0, limits.f32_gflops, limits.f32_loop.c_str());
  if (limits.bf16_gflops) std::printf("%.1f GFLOP/s\n", *limits.bf16_gflops);
  else std::printf("n/a\n");
  if (model->bf16_dot_products()) std::printf("  BF16 weights: %s\n", cpu::bf16_kernel_summary());
  const char* peak_name = bf16_peak ? "BF16 peak" : "F32 peak";
  std::printf("  autoregressive decode: %.3f ms/token (%.1f tokens/s), %lld new tokens after prompts of", report["decode_ms_per_token"].get<double>(),
              report["decode_tokens_per_s"].get<double>(), static_cast<long long>(new_tokens));
  for (int64_t length : prompt_lengths) std::printf(" %lld", static_cast<long long>(length));
  std::printf(" tokens\n    %.2f MB and %.2f MFLOP a token: %.2f GB/s (%.1f%% of read), %.2f GFLOP/s (%.1f%% of %s)\n",
              report["decode_bytes"].get<double>() / 1e6, report["decode_flops"].get<double>() / 1e6, report["decode_gbps"].get<double>(),
              100 * report["decode_bandwidth_fraction"].get<double>(), report["decode_gflops"].get<double>(),
              100 * report["decode_flops_fraction"].get<double>(), peak_name);
  std::printf("  forward of n new tokens on %lld cached, all logits:\n", static_cast<long long>(prefix));
  for (const auto& entry : forward)
    std::printf("    n=%-3lld %8.3f ms  (%.2fx one token)  %7.2f GB/s (%5.1f%% of read)  %7.2f GFLOP/s (%5.1f%% of %s)\n",
                static_cast<long long>(entry["tokens"].get<int64_t>()), entry["ms"].get<double>(), entry.value("vs_one_token", 0.0),
                entry["gbps"].get<double>(), 100 * entry["bandwidth_fraction"].get<double>(), entry["gflops"].get<double>(),
                100 * entry["flops_fraction"].get<double>(), peak_name);
  if (!after_idle.empty()) {
    std::printf("  one-token forward after the model sat idle, ms of the 1st..%d forward (mean of %d rounds):\n", kIdleForwards,
                idle_rounds);
    for (const auto& entry : after_idle) {
      std::printf("    idle %6.1f ms:", entry["gap_ms"].get<double>());
      for (double ms : entry["forward_ms"]) std::printf(" %6.3f", ms);
      std::printf("   %+.2f ms in all\n", entry["extra_ms"].get<double>());
    }
  }
  std::printf("  peak RSS: %.1f MiB (weights %.1f MiB, KV caches at most %.1f MiB at once)\n", report["peak_rss_mib"].get<double>(),
              report["weights_mib"].get<double>(), report["kv_peak_mib"].get<double>());
  if (kv_distance)
    std::printf("  %s KV cache vs float32, %lld positions: logits max |diff| %.4g, mean %.3g; KL mean %.3g nats (max %.3g); "
                "argmax agrees at %.1f%%\n",
                kv_type_name(model->kv_type()), static_cast<long long>(kv_distance->positions), kv_distance->max_abs_logit,
                kv_distance->mean_abs_logit, kv_distance->mean_kl, kv_distance->max_kl, 100 * kv_distance->top1_agreement);
  return 0;
}

}  // namespace specd::cli
