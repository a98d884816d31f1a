#include "calibrate/sweep_plan.h"

#include <algorithm>
#include <cstdio>
#include <set>

#include "speculative/draft_model_runner.h"
#include "speculative/method_params.h"
#include "util/error.h"

namespace specd {
namespace {

// One --grid NAME=v1,v2,...: the family's parameter and its values as typed.
SweepAxis parse_axis(const std::string& family, const std::string& text) {
  const size_t eq = text.find('=');
  if (eq == std::string::npos || eq == 0) input_error("--grid", "must be NAME=v1,v2,... (got '" + text + "')");
  const std::string name = text.substr(0, eq);
  const MethodParam* param = find_param(family, name);
  if (!param) {
    std::string known;
    for (const MethodParam* p : params_of(family)) known += (known.empty() ? "" : ", ") + p->name;
    input_error("--grid", "'" + name + "' is not a parameter of " + family + " (known: " + known + ")");
  }
  SweepAxis axis;
  axis.name = name;
  std::string rest = text.substr(eq + 1);
  size_t start = 0;
  while (true) {
    const size_t comma = rest.find(',', start);
    const std::string value = rest.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
    if (value.empty()) input_error("--grid", name + ": an empty value in '" + text + "'");
    const double parsed = parse_param_value(*param, value, "--grid");
    if (std::find(axis.values.begin(), axis.values.end(), parsed) != axis.values.end())
      input_error("--grid", name + ": the value '" + value + "' is given twice");
    axis.values.push_back(parsed);
    axis.texts.push_back(param_value_text(*param, parsed));
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  return axis;
}

// The grid's points, the first axis varying slowest: value indices per axis.
std::vector<std::vector<size_t>> grid_points(const std::vector<SweepAxis>& grid) {
  std::vector<std::vector<size_t>> points{{}};
  for (const SweepAxis& axis : grid) {
    std::vector<std::vector<size_t>> next;
    for (const auto& p : points)
      for (size_t v = 0; v < axis.values.size(); ++v) {
        next.push_back(p);
        next.back().push_back(v);
      }
    points = std::move(next);
  }
  return points;
}

std::string point_text(const std::string& family, const std::vector<SweepAxis>& grid, const std::vector<double>& values) {
  std::string text;
  for (size_t i = 0; i < grid.size(); ++i)
    text += (text.empty() ? "" : " ") + grid[i].name + "=" + param_value_text(*find_param(family, grid[i].name), values[i]);
  return text;
}

}  // namespace

MethodOptions SweepPlan::options_at(const PlannedRun& run) const {
  MethodOptions options = base;
  for (size_t i = 0; i < grid.size(); ++i) find_param(family, grid[i].name)->set(options, run.values[i]);
  return options;
}

SweepPlan plan_sweep(const std::string& family, const std::vector<std::string>& grid_texts, const MethodOptions& base) {
  if (grid_texts.empty()) input_error("--grid", "give at least one NAME=v1,v2,... (parameters of " + family + ")");
  SweepPlan plan;
  plan.family = family;
  plan.base = base;
  for (const std::string& text : grid_texts) {
    SweepAxis axis = parse_axis(family, text);
    for (const SweepAxis& other : plan.grid)
      if (other.name == axis.name) input_error("--grid", axis.name + " is given twice");
    plan.grid.push_back(std::move(axis));
  }
  // Counted before the points are expanded: a grid's size is the product of its axes' lengths.
  size_t points = 1;
  for (const SweepAxis& axis : plan.grid)
    if (__builtin_mul_overflow(points, axis.values.size(), &points) || points > kMostSweepPoints)
      input_error("--grid", "more than " + std::to_string(kMostSweepPoints) + " points (each is a measured run over every prompt): sweep fewer values");
  std::vector<double> values;
  for (const SweepAxis& axis : plan.grid) values.push_back(find_param(family, axis.name)->get(base));
  plan.runs.push_back({0, values, point_text(family, plan.grid, values)});
  for (const std::vector<size_t>& point : grid_points(plan.grid)) {
    values.clear();
    for (size_t i = 0; i < plan.grid.size(); ++i) values.push_back(plan.grid[i].values[point[i]]);
    plan.runs.push_back({static_cast<int32_t>(plan.runs.size()), values, point_text(family, plan.grid, values)});
  }
  return plan;
}

void check_sweep_plan(const SweepPlan& plan, const SweepSetup& setup) {
  for (const PlannedRun& run : plan.runs) {
    MethodOptions options = plan.options_at(run);
    options.adaptive_budget = false;  // no cost curve to measure for a check
    auto build = [&] {
      MethodContext context{*setup.target, setup.draft, setup.sampling, options, setup.artifact, setup.artifact_name};
      const Policy built = make_policy(plan.family, context);
      if (built.max_nodes > DraftModelRunner::kTreeRows)
        input_error("method " + plan.family, "drafts " + std::to_string(built.max_nodes) + " nodes a step; the most is " +
                                                 std::to_string(DraftModelRunner::kTreeRows));
    };
    if (run.index == 0) {
      build();
      continue;
    }
    try {
      build();
    } catch (const InputError& e) {
      input_error("--grid", run.point + ": " + e.what());
    }
  }
}

void run_sweep(const SweepPlan& plan, const SweepSetup& setup, int32_t shard, int32_t count, CalibrationJournal& journal) {
  std::set<int32_t> finished;
  for (const SweepRun& r : journal.sweep_runs()) finished.insert(r.index);
  std::vector<const PlannedRun*> owned, todo;
  for (const PlannedRun& run : plan.runs)
    if (run.index % count == shard) owned.push_back(&run);
  for (const PlannedRun* run : owned)
    if (!finished.count(run->index)) todo.push_back(run);
  if (!finished.empty()) std::fprintf(stderr, "calibrate sweep: resuming, %zu of %zu runs already done\n", finished.size(), owned.size());
  Progress progress(static_cast<int64_t>(todo.size()) * sweep_run_requests(setup), "calibrate sweep " + plan.family, "requests");
  for (const PlannedRun* run : todo) {
    progress.note("run " + std::to_string(run->index) + " of " + std::to_string(plan.runs.size()) + ": " + run->point);
    journal.record_sweep_run(measure_sweep_run(setup, run->index, plan.options_at(*run), run->values, run->point, progress));
  }
  progress.done();
}

SweepChoice store_sweep(Artifact& artifact, SweepCalibration sweep, bool sharded) {
  artifact.sweeps.erase(std::remove_if(artifact.sweeps.begin(), artifact.sweeps.end(),
                                       [&](const SweepCalibration& s) { return s.family == sweep.family; }),
                        artifact.sweeps.end());
  SweepChoice choice;
  if (!sharded) {
    choice = apply_sweep_choice(artifact, sweep);
  } else {
    // A shard's runs are part of the choice's input: `artifact merge` chooses over all of them.
    sweep.choice = "a shard: chosen when the shards are merged (specd artifact merge)";
    artifact.thresholds.erase(std::remove_if(artifact.thresholds.begin(), artifact.thresholds.end(),
                                             [&](const Threshold& t) { return replaced_by(sweep, t); }),
                              artifact.thresholds.end());
  }
  artifact.sweeps.push_back(std::move(sweep));
  return choice;
}

}  // namespace specd
