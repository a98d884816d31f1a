#include "stats/arc_gate.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <set>
#include <stdexcept>

#include <boost/math/distributions/binomial.hpp>

#include "stats/intervals.h"
#include "util/error.h"

namespace specd {
namespace {

void check_options(const ArcGateOptions& o) {
  if (o.thetas.empty()) throw std::invalid_argument("the theta grid is empty");
  for (double t : o.thetas)
    if (!std::isfinite(t)) throw std::invalid_argument("a theta of the grid is not finite");
  if (std::set<double>(o.thetas.begin(), o.thetas.end()).size() != o.thetas.size())
    throw std::invalid_argument("the theta grid repeats a value");
  if (!(o.js_tolerance > 0 && o.js_tolerance < std::log(2.0))) throw std::invalid_argument("the JS tolerance must be in (0, ln 2)");
  if (!(o.risk > 0 && o.risk < 1)) throw std::invalid_argument("the risk must be in (0, 1)");
  if (!(o.confidence > 0.5 && o.confidence < 1)) throw std::invalid_argument("the confidence must be in (0.5, 1)");
}

std::string number(double v) {
  char text[32];
  std::snprintf(text, sizeof text, "%g", v);
  return text;
}

}  // namespace

std::vector<ArcGateRow> fit_arc_gate(const std::vector<ArcSample>& samples, const ArcGateOptions& options) {
  check_options(options);
  std::vector<double> grid = options.thetas;
  std::sort(grid.begin(), grid.end(), std::greater<double>());
  std::map<double, ArcGateRow> rows;
  std::map<double, std::set<int32_t>> prompts;
  for (double t : grid) rows[t].theta = t;
  for (const ArcSample& s : samples) {
    if (!s.deploy_site) continue;
    auto row = rows.find(s.theta);
    if (row == rows.end()) throw std::invalid_argument("a deploy site of prompt " + std::to_string(s.prompt) + " ran at theta " +
                                                       number(s.theta) + ", which is not on the grid");
    ArcGateRow& r = row->second;
    prompts[s.theta].insert(s.prompt);
    ++r.sites;
    if (!s.relaxed) continue;
    if (s.draft_token == s.target_token) {
      ++r.relaxed_argmax;
      continue;
    }
    ++r.relaxed;
    if (s.js > options.js_tolerance) ++r.misses;
  }
  const double family_level = (1 - options.confidence) / static_cast<double>(grid.size());
  std::vector<ArcGateRow> out;
  for (double t : grid) {
    ArcGateRow r = rows[t];
    r.prompts = static_cast<int64_t>(prompts[t].size());
    r.risk = r.relaxed ? static_cast<double>(r.misses) / static_cast<double>(r.relaxed) : 0.0;
    // One-sided Clopper-Pearson upper bound at `confidence`: the two-sided interval at 2c - 1.
    r.risk_high = clopper_pearson_interval(r.misses, r.relaxed, 2 * options.confidence - 1).high;
    r.p_value = r.relaxed ? boost::math::cdf(boost::math::binomial_distribution<double>(static_cast<double>(r.relaxed), options.risk),
                                             static_cast<double>(r.misses))
                          : 1.0;
    r.valid = r.p_value <= family_level;
    out.push_back(r);
  }
  return out;
}

ArcGateChoice choose_arc_gate(const std::vector<ArcGateRow>& rows, const ArcGateOptions& options) {
  ArcGateChoice choice;
  const ArcGateRow* best = nullptr;
  for (const ArcGateRow& r : rows)
    if (r.valid && (!best || r.theta < best->theta)) best = &r;
  const std::string contract = "JS > " + number(options.js_tolerance) + " nats on at most " + number(100 * options.risk) +
                               "% of relaxed tokens (t_d != t_m), " + number(100 * options.confidence) + "% confidence over " +
                               std::to_string(rows.size()) + " thresholds";
  if (!best) {
    choice.reason = "calibrate arc: no theta met " + contract + "; arc relaxes nothing (theta " + number(kArcNeverRelax) + ")";
    return choice;
  }
  choice.theta = best->theta;
  choice.relaxes = true;
  choice.reason = "calibrate arc: loosest theta meeting " + contract + " (" + std::to_string(best->misses) + " of " +
                  std::to_string(best->relaxed) + " above on deploy sites)";
  return choice;
}

ArcGateOptions arc_gate_options_of(const ArcCalibration& arc, const std::string& where) {
  const nlohmann::json& o = arc.provenance.options;
  ArcGateOptions options;
  auto number_of = [&](const char* key) {
    if (!o.contains(key) || !o[key].is_number()) input_error(where, std::string("the arc calibration's options lack a number '") + key + "'");
    return o[key].get<double>();
  };
  if (!o.contains("theta_grid") || !o["theta_grid"].is_array()) input_error(where, "the arc calibration's options lack 'theta_grid'");
  options.thetas.clear();
  for (const nlohmann::json& t : o["theta_grid"]) {
    if (!t.is_number()) input_error(where, "the arc calibration's 'theta_grid' holds a value that is not a number");
    options.thetas.push_back(t.get<double>());
  }
  options.js_tolerance = number_of("js_tolerance");
  options.risk = number_of("risk");
  options.confidence = number_of("confidence");
  try {
    check_options(options);
  } catch (const std::invalid_argument& e) {
    input_error(where, std::string("the arc calibration's gate options: ") + e.what());
  }
  return options;
}

bool has_deploy_sites(const ArcCalibration& arc) {
  const nlohmann::json& o = arc.provenance.options;
  return o.contains("sites") && o["sites"] == "deploy" && !is_arc_pilot(arc);
}

bool is_arc_pilot(const ArcCalibration& arc) {
  const nlohmann::json& o = arc.provenance.options;
  return o.contains("stage") && o["stage"] == "pilot";
}

}  // namespace specd
