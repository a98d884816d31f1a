#pragma once
// ARC-Decode's gate chosen where it acts: from the deploy sites of on-policy arc runs (calibrate
// arc --sites deploy), the loosest LTS threshold theta whose relaxed tokens keep the next-step JS
// within a tolerance, with a family-wise guarantee over the grid (Learn-then-Test, Angelopoulos,
// Bates, Candes, Jordan & Lei 2021; Bonferroni across the grid, so no order is assumed and a block
// that relaxed nothing costs only its own test).
//
// Each theta of the grid ran on its own prompts. At theta the risk is
//   R(theta) = P(JS(t_d) > js_tolerance | the gate relaxed t_d, t_d != t_m),
// one Bernoulli per relaxed token (the auditor found misses uncorrelated within prompts, ICC ~ 0;
// the deploy audit prints a prompt-clustered interval beside Wilson to check that). H0(theta):
// R(theta) > risk is rejected when P(Bin(relaxed, risk) <= misses) <= (1 - confidence) / |grid|;
// then with probability >= confidence every rejected theta has R(theta) <= risk. t_d = t_m
// relaxations (the draft proposed the argmax and the sampling test rejected it) move nothing by JS
// and are counted apart: their cost is a bias towards the argmax, which JS cannot see.
#include <optional>
#include <string>
#include <vector>

#include "artifact/artifact.h"

namespace specd {

struct ArcGateOptions {
  std::vector<double> thetas{0.9, 0.7, 0.5, 0.3, 0.1};  // the grid, strict (high) first
  double js_tolerance = 0.1;                             // epsilon, nats
  double risk = 0.1;                                     // alpha: tolerated share of relaxed tokens above epsilon
  double confidence = 0.95;                              // 1 - gamma, family-wise over the grid
};

// The theta a calibration deploys when no theta of the grid is valid: above 1, LTS (<= 1) never
// reaches it, so arc verifies losslessly (sd-tree with pruning).
inline constexpr double kArcNeverRelax = 2.0;

// One row per theta of the grid, strict first, from the deploy-site samples (others ignored).
// std::invalid_argument when a deploy site's theta is not on the grid or the options are out of range.
std::vector<ArcGateRow> fit_arc_gate(const std::vector<ArcSample>& samples, const ArcGateOptions& options);

struct ArcGateChoice {
  double theta = kArcNeverRelax;
  bool relaxes = false;  // a valid theta was found
  std::string reason;    // one line: what the threshold guarantees, or why nothing relaxes
};
// The loosest (lowest) valid theta.
ArcGateChoice choose_arc_gate(const std::vector<ArcGateRow>& rows, const ArcGateOptions& options);

// The gate options a calibration recorded (provenance options theta_grid, js_tolerance, risk,
// confidence); InputError naming `where` when one is missing or malformed.
ArcGateOptions arc_gate_options_of(const ArcCalibration& arc, const std::string& where);
// Whether the calibration sampled deploy sites (provenance options.sites == "deploy", and not a pilot).
bool has_deploy_sites(const ArcCalibration& arc);
// Whether the calibration is the pilot stage of one with deploy sites (calibrate arc --stage pilot,
// provenance options.stage == "pilot"): constants without the gate that its deploy stage chooses.
bool is_arc_pilot(const ArcCalibration& arc);

}  // namespace specd
