#include "calibrate/sweep_choice.h"

#include <algorithm>
#include <cstdio>

namespace specd {
namespace {

std::string format(const char* pattern, double a, double b = 0) {
  char text[128];
  std::snprintf(text, sizeof text, pattern, a, b);
  return text;
}

}  // namespace

bool replaced_by(const SweepCalibration& sweep, const Threshold& row) {
  if (row.policy != sweep.family) return false;
  if (row.source.rfind("sweep ", 0) == 0) return true;
  return std::any_of(sweep.grid.begin(), sweep.grid.end(), [&](const SweepAxis& axis) { return axis.name == row.name; });
}

bool sweep_applies_chrf(const SweepCalibration& sweep) { return sweep.provenance.temperature == 0; }

bool sweep_run_within_bounds(const SweepCalibration& sweep, const SweepRun& run) {
  if (sweep.lossless) return true;
  const SweepStats& o = run.overall();
  if (!(o.nll_per_token - o.ar_nll_per_token <= sweep.max_nll_increase)) return false;
  return !sweep_applies_chrf(sweep) || o.chrf_vs_ar >= sweep.min_chrf;
}

SweepChoice choose_sweep_run(const SweepCalibration& sweep) {
  const SweepRun* best = nullptr;
  for (const SweepRun& run : sweep.runs) {
    if (run.stats.empty() || !sweep_run_within_bounds(sweep, run)) continue;
    if (!best || run.overall().speedup > best->overall().speedup ||
        (run.overall().speedup == best->overall().speedup && run.index < best->index))
      best = &run;
  }
  const std::string bounds = format("NLL/token at most %.3g nats over AR", sweep.max_nll_increase) +
                             (sweep_applies_chrf(sweep) ? format(", chrF vs AR at least %.3g", sweep.min_chrf) : std::string());
  SweepChoice choice;
  if (sweep.runs.empty()) {
    choice.reason = "no runs to choose from";
    return choice;
  }
  if (!best) {
    choice.reason = "no run of " + std::to_string(sweep.runs.size()) + " stays within the bounds (" + bounds + ")";
    return choice;
  }
  choice.run = best->index;
  choice.reason = "sweep run " + std::to_string(best->index) + " of " + std::to_string(sweep.planned_runs) + ": " +
                  format("%.2fx AR", best->overall().speedup) +
                  (sweep.lossless ? ", fastest lossless" : ", fastest within " + bounds);
  return choice;
}

SweepChoice apply_sweep_choice(Artifact& artifact, SweepCalibration& sweep) {
  SweepChoice choice = choose_sweep_run(sweep);
  sweep.chosen = choice.run;
  sweep.choice = choice.reason;
  auto& rows = artifact.thresholds;
  rows.erase(std::remove_if(rows.begin(), rows.end(), [&](const Threshold& t) { return replaced_by(sweep, t); }), rows.end());
  if (!choice.run) return choice;
  const SweepRun& run = *std::find_if(sweep.runs.begin(), sweep.runs.end(), [&](const SweepRun& r) { return r.index == *choice.run; });
  for (size_t axis = 0; axis < sweep.grid.size() && axis < run.values.size(); ++axis)
    rows.push_back(Threshold{sweep.family, sweep.grid[axis].name, run.values[axis], choice.reason});
  return choice;
}

}  // namespace specd
