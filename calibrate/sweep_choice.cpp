#include "calibrate/sweep_choice.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include <boost/math/distributions/binomial.hpp>
#include <boost/math/distributions/students_t.hpp>

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

bool sweep_applies_tv(const SweepCalibration& sweep) {
  return sweep.provenance.temperature > 0 && sweep.max_tv < 1 && sweep.confidence > 0;
}

namespace {

// P(mean of n values with this sample sd >= margin above the bound | the true mean is at the
// bound): the one-sided t-test's p-value for "the mean is on the safe side", where `margin` is
// how far the sample mean is on the safe side (negative: on the wrong side).
double t_test_p(double margin, double sd, int64_t n) {
  if (n < 2) return 1.0;
  const double se = sd / std::sqrt(static_cast<double>(n));
  if (!(se > 0)) return margin > 0 ? 0.0 : 1.0;
  return boost::math::cdf(boost::math::complement(boost::math::students_t(static_cast<double>(n - 1)), margin / se));
}

}  // namespace

double sweep_test_level(const SweepCalibration& sweep) {
  return (1 - sweep.confidence) / static_cast<double>(std::max(1, sweep.planned_runs));
}

SweepRunTest sweep_run_test(const SweepCalibration& sweep, const SweepRun& run) {
  SweepRunTest t;
  t.level = sweep_test_level(sweep);
  if (sweep.lossless) {
    t.valid = true;
    return t;
  }
  const SweepStats& o = run.overall();
  // With a TV bound at T > 0 the TV test takes the NLL test's place (sweep_choice.h says why).
  if (sweep_applies_tv(sweep)) t.p_tv = t_test_p(sweep.max_tv - o.tv_mean, o.tv_sd, o.prompts);
  else t.p_nll = t_test_p(sweep.max_nll_increase - o.nll_increase_mean, o.nll_increase_sd, o.prompts);
  if (sweep_applies_chrf(sweep)) {
    t.p_chrf = t_test_p(o.chrf_mean - sweep.min_chrf, o.chrf_sd, o.prompts);
    if (sweep.max_changed < 1)
      t.p_changed = o.prompts ? boost::math::cdf(boost::math::binomial_distribution<double>(static_cast<double>(o.prompts), sweep.max_changed),
                                                 static_cast<double>(o.prompts - o.equal_to_ar))
                              : 1.0;
  }
  t.valid = t.p_nll <= t.level && t.p_chrf <= t.level && t.p_changed <= t.level && t.p_tv <= t.level;
  return t;
}

bool sweep_run_within_bounds(const SweepCalibration& sweep, const SweepRun& run) {
  if (sweep.lossless) return true;
  if (sweep.confidence > 0) return sweep_run_test(sweep, run).valid;
  // Version 3: the point estimates against the bounds.
  const SweepStats& o = run.overall();
  if (!(o.nll_per_token - o.ar_nll_per_token <= sweep.max_nll_increase)) return false;
  return !sweep_applies_chrf(sweep) || o.chrf_vs_ar >= sweep.min_chrf;
}

std::string sweep_contract_text(const SweepCalibration& sweep) {
  std::string text = sweep_applies_tv(sweep) ? format("expected TV per token at most %.3g", sweep.max_tv)
                                             : format("NLL/token at most %.3g nats over AR", sweep.max_nll_increase);
  if (sweep_applies_chrf(sweep)) {
    text += format(", chrF vs AR at least %.3g", sweep.min_chrf);
    if (sweep.confidence > 0 && sweep.max_changed < 1) text += format(", at most %.3g%% of outputs changed", 100 * sweep.max_changed);
  }
  if (sweep.confidence > 0)
    text += format(", %.3g%% confidence over the %.0f planned runs", 100 * sweep.confidence, static_cast<double>(sweep.planned_runs));
  return text;
}

SweepChoice choose_sweep_run(const SweepCalibration& sweep) {
  const SweepRun* best = nullptr;
  for (const SweepRun& run : sweep.runs) {
    if (run.stats.empty() || !sweep_run_within_bounds(sweep, run)) continue;
    if (!best || run.overall().speedup > best->overall().speedup ||
        (run.overall().speedup == best->overall().speedup && run.index < best->index))
      best = &run;
  }
  const std::string bounds = sweep_contract_text(sweep);
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
