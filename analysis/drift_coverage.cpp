// 6. Drift check, ARC's part: coverage of JS <= U_min at deploy (the CLI's audit of the relaxed
// tokens, with the target) against the held-out coverage, and the share of candidates the runs
// found relaxable against the share the calibration predicts. A DRIFT line when the 95% intervals
// are disjoint. No model runs here.
#include <cmath>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "analysis/arc_report_parts.h"
#include "analysis/sections.h"
#include "stats/arc_fit.h"
#include "stats/intervals.h"
#include "util/error.h"

namespace specd::report {
namespace {

std::string group_label(const ArcAuditRow& r) { return r.group_kind == "all" ? "all" : r.group_kind + " " + r.group; }

std::string interval_text(int64_t k, int64_t n) {
  const Interval w = wilson_interval(k, n);
  return (n > 0 ? percent_text(static_cast<double>(k) / n) : std::string("–")) + " [" + percent_text(w.low) + ", " + percent_text(w.high) +
         "] of " + std::to_string(n);
}

bool disjoint(const Interval& a, const Interval& b) { return a.high < b.low || b.high < a.low; }

// Held-out and deploy coverage per group, one row per (group, split), so one chart draws both.
std::vector<Block> coverage_blocks(const ReportInputs& in, const ArcCalibration& arc) {
  std::vector<Block> blocks;
  if (!in.arc_deploy_audit) {
    blocks.push_back(Paragraph{in.traces.empty() ? "no deploy traces given: pass --traces F from specd bench --traces with arc runs"
                                                 : "no deploy coverage: " + in.arc_deploy_note});
    return blocks;
  }
  const std::vector<ArcAuditRow> held = audit_arc(arc.samples, arc.constants, prompt_categories(arc.prompts), /*held_out=*/true);
  const std::vector<ArcAuditRow>& deploy = in.arc_deploy_audit->rows;
  std::vector<std::pair<std::string, std::string>> groups;  // held-out order, then groups only deploy has
  std::map<std::pair<std::string, std::string>, const ArcAuditRow*> held_of, deploy_of;
  for (const ArcAuditRow& r : held) groups.emplace_back(r.group_kind, r.group), held_of[groups.back()] = &r;
  for (const ArcAuditRow& r : deploy) {
    const std::pair<std::string, std::string> key(r.group_kind, r.group);
    if (!held_of.count(key)) groups.push_back(key);
    deploy_of[key] = &r;
  }
  Table t{"Coverage of JS <= U_min: held-out samples (calibration) and relaxed tokens at deploy, Wilson 95% intervals (target 1 - delta = " +
              percent_text(1 - arc.delta) + "); " + in.arc_deploy_note,
          {{"label", "group"},
           {"split", "split"},
           {"samples", "samples"},
           {"covered", "covered"},
           {"coverage", "coverage (%)", 1},
           {"coverage_low", "Wilson low (%)", 1},
           {"coverage_high", "Wilson high (%)", 1},
           {"target", "1 - delta (%)", 1}},
          nlohmann::json::array()};
  std::vector<Block> flags;
  for (const auto& key : groups) {
    const ArcAuditRow* h = held_of.count(key) ? held_of[key] : nullptr;
    const ArcAuditRow* d = deploy_of.count(key) ? deploy_of[key] : nullptr;
    for (const auto& [split, r] : {std::make_pair("held-out", h), std::make_pair("deploy", d)}) {
      if (!r) continue;
      nlohmann::json row = {{"label", group_label(*r)}, {"split", split}, {"samples", r->samples}, {"covered", r->covered},
                            {"target", pct(1 - arc.delta)}};
      put_share(row, "coverage", r->covered, r->samples);
      t.rows.push_back(row);
    }
    if (!d || d->samples == 0) continue;
    const Interval dw = wilson_interval(d->covered, d->samples);
    const std::string deploy_text = group_label(*d) + " at deploy covers " + interval_text(d->covered, d->samples) + " relaxed tokens";
    if (h && h->samples > 0 && disjoint(dw, wilson_interval(h->covered, h->samples)))
      flags.push_back(Paragraph{"DRIFT: " + deploy_text + ", held-out " + interval_text(h->covered, h->samples) +
                                    " samples: the Wilson 95% intervals are disjoint",
                                Tone::Flag});
    else if (dw.high < 1 - arc.delta)
      flags.push_back(Paragraph{"DRIFT: " + deploy_text + ": the Wilson 95% interval lies wholly below 1 - delta = " + percent_text(1 - arc.delta),
                                Tone::Flag});
  }
  if (flags.empty())
    blocks.push_back(Paragraph{"no drift: in every group the deploy coverage's Wilson interval meets the held-out one and reaches 1 - delta"});
  for (Block& f : flags) blocks.push_back(std::move(f));
  const nlohmann::json spec = nlohmann::json::parse(R"json({
    "width": 480, "height": 260,
    "layer": [
      {"mark": {"type": "rule"},
       "encoding": {"x": {"field": "label", "type": "nominal", "sort": null, "title": "group (category or draft depth)"},
                    "xOffset": {"field": "split"}, "color": {"field": "split", "title": "split"},
                    "y": {"field": "coverage_low", "type": "quantitative", "scale": {"zero": false},
                          "title": "coverage of JS <= U_min (%), Wilson 95% interval"},
                    "y2": {"field": "coverage_high"}}},
      {"mark": {"type": "point", "filled": true, "size": 60},
       "encoding": {"x": {"field": "label", "type": "nominal", "sort": null}, "xOffset": {"field": "split"},
                    "color": {"field": "split"}, "y": {"field": "coverage", "type": "quantitative"},
                    "tooltip": [{"field": "label"}, {"field": "split"}, {"field": "samples"}, {"field": "coverage"}]}},
      {"mark": {"type": "rule", "strokeDash": [6, 4], "color": "firebrick"},
       "encoding": {"y": {"field": "target", "type": "quantitative"}}}
    ]})json");
  blocks.push_back(Chart{"Coverage at deploy against the held-out coverage", spec, t});
  return blocks;
}

// The theta a run relaxed with and its source, as the run recorded what it deployed. Runs recorded
// before "deployed" existed: a typed --arc-theta, else the artifact's threshold, else the value the
// run's options record (the runtime's own order). Unknown when none says.
std::optional<std::pair<double, std::string>> run_theta(const TraceRun& run, const Artifact& artifact) {
  const nlohmann::json options = nlohmann::json::parse(run.info.options_json, nullptr, /*allow_exceptions=*/false);
  if (options.is_object() && options.contains("deployed") && options["deployed"].is_object() && options["deployed"].contains("theta")) {
    const nlohmann::json& theta = options["deployed"]["theta"];
    if (theta.is_object() && theta.contains("value") && theta["value"].is_number() && theta.contains("source") && theta["source"].is_string())
      return std::make_pair(theta["value"].get<double>(), theta["source"].get<std::string>());
  }
  const bool typed = run.info.command_line.find("--arc-theta") != std::string::npos;
  if (!typed)
    for (const Threshold& t : artifact.thresholds)
      if (t.policy == kArcPolicy && t.name == "theta") return std::make_pair(t.value, std::string("artifact threshold"));
  if (options.is_object() && options.contains("arc-theta") && options["arc-theta"].is_number())
    return std::make_pair(options["arc-theta"].get<double>(), std::string(typed ? "option --arc-theta" : "run options"));
  return std::nullopt;
}

struct LtsCounts {
  int64_t evaluated = 0;  // candidates other than the target's top token (calibration's kind)
  int64_t eligible = 0;   // ... with LTS >= theta
  int64_t relaxed = 0;    // ... the run relaxed (at most one child per rejected node)
  int64_t same_as_top = 0;  // candidates equal to the target's top token (LTS 1), left out above
};

// The acceptance.lts entries of a run's steps; none when no step has any (not an ARC run).
std::optional<LtsCounts> lts_counts(const TraceFile& file, const TraceRunData& data, double theta) {
  LtsCounts c;
  bool any = false;
  for (const StepTraceRow& step : data.steps) {
    const auto* arc = std::get_if<ArcAcceptance>(&step.record.detail.acceptance);
    if (!arc) continue;
    any = true;
    for (const LtsNode& node : arc->lts) {
      if (node.token == node.target) {
        ++c.same_as_top;
        continue;
      }
      ++c.evaluated;
      // LTS is NaN when it was not a number (a zero tau_delta): never relaxable, as in the runtime.
      c.eligible += node.lts >= theta;
      c.relaxed += node.relaxed;
    }
  }
  if (!any) return std::nullopt;
  return c;
}

std::vector<Block> relaxed_rate_blocks(const ReportInputs& in, const ArcCalibration& arc) {
  std::vector<Block> blocks;
  if (in.traces.empty()) {
    blocks.push_back(Paragraph{"no deploy traces given: pass --traces F from specd bench --traces with arc runs"});
    return blocks;
  }
  Table t{"Relaxable candidates at deploy (LTS >= theta among the evaluated draft tokens other than the target's top token) against the "
          "held-out samples with LTS = 1 - U_min / tau_delta >= theta, i.e. U_min <= (1 - theta) tau_delta; Wilson 95% intervals. "
          "Relaxed: the share the run relaxed (one child at most per rejected node, so at most the relaxable share)",
          {{"run", "run"},
           {"method", "method"},
           {"theta", "theta", 2},
           {"theta_source", "theta from"},
           {"temperature", "temperature", 2},
           {"evaluated", "evaluated candidates"},
           {"deploy", "relaxable at deploy (%)", 1},
           {"deploy_low", "Wilson low (%)", 1},
           {"deploy_high", "Wilson high (%)", 1},
           {"relaxed", "relaxed at deploy (%)", 1},
           {"relaxed_low", "Wilson low (%)", 1},
           {"relaxed_high", "Wilson high (%)", 1},
           {"held_out", "held-out samples"},
           {"predicted", "predicted by calibration (%)", 1},
           {"predicted_low", "Wilson low (%)", 1},
           {"predicted_high", "Wilson high (%)", 1}},
          nlohmann::json::array()};
  std::vector<Block> notes;
  for (const TraceFile& file : in.traces)
    for (const TraceRunData& data : file.runs) {
      const auto theta = run_theta(data.run, in.artifact);
      const auto counts = lts_counts(file, data, theta ? theta->first : 0);
      if (!counts) continue;
      const std::string run = file.path + " #" + std::to_string(data.run.id);
      if (!theta) {
        notes.push_back(Paragraph{run + " (" + data.run.info.method + "): theta unknown (no --arc-theta in its options, no artifact threshold)"});
        continue;
      }
      int64_t held_out = 0, relaxable = 0;
      for (const ArcSample& s : arc.samples) {
        if (!s.held_out) continue;
        const SampleBound b = sample_bound(arc.constants, s);
        ++held_out;
        relaxable += 1.0 - b.u_min / b.tau_delta >= theta->first;  // the runtime's LTS test
      }
      const nlohmann::json options = nlohmann::json::parse(data.run.info.options_json, nullptr, false);
      const nlohmann::json temperature = options.is_object() && options.contains("temperature") ? options["temperature"] : nlohmann::json();
      nlohmann::json row = {{"run", run}, {"method", data.run.info.method}, {"theta", theta->first}, {"theta_source", theta->second},
                            {"temperature", temperature}, {"evaluated", counts->evaluated}, {"held_out", held_out}};
      put_share(row, "deploy", counts->eligible, counts->evaluated);
      put_share(row, "relaxed", counts->relaxed, counts->evaluated);
      put_share(row, "predicted", relaxable, held_out);
      t.rows.push_back(row);
      if (temperature.is_number() && temperature.get<double>() != arc.provenance.temperature)
        notes.push_back(Paragraph{run + " ran at T = " + g_text(temperature.get<double>()) + ", the calibration at T = " +
                                  g_text(arc.provenance.temperature) + ": its LTS values come from another distribution"});
      if (counts->evaluated > 0 && held_out > 0 &&
          disjoint(wilson_interval(counts->eligible, counts->evaluated), wilson_interval(relaxable, held_out)))
        notes.push_back(Paragraph{"DRIFT: " + run + " (" + data.run.info.method + ", theta " + g_text(theta->first) + ") found " +
                                      interval_text(counts->eligible, counts->evaluated) + " candidates relaxable, the calibration predicts " +
                                      interval_text(relaxable, held_out) + " held-out samples: the Wilson 95% intervals are disjoint",
                                  Tone::Flag});
    }
  if (t.rows.empty() && notes.empty()) {
    blocks.push_back(Paragraph{"no ARC run in the traces given (no step recorded acceptance.lts): run specd bench --methods arc --traces F"});
    return blocks;
  }
  blocks.push_back(Paragraph{"Calibration draws its candidates uniformly from the target's top-K, deploy evaluates the rejected draft "
                             "tokens: a gap may be the candidates' mix as well as drift."});
  for (Block& n : notes) blocks.push_back(std::move(n));
  if (t.rows.empty()) return blocks;
  // Long form for the chart: one point per (run, source) with its interval.
  Table points{"Relaxable share per run: at deploy and as the held-out samples predict (Wilson 95% intervals)",
               {{"run", "run"}, {"source", "source"}, {"share", "relaxable (%)", 1}, {"low", "Wilson low (%)", 1}, {"high", "Wilson high (%)", 1}},
               nlohmann::json::array()};
  for (const nlohmann::json& row : t.rows)
    for (const auto& [source, prefix] : {std::make_pair("deploy", "deploy"), std::make_pair("calibration", "predicted")})
      points.rows.push_back({{"run", row["run"]}, {"source", source}, {"share", row[prefix]}, {"low", row[std::string(prefix) + "_low"]},
                             {"high", row[std::string(prefix) + "_high"]}});
  blocks.push_back(std::move(t));
  const nlohmann::json spec = nlohmann::json::parse(R"json({
    "width": 420, "height": 240,
    "layer": [
      {"mark": {"type": "rule"},
       "encoding": {"x": {"field": "run", "type": "nominal", "sort": null, "title": "trace run"},
                    "xOffset": {"field": "source"}, "color": {"field": "source", "title": "source"},
                    "y": {"field": "low", "type": "quantitative", "title": "relaxable candidates (%), Wilson 95% interval"},
                    "y2": {"field": "high"}}},
      {"mark": {"type": "point", "filled": true, "size": 60},
       "encoding": {"x": {"field": "run", "type": "nominal", "sort": null}, "xOffset": {"field": "source"},
                    "color": {"field": "source"}, "y": {"field": "share", "type": "quantitative"}}}
    ]})json");
  blocks.push_back(Chart{"Relaxable share at deploy against the calibration's prediction", spec, points});
  return blocks;
}

}  // namespace

std::vector<Block> drift_coverage_blocks(const ReportInputs& in) {
  std::vector<Block> blocks{Heading{"ARC coverage at deploy"}};
  Paragraph why_not;
  const ArcCalibration* arc = fitted_arc(in, why_not);
  if (!arc) {
    blocks.push_back(why_not);
    return blocks;
  }
  for (Block& b : coverage_blocks(in, *arc)) blocks.push_back(std::move(b));
  blocks.push_back(Heading{"ARC relaxable rate at deploy"});
  for (Block& b : relaxed_rate_blocks(in, *arc)) blocks.push_back(std::move(b));
  return blocks;
}

}  // namespace specd::report
