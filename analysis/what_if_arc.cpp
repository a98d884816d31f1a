// 7. What-if for ARC from the stored held-out samples alone (no model run): at other theta and
// delta, the share of candidates LTS would let through and how many of those keep JS <= tau_delta.
#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "analysis/arc_report_parts.h"
#include "analysis/sections.h"

namespace specd::report {
namespace {

const std::vector<double> kThetas = {0, 0.3, 0.5, 0.7, 0.9};
const std::vector<double> kDeltas = {0.01, 0.05, 0.1, 0.2};

}  // namespace

std::vector<Block> what_if_arc_blocks(const ReportInputs& in) {
  std::vector<Block> blocks{Heading{"ARC at other theta and delta"}};
  Paragraph why_not;
  const ArcCalibration* arc = fitted_arc(in, why_not);
  if (!arc) {
    blocks.push_back(why_not);
    return blocks;
  }
  int64_t held_out = 0;
  for (const ArcSample& s : arc->samples) held_out += s.held_out;
  if (held_out == 0) {
    blocks.push_back(Paragraph{"not calibrated: no held-out samples; run specd calibrate arc with --audit-per-category 4 --out " + in.artifact_dir,
                               Tone::NotCalibrated});
    return blocks;
  }
  blocks.push_back(Paragraph{"Estimates from the stored held-out samples; no model run. At each delta the constants are refitted on the "
                             "calibration samples with the artifact's rule and buckets; a sample is relaxable when LTS = 1 - U_min / tau_delta "
                             ">= theta (U_min <= (1 - theta) tau_delta), and covered when its JS <= tau_delta (the guarantee of Theorem 1). "
                             "The candidates are calibration's (drawn from the target's top-K), not a run's rejected draft tokens."});
  std::vector<double> deltas = kDeltas;
  if (std::find(deltas.begin(), deltas.end(), arc->delta) == deltas.end()) deltas.push_back(arc->delta);
  std::sort(deltas.begin(), deltas.end());
  Table t{"What-if grid over " + std::to_string(held_out) + " held-out samples, Wilson 95% intervals; rows without numbers: too few "
          "calibration samples for that delta",
          {{"delta", "delta", 2},
           {"theta", "theta", 1},
           {"relaxable_n", "relaxable samples"},
           {"relaxable", "relaxable (%)", 1},
           {"relaxable_low", "Wilson low (%)", 1},
           {"relaxable_high", "Wilson high (%)", 1},
           {"covered_n", "covered (JS <= tau_delta)"},
           {"coverage", "coverage among relaxable (%)", 1},
           {"coverage_low", "Wilson low (%)", 1},
           {"coverage_high", "Wilson high (%)", 1},
           {"bounded_n", "bounded (JS <= U_min)"},
           {"bounded", "bound holds among relaxable (%)", 1},
           {"bounded_low", "Wilson low (%)", 1},
           {"bounded_high", "Wilson high (%)", 1},
           {"tau_delta", "tau_delta, all (nats)", 4},
           {"target", "1 - delta (%)", 1}},
          nlohmann::json::array()};
  double min_tau = std::numeric_limits<double>::infinity();
  for (double delta : deltas) {
    const auto constants = refit_arc_at(*arc, delta, in.artifact_dir);
    for (double theta : kThetas) {
      nlohmann::json row = {{"delta", delta}, {"theta", theta}, {"target", pct(1 - delta)}};
      if (constants) {
        int64_t relaxable = 0, covered = 0, bounded = 0;
        for (const ArcSample& s : arc->samples) {
          if (!s.held_out) continue;
          const SampleBound b = sample_bound(*constants, s);
          if (!(1.0 - b.u_min / b.tau_delta >= theta)) continue;  // the runtime's LTS test
          ++relaxable;
          covered += s.js <= b.tau_delta;
          bounded += s.js <= b.u_min;
        }
        row.update({{"relaxable_n", relaxable}, {"covered_n", covered}, {"bounded_n", bounded}, {"tau_delta", constants->front().tau_delta}});
        put_share(row, "relaxable", relaxable, held_out);
        put_share(row, "coverage", covered, relaxable);
        put_share(row, "bounded", bounded, relaxable);
        for (const ArcConstants& c : *constants) min_tau = std::min(min_tau, c.tau_delta);
      }
      t.rows.push_back(row);
    }
  }
  // JS never exceeds ln 2 nats: a tau_delta at or above it makes JS <= tau_delta hold for every sample.
  if (min_tau >= std::log(2.0))
    blocks.push_back(Paragraph{"At every delta of the grid every bucket's tau_delta is at least ln 2 = 0.693 nats, the largest JS there is: "
                               "JS <= tau_delta holds for every sample and says nothing here; the bound JS <= U_min among the relaxable "
                               "samples is the informative coverage."});
  // Three panels from the same rows: how much LTS lets through, and how safe that is by either test.
  const nlohmann::json spec = nlohmann::json::parse(R"json({
    "hconcat": [
      {"width": 240, "height": 220, "title": "relaxable share",
       "layer": [
         {"mark": {"type": "line", "point": true},
          "encoding": {"x": {"field": "theta", "type": "quantitative", "title": "LTS threshold theta (unitless)"},
                       "y": {"field": "relaxable", "type": "quantitative", "title": "held-out samples relaxable (%)"},
                       "color": {"field": "delta", "type": "nominal", "title": "delta"}}},
         {"mark": {"type": "rule"},
          "encoding": {"x": {"field": "theta", "type": "quantitative"}, "y": {"field": "relaxable_low", "type": "quantitative"},
                       "y2": {"field": "relaxable_high"}, "color": {"field": "delta", "type": "nominal"}}}]},
      {"width": 240, "height": 220, "title": "coverage among the relaxable",
       "layer": [
         {"mark": {"type": "line", "point": true},
          "encoding": {"x": {"field": "theta", "type": "quantitative", "title": "LTS threshold theta (unitless)"},
                       "y": {"field": "coverage", "type": "quantitative", "scale": {"zero": false},
                             "title": "relaxable with JS <= tau_delta (%)"},
                       "color": {"field": "delta", "type": "nominal", "title": "delta"}}},
         {"mark": {"type": "rule"},
          "encoding": {"x": {"field": "theta", "type": "quantitative"}, "y": {"field": "coverage_low", "type": "quantitative"},
                       "y2": {"field": "coverage_high"}, "color": {"field": "delta", "type": "nominal"}}}]},
      {"width": 240, "height": 220, "title": "JS <= U_min among the relaxable",
       "layer": [
         {"mark": {"type": "line", "point": true},
          "encoding": {"x": {"field": "theta", "type": "quantitative", "title": "LTS threshold theta (unitless)"},
                       "y": {"field": "bounded", "type": "quantitative", "scale": {"zero": false},
                             "title": "relaxable with JS <= U_min (%)"},
                       "color": {"field": "delta", "type": "nominal", "title": "delta"}}},
         {"mark": {"type": "rule"},
          "encoding": {"x": {"field": "theta", "type": "quantitative"}, "y": {"field": "bounded_low", "type": "quantitative"},
                       "y2": {"field": "bounded_high"}, "color": {"field": "delta", "type": "nominal"}}}]}
    ]})json");
  blocks.push_back(Chart{"What-if: ARC's relaxable share and its coverage over theta, one line per delta (estimates from stored samples)", spec, t});
  return blocks;
}

}  // namespace specd::report
