// 2. ARC coverage: the constants, the held-out coverage of JS <= U_min against 1 - delta
// (the ARC-Decode paper Table 5, recomputed from the stored samples), coverage as delta varies, and the
// distributions of the bound's components.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include "analysis/arc_report_parts.h"
#include "analysis/sections.h"
#include "stats/arc_fit.h"
#include "stats/arc_gate.h"
#include "stats/intervals.h"
#include "util/format.h"

namespace specd::report {
namespace {

// The risk levels of the calibration curve; the artifact's own delta joins them.
const std::vector<double> kCurveDeltas = {0.01, 0.02, 0.05, 0.1, 0.15, 0.2, 0.3};
constexpr int kHistogramBins = 20;

std::string group_label(const ArcAuditRow& r) { return r.group_kind == "all" ? "all" : r.group_kind + " " + r.group; }

Table constants_table(const std::vector<ArcConstants>& constants, double delta) {
  Table t{"Constants at delta " + g_text(delta) +
              " (conformal rank ceil((n+1)(1-delta)) of the n calibration samples; a bucket with rank n+1 serves the \"all\" constants)",
          {{"bucket", "bucket"},
           {"samples", "n (samples)"},
           {"rank", "rank"},
           {"c_s", "c'_s (nats per unit of ||W de||^2)", 6},
           {"alpha_kappa", "alpha kappa (1/nats)", 6},
           {"tau_delta", "tau_delta (nats)", 6}},
          nlohmann::json::array()};
  for (const ArcConstants& c : constants)
    t.rows.push_back({{"bucket", c.bucket}, {"samples", c.samples}, {"rank", c.rank}, {"c_s", c.c_s},
                      {"alpha_kappa", c.alpha_kappa}, {"tau_delta", c.tau_delta}});
  return t;
}

nlohmann::json audit_row(const ArcAuditRow& r, double delta) {
  return {{"label", group_label(r)}, {"kind", r.group_kind}, {"group", r.group}, {"samples", r.samples}, {"covered", r.covered},
          {"coverage", r.samples > 0 ? nlohmann::json(pct(r.coverage)) : nlohmann::json()},
          {"wilson_low", pct(r.wilson_low)}, {"wilson_high", pct(r.wilson_high)}, {"cp_low", pct(r.cp_low)},
          {"cp_high", pct(r.cp_high)}, {"target", pct(1 - delta)}};
}

// Points with Wilson error bars per group, and a dashed rule at 1 - delta.
Chart coverage_chart(const std::vector<ArcAuditRow>& audit, double delta) {
  Table t{"Held-out coverage of JS <= U_min per group, 95% intervals (target 1 - delta = " + percent_text(1 - delta) + ")",
          {{"label", "group"},
           {"samples", "held-out samples"},
           {"covered", "covered"},
           {"coverage", "coverage (%)", 1},
           {"wilson_low", "Wilson low (%)", 1},
           {"wilson_high", "Wilson high (%)", 1},
           {"cp_low", "Clopper-Pearson low (%)", 1},
           {"cp_high", "Clopper-Pearson high (%)", 1},
           {"target", "1 - delta (%)", 1}},
          nlohmann::json::array()};
  for (const ArcAuditRow& r : audit) t.rows.push_back(audit_row(r, delta));
  const nlohmann::json spec = nlohmann::json::parse(R"json({
    "width": 480, "height": 260,
    "layer": [
      {"mark": {"type": "rule"},
       "encoding": {"x": {"field": "label", "type": "nominal", "sort": null, "title": "group (category or draft depth)"},
                    "y": {"field": "wilson_low", "type": "quantitative", "scale": {"zero": false},
                          "title": "coverage of JS <= U_min (%), Wilson 95% interval"},
                    "y2": {"field": "wilson_high"}}},
      {"mark": {"type": "point", "filled": true, "size": 60},
       "encoding": {"x": {"field": "label", "type": "nominal", "sort": null},
                    "y": {"field": "coverage", "type": "quantitative"},
                    "tooltip": [{"field": "label"}, {"field": "samples"}, {"field": "coverage"}]}},
      {"mark": {"type": "rule", "strokeDash": [6, 4], "color": "firebrick"},
       "encoding": {"y": {"field": "target", "type": "quantitative"}}}
    ]})json");
  return {"Held-out coverage per group against 1 - delta", spec, t};
}

// Coverage as delta varies: refit at each delta on the calibration split (the artifact's own rule
// and buckets), audit the held-out split; the nominal 1 - delta is the diagonal.
Chart delta_curve(const ArcCalibration& arc, const std::string& where) {
  std::vector<double> deltas = kCurveDeltas;
  if (std::find(deltas.begin(), deltas.end(), arc.delta) == deltas.end()) deltas.push_back(arc.delta);
  std::sort(deltas.begin(), deltas.end());
  Table t{"Held-out coverage when the constants are refitted at each delta (the diagonal: coverage = 1 - delta); "
          "rows without coverage: too few calibration samples for that delta",
          {{"delta", "delta", 2},
           {"nominal", "1 - delta (%)", 1},
           {"tau_delta", "tau_delta, all (nats)", 4},
           {"samples", "held-out samples"},
           {"covered", "covered"},
           {"coverage", "coverage (%)", 1},
           {"wilson_low", "Wilson low (%)", 1},
           {"wilson_high", "Wilson high (%)", 1},
           {"cp_low", "Clopper-Pearson low (%)", 1},
           {"cp_high", "Clopper-Pearson high (%)", 1}},
          nlohmann::json::array()};
  const auto categories = prompt_categories(arc.prompts);
  for (double delta : deltas) {
    nlohmann::json row = {{"delta", delta}, {"nominal", pct(1 - delta)}};
    if (const auto constants = refit_arc_at(arc, delta, where)) {
      const ArcAuditRow all = audit_arc(arc.samples, *constants, categories, /*held_out=*/true).front();
      row.update({{"tau_delta", constants->front().tau_delta}, {"samples", all.samples}, {"covered", all.covered},
                  {"coverage", pct(all.coverage)}, {"wilson_low", pct(all.wilson_low)}, {"wilson_high", pct(all.wilson_high)},
                  {"cp_low", pct(all.cp_low)}, {"cp_high", pct(all.cp_high)}});
    }
    t.rows.push_back(row);
  }
  const nlohmann::json spec = nlohmann::json::parse(R"json({
    "width": 360, "height": 300,
    "layer": [
      {"mark": {"type": "line", "strokeDash": [6, 4], "color": "gray"},
       "encoding": {"x": {"field": "nominal", "type": "quantitative", "scale": {"zero": false}, "title": "nominal coverage 1 - delta (%)"},
                    "y": {"field": "nominal", "type": "quantitative", "scale": {"zero": false}, "title": "held-out coverage of JS <= U_min (%)"}}},
      {"mark": {"type": "rule"},
       "encoding": {"x": {"field": "nominal", "type": "quantitative"},
                    "y": {"field": "wilson_low", "type": "quantitative"}, "y2": {"field": "wilson_high"}}},
      {"mark": {"type": "line", "point": true},
       "encoding": {"x": {"field": "nominal", "type": "quantitative"}, "y": {"field": "coverage", "type": "quantitative"},
                    "tooltip": [{"field": "delta"}, {"field": "coverage"}, {"field": "samples"}]}}
    ]})json");
  return {"Calibration curve: held-out coverage against the nominal 1 - delta", spec, t};
}

