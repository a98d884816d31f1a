#pragma once
// The plan of a parameter sweep (specd calibrate sweep) and its execution: the grid parsed from
// NAME=v1,v2,... against the family's parameters (speculative/method_params.h), run 0 at the base
// point and one run per grid point (the first axis varying slowest), every point's policy built
// before anything is measured, the runs a shard owns measured (calibrate/sweep_runs.h) into the
// resumable journal, and the finished sweep stored in the artifact with its choice
// (calibrate/sweep_choice.h).
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "artifact/artifact.h"
#include "calibrate/calibration_journal.h"
#include "calibrate/sweep_choice.h"
#include "calibrate/sweep_runs.h"
#include "methods/method_registry.h"
#include "util/progress.h"

namespace specd {

struct PlannedRun {
  int32_t index = 0;           // 0: the base point
  std::vector<double> values;  // one per grid axis
  std::string point;           // "tokens=6 match=latest"
};

struct SweepPlan {
  std::string family;
  std::vector<SweepAxis> grid;
  MethodOptions base;  // the options as given (defaults and typed flags), no artifact thresholds
  std::vector<PlannedRun> runs;
  // The base with the run's grid values.
  MethodOptions options_at(const PlannedRun& run) const;
};

// The most grid points a sweep plans; each is a run over every calibration prompt, so a larger
// grid is a typo or days of work, refused before it is expanded.
inline constexpr size_t kMostSweepPoints = 10000;

// Parses one --grid text per axis: InputError naming --grid for an unknown parameter, a value
// that is not one (or out of its range), a value or axis given twice, no axis, or more than
// kMostSweepPoints points.
SweepPlan plan_sweep(const std::string& family, const std::vector<std::string>& grid_texts, const MethodOptions& base);

// Builds every run's policy (fixed budget, nothing measured): the base point's errors are the
// options' own; a grid point's InputError names --grid and the point.
void check_sweep_plan(const SweepPlan& plan, const SweepSetup& setup);

// Measures the runs a shard owns (index % count == shard) that the journal does not hold yet,
// recording each as it finishes; prints a line when resuming.
void run_sweep(const SweepPlan& plan, const SweepSetup& setup, int32_t shard, int32_t count, CalibrationJournal& journal);

// The sweep as the artifact stores it, replacing the family's earlier sweep. One shard: the
// choice is applied (thresholds of the chosen run); a shard of several: the family's thresholds
// are removed and the choice waits for `artifact merge`. Returns the choice (none for a shard).
SweepChoice store_sweep(Artifact& artifact, SweepCalibration sweep, bool sharded);

}  // namespace specd
