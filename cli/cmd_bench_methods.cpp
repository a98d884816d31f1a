// specd bench --methods: decoding methods against autoregressive decoding on the workload suite
// (runtime/bench/method_comparison.h does the measuring); this file parses, loads, prints the
// table and writes the JSON and traces.
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <functional>
#include <optional>
#include <sstream>

#include "artifact/artifact.h"
#include "bench/drafting_stats.h"
#include "decode/forward_cost.h"
#include "bench/method_comparison.h"
#include "calibrate/memory_update.h"
#include "commands.h"
#include "io/atomic_file.h"
#include "method_options.h"
#include "model/cpu_threads.h"
#include "model/llama_model.h"
#include "options.h"
#include "speculative/method_catalog.h"
#include "tokenizer/tokenizer.h"
#include "run_metadata.h"
#include "trace/trace_reader.h"
#include "trace/trace_schema.h"
#include "trace/trace_sink.h"
#include "util/error.h"
#include "util/machine.h"
#include "util/version.h"

namespace specd::cli {
namespace {

std::vector<std::string> split_list(const std::string& text) {
  std::vector<std::string> items;
  std::stringstream in(text);
  for (std::string item; std::getline(in, item, ',');)
    if (!item.empty()) items.push_back(item);
  return items;
}

nlohmann::json cost_curve(const LlamaModel& model, int repeats) {
  nlohmann::json curve = nlohmann::json::array();
  for (const auto& [tokens, ms] : timed_forward_costs(model, repeats)) curve.push_back({{"tokens", tokens}, {"ms", ms}});
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

// Tokens of the longest request: a turn's prompt holds the conversation so far, earlier answers
// included, so the last turn's prompt plus its answer is at most every turn and every answer.
int64_t longest_request(const std::vector<WorkloadItem>& items, const Tokenizer& tokenizer) {
  int64_t longest = 0;
  for (const WorkloadItem& item : items) {
    std::string conversation;
    for (const std::string& turn : item.turns) conversation += turn + "\n";
    const int64_t answers = static_cast<int64_t>(item.turns.size()) * item.max_new_tokens;
    longest = std::max(longest, static_cast<int64_t>(tokenizer.encode(conversation, true).size()) + answers);
  }
  return longest;
}

void print_table(const ComparisonResult& result, const std::vector<std::string>& methods, const nlohmann::json& report, bool greedy,
                 bool quality) {
  int w = 14;  // the method column fits the longest name (ablations: adapld-no-successors)
  for (const auto& m : methods) w = std::max(w, static_cast<int>(m.size()));
  std::printf("\nspeedup: mean over prompts of throughput / AR's, prefill included (Spec-Bench), with the half-width of its 95%%\n"
              "interval over prompts; decode: the same without the prefill\n");
  std::printf("%-14s %-*s %6s %8s %11s %8s %6s %7s%s\n", "category", w, "method", "MAT", "accept", "tokens/s", "speedup", "+-95%",
              "decode", greedy ? "  =AR" : "");
  for (const auto& c : result.categories) {
    for (const auto& m : methods) {
      const auto& j = report["results"][m][c];
      std::printf("%-14s %-*s %6.2f %7.1f%% %11.1f %7.2fx %6.2f %6.2fx%s\n", c.c_str(), w, m.c_str(), j["mat"].get<double>(),
                  100.0 * j["acceptance_rate"].get<double>(), j["tokens_per_s"].get<double>(), j["speedup"].get<double>(),
                  j["speedup_ci95"].get<double>(), j["decode_speedup"].get<double>(),
                  greedy ? ("  " + j["equal_to_ar"].get<std::string>()).c_str() : "");
    }
  }
  bool paired = false;
  for (const auto& m : methods) paired = paired || report["results"][m]["overall"].contains("over_baseline");
  if (paired) {
    std::printf("\nover its baseline (a variant's: its method as the flags set it; a policy's: its paper's baseline): mean over\n"
                "prompts of throughput / the baseline's in this run, with the half-width of its 95%% interval (paired: the\n"
                "prompts' own spread cancels)\n");
    for (const auto& c : result.categories)
      for (const auto& m : methods) {
        const auto& j = report["results"][m][c];
        if (!j.contains("over_baseline")) continue;
        std::printf("%-14s %-*s over %-*s %7.2fx %6.2f\n", c.c_str(), w, m.c_str(), w, report["baselines"][m].get<std::string>().c_str(),
                    j["over_baseline"].get<double>(), j["over_baseline_ci95"].get<double>());
      }
  }
  if (!quality) return;
  std::printf("\ndrift and quality: outputs equal to AR's and the mean index of the first differing token (T=0 only),\n"
              "rescued/relaxed tokens per generated token, the target's NLL per generated token (nats), chrF against the\n"
              "workload's references (0-100)\n");
  std::printf("%-14s %-*s %9s %9s %9s %9s %7s\n", "category", w, "method", "=AR", "diverge@", "rescued", "NLL", "chrF");
  for (const auto& c : result.categories) {
    for (const auto& m : methods) {
      const auto& j = report["results"][m][c];
      const double rescued = j["rescued_per_token"].get<double>() + j["relaxed_per_token"].get<double>();
      std::printf("%-14s %-*s %9s %9s %8.1f%% %9s %7s\n", c.c_str(), w, m.c_str(), greedy ? j["equal_to_ar"].get<std::string>().c_str() : "-",
                  greedy && !j["mean_first_divergence"].is_null() ? std::to_string(static_cast<int>(j["mean_first_divergence"].get<double>())).c_str() : "-",
                  100.0 * rescued, j["nll_per_token"].is_null() ? "-" : std::to_string(j["nll_per_token"].get<double>()).substr(0, 5).c_str(),
                  j["chrf"].is_null() ? "-" : std::to_string(j["chrf"].get<double>()).substr(0, 5).c_str());
    }
  }
}

// What makes an interrupted bench the same bench: its options, less where its outputs go and
// the per-method "settings" a run records (they follow from the options and the artifact).
nlohmann::json resume_identity(nlohmann::json options) {
  for (const char* output : {"json", "save-memory", "settings", "deployed"}) options.erase(output);
  return options;
}

// For --resume: the items an interrupted run of the same bench finished, per method, from the
// unfinished runs of the traces file (the latest of each method with the same options), and
// those runs' ids. InputError naming the file when there is nothing to resume, the finished
// requests are not this workload's first items, or the runs were measured on another machine
// (their speedups and this one's would not compare).
std::vector<std::map<std::string, MethodTally>> finished_items(const std::string& traces_path, const ComparisonSetup& setup,
                                                               const nlohmann::json& options, const nlohmann::json& machine,
                                                               std::map<std::string, int64_t>& run_ids) {
  if (empty_database(traces_path))
    input_error(traces_path, "holds no traces (a bench stopped before its first prompt finished): nothing to resume, run without --resume");
  TraceReader reader(traces_path);
  const nlohmann::json identity = resume_identity(options);
  std::map<int64_t, std::string> run_machines;
  for (const TraceRun& run : reader.runs()) {
    if (!run.finished_at.empty()) continue;
    const auto stored = nlohmann::json::parse(run.info.options_json, nullptr, /*allow_exceptions=*/false);
    if (stored.is_object() && resume_identity(stored) == identity) run_ids[run.info.method] = run.id;  // the latest wins
    run_machines[run.id] = run.info.machine_json;
  }
  std::vector<std::map<std::string, MethodTally>> finished;
  std::optional<size_t> count;
  for (const auto& m : setup.methods) {
    if (!run_ids.count(m)) input_error(traces_path, "no unfinished run of " + m + " with these options to resume");
    const auto stored_machine = nlohmann::json::parse(run_machines.at(run_ids.at(m)), nullptr, /*allow_exceptions=*/false);
    if (!same_machine(stored_machine, machine)) {
      const std::string stored_text = machine_text(stored_machine);
      input_error(traces_path, "run " + std::to_string(run_ids.at(m)) + " was measured on " +
                                   (stored_text.empty() ? "an unrecorded machine" : stored_text) + ", this is " + machine_text(machine) +
                                   ": resumed, its speedups would mix machines; run again without --resume");
    }
    const std::vector<TraceRequest> requests = reader.requests(run_ids.at(m));
    if (count && requests.size() != *count)
      input_error(traces_path, "the unfinished runs hold different numbers of prompts (" + std::to_string(*count) + " and " +
                                   std::to_string(requests.size()) + ")");
    count = requests.size();
    if (requests.size() > setup.items.size()) input_error(traces_path, "holds more prompts than the workloads give");
    finished.resize(requests.size());
    for (size_t i = 0; i < requests.size(); ++i) {
      const TraceRequest& r = requests[i];
      const std::string where = "run " + std::to_string(run_ids.at(m)) + " request " + std::to_string(i);
      if (r.info.index != static_cast<int64_t>(i) || r.info.workload != setup.items[i].id)
        input_error(traces_path, where + " is not prompt " + setup.items[i].id + " of these workloads");
      const auto record = nlohmann::json::parse(r.outcome.measurement, nullptr, /*allow_exceptions=*/false);
      try {
        finished[i][m] = MethodTally::from_record(record);
      } catch (const nlohmann::json::exception&) {
        input_error(traces_path, where + " has no bench measurement to resume from");
      } catch (const std::out_of_range&) {
        input_error(traces_path, where + " has a malformed bench measurement");
      }
    }
  }
  return finished;
}

}  // namespace

int run_bench_methods(const Args& args) {
  std::string model_dir, workloads_dir, methods_text, categories_text, json_path, traces_path, save_memory;
  int64_t max_prompts = 5;
  ComparisonSetup setup;
  MethodArgs method_args;
  MethodOptions& method_options = method_args.options;
  DeviceSpec device;
  bool quality = false, resume = false;
  po::options_description desc("specd bench --methods", 120, 60);
  desc.add_options()
      ("methods", po::value(&methods_text)->required(),
       "comma-separated methods, listed above (ar is always measured); METHOD:NAME=VALUE[:NAME=VALUE...] is a variant with "
       "parameter values of its own (sd:gamma=8), measured beside its method")
      ("model", po::value(&model_dir)->default_value(default_model_dir()), "target model directory")
      ("workloads", po::value(&workloads_dir)->default_value(data_dir() + "/workloads"), "directory of workload .jsonl files")
      ("categories", po::value(&categories_text), "comma-separated workload files to use (default: all)")
      ("max-prompts", po::value(&max_prompts)->default_value(5), "first N prompts of every category")
      ("repeats", po::value(&setup.repeats)->default_value(3), "timed runs per prompt and method (median)")
      ("temperature", po::value(&setup.sampling.temperature)->default_value(0.0), "0 is greedy")
      ("top-k", po::value(&setup.sampling.top_k)->default_value(0), "target top-k")
      ("top-p", po::value(&setup.sampling.top_p)->default_value(1.0), "target top-p")
      ("seed", po::value(&setup.sampling.seed)->default_value(0), "seed of every request")
      ("quality", po::bool_switch(&quality), "also measure the target's NLL and chrF of every method (on with a lossy method)")
      ("json", po::value(&json_path), "also write the results as JSON to this file")
      ("traces", po::value(&traces_path), "also write per-step traces to this SQLite file, each prompt as it finishes")
      ("resume", po::bool_switch(&resume),
       "continue the interrupted run of the same command whose finished prompts --traces holds (same options)")
      ("save-memory", po::value(&save_memory),
       "write the artifact with csd's correction memory as the run left it (online updates added) to this directory");
  add_method_options(desc, method_args);
  add_device_options(desc, device);
  po::variables_map vm;
  const std::string usage = "usage: specd bench --methods M,... [options]\n\nmethods:\n" + methods_help();
  if (!parse(args, desc, vm, usage.c_str())) return 0;
  if (max_prompts < 1) input_error("--max-prompts", "must be at least 1");
  if (setup.repeats < 1) input_error("--repeats", "must be at least 1");
  check_sampling_options(setup.sampling);
  finish_method_options(method_args, vm);
  check_outputs({{"--json", json_path, Output::File}, {"--traces", traces_path, Output::File}, {"--save-memory", save_memory, Output::Directory}});
  const bool greedy = setup.sampling.temperature == 0.0;

  // Each method by its label: a plain method's name, or a variant as typed.
  std::map<std::string, MethodVariant> variants{{"ar", method_variant("ar", "--methods")}};
  setup.methods = {"ar"};
  for (const auto& text : split_list(methods_text)) {
    MethodVariant variant = method_variant(text, "--methods");
    if (variants.count(variant.label)) continue;
    setup.methods.push_back(variant.label);
    variants.emplace(variant.label, std::move(variant));
  }
  const auto info_of = [&](const std::string& m) -> const MethodInfo& { return find_method(variants.at(m).method); };
  std::vector<std::string> registry_names;
  for (const auto& m : setup.methods) registry_names.push_back(variants.at(m).method);
  // Each ratio's baseline: a variant's is its plain method, a policy's its paper's baseline, when
  // that ran too.
  for (const auto& m : setup.methods) {
    const MethodVariant& v = variants.at(m);
    const std::string base = !v.values.empty() && variants.count(v.method) ? v.method : paper_baseline(v.method);
    if (variants.count(base)) setup.baselines[m] = base;
  }
  bool lossy = false;
  for (const auto& m : setup.methods) lossy = lossy || !info_of(m).lossless;
  setup.quality = quality || lossy;
  // The memory --save-memory writes: the first method of the list that keeps one.
  std::string memory_method;
  for (const auto& m : setup.methods)
    if (memory_method.empty() && info_of(m).calibration == kCsdPolicy) memory_method = m;
  if (!save_memory.empty() && memory_method.empty()) input_error("--save-memory", "needs a csd method in --methods");
  if (resume && traces_path.empty()) input_error("--resume", "needs --traces (the finished prompts are read from there)");
  if (resume && !memory_method.empty())
    input_error("--resume", memory_method + " learns online and the traces do not hold its memory: run again without --resume");
  setup.items = read_workload_suite(workloads_dir, categories_text.empty() ? std::vector<std::string>{} : split_list(categories_text), max_prompts);
  // The traces file is checked (schema, runs to resume) before any model loads.
  const nlohmann::json options = options_json(vm, {"resume"});
  const nlohmann::json machine = this_machine(device);  // the speedups are this machine's
  std::vector<std::map<std::string, MethodTally>> finished;
  std::map<std::string, int64_t> resumed_runs;
  if (resume) finished = finished_items(traces_path, setup, options, machine, resumed_runs);
  std::unique_ptr<SqliteTraceSink> sink;
  if (!traces_path.empty()) sink = std::make_unique<SqliteTraceSink>(traces_path);

  auto target = LlamaModel::load(model_dir, device);
  check_tree_vocabulary(method_args.options, target->config().vocab_size);
  std::shared_ptr<const LlamaModel> draft;
  if (uses_draft_model(registry_names)) {
    method_args.draft_dir = draft_dir_for(method_args.draft_dir, model_dir);
    draft = LlamaModel::load(method_args.draft_dir, device);
  }
  const std::shared_ptr<const Artifact> artifact = load_artifact(method_args, model_dir, draft != nullptr);
  Tokenizer tokenizer = Tokenizer::from_file(model_dir + "/tokenizer.json");
  for (int64_t id : target->config().eos_token_ids) setup.stop_tokens.push_back(static_cast<int32_t>(id));
  // Cost curves: why a method wins or loses on this hardware, and the draft budget's starting point.
  Progress measuring(0, "bench");
  measuring.note(std::string("measuring the forward-cost curves of target") + (draft ? " and draft" : ""));
  const nlohmann::json target_curve = cost_curve(*target, 3);
  const nlohmann::json draft_curve = draft ? cost_curve(*draft, 3) : nlohmann::json();
  // Measured once for every method that runs the auto budget (a variant may where the flags do not).
  method_options.target_cost = as_cost_curve(target_curve);
  if (draft) method_options.draft_cost = as_cost_curve(draft_curve);
  std::map<std::string, Policy> policies;
  std::map<std::string, std::string> method_settings;  // what each method ran with, and where from
  std::map<std::string, nlohmann::json> method_deployed;  // the same, as values and sources
  for (const auto& m : setup.methods) {
    std::vector<ParamSetting> settings;
    const MethodVariant& variant = variants.at(m);
    const MethodOptions deployed = deployed_options(method_args, variant, artifact.get(), &settings);
    if (!variant.values.empty()) check_tree_vocabulary(deployed, target->config().vocab_size, "--methods " + m);
    if (!settings.empty()) {
      method_settings[m] = settings_text(settings);
      method_deployed[m] = settings_json(settings);
    }
    Policy policy =
        make_policy(variant.method, MethodContext{*target, draft, setup.sampling, deployed, artifact.get(), method_args.artifact_dir});
    policy.root_entropy = !traces_path.empty();  // only the traces show it
    policies.emplace(m, std::move(policy));
  }
  std::vector<const Policy*> built;
  for (const auto& [m, policy] : policies) built.push_back(&policy);
  check_request_memory(*target, draft.get(), built, longest_request(setup.items, tokenizer), 0);
  measuring.done();

  // One trace run per method; each item's requests (all methods) land in one transaction as soon
  // as the item is measured, so a killed bench keeps every finished item.
  std::map<std::string, int> trace_runs;
  std::function<void(const ItemResult&)> write_item;
  if (sink) {
    for (const auto& m : setup.methods) {
      if (resume) {
        trace_runs[m] = sink->resume_run(resumed_runs.at(m));
        continue;
      }
      RunInfo info;
      info.command_line = command_line("bench", args);
      info.target_model = model_dir;
      info.draft_model = draft && info_of(m).draft != DraftModelUse::None ? method_args.draft_dir : "";
      info.method = m;
      nlohmann::json run_options = options;
      if (method_settings.count(m)) {
        run_options["settings"] = method_settings.at(m);
        run_options["deployed"] = method_deployed.at(m);
      }
      info.options_json = run_options.dump();
      info.specd_version = specd_version();
      info.specd_commit = specd_git_commit();
      info.machine_json = machine.dump();
      trace_runs[m] = sink->add_run(info);
    }
    write_item = [&](const ItemResult& measured) {
      const WorkloadItem& item = setup.items[measured.index];
      std::vector<std::pair<int, RequestRecord>> records;
      for (const auto& m : setup.methods) {
        const RequestRun& run = measured.runs.at(m);
        RequestRecord record{RequestInfo{static_cast<int64_t>(measured.index), item.id, item.category, run.prompt_tokens}, run.traces,
                             RequestOutcome{run.tokens, run.wall_ms, measured.tallies.at(m).to_record().dump()}};
        records.emplace_back(trace_runs.at(m), std::move(record));
      }
      sink->write_requests(records);
    };
  }

  const size_t remaining = setup.items.size() - finished.size();
  Progress progress(static_cast<int64_t>(remaining * setup.methods.size() * setup.repeats), "bench", "requests");
  // Drafting statistics (AdaPLD's retrieval and reuse, ReSpec's trigger) of the items measured now.
  std::map<std::string, DraftingStats> drafting;
  const auto on_item = [&](const ItemResult& measured) {
    for (const auto& [m, run] : measured.runs) drafting[m].add(run.traces);
    if (write_item) write_item(measured);
  };
  const ComparisonResult result = compare_methods(*target, policies, tokenizer, setup, progress, on_item, finished);
  progress.done();

  nlohmann::json report;
  report["target_forward_ms"] = target_curve;
  if (draft) {
    report["draft_forward_ms"] = draft_curve;
    report["draft_ms_per_drafted_token"] = draft_curve[0]["ms"];
  }
  report["temperature"] = setup.sampling.temperature;
  report["artifact"] = method_args.artifact_dir;
  report["draft_budget"] = method_args.values.at("draft-budget");
  report["repeats"] = setup.repeats;
  report["max_prompts"] = max_prompts;
  report["threads"] = resolve_thread_count(device.threads);
  report["machine"] = machine;
  for (const auto& m : setup.methods) {
    report["lossless"][m] = info_of(m).lossless;
    if (setup.baselines.count(m)) report["baselines"][m] = setup.baselines.at(m);
    if (method_settings.count(m)) report["settings"][m] = method_settings.at(m);
    for (const auto& c : result.categories) report["results"][m][c] = result.tallies.at(m).at(c).to_json(greedy, setup.quality);
    if (drafting.count(m) && !drafting.at(m).empty()) {
      report["drafting"][m] = drafting.at(m).to_json();
      if (resume) report["drafting"][m]["resumed_items_excluded"] = finished.size();
    }
  }

  std::printf("specd bench: %zu prompts (first %lld per category), %d repeats (median wall time), T=%.2f, target %s%s%s\n",
              setup.items.size(), static_cast<long long>(max_prompts), setup.repeats, setup.sampling.temperature, model_dir.c_str(),
              draft ? ", draft " : "", draft ? method_args.draft_dir.c_str() : "");
  if (resume)
    std::printf("resumed %s: %zu prompts measured by the interrupted run, %zu now\n", traces_path.c_str(), finished.size(), remaining);
  std::printf("measured on %s\n", machine_text(report["machine"]).c_str());
  std::printf("draft budget %s%s%s\n", method_args.values.at("draft-budget").c_str(), artifact ? ", artifact " : "", method_args.artifact_dir.c_str());
  for (const auto& m : setup.methods)
    if (!info_of(m).lossless) std::printf("%s is LOSSY: its output may differ from the target's (drift and quality below)\n", m.c_str());
  for (const auto& [m, text] : method_settings) std::printf("%s settings: %s\n", m.c_str(), text.c_str());
  std::printf("forward cost on 64 cached tokens, all logits:\n");
  print_curve("target", report["target_forward_ms"]);
  if (draft) print_curve("draft", report["draft_forward_ms"]);
  print_table(result, setup.methods, report, greedy, setup.quality);
  for (const auto& m : setup.methods) {
    if (!drafting.count(m) || drafting.at(m).empty()) continue;
    std::printf("%s drafting%s:\n", m.c_str(), resume ? " (the prompts measured now; the resumed ones are not included)" : "");
    for (const std::string& line : drafting.at(m).summary_lines()) std::printf("  %s\n", line.c_str());
  }
  if (!json_path.empty()) write_file_atomically(json_path, report.dump(2) + "\n");
  if (!save_memory.empty()) {
    const CorrectionMemory& memory = *policies.at(memory_method).memory;
    write_updated_memory(method_args.artifact_dir, memory, "specd bench --methods " + methods_text + " (" + memory_method + ")", save_memory);
    std::printf("wrote %s: %s's correction memory after the run (%lld online rejections added, %zu pairs)\n", save_memory.c_str(),
                memory_method.c_str(), static_cast<long long>(memory.online_records()), memory.size());
  }
  // Finished only once every output is written: a bench killed before this point leaves its runs
  // unfinished, and --resume (with nothing left to measure) writes the outputs.
  if (sink)
    for (const auto& m : setup.methods) sink->finish_run(trace_runs.at(m));
  return 0;
}

}  // namespace specd::cli
