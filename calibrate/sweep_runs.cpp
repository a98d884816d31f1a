#include "calibrate/sweep_runs.h"

#include <chrono>
#include <cmath>
#include <tuple>
#include <utility>
#include <map>

#include "decode/forward_cost.h"
#include "bench/method_comparison.h"
#include "bench/quality.h"
#include "model/llama_model.h"

namespace specd {
namespace {

double per(double amount, double count) { return count > 0 ? amount / count : 0.0; }

// Per-prompt values of one group: the NLL per token increase over AR, chrF against AR, and the
// expected TV per token (the lossy rules' firings per token: calibrate/sweep_choice.h).
struct PromptDrift {
  std::vector<double> nll_increase, chrf, tv;
};

// Mean and sample standard deviation (n - 1; 0 below two values).
std::pair<double, double> mean_sd(const std::vector<double>& v) {
  if (v.empty()) return {0.0, 0.0};
  double mean = 0;
  for (double x : v) mean += x;
  mean /= static_cast<double>(v.size());
  double squares = 0;
  for (double x : v) squares += (x - mean) * (x - mean);
  return {mean, v.size() > 1 ? std::sqrt(squares / static_cast<double>(v.size() - 1)) : 0.0};
}

SweepStats stats_of(const std::string& category, const MethodTally& t, const MethodTally& ar, const ChrfStats& chrf, const PromptDrift& drift) {
  SweepStats s;
  s.category = category;
  s.prompts = t.prompts;
  s.new_tokens = t.tokens;
  s.equal_to_ar = t.equal_to_ar;
  s.mat = per(t.tokens, t.steps);
  s.acceptance = per(t.accepted, t.drafted);
  s.tokens_per_s = per(t.tokens * 1000.0, t.wall_ms);
  s.ar_tokens_per_s = per(ar.tokens * 1000.0, ar.wall_ms);
  s.speedup = t.speedup.mean();
  s.speedup_ci95 = t.speedup.ci95();
  s.decode_speedup = t.decode_speedup.mean();
  s.relaxed_per_token = per(t.relaxed, t.tokens);
  s.rescued_per_token = per(t.rescued, t.tokens);
  s.nll_per_token = per(t.nll, t.nll_tokens);
  s.ar_nll_per_token = per(ar.nll, ar.nll_tokens);
  s.chrf_vs_ar = chrf.score();
  std::tie(s.nll_increase_mean, s.nll_increase_sd) = mean_sd(drift.nll_increase);
  std::tie(s.chrf_mean, s.chrf_sd) = mean_sd(drift.chrf);
  std::tie(s.tv_mean, s.tv_sd) = mean_sd(drift.tv);
  return s;
}

}  // namespace

int64_t sweep_run_requests(const SweepSetup& setup) { return static_cast<int64_t>(setup.items.size()) * setup.repeats * 2; }

SweepRun measure_sweep_run(const SweepSetup& setup, int32_t index, const MethodOptions& run_options, std::vector<double> values,
                           std::string point, Progress& progress) {
  const auto start = std::chrono::steady_clock::now();
  MethodOptions options = run_options;
  if (setup.target_cost) options.target_cost = setup.target_cost;
  if (setup.draft_cost) options.draft_cost = setup.draft_cost;
  MethodContext ar_context{*setup.target, setup.draft, setup.sampling, options, setup.artifact, setup.artifact_name};
  std::map<std::string, Policy> policies;
  policies.emplace("ar", make_policy("ar", ar_context));
  policies.emplace(setup.family, make_policy(setup.family, ar_context));
  const Policy& policy = policies.at(setup.family);
  // The curve the budget decides with; with a fixed budget, the one it would have used.
  const CostCurve cost = policy.budget ? policy.budget->cost() : measure_cost_curve(*setup.target, policy.max_nodes + 1);

  ComparisonSetup comparison;
  comparison.methods = {"ar", setup.family};
  comparison.items = setup.items;
  comparison.repeats = setup.repeats;
  comparison.sampling = setup.sampling;
  comparison.stop_tokens = setup.stop_tokens;
  comparison.quality = true;  // the target's NLL of both outputs
  // The calibration prompts have no references: chrF compares the method's output with AR's.
  std::map<std::string, ChrfStats> chrf;
  std::map<std::string, PromptDrift> drift;
  auto on_item = [&](const ItemResult& item) {
    const RequestRun& ar = item.runs.at("ar");
    const RequestRun& run = item.runs.at(setup.family);
    ChrfStats stats;
    for (size_t turn = 0; turn < ar.turn_texts.size() && turn < run.turn_texts.size(); ++turn)
      stats.add(chrf_stats(run.turn_texts[turn], ar.turn_texts[turn]));
    const MethodTally& t = item.tallies.at(setup.family);
    const MethodTally& a = item.tallies.at("ar");
    const double increase = per(t.nll, static_cast<double>(t.nll_tokens)) - per(a.nll, static_cast<double>(a.nll_tokens));
    const double tv = per(static_cast<double>(t.rescued + t.relaxed), static_cast<double>(t.tokens));
    for (const std::string& group : {setup.items[item.index].category, std::string("overall")}) {
      chrf[group].add(stats);
      drift[group].nll_increase.push_back(increase);
      drift[group].chrf.push_back(stats.score());
      drift[group].tv.push_back(tv);
    }
  };
  const ComparisonResult result = compare_methods(*setup.target, policies, *setup.tokenizer, comparison, progress, on_item);

  SweepRun run;
  run.index = index;
  run.values = std::move(values);
  run.point = std::move(point);
  for (const std::string& category : result.categories)
    run.stats.push_back(
        stats_of(category, result.tallies.at(setup.family).at(category), result.tallies.at("ar").at(category), chrf[category], drift[category]));
  run.cost_curve = cost.points();
  run.wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return run;
}

}  // namespace specd