// Equal-width bins over [0, the 99th percentile]; the values above it make one last row that
// reaches the maximum (a long tail would otherwise squeeze every bin into one).
Chart histogram(std::vector<double> values, const std::string& name, const std::string& unit, const std::string& what) {
  std::sort(values.begin(), values.end());
  const double top = values.empty() ? 0 : values[static_cast<size_t>(0.99 * static_cast<double>(values.size() - 1))];
  const double max = values.empty() ? 0 : values.back();
  const double high = top > 0 ? top : (max > 0 ? max : 1);
  const double width = high / kHistogramBins;
  std::vector<int64_t> counts(kHistogramBins + 1, 0);
  for (double v : values) {
    const int bin = v > high ? kHistogramBins : std::min(kHistogramBins - 1, static_cast<int>(v / width));
    ++counts[bin];
  }
  Table t{name + " over " + what + ": " + std::to_string(kHistogramBins) + " equal bins over [0, " + g_text(high) +
              "] (the 99th percentile), the last row holds the values above it up to the maximum",
          {{"low", name + " from (" + unit + ")", 4}, {"high", name + " to (" + unit + ")", 4}, {"samples", "samples"}, {"share", "share (%)", 2}},
          nlohmann::json::array()};
  for (int b = 0; b <= kHistogramBins; ++b) {
    if (b == kHistogramBins && counts[b] == 0) break;
    const double low = b * width, up = b == kHistogramBins ? max : (b + 1) * width;
    t.rows.push_back({{"low", low}, {"high", up}, {"samples", counts[b]},
                      {"share", values.empty() ? 0.0 : pct(static_cast<double>(counts[b]) / static_cast<double>(values.size()))}});
  }
  nlohmann::json spec = nlohmann::json::parse(R"json({
    "width": 420, "height": 180,
    "mark": {"type": "bar", "stroke": "white", "strokeWidth": 0.5},
    "encoding": {"x": {"field": "low", "type": "quantitative"}, "x2": {"field": "high"},
                 "y": {"field": "samples", "type": "quantitative", "title": "samples (count)"}, "y2": {"datum": 0},
                 "tooltip": [{"field": "low"}, {"field": "high"}, {"field": "samples"}]}})json");
  spec["encoding"]["x"]["title"] = name + " (" + unit + ")";
  return {"Distribution of " + name, spec, t};
}

