// 0. Verdict: one row per policy the bench files deployed (every method but ar): its speed against
// AR and against its paper's lossless baseline, its drift against the contract its thresholds were
// calibrated under, and for ARC the gate's contract and the bound's coverage at deploy; then the
// command that reproduces the row. The numbers are the other sections'; this one only reads them.
#include <cmath>

#include <boost/algorithm/string/join.hpp>

#include "analysis/arc_report_parts.h"
#include "analysis/sections.h"
#include "calibrate/sweep_choice.h"
#include "speculative/method_catalog.h"
#include "speculative/method_params.h"
#include "util/format.h"
#include "util/machine.h"

namespace specd::report {

namespace {

using nlohmann::json;

double number_of(const json& row, const char* key, double fallback = NAN) {
  return row.contains(key) && row[key].is_number() ? row[key].get<double>() : fallback;
}

const SweepCalibration* sweep_of(const Artifact& artifact, const std::string& family) {
  for (const SweepCalibration& s : artifact.sweeps)
    if (s.family == family) return &s;
  return nullptr;
}

std::string threshold_source(const Artifact& artifact, const std::string& policy, const std::string& name) {
  for (const Threshold& t : artifact.thresholds)
    if (t.policy == policy && t.name == name) return strprintf("%g", t.value) + " (" + t.source + ")";
  return "";
}

// What the policy's thresholds promise and whether the deploy run kept it (point estimates; the
// drift section has the intervals).
struct Drift {
  std::string contract, deploy;
  bool outside = false;
};

Drift drift_of(const ReportInputs& in, const std::string& method, bool lossless, const json& overall, const json* ar) {
  Drift d;
  if (lossless) {
    d.contract = "lossless: the target's own distribution";
    d.deploy = overall.contains("equal_to_ar") ? "outputs equal to AR: " + overall["equal_to_ar"].get<std::string>() : "";
    return d;
  }
  const std::string family = method_family(label_method(method));
  const double nll = number_of(overall, "nll_per_token"), ar_nll = ar ? number_of((*ar)["overall"], "nll_per_token") : NAN;
  const std::string increase = std::isnan(nll) || std::isnan(ar_nll) ? "" : strprintf("NLL/token %+.3f over AR", nll - ar_nll);
  if (family == "arc") {
    const std::string theta = threshold_source(in.artifact, "arc", "theta");
    d.contract = theta.empty() ? "no gate calibrated: theta is the paper's (not a contract)" : "theta = " + theta;
    if (in.arc_deploy_audit) {
      const ArcDeployAudit& a = *in.arc_deploy_audit;
      d.deploy = std::to_string(a.relaxed) + " tokens relaxed, " + std::to_string(a.relaxed_argmax) + " of them t_d = t_m";
      for (const ArcMissRow& m : a.misses)
        if (m.group_kind == "all" && m.tokens > 0) {
          d.deploy += strprintf("; JS above the tolerance on %.1f%% [%.1f%%, %.1f%%] of the substituted", 100 * m.rate, 100 * m.clustered.low,
                           100 * m.clustered.high);
          d.outside = a.gate && m.clustered.low > a.gate->risk;
        }
      for (const ArcAuditRow& r : a.rows)
        if (r.group_kind == "all" && r.samples > 0)
          d.deploy += strprintf("; JS <= U_min on %.1f%% (1 - delta = %.1f%%)", 100 * r.coverage, 100 * (1 - in.artifact.arc->delta));
    }
    if (!increase.empty()) d.deploy += (d.deploy.empty() ? "" : "; ") + increase;
    return d;
  }
  if (label_method(method) != method) {  // a bench variant: its values were typed, not chosen
    d.contract = "a variant: thresholds typed in --methods (not a contract)";
    d.deploy = increase;
    return d;
  }
  const SweepCalibration* sweep = sweep_of(in.artifact, family);
  if (!sweep || sweep->lossless) {
    d.contract = "no sweep: default or typed thresholds (not a contract)";
    d.deploy = increase;
    return d;
  }
  d.contract = sweep_contract_text(*sweep) + (sweep->chosen ? "; " + sweep->choice : "; no run met it");
  d.deploy = increase;
  if (!std::isnan(nll) && !std::isnan(ar_nll) && nll - ar_nll > sweep->max_nll_increase) d.outside = true;
  if (overall.contains("exact_match_rate") && sweep_applies_chrf(*sweep)) {
    const double changed = 1 - number_of(overall, "exact_match_rate", 1);
    d.deploy += (d.deploy.empty() ? "" : "; ") + strprintf("%.1f%% of outputs differ from AR's", 100 * changed);
    if (sweep->max_changed < 1 && changed > sweep->max_changed) d.outside = true;
  }
  return d;
}

std::string command_of(const BenchFile& b, const std::string& method, const std::string& base, const std::string& artifact_dir) {
  const json& j = b.json;
  std::string cmd = "specd bench --methods " + (base.empty() ? method : base + "," + method) + " --artifact " + artifact_dir;
  if (j.contains("temperature") && j["temperature"].is_number()) cmd += strprintf(" --temperature %g", j["temperature"].get<double>());
  if (j.contains("max_prompts") && j["max_prompts"].is_number()) cmd += " --max-prompts " + j["max_prompts"].dump();
  if (j.contains("repeats") && j["repeats"].is_number()) cmd += " --repeats " + j["repeats"].dump();
  if (j.contains("draft_budget") && j["draft_budget"].is_string()) cmd += " --draft-budget " + j["draft_budget"].get<std::string>();
  return cmd;
}

// Where the speeds were measured: one line when every bench file names the same machine, a flag
// when they differ (their speedups do not compare) or one does not say.
std::vector<Block> machine_blocks(const ReportInputs& in) {
  std::vector<Block> out;
  std::vector<std::string> named, unnamed;
  json first;  // the first machine a bench file names
  bool mixed = false;
  for (const BenchFile& b : in.bench) {
    const json machine = b.json.value("machine", json());
    const std::string text = machine_text(machine);
    if (text.empty()) {
      unnamed.push_back(b.path);
      continue;
    }
    if (first.is_null()) first = machine;
    else if (!same_machine(machine, first)) mixed = true;
    named.push_back(b.path + ": " + text);
  }
  if (!named.empty() && !mixed && unnamed.empty())
    out.push_back(Paragraph{"Measured on " + machine_text(first) + " (every bench file)."});
  else if (mixed)
    out.push_back(Paragraph{"MIXED MACHINES: the bench files were measured on different machines, so speedups from different files do "
                            "not compare: " + boost::algorithm::join(named, "; "), Tone::Flag});
  else if (!named.empty())
    out.push_back(Paragraph{"Measured on: " + boost::algorithm::join(named, "; ") + "."});
  if (!unnamed.empty())
    out.push_back(Paragraph{"The machine is not recorded in " + boost::algorithm::join(unnamed, ", ") +
                            " (written by a specd before bench --json recorded it): compare its speedups only with its own."});
  return out;
}

// A sweep chooses the fastest point within its contract on the machine it ran on; deployed on
// another machine, the contract still holds (drift does not depend on speed) but "fastest" may not.
std::string sweep_machine_note(const ReportInputs& in, const std::string& method, const BenchFile& b) {
  if (label_method(method) != method) return "";  // a variant's values are not the sweep's choice
  const SweepCalibration* sweep = sweep_of(in.artifact, method_family(method));
  if (!sweep || !sweep->chosen) return "";
  const json& bench_machine = b.json.value("machine", json());
  const std::string swept = machine_text(sweep->provenance.machine), deployed = machine_text(bench_machine);
  if (swept.empty() || deployed.empty() || same_machine(sweep->provenance.machine, bench_machine)) return "";
  return method + "'s thresholds were chosen by a sweep measured on " + swept + ", and this run was measured on " + deployed +
         ": its drift contract carries over, its choice of the fastest point may not.";
}

}  // namespace

Section verdict_section(const ReportInputs& in) {
  Section s{"verdict", "Verdict per deployed policy", {}};
  if (in.bench.empty()) {
    s.blocks.push_back(Paragraph{"no bench results given: pass --bench F from specd bench --json", Tone::NotCalibrated});
    return s;
  }
  Table t{"Each policy the bench files ran: speedup over AR (mean over prompts, normal 95% interval), over its paper's lossless "
          "baseline in the same run (mean over prompts of the paired ratio, with its interval), the contract its thresholds were chosen under and what the deploy run showed (point "
          "estimates; the drift section has the intervals), and the command that reproduces the row.",
          {{"method", "policy"},
           {"kind", "kind"},
           {"speedup", "speedup over AR (×)", 2},
           {"speedup_low", "95% low (×)", 2},
           {"speedup_high", "95% high (×)", 2},
           {"baseline", "baseline"},
           {"baseline_speedup", "baseline over AR (×)", 2},
           {"over_baseline", "over baseline (×)", 2},
           {"over_baseline_low", "95% low (×)", 2},
           {"over_baseline_high", "95% high (×)", 2},
           {"contract", "drift contract"},
           {"deploy", "at deploy"},
           {"command", "reproduce"}},
          json::array()};
  for (const BenchFile& b : in.bench) {
    const json& results = b.json["results"];
    const json* ar = results.contains("ar") ? &results["ar"] : nullptr;
    for (const auto& [method, r] : results.items()) {
      if (method == "ar" || !r.is_object() || !r.contains("overall")) continue;
      const json& overall = r["overall"];
      const json& lossless_map = b.json.value("lossless", json::object());
      const bool lossless = !lossless_map.contains(method) || !lossless_map[method].is_boolean() || lossless_map[method].get<bool>();
      const double speedup = number_of(overall, "speedup"), half = number_of(overall, "speedup_ci95", 0);
      // The baseline the bench paired it with (a variant's: its plain method), else its paper's.
      const json& baselines = b.json.value("baselines", json::object());
      const std::string base = baselines.contains(method) && baselines[method].is_string() ? baselines[method].get<std::string>()
                                                                                           : paper_baseline(method);
      const double base_speedup = !base.empty() && results.contains(base) && results[base].contains("overall")
                                      ? number_of(results[base]["overall"], "speedup")
                                      : NAN;
      const Drift d = drift_of(in, method, lossless, overall, ar);
      // Paired per prompt when the bench recorded it; from a bench file without it, the ratio of
      // the two means (no interval).
      const bool paired = overall.contains("over_baseline") && overall["over_baseline"].is_number();
      const double paired_half = number_of(overall, "over_baseline_ci95", 0);
      const json over_baseline = paired ? json(number_of(overall, "over_baseline"))
                                 : std::isnan(base_speedup) || std::isnan(speedup) || base_speedup <= 0 ? json(nullptr)
                                                                                                      : json(speedup / base_speedup);
      json row = {{"method", method},
                  {"kind", lossless ? "lossless" : "LOSSY"},
                  {"speedup", std::isnan(speedup) ? json(nullptr) : json(speedup)},
                  {"speedup_low", std::isnan(speedup) ? json(nullptr) : json(speedup - half)},
                  {"speedup_high", std::isnan(speedup) ? json(nullptr) : json(speedup + half)},
                  {"baseline", base.empty() ? "–" : base},
                  {"baseline_speedup", std::isnan(base_speedup) ? json(nullptr) : json(base_speedup)},
                  {"over_baseline", over_baseline},
                  {"over_baseline_low", paired ? json(over_baseline.get<double>() - paired_half) : json(nullptr)},
                  {"over_baseline_high", paired ? json(over_baseline.get<double>() + paired_half) : json(nullptr)},
                  {"contract", d.contract},
                  {"deploy", d.deploy},
                  {"command", command_of(b, method, base, in.artifact_dir)}};
      t.rows.push_back(row);
      if (d.outside)
        s.blocks.push_back(Paragraph{"DRIFT: " + method + " at deploy is outside its contract: " + d.deploy, Tone::Flag});
      const std::string other_machine = sweep_machine_note(in, method, b);
      if (!other_machine.empty()) s.blocks.push_back(Paragraph{other_machine});
      if (!std::isnan(speedup) && speedup + half < 1)
        s.blocks.push_back(Paragraph{"SLOWER THAN AR: " + method + strprintf(" runs at %.2fx AR (95%% interval up to %.2fx)", speedup, speedup + half),
                                     Tone::Flag});
    }
  }
  s.blocks.insert(s.blocks.begin(), t);
  const std::vector<Block> machines = machine_blocks(in);
  s.blocks.insert(s.blocks.begin(), machines.begin(), machines.end());
  return s;
}

}  // namespace specd::report
