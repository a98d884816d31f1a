// specd bench --methods: decoding methods against autoregressive decoding on the workload suite,
// per category and overall, in the same run: mean accepted tokens per step (MAT, counting the
// target's own token; AR = 1.00), acceptance rate, tokens/s, speedup (the mean over prompts of
// the method's throughput divided by AR's, as Spec-Bench computes it, prefill included), the same
// ratio over the decoding time alone (the prefill is the same work for every method, and with
// short answers it dilutes the speedup) and, at T=0, whether the output equals AR's. Also the cost
// curves that explain the speedups.
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

#include "bench_timing.h"
#include "commands.h"
#include "decode/methods.h"
#include "method_options.h"
#include "decode/request_runner.h"
#include "io/atomic_file.h"
#include "model/cpu_threads.h"
#include "model/llama_model.h"
#include "options.h"
#include "tokenizer/tokenizer.h"
#include "trace/trace_sink.h"
#include "util/error.h"
#include "workload/workload.h"

namespace specd::cli {
namespace {

std::vector<std::string> split_list(const std::string& text) {
  std::vector<std::string> items;
  std::stringstream in(text);
  for (std::string item; std::getline(in, item, ',');)
    if (!item.empty()) items.push_back(item);
  return items;
}

struct Tally {
  int64_t prompts = 0, tokens = 0, steps = 0, drafted = 0, accepted = 0, equal_to_ar = 0;
  double wall_ms = 0, speedup_sum = 0, speedup_squares = 0, decode_speedup_sum = 0;
  void add(const Tally& o) {
    prompts += o.prompts, tokens += o.tokens, steps += o.steps, drafted += o.drafted, accepted += o.accepted;
    equal_to_ar += o.equal_to_ar, wall_ms += o.wall_ms, speedup_sum += o.speedup_sum;
    speedup_squares += o.speedup_squares, decode_speedup_sum += o.decode_speedup_sum;
  }
  // Half-width of the normal 95% interval of the mean speedup over prompts: how far the category's
  // mean could move with other prompts of the same kind (and other timing noise).
  double speedup_ci95() const {
    if (prompts < 2) return 0.0;
    const double mean = speedup_sum / prompts;
    const double variance = std::max(0.0, (speedup_squares - prompts * mean * mean) / (prompts - 1));
    return 1.96 * std::sqrt(variance / prompts);
  }
  nlohmann::json to_json(bool greedy) const {
    nlohmann::json j = {{"prompts", prompts},
                        {"new_tokens", tokens},
                        {"mat", steps ? double(tokens) / steps : 0.0},
                        {"acceptance_rate", drafted ? double(accepted) / drafted : 0.0},
                        {"tokens_per_s", wall_ms > 0 ? tokens * 1000.0 / wall_ms : 0.0},
                        {"speedup", prompts ? speedup_sum / prompts : 0.0},
                        {"speedup_ci95", speedup_ci95()},
                        {"decode_speedup", prompts ? decode_speedup_sum / prompts : 0.0}};
    if (greedy) j["equal_to_ar"] = std::to_string(equal_to_ar) + "/" + std::to_string(prompts);
    return j;
  }
};

nlohmann::json cost_curve(const LlamaModel& model, int repeats) {
  std::vector<int64_t> sizes;
  for (int64_t n : {1, 2, 4, 8, 16, 32, 64})
    if (64 + n <= model.context_length()) sizes.push_back(n);
  const auto samples = time_forwards(model, 64, sizes, repeats, [] {});
  nlohmann::json curve = nlohmann::json::array();
  for (size_t s = 0; s < sizes.size(); ++s) curve.push_back({{"tokens", sizes[s]}, {"ms", median(samples[s])}});
  return curve;
}

CostCurve as_cost_curve(const nlohmann::json& curve) {
  std::vector<std::pair<int32_t, double>> points;
  for (const auto& point : curve) points.emplace_back(point["tokens"].get<int32_t>(), point["ms"].get<double>());
  return CostCurve(points);
}

void print_curve(const char* label, const nlohmann::json& curve) {
  std::printf("  %-7s", label);
  for (const auto& point : curve) std::printf(" n=%lld %.2f ms |", static_cast<long long>(point["tokens"].get<int64_t>()), point["ms"].get<double>());
  std::printf("\n");
}

}  // namespace

int run_bench_methods(const Args& args) {
  std::string model_dir, workloads_dir, methods_text, categories_text, json_path, traces_path;
  int64_t max_prompts = 5;
  int repeats = 3;
  SamplingParams sampling;
  MethodArgs method_args;
  MethodOptions& method_options = method_args.options;
  DeviceSpec device;
  po::options_description desc("specd bench --methods");
  desc.add_options()
      ("methods", po::value(&methods_text)->required(), "comma-separated: ar,sd,sd-tree,pld,sam (ar is always measured)")
      ("model", po::value(&model_dir)->default_value(default_model_dir()), "target model directory")
      ("workloads", po::value(&workloads_dir)->default_value(data_dir() + "/workloads"), "directory of workload .jsonl files")
      ("categories", po::value(&categories_text), "comma-separated workload files to use (default: all)")
      ("max-prompts", po::value(&max_prompts)->default_value(5), "first N prompts of every category")
      ("repeats", po::value(&repeats)->default_value(3), "timed runs per prompt and method (median)")
      ("temperature", po::value(&sampling.temperature)->default_value(0.0), "0 is greedy")
      ("top-k", po::value(&sampling.top_k)->default_value(0), "target top-k")
      ("top-p", po::value(&sampling.top_p)->default_value(1.0), "target top-p")
      ("seed", po::value(&sampling.seed)->default_value(0), "seed of every request")
      ("json", po::value(&json_path), "also write the results as JSON to this file")
      ("traces", po::value(&traces_path), "also write per-step traces to this SQLite file");
  add_method_options(desc, method_args);
  add_device_options(desc, device);
  po::variables_map vm;
  if (!parse(args, desc, vm, "usage: specd bench --methods ar,sd,sd-tree,pld,sam [options]")) return 0;
  if (max_prompts < 1) input_error("--max-prompts", "must be at least 1");
  if (repeats < 1) input_error("--repeats", "must be at least 1");
  validate(sampling);
  finish_method_options(method_args);
  const bool greedy = sampling.temperature == 0.0;

  std::vector<std::string> methods{"ar"};
  for (const auto& m : split_list(methods_text))
    if (std::find(methods.begin(), methods.end(), m) == methods.end()) methods.push_back(m);
  bool needs_draft = false;
  for (const auto& m : methods) {
    const auto& known = method_names();
    if (std::find(known.begin(), known.end(), m) == known.end()) input_error("--methods", "unknown method '" + m + "' (known: ar, sd, sd-tree, pld, sam)");
    needs_draft = needs_draft || method_needs_draft(m) || m == "sam";
  }

  // Workloads: every .jsonl of the directory (or the named ones), first max_prompts items each.
  std::vector<std::string> files;
  if (vm.count("categories")) {
    for (const auto& c : split_list(categories_text)) files.push_back(workloads_dir + "/" + c + ".jsonl");
  } else {
    if (!std::filesystem::is_directory(workloads_dir)) input_error(workloads_dir, "is not a directory");
    for (const auto& entry : std::filesystem::directory_iterator(workloads_dir))
      if (entry.path().extension() == ".jsonl") files.push_back(entry.path().string());
    std::sort(files.begin(), files.end());
  }
  std::vector<WorkloadItem> items;
  for (const auto& file : files) {
    auto loaded = read_workload(file);
    loaded.resize(std::min<size_t>(loaded.size(), static_cast<size_t>(max_prompts)));
    items.insert(items.end(), loaded.begin(), loaded.end());
  }
  if (items.empty()) input_error(workloads_dir, "holds no workload files");

  auto target = LlamaModel::load(model_dir, device);
  std::shared_ptr<const LlamaModel> draft;
  if (needs_draft) draft = LlamaModel::load(method_args.draft_dir, device);
  Tokenizer tokenizer = Tokenizer::from_file(model_dir + "/tokenizer.json");
  load_sam_corpus(method_args, model_dir + "/tokenizer.json", target->config());
  std::vector<int32_t> stop_tokens;
  for (int64_t id : target->config().eos_token_ids) stop_tokens.push_back(static_cast<int32_t>(id));
  // Cost curves: why a method wins or loses on this hardware, and the draft budget's starting point.
  std::fprintf(stderr, "bench: measuring the forward-cost curves of target%s\n", draft ? " and draft" : "");
  const nlohmann::json target_curve = cost_curve(*target, 3);
  const nlohmann::json draft_curve = draft ? cost_curve(*draft, 3) : nlohmann::json();
  if (method_options.adaptive_budget) {  // measured once for every method
    method_options.target_cost = as_cost_curve(target_curve);
    if (draft) method_options.draft_ms_per_token = draft_curve[0]["ms"].get<double>();
  }
  std::map<std::string, Policy> policies;
  for (const auto& m : methods) {
    Policy policy = make_method(m, *target, draft, sampling, method_options);
    policy.root_entropy = !traces_path.empty();  // only the traces show it
    policies.emplace(m, std::move(policy));
  }

  std::unique_ptr<SqliteTraceSink> sink;
  if (!traces_path.empty()) sink = std::make_unique<SqliteTraceSink>(traces_path);

  // Per method, per category; prompts interleave methods so machine drift hits all alike.
  std::map<std::string, std::map<std::string, Tally>> tallies;
  BenchProgress progress(static_cast<int64_t>(items.size() * methods.size() * repeats));
  std::map<std::string, std::vector<std::pair<const WorkloadItem*, RequestRun>>> traced;
  for (const WorkloadItem& item : items) {
    std::map<std::string, RequestRun> first_run;
    std::map<std::string, std::vector<double>> samples, decode_samples;  // wall and decode ms per repeat
    std::map<std::string, double> wall, decode;                          // their medians
    for (int r = 0; r < repeats; ++r) {
      for (const auto& m : methods) {
        RequestRun run = run_request(*target, policies.at(m), tokenizer, item, sampling, stop_tokens);
        progress.step(item.category + " " + m);
        if (r == 0) first_run[m] = run;
        samples[m].push_back(run.wall_ms);
        decode_samples[m].push_back(run.wall_ms - run.prefill_ms);
      }
    }
    for (const auto& m : methods) wall[m] = median(samples[m]), decode[m] = median(decode_samples[m]);
    const double ar_throughput = first_run["ar"].tokens.size() / wall["ar"];
    const double ar_decode_throughput = first_run["ar"].tokens.size() / decode["ar"];
    for (const auto& m : methods) {
      const RequestRun& run = first_run[m];
      Tally t;
      t.prompts = 1;
      t.tokens = static_cast<int64_t>(run.tokens.size());
      t.steps = run.steps;
      t.drafted = run.drafted;
      t.accepted = run.accepted;
      t.wall_ms = wall[m];
      t.speedup_sum = (run.tokens.size() / wall[m]) / ar_throughput;
      t.speedup_squares = t.speedup_sum * t.speedup_sum;
      t.decode_speedup_sum = (run.tokens.size() / decode[m]) / ar_decode_throughput;
      t.equal_to_ar = run.tokens == first_run["ar"].tokens ? 1 : 0;
      tallies[m][item.category].add(t);
      tallies[m]["overall"].add(t);
      if (sink) traced[m].emplace_back(&item, run);
    }
  }
  progress.done();

  if (sink) {
    for (const auto& m : methods) {
      RunInfo info;
      info.command_line = "specd bench --methods " + methods_text;
      info.target_model = model_dir;
      info.draft_model = draft && (method_needs_draft(m) || m == "sam") ? method_args.draft_dir : "";
      info.method = m;
      info.options_json = nlohmann::json({{"temperature", sampling.temperature}, {"top_k", sampling.top_k}, {"top_p", sampling.top_p},
                                          {"gamma", method_options.gamma}, {"tree_top_k", method_options.tree.top_k},
                                          {"tree_depth", method_options.tree.depth}, {"tree_nodes", method_options.tree.nodes},
                                          {"sam_len_threshold", method_options.sam.len_threshold},
                                          {"sam_len_bias", method_options.sam.len_bias},
                                          {"sam_corpus", method_args.sam_corpus_path},
                                          {"draft_budget", method_args.budget_mode}})
                              .dump();
      info.specd_version = "0.1.0";
      sink->begin_run(info);
      int64_t index = 0;
      for (const auto& [item, run] : traced[m]) {
        sink->begin_request(RequestInfo{index++, item->id, item->category, run.prompt_tokens});
        for (const StepTrace& step : run.traces) sink->record_step(step);
        sink->end_request(RequestOutcome{run.tokens, run.wall_ms});
      }
      sink->end_run();
    }
  }

  nlohmann::json report;
  report["target_forward_ms"] = target_curve;
  if (draft) {
    report["draft_forward_ms"] = draft_curve;
    report["draft_ms_per_drafted_token"] = draft_curve[0]["ms"];
  }
  report["temperature"] = sampling.temperature;
  report["sam_corpus"] = method_args.sam_corpus_path;
  report["draft_budget"] = method_args.budget_mode;
  report["repeats"] = repeats;
  report["max_prompts"] = max_prompts;
  report["blas_threads"] = blas_threads();
  std::vector<std::string> categories;
  for (const auto& [category, tally] : tallies["ar"]) if (category != "overall") categories.push_back(category);
  categories.push_back("overall");
  for (const auto& m : methods)
    for (const auto& c : categories) report["results"][m][c] = tallies[m][c].to_json(greedy);

  std::printf("specd bench: %zu prompts (first %lld per category), %d repeats (median wall time), T=%.2f, target %s%s%s\n", items.size(),
              static_cast<long long>(max_prompts), repeats, sampling.temperature, model_dir.c_str(), draft ? ", draft " : "",
              draft ? method_args.draft_dir.c_str() : "");
  std::printf("draft budget %s%s%s\n", method_args.budget_mode.c_str(), method_args.sam_corpus_path.empty() ? "" : ", sam corpus ",
              method_args.sam_corpus_path.c_str());
  std::printf("forward cost on 64 cached tokens, all logits:\n");
  print_curve("target", report["target_forward_ms"]);
  if (draft) print_curve("draft", report["draft_forward_ms"]);
  std::printf("\nspeedup: mean over prompts of throughput / AR's, prefill included (Spec-Bench), with the half-width of its 95%%\n"
              "interval over prompts; decode: the same without the prefill\n");
  std::printf("%-14s %-8s %6s %8s %11s %8s %6s %7s%s\n", "category", "method", "MAT", "accept", "tokens/s", "speedup", "+-95%",
              "decode", greedy ? "  =AR" : "");
  for (const auto& c : categories) {
    for (const auto& m : methods) {
      const auto j = report["results"][m][c];
      std::printf("%-14s %-8s %6.2f %7.1f%% %11.1f %7.2fx %6.2f %6.2fx%s\n", c.c_str(), m.c_str(), j["mat"].get<double>(),
                  100.0 * j["acceptance_rate"].get<double>(), j["tokens_per_s"].get<double>(), j["speedup"].get<double>(),
                  j["speedup_ci95"].get<double>(), j["decode_speedup"].get<double>(),
                  greedy ? ("  " + j["equal_to_ar"].get<std::string>()).c_str() : "");
    }
  }
  if (!json_path.empty()) write_file_atomically(json_path, report.dump(2) + "\n");
  return 0;
}

}  // namespace specd::cli