// Which side of U_min = min(c'_s u_emb, alpha kappa u_logit) is the smaller, over the held-out samples.
Table binding_table(const ArcCalibration& arc) {
  int64_t logit = 0, n = 0;
  for (const ArcSample& s : arc.samples)
    if (s.held_out) ++n, logit += sample_bound(arc.constants, s).logit_binds;
  Table t{"Which bound is the smaller, over the " + std::to_string(n) + " held-out samples (ties count as the embedding side)",
          {{"side", "bound"}, {"samples", "samples"}, {"share", "share (%)", 1}}, nlohmann::json::array()};
  const double total = n > 0 ? static_cast<double>(n) : 1;
  t.rows.push_back({{"side", "embedding: c'_s ||W de||^2"}, {"samples", n - logit}, {"share", pct((n - logit) / total)}});
  t.rows.push_back({{"side", "logit: alpha kappa (log-prob margin)^2"}, {"samples", logit}, {"share", pct(logit / total)}});
  return t;
}

}  // namespace

Section arc_coverage_section(const ReportInputs& in) {
  Section s{"arc-coverage", "ARC coverage", {}};
  Paragraph why_not;
  const ArcCalibration* arc = fitted_arc(in, why_not);
  if (!arc) {
    s.blocks.push_back(why_not);
    return s;
  }
  const std::string where = in.artifact_dir;
  const auto categories = prompt_categories(arc->prompts);
  int64_t calibration = 0, held_out = 0;
  for (const ArcSample& x : arc->samples)
    if (!x.deploy_site) (x.held_out ? held_out : calibration) += 1;
  const nlohmann::json& options = arc->provenance.options;
  const std::string summary = strprintf(
                "ARC-Decode calibrated at T = %.2f, top-k %lld, top-p %.2f; delta %g (target coverage %s), K = %d candidates, "
                "mu = %g, epsilon = %g, rule %s, buckets %s; %lld calibration samples fit the constants, %lld held-out samples audit them.",
                arc->provenance.temperature, static_cast<long long>(arc->provenance.top_k), arc->provenance.top_p, arc->delta,
                percent_text(1 - arc->delta).c_str(), arc->top_k, arc->mu, arc->epsilon,
                options.value("rule", std::string("paper")).c_str(), options.value("buckets", std::string("none")).c_str(),
                static_cast<long long>(calibration), static_cast<long long>(held_out));
  s.blocks.push_back(Paragraph{summary});

  s.blocks.push_back(Heading{"Constants"});
  s.blocks.push_back(constants_table(arc->constants, arc->delta));
  const auto refit = refit_arc_at(*arc, arc->delta, where);
  if (refit && *refit == arc->constants)
    s.blocks.push_back(Paragraph{"recomputed from the stored samples: equal to the stored constants"});
  else
    s.blocks.push_back(Paragraph{"recomputed from the stored samples: DIFFERENT from the stored constants (the runtime deploys the stored ones; "
                                 "specd audit arc prints both)",
                                 Tone::Flag});

  s.blocks.push_back(Heading{"Held-out coverage of JS <= U_min"});
  if (held_out == 0) {
    s.blocks.push_back(Paragraph{"not calibrated: no held-out samples; run specd calibrate arc with --audit-per-category 4 (the default) --out " + where,
                                 Tone::NotCalibrated});
  } else {
    const std::vector<ArcAuditRow> audit = audit_arc(arc->samples, arc->constants, categories, /*held_out=*/true);
    s.blocks.push_back(Paragraph{audit == arc->audit
                                     ? "recomputed with audit_arc from the stored samples and constants: equal to the stored audit rows"
                                     : "recomputed with audit_arc from the stored samples and constants: DIFFERENT from the stored audit rows "
                                       "(the table shows the recomputation)",
                                 audit == arc->audit ? Tone::Plain : Tone::Flag});
    for (const ArcAuditRow& r : audit)
      if (r.samples > 0 && r.wilson_high < 1 - arc->delta)
        s.blocks.push_back(Paragraph{"BELOW 1 - delta: " + group_label(r) + " covers " + percent_text(r.coverage) + " of " +
                                         std::to_string(r.samples) + " held-out samples, Wilson 95% interval [" + percent_text(r.wilson_low) +
                                         ", " + percent_text(r.wilson_high) + "], wholly below " + percent_text(1 - arc->delta),
                                     Tone::Flag});
    s.blocks.push_back(coverage_chart(audit, arc->delta));
  }

  if (has_deploy_sites(*arc)) {
    // The gate chosen where it acts (calibrate arc --sites deploy; runtime/stats/arc_gate.h).
    s.blocks.push_back(Heading{"The gate, chosen on deploy sites"});
    const ArcGateOptions gate = arc_gate_options_of(*arc, where);
    auto g = [](double v) { return strprintf("%g", v); };
    Table t{"Learn-then-Test per theta on the arc policy's own runs: P(JS > " + g(gate.js_tolerance) +
                " nats | relaxed, t_d != t_m) <= " + percent_text(gate.risk) + ", " + percent_text(gate.confidence) +
                " confidence over the grid (each theta at (1 - confidence) / grid size); t_d = t_m relaxations counted apart",
            {{"theta", "theta"},
             {"prompts", "prompts"},
             {"sites", "sites"},
             {"relaxed", "relaxed (t_d != t_m)"},
             {"relaxed_argmax", "relaxed (t_d = t_m)"},
             {"misses", "JS above the tolerance"},
             {"risk", "miss rate (%)", 1},
             {"risk_high", "one-sided high (%)", 1},
             {"p_value", "p-value"},
             {"valid", "valid"}},
            nlohmann::json::array()};
    for (const ArcGateRow& r : arc->gate)
      t.rows.push_back({{"theta", r.theta}, {"prompts", r.prompts}, {"sites", r.sites}, {"relaxed", r.relaxed},
                        {"relaxed_argmax", r.relaxed_argmax}, {"misses", r.misses}, {"risk", pct(r.risk)}, {"risk_high", pct(r.risk_high)},
                        {"p_value", r.p_value}, {"valid", r.valid ? "yes" : "no"}});
    s.blocks.push_back(t);
    const ArcGateChoice choice = choose_arc_gate(arc->gate, gate);
    s.blocks.push_back(Paragraph{"deployed theta " + g(choice.theta) + ": " + choice.reason,
                                 choice.relaxes ? Tone::Plain : Tone::Flag});
  }

  s.blocks.push_back(Heading{"Coverage as delta varies"});
  if (held_out == 0)
    s.blocks.push_back(Paragraph{"not calibrated: no held-out samples to audit (see above)", Tone::NotCalibrated});
  else
    s.blocks.push_back(delta_curve(*arc, where));

  s.blocks.push_back(Heading{"The bound's components"});
  std::vector<double> u_emb, u_logit, js, u_min;
  for (const ArcSample& x : arc->samples) {
    if (x.deploy_site) continue;  // the candidate samples the constants and the audit are about
    u_emb.push_back(x.u_emb_raw);
    u_logit.push_back(x.u_logit_raw);
    js.push_back(x.js);
    u_min.push_back(sample_bound(arc->constants, x).u_min);
  }
  const std::string all = "all " + std::to_string(calibration + held_out) + " candidate samples";
  s.blocks.push_back(histogram(u_emb, "u_emb_raw = ||W de||^2", "whitened squared distance", all));
  s.blocks.push_back(histogram(u_logit, "u_logit_raw = (log p(t_m) - log p(t_d))^2", "nats^2", all));
  s.blocks.push_back(histogram(js, "JS(q, r)", "nats", all));
  s.blocks.push_back(histogram(u_min, "U_min", "nats", all + ", under the stored constants"));
  if (held_out > 0) s.blocks.push_back(binding_table(*arc));
  return s;
}

}  // namespace specd::report
