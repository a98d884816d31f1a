// 4. Sweeps: per method family the artifact swept, the grid and the choice, each parameter's
// sensitivity, the speed-vs-drift frontier with the chosen run marked, best vs default vs worst,
// and the chosen run per category. Every number is a stored run's (specd calibrate sweep).
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <optional>

#include "analysis/sections.h"
#include "calibrate/sweep_choice.h"

namespace specd::report {
namespace {

using nlohmann::json;

std::string g(double value) {
  char text[32];
  std::snprintf(text, sizeof text, "%g", value);
  return text;
}

// A run's value of one axis as typed: from its point ("tokens=10 match=earliest"), which names
// choices as choices.
std::string value_text(const SweepRun& run, const std::string& name, double value) {
  const std::string key = name + "=";
  for (size_t start = 0; start < run.point.size();) {
    size_t end = run.point.find(' ', start);
    if (end == std::string::npos) end = run.point.size();
    if (run.point.compare(start, key.size(), key) == 0) return run.point.substr(start + key.size(), end - start - key.size());
    start = end + 1;
  }
  return g(value);
}

// An axis of named choices (pld's match: earliest, latest) rather than numbers.
bool named_choices(const SweepAxis& axis) {
  return std::any_of(axis.texts.begin(), axis.texts.end(), [](const std::string& t) {
    char* end = nullptr;
    std::strtod(t.c_str(), &end);
    return t.empty() || *end != '\0';
  });
}

const SweepRun* run_of(const SweepCalibration& sweep, std::optional<int32_t> index) {
  if (!index) return nullptr;
  for (const SweepRun& r : sweep.runs)
    if (r.index == *index && !r.stats.empty()) return &r;
  return nullptr;
}

// The measured numbers of one stats row, keyed as every table of this section names them.
json measures(const SweepStats& s) {
  return {{"speedup", s.speedup},
          {"speedup_low", s.speedup - s.speedup_ci95},
          {"speedup_high", s.speedup + s.speedup_ci95},
          {"mat", s.mat},
          {"acceptance", 100 * s.acceptance},
          {"nll_increase", s.nll_per_token - s.ar_nll_per_token},
          {"chrf_loss", 100 - s.chrf_vs_ar},
          {"tv", s.tv_mean}};
}

const std::vector<Column> kMeasureColumns{{"speedup", "speedup over AR (×)", 3},
                                          {"speedup_low", "95% low (×)", 3},
                                          {"speedup_high", "95% high (×)", 3},
                                          {"mat", "MAT (tokens/step)", 2},
                                          {"acceptance", "acceptance (%)", 1},
                                          {"nll_increase", "NLL increase over AR (nats/token)", 4},
                                          {"chrf_loss", "100 − chrF vs AR", 2},
                                          {"tv", "expected TV per token", 4}};

std::vector<Column> with_measures(std::vector<Column> first) {
  first.insert(first.end(), kMeasureColumns.begin(), kMeasureColumns.end());
  return first;
}

json speed_axis_title() { return "speedup over AR (×), 95% interval"; }

std::vector<Block> overview_blocks(const SweepCalibration& sweep) {
  std::string grid;
  for (const SweepAxis& axis : sweep.grid) {
    std::string values;
    for (const std::string& t : axis.texts) values += (values.empty() ? "" : ", ") + t;
    grid += (grid.empty() ? "" : "; ") + axis.name + " = " + values;
  }
  std::string text = "Grid: " + grid + " (first axis varies slowest; run 0 is the base point, the options as given). " +
                     std::to_string(sweep.runs.size()) + " of " + std::to_string(sweep.planned_runs) + " planned runs, over " +
                     std::to_string(sweep.provenance.prompt_count) + " prompts at temperature " + g(sweep.provenance.temperature) + ". ";
  if (sweep.lossless)
    text += "Lossless family: any run may be chosen; the fastest is.";
  else
    text += "Lossy family: the drift contract is " + sweep_contract_text(sweep) +
            (sweep_applies_chrf(sweep) ? "" : " (chrF and exact match vs AR apply at temperature 0 only)") +
            (sweep.confidence > 0 ? "; each run is tested (one-sided t-tests over the prompts, exact binomial), and the fastest run that "
                                    "passes every test is chosen."
                                  : "; the fastest run whose point estimates are within it is chosen (a version-3 sweep).");
  std::vector<Block> blocks{Paragraph{text}};
  const SweepChoice recomputed = choose_sweep_run(sweep);
  if (const SweepRun* chosen = run_of(sweep, sweep.chosen))
    blocks.push_back(Paragraph{"Chosen: run " + std::to_string(chosen->index) + " (" + chosen->point + "): " + sweep.choice});
  else
    blocks.push_back(Paragraph{"No run chosen: " + sweep.choice, Tone::Flag});
  if (recomputed.run != sweep.chosen)
    blocks.push_back(Paragraph{"The stored choice differs from the choice recomputed from the stored runs (" +
                                   (recomputed.run ? "run " + std::to_string(*recomputed.run) : std::string("none")) + ": " +
                                   recomputed.reason + ").",
                               Tone::Flag});
  return blocks;
}

// The runs sharing every other axis's value with `anchor`, one per point: where two runs measured
// the same point (run 0, the base point, often repeats a grid run) the anchor, else the grid run.
std::vector<const SweepRun*> slice(const SweepCalibration& sweep, size_t axis, const SweepRun& anchor) {
  std::vector<const SweepRun*> runs;
  for (const SweepRun& r : sweep.runs) {
    if (r.stats.empty() || r.values.size() != sweep.grid.size() || anchor.values.size() != sweep.grid.size()) continue;
    bool same = true;
    for (size_t b = 0; b < sweep.grid.size(); ++b) same = same && (b == axis || r.values[b] == anchor.values[b]);
    if (same) runs.push_back(&r);
  }
  const auto preferred = [&](const SweepRun* r) { return r == &anchor ? 2 : r->index != 0 ? 1 : 0; };
  std::vector<const SweepRun*> kept;
  for (const SweepRun* r : runs) {
    const auto twin = std::find_if(kept.begin(), kept.end(), [&](const SweepRun* k) { return k->values == r->values; });
    if (twin == kept.end()) kept.push_back(r);
    else if (preferred(r) > preferred(*twin)) *twin = r;
  }
  std::stable_sort(kept.begin(), kept.end(), [&](const SweepRun* a, const SweepRun* b) { return a->values[axis] < b->values[axis]; });
  return kept;
}

// Run 0 and a grid run at the same point measure the noise of the speedup.
std::vector<Block> repeat_blocks(const SweepCalibration& sweep) {
  const SweepRun* base = nullptr;
  for (const SweepRun& r : sweep.runs)
    if (r.index == 0 && !r.stats.empty()) base = &r;
  std::vector<Block> blocks;
  if (!base) return blocks;
  for (const SweepRun& r : sweep.runs)
    if (r.index != 0 && !r.stats.empty() && r.values == base->values) {
      char line[256];
      std::snprintf(line, sizeof line,
                    "Run 0 and run %d measured the same point (%s): speedup %.3fx and %.3fx over AR, a difference of %.3fx "
                    "from run-to-run variation alone (a scale for the differences between points).",
                    r.index, r.point.c_str(), base->overall().speedup, r.overall().speedup,
                    std::abs(base->overall().speedup - r.overall().speedup));
      blocks.push_back(Paragraph{line});
    }
  return blocks;
}

std::vector<Block> sensitivity_blocks(const SweepCalibration& sweep) {
  const SweepRun* chosen = run_of(sweep, sweep.chosen);
  const SweepRun* anchor = chosen ? chosen : run_of(sweep, 0);
  if (!anchor) return {Paragraph{"No chosen run and no base run: no point to hold the other parameters at."}};
  const std::string where = chosen ? "the chosen run's" : "the base run's (no run chosen)";
  std::vector<Block> blocks;
  for (size_t axis = 0; axis < sweep.grid.size(); ++axis) {
    const std::string& name = sweep.grid[axis].name;
    Table t{"Sensitivity to " + name + ": the other parameters at " + where + " values (run " + std::to_string(anchor->index) + ": " +
                anchor->point + ")",
            with_measures({{"value_text", name}, {"value", name + " (value)"}, {"run", "run"}}), json::array()};
    for (const SweepRun* r : slice(sweep, axis, *anchor)) {
      json row = measures(r->overall());
      row["value"] = r->values[axis];
      row["value_text"] = value_text(*r, name, r->values[axis]);
      row["run"] = r->index;
      t.rows.push_back(row);
    }
    const bool named = named_choices(sweep.grid[axis]);
    const json x = named ? json{{"field", "value_text"}, {"type", "ordinal"}, {"sort", {{"field", "value"}, {"op", "min"}}}, {"title", name}}
                         : json{{"field", "value"}, {"type", "quantitative"}, {"title", name}};
    const json speed = {{"layer",
                         {{{"mark", {{"type", "line"}, {"point", true}}},
                           {"encoding", {{"x", x}, {"y", {{"field", "speedup"}, {"type", "quantitative"}, {"scale", {{"zero", false}}}, {"title", speed_axis_title()}}}}}},
                          {{"mark", "errorbar"},
                           {"encoding", {{"x", x}, {"y", {{"field", "speedup_low"}, {"type", "quantitative"}, {"title", speed_axis_title()}}}, {"y2", {{"field", "speedup_high"}}}}}}}}};
    const json drift = {{"mark", {{"type", "line"}, {"point", true}}},
                        {"encoding", {{"x", x}, {"y", {{"field", "nll_increase"}, {"type", "quantitative"}, {"title", "NLL increase over AR (nats/token)"}}}}}};
    blocks.push_back(Chart{sweep.family + ": speed and drift against " + name, {{"vconcat", {speed, drift}}}, std::move(t)});
  }
  return blocks;
}

std::string status_of(const SweepCalibration& sweep, const SweepRun& run) {
  if (sweep.chosen && run.index == *sweep.chosen) return "chosen";
  return sweep_run_within_bounds(sweep, run) ? "within bounds" : "outside bounds";
}

std::vector<Block> frontier_blocks(const SweepCalibration& sweep) {
  Table t{"Every run: speed against drift",
          with_measures({{"run", "run"}, {"point", "point"}, {"status", "status"}}), json::array()};
  for (const SweepRun& r : sweep.runs) {
    if (r.stats.empty()) continue;
    json row = measures(r.overall());
    row["run"] = r.index;
    row["point"] = r.point;
    row["status"] = status_of(sweep, r);
    t.rows.push_back(row);
  }
  auto chart = [&](const std::string& field, const std::string& title, std::optional<double> bound, Table table) {
    const json x = {{"field", field}, {"type", "quantitative"}, {"title", title}};
    const json color = {{"field", "status"}, {"type", "nominal"}, {"title", "run"},
                        {"scale", {{"domain", {"chosen", "within bounds", "outside bounds"}}, {"range", {"#d62728", "#1f77b4", "#aaaaaa"}}}}};
    json layers = {{{"mark", "errorbar"},
                    {"encoding", {{"x", x}, {"y", {{"field", "speedup_low"}, {"type", "quantitative"}, {"title", speed_axis_title()}}}, {"y2", {{"field", "speedup_high"}}}, {"color", color}}}},
                   {{"mark", {{"type", "point"}, {"filled", true}, {"size", 60}}},
                    {"encoding", {{"x", x}, {"y", {{"field", "speedup"}, {"type", "quantitative"}, {"scale", {{"zero", false}}}, {"title", speed_axis_title()}}},
                                  {"color", color}, {"tooltip", {{{"field", "point"}}, {{"field", "run"}}}}}}}};
    if (bound) layers.push_back({{"mark", {{"type", "rule"}, {"strokeDash", {4, 4}}}}, {"encoding", {{"x", {{"datum", *bound}}}}}});
    return Chart{sweep.family + ": speed against drift (" + title + ")" + (bound ? ", dashed: the lossy bound " + g(*bound) : ""),
                 {{"layer", layers}}, std::move(table)};
  };
  std::vector<Block> blocks;
  const bool chrf = !sweep.lossless && sweep_applies_chrf(sweep);
  blocks.push_back(chart("nll_increase", "NLL increase over AR (nats/token)",
                         sweep.lossless ? std::nullopt : std::optional<double>(sweep.max_nll_increase), t));
  if (chrf) blocks.push_back(chart("chrf_loss", "100 − chrF vs AR", 100 - sweep.min_chrf, t));
  if (!sweep.lossless && sweep_applies_tv(sweep)) blocks.push_back(chart("tv", "expected TV per token", sweep.max_tv, t));
  return blocks;
}

struct Extremes {
  const SweepRun *fastest = nullptr, *slowest = nullptr;
};

// Ties go to the lower run index, as the choice's.
Extremes extremes(const SweepCalibration& sweep) {
  Extremes e;
  for (const SweepRun& r : sweep.runs) {
    if (r.stats.empty()) continue;
    const double s = r.overall().speedup;
    if (!e.fastest || s > e.fastest->overall().speedup || (s == e.fastest->overall().speedup && r.index < e.fastest->index)) e.fastest = &r;
    if (!e.slowest || s < e.slowest->overall().speedup || (s == e.slowest->overall().speedup && r.index < e.slowest->index)) e.slowest = &r;
  }
  return e;
}

Table best_default_worst(const SweepCalibration& sweep) {
  Table t{"Chosen, fastest, default (run 0) and slowest run",
          with_measures({{"role", "role"}, {"run", "run"}, {"point", "point"}, {"within_bounds", "within bounds"}}), json::array()};
  const Extremes e = extremes(sweep);
  auto row = [&](const std::string& role, const SweepRun* r) {
    if (!r) return;
    json row = measures(r->overall());
    row["role"] = role;
    row["run"] = r->index;
    row["point"] = r->point;
    row["within_bounds"] = sweep_run_within_bounds(sweep, *r) ? "yes" : "no";
    t.rows.push_back(row);
  };
  row("chosen", run_of(sweep, sweep.chosen));
  row("fastest", e.fastest);
  row("default (run 0)", run_of(sweep, 0));
  row("slowest", e.slowest);
  return t;
}

Table per_category(const SweepCalibration& sweep) {
  const SweepRun* chosen = run_of(sweep, sweep.chosen);
  const SweepRun* run = chosen ? chosen : run_of(sweep, 0);
  Table t{run ? std::string(chosen ? "The chosen run" : "No run chosen: the base run") + " (run " + std::to_string(run->index) + ": " +
                    run->point + ") per category"
              : "No chosen or base run",
          with_measures({{"category", "category"}, {"prompts", "prompts"}, {"new_tokens", "new tokens"}, {"equal_to_ar", "outputs equal to AR"},
                         {"relaxed_per_token", "relaxed per token", 4}, {"rescued_per_token", "rescued per token", 4}}),
          json::array()};
  if (!run) return t;
  for (const SweepStats& s : run->stats) {
    json row = measures(s);
    row["category"] = s.category;
    row["prompts"] = s.prompts;
    row["new_tokens"] = s.new_tokens;
    row["equal_to_ar"] = s.equal_to_ar;
    row["relaxed_per_token"] = s.relaxed_per_token;
    row["rescued_per_token"] = s.rescued_per_token;
    t.rows.push_back(row);
  }
  return t;
}

}  // namespace

Section sweeps_section(const ReportInputs& in) {
  Section s{"sweeps", "Sweeps", {}};
  if (in.artifact.sweeps.empty()) {
    s.blocks.push_back(Paragraph{"not calibrated: run specd calibrate sweep --policy P --grid NAME=v1,v2,... --target T --draft D --out DIR "
                                 "(this artifact holds no parameter sweep)",
                                 Tone::NotCalibrated});
    return s;
  }
  for (const SweepCalibration& sweep : in.artifact.sweeps) {
    s.blocks.push_back(Heading{sweep.family + (sweep.lossless ? " (lossless)" : " (lossy)")});
    for (auto part : {overview_blocks(sweep), repeat_blocks(sweep), sensitivity_blocks(sweep), frontier_blocks(sweep),
                      std::vector<Block>{best_default_worst(sweep), per_category(sweep)}})
      for (Block& b : part) s.blocks.push_back(std::move(b));
  }
  return s;
}

}  // namespace specd::report
