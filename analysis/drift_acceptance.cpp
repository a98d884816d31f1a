// 6. Drift check, acceptance: what the deployed methods accepted (trace runs) against what the
// artifact's calibration measured, per category with 95% intervals, and a "DRIFT: ..." line where
// they disagree beyond them. Sweeps: the chosen run's sweep_categories (means only: the deploy
// side gets a Student-t interval of its ratio over requests, the calibration side none). CSD: the
// prompts table's drafted/accepted under standard SD against the deploy sd/csd runs' lossless
// acceptance (accepted - rescued) / drafted, Wilson intervals on both sides.
#include <algorithm>
#include <cstdio>
#include <map>

#include "analysis/sections.h"
#include "analysis/trace_metrics.h"
#include "speculative/method_catalog.h"
#include "stats/intervals.h"
#include "util/format.h"

namespace specd::report {

namespace {

using nlohmann::json;

std::string percent(double share) { return strprintf("%.1f%%", 100.0 * share); }

std::string fixed(double value, int decimals) { return strprintf("%.*f", decimals, value); }

json field(const std::string& name, const std::string& type, const std::string& title) {
  return {{"field", name}, {"type", type}, {"title", title}};
}

// Long rows (series, category, value, low, high) drawn as points with error bars per category.
Chart comparison_chart(const std::string& title, const std::string& value_title, Table table) {
  const json x = field("category", "nominal", "category");
  const json color = field("series", "nominal", "calibration or deploy run");
  json spec = {
               {"title", title},
               {"layer",
                {{{"mark", "errorbar"},
                  {"encoding", {{"x", x}, {"xOffset", {{"field", "series"}}}, {"y", field("low", "quantitative", value_title)},
                                {"y2", {{"field", "high"}}}, {"color", color}}}},
                 {{"mark", {{"type", "point"}, {"filled", true}}},
                  {"encoding", {{"x", x}, {"xOffset", {{"field", "series"}}}, {"y", field("value", "quantitative", value_title)}, {"color", color}}}}}}};
  return {title, spec, std::move(table)};
}

Table long_table(const std::string& caption, const std::string& value_title, int decimals) {
  return {caption,
          {{"series", "series"}, {"category", "category"}, {"value", value_title, decimals}, {"low", "95% low", decimals},
           {"high", "95% high", decimals}, {"n", "counted over"}},
          json::array()};
}

// ---- sweeps ----

void sweep_blocks(const SweepCalibration& sweep, const std::vector<RunSummary>& runs, std::vector<Block>& out) {
  const std::string who = sweep.family + " (sweep)";
  if (!sweep.chosen) {
    out.push_back(Paragraph{"nothing to compare for " + who + ": the sweep chose no run (" + sweep.choice + ")", Tone::NotCalibrated});
    return;
  }
  const SweepRun* chosen = nullptr;
  for (const SweepRun& r : sweep.runs)
    if (r.index == *sweep.chosen) chosen = &r;
  if (!chosen) {
    out.push_back(Paragraph{"nothing to compare for " + who + ": the chosen run " + std::to_string(*sweep.chosen) + " is not stored",
                            Tone::NotCalibrated});
    return;
  }
  std::vector<const RunSummary*> deployed;
  for (const RunSummary& r : runs)
    if (r.method == sweep.family) deployed.push_back(&r);
  if (deployed.empty()) {
    out.push_back(Paragraph{"nothing to compare for " + who + ": no deploy run of " + sweep.family + " in the traces", Tone::NotCalibrated});
    return;
  }
  const std::string chosen_text = "sweep run " + std::to_string(*sweep.chosen) + " of";
  Table rows{who + ": acceptance and MAT at deploy against the chosen sweep run " + std::to_string(*sweep.chosen) + " (" +
                 chosen->point + "). The sweep stores means only, so its side has no interval; the deploy side's is a 95% "
                 "Student-t interval of the ratio over its requests.",
             {{"run", "deploy run"}, {"category", "category"}, {"quantity", "quantity"}, {"calibration", "calibration"},
              {"deploy", "deploy"}, {"low", "deploy 95% low"}, {"high", "deploy 95% high"}, {"requests", "requests"}, {"verdict", "verdict"}},
             json::array()};
  Table chart_rows = long_table(who + ": acceptance by category (calibration has no interval)", "acceptance (%)", 1);
  std::vector<std::string> flags;
  for (const SweepStats& st : chosen->stats) {
    chart_rows.rows.push_back({{"series", "calibration: sweep run " + std::to_string(*sweep.chosen)}, {"category", st.category},
                               {"value", 100.0 * st.acceptance}, {"low", nullptr}, {"high", nullptr}, {"n", st.prompts}});
  }
  for (const RunSummary* r : deployed) {
    if (!r->settings.empty() && r->settings.find(chosen_text) == std::string::npos) {
      out.push_back(Paragraph{"nothing to compare for " + who + " against " + r->label + ": that run's settings (" + r->settings +
                                  ") do not come from the chosen sweep run",
                              Tone::NotCalibrated});
      continue;
    }
    if (r->temperature != sweep.provenance.temperature)
      out.push_back(Paragraph{r->label + " ran at T = " + fixed(r->temperature, 2) + ", the sweep at T = " +
                              fixed(sweep.provenance.temperature, 2) + ": acceptance depends on the temperature"});
    for (const SweepStats& st : chosen->stats) {
      const auto it = r->by_category.find(st.category);
      if (it == r->by_category.end()) continue;
      const RunMetrics& m = it->second;
      struct Quantity {
        const char* name;
        double calibration;
        std::optional<RatioEstimate> deploy;
        double scale;
        int decimals;
        const char* unit;
      };
      const Quantity quantities[] = {{"acceptance (%)", st.acceptance, ratio_interval(m.acceptance_pairs), 100.0, 1, "%"},
                                     {"MAT (tokens/step)", st.mat, ratio_interval(m.mat_pairs), 1.0, 2, " tokens/step"}};
      for (const Quantity& q : quantities) {
        if (!q.deploy) continue;
        const bool has = q.deploy->interval.has_value();
        const bool drift = has && (q.calibration < q.deploy->interval->low || q.calibration > q.deploy->interval->high);
        rows.rows.push_back({{"run", r->label}, {"category", st.category}, {"quantity", q.name},
                             {"calibration", q.scale * q.calibration}, {"deploy", q.scale * q.deploy->value},
                             {"low", has ? json(q.scale * q.deploy->interval->low) : json(nullptr)},
                             {"high", has ? json(q.scale * q.deploy->interval->high) : json(nullptr)}, {"requests", m.requests},
                             {"verdict", !has ? "no interval (under 2 requests)" : drift ? "DRIFT" : "agrees"}});
        if (drift)
          flags.push_back("DRIFT: " + r->label + " " + q.name + " in " + st.category + ": deploy " + fixed(q.scale * q.deploy->value, q.decimals) +
                          q.unit + " (95% " + fixed(q.scale * q.deploy->interval->low, q.decimals) + " to " +
                          fixed(q.scale * q.deploy->interval->high, q.decimals) + q.unit + ", " + std::to_string(m.requests) +
                          " requests) vs calibration " + fixed(q.scale * q.calibration, q.decimals) + q.unit + " (sweep run " +
                          std::to_string(*sweep.chosen) + ", no interval)");
        if (std::string(q.name) == "acceptance (%)")
          chart_rows.rows.push_back({{"series", "deploy: " + r->label}, {"category", st.category}, {"value", 100.0 * q.deploy->value},
                                     {"low", has ? json(100.0 * q.deploy->interval->low) : json(nullptr)},
                                     {"high", has ? json(100.0 * q.deploy->interval->high) : json(nullptr)}, {"n", m.requests}});
      }
    }
  }
  if (rows.rows.empty()) return;
  for (const std::string& f : flags) out.push_back(Paragraph{f, Tone::Flag});
  if (flags.empty()) out.push_back(Paragraph{who + ": every calibration value lies within the deploy's 95% interval"});
  out.push_back(comparison_chart(who + ": acceptance, calibration vs deploy", "acceptance (%)", std::move(chart_rows)));
  out.push_back(std::move(rows));
}

// ---- CSD ----

struct Counts {
  int64_t accepted = 0, drafted = 0;
};

void csd_blocks(const CsdCalibration& csd, const std::vector<RunSummary>& runs, std::vector<Block>& out) {
  std::map<std::string, Counts> calibration;
  for (const CalibratedPrompt& p : csd.prompts)
    for (const std::string& c : {p.category, std::string("overall")}) calibration[c].accepted += p.accepted, calibration[c].drafted += p.drafted;
  std::vector<const RunSummary*> deployed;
  for (const RunSummary& r : runs)
    if (const MethodInfo* info = lookup_method(r.method); info && info->draft_chain) deployed.push_back(&r);
  if (deployed.empty()) {
    out.push_back(Paragraph{"nothing to compare for CSD: no sd or csd run in the traces", Tone::NotCalibrated});
    return;
  }
  if (calibration.empty()) {
    out.push_back(Paragraph{"nothing to compare for CSD: its calibration holds no prompts", Tone::NotCalibrated});
    return;
  }
  Table rows{"CSD: lossless acceptance at deploy ((accepted - rescued) / drafted, so csd's rescues do not count) against "
             "standard SD's acceptance during calibration, Wilson 95% intervals over drafted tokens on both sides (tokens "
             "of one request are counted as independent, which narrows the intervals)",
             {{"run", "deploy run"}, {"category", "category"}, {"cal_counts", "calibration accepted/drafted"},
              {"cal", "calibration (%)", 1}, {"cal_low", "95% low (%)", 1}, {"cal_high", "95% high (%)", 1},
              {"dep_counts", "deploy accepted/drafted"}, {"dep", "deploy (%)", 1}, {"dep_low", "95% low (%)", 1},
              {"dep_high", "95% high (%)", 1}, {"verdict", "verdict"}},
             json::array()};
  Table chart_rows = long_table("CSD: lossless acceptance by category (Wilson 95% intervals)", "acceptance (%)", 1);
  std::vector<std::string> flags;
  auto categories = [&] {
    std::vector<std::string> cs;
    for (const auto& [c, n] : calibration)
      if (c != "overall") cs.push_back(c);
    cs.push_back("overall");
    return cs;
  }();
  for (const std::string& c : categories) {
    const Counts& k = calibration[c];
    const Interval w = wilson_interval(k.accepted, k.drafted);
    chart_rows.rows.push_back({{"series", "calibration: sd"}, {"category", c},
                               {"value", k.drafted ? json(100.0 * k.accepted / k.drafted) : json(nullptr)},
                               {"low", 100.0 * w.low}, {"high", 100.0 * w.high}, {"n", std::to_string(k.drafted) + " drafted tokens"}});
  }
  for (const RunSummary* r : deployed) {
    if (r->temperature != csd.provenance.temperature)
      out.push_back(Paragraph{r->label + " ran at T = " + fixed(r->temperature, 2) + ", CSD's calibration at T = " +
                              fixed(csd.provenance.temperature, 2) + ": acceptance depends on the temperature"});
    for (const std::string& c : categories) {
      const auto it = r->by_category.find(c);
      if (it == r->by_category.end() || it->second.drafted == 0) continue;
      const Counts& k = calibration[c];
      if (k.drafted == 0) continue;
      const RunMetrics& m = it->second;
      const int64_t lossless = std::max<int64_t>(0, m.accepted - m.rescued);
      const Interval cw = wilson_interval(k.accepted, k.drafted), dw = wilson_interval(lossless, m.drafted);
      const bool drift = dw.high < cw.low || cw.high < dw.low;
      const double cal = double(k.accepted) / k.drafted, dep = double(lossless) / m.drafted;
      rows.rows.push_back({{"run", r->label}, {"category", c},
                           {"cal_counts", std::to_string(k.accepted) + "/" + std::to_string(k.drafted)}, {"cal", 100.0 * cal},
                           {"cal_low", 100.0 * cw.low}, {"cal_high", 100.0 * cw.high},
                           {"dep_counts", std::to_string(lossless) + "/" + std::to_string(m.drafted)}, {"dep", 100.0 * dep},
                           {"dep_low", 100.0 * dw.low}, {"dep_high", 100.0 * dw.high}, {"verdict", drift ? "DRIFT" : "agrees"}});
      chart_rows.rows.push_back({{"series", "deploy: " + r->label}, {"category", c}, {"value", 100.0 * dep}, {"low", 100.0 * dw.low},
                                 {"high", 100.0 * dw.high}, {"n", std::to_string(m.drafted) + " drafted tokens"}});
      if (drift)
        flags.push_back("DRIFT: " + r->label + " lossless acceptance in " + c + ": deploy " + percent(dep) + " (95% " + percent(dw.low) +
                        " to " + percent(dw.high) + ") vs calibration " + percent(cal) + " (95% " + percent(cw.low) + " to " +
                        percent(cw.high) + "): the intervals do not overlap");
    }
  }
  if (rows.rows.empty()) {
    out.push_back(Paragraph{"nothing to compare for CSD: the deploy runs share no category with the calibration", Tone::NotCalibrated});
    return;
  }
  for (const std::string& f : flags) out.push_back(Paragraph{f, Tone::Flag});
  if (flags.empty()) out.push_back(Paragraph{"CSD: deploy and calibration acceptance intervals overlap in every category"});
  std::string gamma = csd.provenance.options.contains("gamma") ? csd.provenance.options["gamma"].dump() : "?";
  out.push_back(Paragraph{"Calibration drafted with gamma = " + gamma +
                          "; a deploy run with another draft length (or an adaptive draft budget) drafts deeper or shallower "
                          "tokens, whose acceptance differs without any drift."});
  out.push_back(comparison_chart("CSD: lossless acceptance, calibration vs deploy", "acceptance (%)", std::move(chart_rows)));
  out.push_back(std::move(rows));
}

}  // namespace

std::vector<Block> drift_acceptance_blocks(const ReportInputs& in) {
  std::vector<Block> out{Heading{"Acceptance at deploy against calibration"}};
  const Artifact& a = in.artifact;
  const bool calibrated = a.csd.has_value() || !a.sweeps.empty();
  if (!calibrated) {
    out.push_back(Paragraph{"not calibrated: the artifact holds no CSD calibration and no sweep (specd calibrate csd, specd calibrate sweep)",
                            Tone::NotCalibrated});
    return out;
  }
  if (in.traces.empty()) {
    out.push_back(Paragraph{"no deploy traces given: the acceptance check needs per-request counts, from specd bench --traces F.sqlite "
                            "passed as --traces F.sqlite (bench JSON holds only means)",
                            Tone::NotCalibrated});
    return out;
  }
  const std::vector<RunSummary> runs = summarize_traces(in.traces);
  for (const SweepCalibration& sweep : a.sweeps) sweep_blocks(sweep, runs, out);
  if (a.csd) csd_blocks(*a.csd, runs, out);
  return out;
}

}  // namespace specd::report
