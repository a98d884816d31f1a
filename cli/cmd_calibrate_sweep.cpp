// specd calibrate sweep: a method family's parameters over a grid, each point measured against AR
// on the calibration prompts (calibrate/sweep_runs.h); the runs and the chosen point go into the
// pair's artifact, whose thresholds `generate/bench --artifact` then deploy
// (speculative/method_params.h). The plan, its runs and the journal are calibrate/sweep_plan.h,
// the choice rule calibrate/sweep_choice.h; options, loading and printing here.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <string>

#include "artifact/artifact_reader.h"
#include "calibrate/artifact_writer.h"
#include "calibrate/calibration_journal.h"
#include "calibrate/sweep_plan.h"
#include "calibrate/sweep_runs.h"
#include "calibrate_common.h"
#include "commands.h"
#include "decode/forward_cost.h"
#include "method_options.h"
#include "model/llama_model.h"
#include "model_files.h"
#include "options.h"
#include "util/error.h"
#include "util/machine.h"
#include "util/progress.h"

namespace specd::cli {
namespace {

std::string fixed(double value, int digits) {
  char text[64];
  std::snprintf(text, sizeof text, "%.*f", digits, value);
  return text;
}

void print_runs(const SweepCalibration& sweep) {
  const bool chrf = sweep_applies_chrf(sweep);
  size_t width = 5;
  for (const SweepRun& r : sweep.runs) width = std::max(width, r.point.size());
  const bool tested = !sweep.lossless && sweep.confidence > 0;
  std::printf("  %4s  %-*s  %5s  %6s  %14s  %8s  %7s  %6s  %s%s\n", "run", static_cast<int>(width), "point", "MAT", "accept", "speedup +-95%",
              "NLL dif", chrf ? "chrF/AR" : "TV/tok", "eq AR", !tested ? "" : chrf ? " p(NLL)  p(chrF) p(eq)  " : " p(NLL)  p(TV)   ", "");
  for (const SweepRun& r : sweep.runs) {
    const SweepStats& o = r.overall();
    const std::string speedup = fixed(o.speedup, 2) + "x +- " + fixed(o.speedup_ci95, 2);
    const std::string mark = sweep.chosen && *sweep.chosen == r.index ? "<- chosen"
                             : sweep_run_within_bounds(sweep, r) ? ""
                                                                 : "(outside the contract)";
    std::string p_values;
    if (tested) {
      const SweepRunTest t = sweep_run_test(sweep, r);
      char text[64];
      if (chrf) std::snprintf(text, sizeof text, " %6.2g  %6.2g  %6.2g  ", t.p_nll, t.p_chrf, t.p_changed);
      else std::snprintf(text, sizeof text, " %6.2g  %6.2g  ", t.p_nll, t.p_tv);
      p_values = text;
    }
    std::printf(chrf ? "  %4d  %-*s  %5.2f  %6.3f  %14s  %+8.4f  %7.1f  %6s  %s%s\n" : "  %4d  %-*s  %5.2f  %6.3f  %14s  %+8.4f  %7.4f  %6s  %s%s\n",
                r.index, static_cast<int>(width), r.point.c_str(), o.mat, o.acceptance, speedup.c_str(), o.nll_per_token - o.ar_nll_per_token,
                chrf ? o.chrf_vs_ar : o.tv_mean,
                (std::to_string(o.equal_to_ar) + "/" + std::to_string(o.prompts)).c_str(), p_values.c_str(), mark.c_str());
  }
  if (tested)
    std::printf("  contract: %s; each run valid when every p-value is at most %.3g (one-sided t-tests over prompts, exact binomial)\n",
                sweep_contract_text(sweep).c_str(), sweep_test_level(sweep));
  if (!chrf)
    std::printf("  (at temperature %g the method's and AR's samples differ even without drift: chrF vs AR is not applied; TV/tok is the "
                "expected total-variation distance per token, the lossy rules' firings per token)\n",
                sweep.provenance.temperature);
  if (sweep.runs.empty()) return;
  auto by_speed = [](const SweepRun& a, const SweepRun& b) { return a.overall().speedup < b.overall().speedup; };
  const SweepRun& best = *std::max_element(sweep.runs.begin(), sweep.runs.end(), by_speed);
  const SweepRun& worst = *std::min_element(sweep.runs.begin(), sweep.runs.end(), by_speed);
  auto base = std::find_if(sweep.runs.begin(), sweep.runs.end(), [](const SweepRun& r) { return r.index == 0; });
  std::printf("  sensitivity: best %.2fx (run %d: %s), base %s, worst %.2fx (run %d: %s)\n", best.overall().speedup, best.index,
              best.point.c_str(), base == sweep.runs.end() ? "not in this shard" : (fixed(base->overall().speedup, 2) + "x (run 0: " + base->point + ")").c_str(),
              worst.overall().speedup, worst.index, worst.point.c_str());
}

}  // namespace

int run_calibrate_sweep(const Args& args) {
  CommonArgs a;
  MethodArgs m;
  std::string policy;
  std::vector<std::string> grid_texts;
  int repeats = 3;
  SamplingParams sampling;
  double max_nll_increase = 0.05, min_chrf = 90, max_changed = 1, max_tv = 0.05, confidence = 0.95;
  po::options_description desc("specd calibrate sweep");
  add_common(desc, a, /*with_draft=*/false, "I/N: measure grid points I, I+N, I+2N, ... (run 0 is the base point; merge with specd artifact merge); auto[/N]: I and N "
             "from a Slurm array job, a Kubernetes Indexed Job or an MPI launcher (docs/cluster.md; the default inside a Slurm array job)");
  desc.add_options()
      ("policy", po::value(&policy)->required(), "the method family whose parameters are swept (pld, sam, csd, arc, ...)")
      ("grid", po::value(&grid_texts)->composing(), "NAME=v1,v2,...: a parameter of the family and its values (repeat; the first varies slowest)")
      ("repeats", po::value(&repeats)->default_value(3), "timed runs per prompt and method (median)")
      ("temperature", po::value(&sampling.temperature)->default_value(0.0), "sampling temperature (0: greedy)")
      ("top-k", po::value(&sampling.top_k)->default_value(0), "top-k (0: off)")
      ("top-p", po::value(&sampling.top_p)->default_value(1.0), "top-p (1: off)")
      ("seed", po::value(&sampling.seed)->default_value(0), "sampling seed")
      ("max-nll-increase", po::value(&max_nll_increase)->default_value(0.05, "0.05"),
       "lossy methods: the most the target's NLL per token may rise over AR's (nats)")
      ("min-chrf", po::value(&min_chrf)->default_value(90), "lossy methods at temperature 0: the least mean chrF of an output against AR's (0-100)")
      ("max-changed", po::value(&max_changed)->default_value(1), "lossy methods at temperature 0: the largest share of outputs that may differ from AR's (1: any)")
      ("max-tv", po::value(&max_tv)->default_value(max_tv),
       "lossy methods at temperature > 0: the largest expected total-variation distance per generated token between the distribution "
       "each token is drawn from and the target's (1: any)")
      ("confidence", po::value(&confidence)->default_value(0.95), "lossy methods: confidence of the drift contract, family-wise over the grid");
  add_method_options(desc, m);
  po::variables_map vm;
  if (!parse(args, desc, vm,
             "usage: specd calibrate sweep --policy P --grid NAME=v1,v2,... [--grid ...] --out DIR [--resume] [--shard I/N|auto[/N]] [method options]"))
    return 0;
  finish_method_options(m, vm);
  check_sampling_options(sampling);
  if (repeats < 1) input_error("--repeats", "must be at least 1");
  if (!std::isfinite(max_nll_increase)) input_error("--max-nll-increase", "must be a finite number");
  if (!(min_chrf >= 0 && min_chrf <= 100)) input_error("--min-chrf", "must be in [0, 100]");
  if (!(max_changed >= 0 && max_changed <= 1)) input_error("--max-changed", "must be in [0, 1]");
  if (!(max_tv > 0 && max_tv <= 1)) input_error("--max-tv", "must be in (0, 1]");
  if (!(confidence > 0.5 && confidence < 1)) input_error("--confidence", "must be in (0.5, 1)");
  const MethodInfo& info = method_option(policy, "--policy");
  const std::string family = method_family(policy);
  if (family != policy)
    input_error("--policy", policy + " shares the parameters of " + family + ", whose sweep it deploys: sweep --policy " + family);
  if (info.autoregressive) input_error("--policy", policy + " has no parameters to sweep");
  // The base point: the options as given (defaults and typed flags), no artifact thresholds.
  const SweepPlan plan = plan_sweep(family, grid_texts, deployed_options(m, family, nullptr));
  CalibrationProvenance provenance;
  std::vector<WorkloadItem> items = prepare(a, provenance, joined(args, "sweep"));
  if (a.max_new_tokens > 0)
    for (WorkloadItem& item : items) item.max_new_tokens = a.max_new_tokens;
  provenance.seed = sampling.seed;
  provenance.temperature = sampling.temperature;
  provenance.top_k = sampling.top_k;
  provenance.top_p = sampling.top_p;
  nlohmann::json base_json = nlohmann::json::object(), grid_json = nlohmann::json::object();
  for (const MethodParam* p : params_of(family)) base_json[p->name] = param_value_text(*p, p->get(plan.base));
  for (const SweepAxis& axis : plan.grid) grid_json[axis.name] = axis.texts;
  provenance.options = {{"family", family}, {"grid", grid_json}, {"base", base_json}, {"repeats", repeats}, {"max_new_tokens", a.max_new_tokens}};

  const bool needs_draft = info.draft != DraftModelUse::None;
  ModelFiles files = open_model_files(a.target_dir, "", a.device);
  if (needs_draft) m.draft_dir = draft_dir_for(m.draft_dir, a.target_dir);
  std::shared_ptr<const LlamaModel> draft = needs_draft ? LlamaModel::load(m.draft_dir, a.device) : nullptr;
  check_tree_vocabulary(m.options, files.model->config().vocab_size);
  const std::string pair_draft = info.draft == DraftModelUse::Required ? m.draft_dir : "";
  Artifact artifact = artifact_for(a.out, a.target_dir, pair_draft);
  // A method that loads a calibration (csd's memory, sam's corpus, arc's constants) takes it from
  // --artifact, else from the pair's artifact being added to.
  std::shared_ptr<const Artifact> given = load_artifact(m, a.target_dir, draft != nullptr);
  const bool out_is_artifact = std::filesystem::exists(std::filesystem::path(a.out) / kManifestFile);
  const Artifact* policy_artifact = given ? given.get() : out_is_artifact ? &artifact : nullptr;

  SweepSetup setup;
  setup.target = files.model.get();
  setup.draft = draft;
  setup.tokenizer = &files.tokenizer;
  setup.artifact = policy_artifact;
  setup.artifact_name = given ? m.artifact_dir : a.out;
  setup.family = family;
  setup.items = items;
  setup.repeats = repeats;
  setup.sampling = sampling;
  setup.stop_tokens = files.stop_tokens;

  check_sweep_plan(plan, setup);  // every point builds before anything is measured
  if (plan.base.adaptive_budget) {  // one curve per model for every run (a context too short for it: each run measures)
    const auto target_costs = timed_forward_costs(*files.model, 3);
    if (!target_costs.empty()) setup.target_cost = CostCurve(target_costs);
    const auto draft_costs = draft ? timed_forward_costs(*draft, 3) : std::vector<std::pair<int32_t, double>>{};
    if (!draft_costs.empty()) setup.draft_cost = CostCurve(draft_costs);
  }
  // A sweep compares its runs' speeds, so it resumes only on the machine it began on.
  nlohmann::json journal_identity = identity("sweep", artifact, provenance);
  journal_identity["machine"] = provenance.machine;
  CalibrationJournal journal(a.out + ".sweep-journal.sqlite", journal_identity, a.resume, a.out);
  run_sweep(plan, setup, a.shard_index, a.shard_count, journal);

  SweepCalibration sweep;
  sweep.provenance = provenance;
  sweep.family = family;
  sweep.lossless = info.lossless;
  sweep.grid = plan.grid;
  sweep.planned_runs = static_cast<int32_t>(plan.runs.size());
  sweep.max_nll_increase = max_nll_increase;
  sweep.min_chrf = min_chrf;
  sweep.max_changed = max_changed;
  sweep.max_tv = max_tv;
  sweep.confidence = confidence;
  sweep.runs = journal.sweep_runs();
  for (const SweepRun& r : sweep.runs) sweep.provenance.wall_s += r.wall_s;
  SweepChoice choice;
  SweepCalibration stored;
  deliver_to_artifact(journal, a.out, a.target_dir, pair_draft, [&](Artifact& current) {
    choice = store_sweep(current, sweep, a.shard_count > 1);
    stored = current.sweeps.back();
  });

  std::printf("wrote %s: sweep of %s (%s), %zu of %zu runs, shard %d/%d, %zu prompts, T=%.2f, %d repeats\n", a.out.c_str(), family.c_str(),
              info.lossless ? "lossless: the fastest run is chosen" : "lossy: the fastest run within the drift bounds is chosen",
              stored.runs.size(), plan.runs.size(), a.shard_index, a.shard_count, items.size(), sampling.temperature, repeats);
  double run_s = 0;
  for (const SweepRun& r : sweep.runs) run_s += r.wall_s;
  const double decodes = static_cast<double>(sweep_run_requests(setup)) * static_cast<double>(sweep.runs.size());
  std::printf("  measuring took %.1f s: %.2f runs/min, %.1f decodes/min, on %s\n", run_s, run_s > 0 ? 60.0 * sweep.runs.size() / run_s : 0.0,
              run_s > 0 ? 60.0 * decodes / run_s : 0.0, machine_text(stored.provenance.machine).c_str());
  print_runs(stored);
  if (a.shard_count > 1) {
    std::printf("  a shard: the run to deploy is chosen when the shards are merged (specd artifact merge)\n");
    return 0;
  }
  if (!choice.run) {
    std::printf("  chosen: none\n");
    std::fflush(stdout);
    std::fprintf(stderr, "calibrate sweep: no run chosen: %s\n", choice.reason.c_str());
    return 1;
  }
  std::printf("  chosen: %s; deployed by --artifact %s unless a flag is typed\n", choice.reason.c_str(), a.out.c_str());
  return 0;
}

}  // namespace specd::cli
