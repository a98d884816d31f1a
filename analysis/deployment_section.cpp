// 5. Deployment: per method and category, from bench JSON (specd bench --json) and trace files
// (specd bench --traces): speed and its interval, acceptance per draft position, accepted
// lengths, the time split, drift and quality, rescued and relaxed rates. Each (file, run) stays
// apart: a method that appears in several inputs is labelled with its file (and run id).
#include <algorithm>
#include <cmath>
#include <map>
#include <set>

#include "analysis/sections.h"
#include "analysis/trace_metrics.h"
#include "speculative/method_catalog.h"
#include "stats/intervals.h"

namespace specd::report {

namespace {

using nlohmann::json;

constexpr int kPositions = 6;     // per-category acceptance table: positions 1..6
constexpr int kLengthCap = 10;    // histogram chart: 10 stands for 10 or more
constexpr int kLengthColumns = 5; // per-category histogram table: 0..4 and 5 or more

json number_or_null(bool ok, double value) { return ok ? json(value) : json(nullptr); }
json pct(double share) { return 100.0 * share; }

std::string base_name(const std::string& path) {
  const size_t slash = path.find_last_of('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

json field(const std::string& name, const std::string& type, const std::string& title) {
  return {{"field", name}, {"type", type}, {"title", title}};
}

// ---- bench JSON ----

struct BenchRun {
  std::string label, file;
  const json* results = nullptr;  // results[method]
  bool lossless = true;
};

std::vector<BenchRun> bench_runs(const std::vector<BenchFile>& files) {
  std::map<std::string, int> count;
  for (const BenchFile& b : files)
    for (const auto& [m, r] : b.json["results"].items()) ++count[m];
  std::vector<BenchRun> out;
  for (const BenchFile& b : files)
    for (const auto& [m, r] : b.json["results"].items()) {
      if (!r.is_object()) continue;
      BenchRun run{count[m] > 1 ? m + " [" + base_name(b.path) + "]" : m, b.path, &r, true};
      const json& lossless = b.json.value("lossless", json::object());
      if (lossless.is_object() && lossless.contains(m) && lossless[m].is_boolean()) run.lossless = lossless[m].get<bool>();
      out.push_back(run);
    }
  return out;
}

double num(const json& j, const char* key, bool& ok) {
  if (j.contains(key) && j[key].is_number()) return j[key].get<double>();
  ok = false;
  return 0;
}

json get_number(const json& j, const char* key) { return j.contains(key) && j[key].is_number() ? j[key] : json(nullptr); }

// Categories of a results[method] object in name order, "overall" last.
std::vector<std::string> bench_categories(const json& results) {
  std::vector<std::string> cats;
  for (const auto& [c, v] : results.items())
    if (c != "overall" && v.is_object()) cats.push_back(c);
  std::sort(cats.begin(), cats.end());
  if (results.contains("overall")) cats.push_back("overall");
  return cats;
}

// ---- tables and charts ----

Table speed_table(const std::vector<BenchRun>& bench, const std::vector<RunSummary>& traces) {
  Table t{"Speed per method and category. bench JSON: its MAT, acceptance, tokens/s and speedup (mean over prompts of "
          "throughput / AR's, median of the repeats, with its normal 95% interval). traces: the same from the trace's "
          "requests (first timed run of each; MAT counts each turn's prefill token as a step when the trace holds bench's tally).",
          {{"source", "source"},
           {"method", "method"},
           {"category", "category"},
           {"prompts", "prompts"},
           {"mat", "MAT (tokens/step)", 2},
           {"acceptance", "acceptance (%)", 1},
           {"tokens_per_s", "throughput (tokens/s)", 1},
           {"speedup", "speedup over AR (×)", 3},
           {"speedup_low", "95% low (×)", 3},
           {"speedup_high", "95% high (×)", 3}},
          json::array()};
  for (const BenchRun& b : bench)
    for (const std::string& c : bench_categories(*b.results)) {
      const json& r = (*b.results)[c];
      bool ok = true;
      const double s = num(r, "speedup", ok), h = num(r, "speedup_ci95", ok);
      t.rows.push_back({{"source", "bench " + base_name(b.file)},
                        {"method", b.label},
                        {"category", c},
                        {"prompts", get_number(r, "prompts")},
                        {"mat", get_number(r, "mat")},
                        {"acceptance", r.contains("acceptance_rate") && r["acceptance_rate"].is_number() ? pct(r["acceptance_rate"].get<double>()) : json(nullptr)},
                        {"tokens_per_s", get_number(r, "tokens_per_s")},
                        {"speedup", number_or_null(ok, s)},
                        {"speedup_low", number_or_null(ok, s - h)},
                        {"speedup_high", number_or_null(ok, s + h)}});
    }
  for (const RunSummary& s : traces)
    for (const std::string& c : s.categories) {
      const RunMetrics& m = s.by_category.at(c);
      const bool sp = m.speedup.n > 0;
      t.rows.push_back({{"source", "traces " + base_name(s.file)},
                        {"method", s.label},
                        {"category", c},
                        {"prompts", m.requests},
                        {"mat", number_or_null(m.bench_steps > 0, double(m.new_tokens) / std::max<int64_t>(1, m.bench_steps))},
                        {"acceptance", number_or_null(m.drafted > 0, 100.0 * m.accepted / std::max<int64_t>(1, m.drafted))},
                        {"tokens_per_s", number_or_null(m.wall_ms > 0, m.new_tokens * 1000.0 / std::max(1e-300, m.wall_ms))},
                        {"speedup", number_or_null(sp, m.speedup.mean())},
                        {"speedup_low", number_or_null(sp, m.speedup.mean() - m.speedup.ci95())},
                        {"speedup_high", number_or_null(sp, m.speedup.mean() + m.speedup.ci95())}});
    }
  return t;
}

Chart speedup_chart(const Table& speed) {
  Table t{"Overall speedup over AR with its 95% interval (rows of the table above, category overall)",
          {{"series", "method (source)"}, {"speedup", "speedup over AR (×)", 3}, {"speedup_low", "95% low (×)", 3},
           {"speedup_high", "95% high (×)", 3}, {"prompts", "prompts"}},
          json::array()};
  for (const json& r : speed.rows)
    if (r["category"] == "overall" && !r["speedup"].is_null())
      t.rows.push_back({{"series", r["method"].get<std::string>() + " (" + r["source"].get<std::string>() + ")"},
                        {"speedup", r["speedup"]}, {"speedup_low", r["speedup_low"]}, {"speedup_high", r["speedup_high"]},
                        {"prompts", r["prompts"]}});
  json y = field("series", "nominal", "method (source)");
  y["sort"] = nullptr;  // the table's order, not alphabetical
  json spec = {
               {"title", "Speedup over AR, overall (95% interval)"},
               {"layer",
                {{{"mark", {{"type", "rule"}, {"strokeDash", {4, 4}}}}, {"encoding", {{"x", {{"datum", 1}, {"type", "quantitative"}}}}}},
                 {{"mark", "errorbar"},
                  {"encoding", {{"y", y}, {"x", field("speedup_low", "quantitative", "speedup over AR (×)")}, {"x2", {{"field", "speedup_high"}}}}}},
                 {{"mark", {{"type", "point"}, {"filled", true}}},
                  {"encoding", {{"y", y}, {"x", field("speedup", "quantitative", "speedup over AR (×)")}}}}}}};
  return {"Speedup over AR, overall (95% interval)", spec, t};
}

Table quality_table(const std::vector<BenchRun>& bench, const std::vector<RunSummary>& traces) {
  Table t{"Drift and quality. exact match: outputs equal to AR's (T = 0 only; traces: output_hash against the same "
          "file's ar run, item by item). NLL: the target's negative log-likelihood per generated token. chrF (0-100) against "
          "the workload's references. rescued / relaxed: accepted tokens the lossless test had rejected, per generated token.",
          {{"source", "source"},
           {"method", "method"},
           {"category", "category"},
           {"lossless", "lossless"},
           {"exact", "equal to AR (outputs)"},
           {"exact_pct", "exact match (%)", 1},
           {"nll", "NLL (nats/token)", 3},
           {"chrf", "chrF (0-100)", 2},
           {"rescued_pct", "rescued (% of tokens)", 2},
           {"relaxed_pct", "relaxed (% of tokens)", 2}},
          json::array()};
  for (const BenchRun& b : bench)
    for (const std::string& c : bench_categories(*b.results)) {
      const json& r = (*b.results)[c];
      t.rows.push_back({{"source", "bench " + base_name(b.file)},
                        {"method", b.label},
                        {"category", c},
                        {"lossless", b.lossless ? "yes" : "no"},
                        {"exact", r.contains("equal_to_ar") && r["equal_to_ar"].is_string() ? r["equal_to_ar"] : json(nullptr)},
                        {"exact_pct", r.contains("exact_match_rate") && r["exact_match_rate"].is_number() ? pct(r["exact_match_rate"].get<double>()) : json(nullptr)},
                        {"nll", get_number(r, "nll_per_token")},
                        {"chrf", get_number(r, "chrf")},
                        {"rescued_pct", r.contains("rescued_per_token") && r["rescued_per_token"].is_number() ? pct(r["rescued_per_token"].get<double>()) : json(nullptr)},
                        {"relaxed_pct", r.contains("relaxed_per_token") && r["relaxed_per_token"].is_number() ? pct(r["relaxed_per_token"].get<double>()) : json(nullptr)}});
    }
  for (const RunSummary& s : traces)
    for (const std::string& c : s.categories) {
      const RunMetrics& m = s.by_category.at(c);
      const bool exact = s.temperature == 0 && m.compared > 0;
      const bool tokens = m.new_tokens > 0;
      t.rows.push_back({{"source", "traces " + base_name(s.file)},
                        {"method", s.label},
                        {"category", c},
                        {"lossless", m.steps == 0 ? json(nullptr) : json(m.lossy_steps == 0 ? "yes" : "no")},
                        {"exact", exact ? json(std::to_string(m.equal_to_ar) + "/" + std::to_string(m.compared)) : json(nullptr)},
                        {"exact_pct", number_or_null(exact, 100.0 * m.equal_to_ar / std::max<int64_t>(1, m.compared))},
                        {"nll", number_or_null(m.nll_tokens > 0, m.nll / std::max<int64_t>(1, m.nll_tokens))},
                        {"chrf", number_or_null(m.chrf_turns > 0, m.chrf.score())},
                        {"rescued_pct", number_or_null(tokens, 100.0 * m.rescued / std::max<int64_t>(1, m.new_tokens))},
                        {"relaxed_pct", number_or_null(tokens, 100.0 * m.relaxed / std::max<int64_t>(1, m.new_tokens))}});
    }
  return t;
}

std::vector<const RunSummary*> drafting_runs(const std::vector<RunSummary>& traces) {
  std::vector<const RunSummary*> out;
  for (const RunSummary& s : traces)
    if (s.by_category.count("overall") && s.by_category.at("overall").steps > 0) out.push_back(&s);
  return out;
}

Chart position_chart(const std::vector<const RunSummary*>& runs) {
  Table t{"Acceptance per draft position, overall: of the steps whose first d - 1 drafted tokens were accepted and that "
          "drafted at least d nodes, the share that accepted the d-th (Wilson 95% interval). For trees, drafting at least "
          "d nodes is an upper bound on having a node at depth d, so deep positions may count steps that could not reach them.",
          {{"method", "method"}, {"position", "draft position d"}, {"reached", "steps reaching d"}, {"accepted", "accepted d-th"},
           {"rate", "acceptance (%)", 1}, {"low", "95% low (%)", 1}, {"high", "95% high (%)", 1}},
          json::array()};
  for (const RunSummary* s : runs) {
    const RunMetrics& m = s->by_category.at("overall");
    for (size_t d = 0; d < m.position_reached.size(); ++d) {
      const int64_t n = m.position_reached[d], k = m.position_accepted[d];
      if (n == 0) continue;
      const Interval w = wilson_interval(k, n);
      t.rows.push_back({{"method", s->label}, {"position", d + 1}, {"reached", n}, {"accepted", k},
                        {"rate", 100.0 * k / n}, {"low", 100.0 * w.low}, {"high", 100.0 * w.high}});
    }
  }
  const json x = field("position", "quantitative", "draft position d (tokens into the draft)");
  const json color = field("method", "nominal", "method");
  json spec = {
               {"title", "Acceptance per draft position (overall, 95% Wilson interval)"},
               {"layer",
                {{{"mark", "errorbar"},
                  {"encoding", {{"x", x}, {"y", field("low", "quantitative", "acceptance (%)")}, {"y2", {{"field", "high"}}}, {"color", color}}}},
                 {{"mark", {{"type", "line"}, {"point", true}}},
                  {"encoding", {{"x", x}, {"y", field("rate", "quantitative", "acceptance (%)")}, {"color", color}}}}}}};
  return {"Acceptance per draft position (overall, 95% Wilson interval)", spec, t};
}

Table position_table(const std::vector<const RunSummary*>& runs) {
  Table t{"Acceptance per draft position and category (%; positions 1 to " + std::to_string(kPositions) +
              "; – where no step reached the position)",
          {{"method", "method"}, {"category", "category"}, {"steps", "steps"}},
          json::array()};
  for (int d = 1; d <= kPositions; ++d) t.columns.push_back({"p" + std::to_string(d), "d=" + std::to_string(d) + " (%)", 1});
  for (const RunSummary* s : runs)
    for (const std::string& c : s->categories) {
      const RunMetrics& m = s->by_category.at(c);
      json row = {{"method", s->label}, {"category", c}, {"steps", m.steps}};
      for (int d = 1; d <= kPositions; ++d) {
        const bool ok = d <= static_cast<int>(m.position_reached.size()) && m.position_reached[d - 1] > 0;
        row["p" + std::to_string(d)] = number_or_null(ok, ok ? 100.0 * m.position_accepted[d - 1] / m.position_reached[d - 1] : 0);
      }
      t.rows.push_back(row);
    }
  return t;
}

Chart length_chart(const std::vector<const RunSummary*>& runs) {
  Table t{"Accepted-length histogram, overall: share of steps per number of drafted tokens accepted (length " +
              std::to_string(kLengthCap) + " stands for " + std::to_string(kLengthCap) + " or more)",
          {{"method", "method"}, {"length", "accepted length (tokens)"}, {"steps", "steps"}, {"share", "share of steps (%)", 1}},
          json::array()};
  for (const RunSummary* s : runs) {
    const RunMetrics& m = s->by_category.at("overall");
    std::vector<int64_t> bins(std::min<size_t>(m.length_steps.size(), kLengthCap + 1), 0);
    for (size_t l = 0; l < m.length_steps.size(); ++l) bins[std::min<size_t>(l, kLengthCap)] += m.length_steps[l];
    for (size_t l = 0; l < bins.size(); ++l)
      t.rows.push_back({{"method", s->label}, {"length", l}, {"steps", bins[l]}, {"share", 100.0 * bins[l] / m.steps}});
  }
  json spec = {
               {"title", "Accepted length per step (overall)"},
               {"mark", "bar"},
               {"encoding",
                {{"x", field("length", "ordinal", "accepted length (tokens)")},
                 {"xOffset", {{"field", "method"}}},
                 {"y", field("share", "quantitative", "share of steps (%)")},
                 {"color", field("method", "nominal", "method")}}}};
  return {"Accepted length per step (overall)", spec, t};
}

Table length_table(const std::vector<const RunSummary*>& runs) {
  Table t{"Accepted-length shares per category (% of steps)", {{"method", "method"}, {"category", "category"}, {"steps", "steps"},
          {"mean", "mean accepted (tokens/step)", 2}}, json::array()};
  for (int l = 0; l < kLengthColumns; ++l) t.columns.push_back({"l" + std::to_string(l), "length " + std::to_string(l) + " (%)", 1});
  t.columns.push_back({"lmore", "length ≥ " + std::to_string(kLengthColumns) + " (%)", 1});
  for (const RunSummary* s : runs)
    for (const std::string& c : s->categories) {
      const RunMetrics& m = s->by_category.at(c);
      if (m.steps == 0) continue;
      json row = {{"method", s->label}, {"category", c}, {"steps", m.steps}, {"mean", double(m.accepted) / m.steps}};
      int64_t more = 0;
      for (size_t l = kLengthColumns; l < m.length_steps.size(); ++l) more += m.length_steps[l];
      for (int l = 0; l < kLengthColumns; ++l)
        row["l" + std::to_string(l)] = 100.0 * (l < static_cast<int>(m.length_steps.size()) ? m.length_steps[l] : 0) / m.steps;
      row["lmore"] = 100.0 * more / m.steps;
      t.rows.push_back(row);
    }
  return t;
}

Chart time_chart(const std::vector<RunSummary>& traces) {
  Table t{"Time split per request, overall: draft, verify and accept from the steps; other = wall time less those "
          "(prefill, sampling, bookkeeping; all of AR's time, whose steps are not traced)",
          {{"method", "method"}, {"part", "part"}, {"ms", "time (ms/request)", 2}, {"share", "share of wall time (%)", 1}},
          json::array()};
  for (const RunSummary& s : traces) {
    if (!s.by_category.count("overall")) continue;
    const RunMetrics& m = s.by_category.at("overall");
    if (m.requests == 0 || m.wall_ms <= 0) continue;
    const std::pair<const char*, double> parts[] = {{"draft", m.draft_ms}, {"verify", m.verify_ms}, {"accept", m.accept_ms}, {"other", m.other_ms()}};
    for (const auto& [part, ms] : parts)
      t.rows.push_back({{"method", s.label}, {"part", part}, {"ms", ms / m.requests}, {"share", 100.0 * ms / m.wall_ms}});
  }
  json spec = {
               {"title", "Time per request by part (overall)"},
               {"mark", "bar"},
               {"encoding",
                {{"y", field("method", "nominal", "method")},
                 {"x", {{"field", "ms"}, {"type", "quantitative"}, {"stack", "zero"}, {"title", "time (ms/request)"}}},
                 {"color", {{"field", "part"}, {"type", "nominal"}, {"title", "part"}, {"sort", {"draft", "verify", "accept", "other"}}}},
                 {"order", {{"field", "part"}}}}}};
  return {"Time per request by part (overall)", spec, t};
}

Table time_table(const std::vector<RunSummary>& traces) {
  Table t{"Time split per category (ms per request and % of wall time)",
          {{"method", "method"}, {"category", "category"}, {"requests", "requests"}, {"wall_ms", "wall (ms/request)", 2},
           {"draft_ms", "draft (ms/request)", 2}, {"verify_ms", "verify (ms/request)", 2}, {"accept_ms", "accept (ms/request)", 2},
           {"other_ms", "other (ms/request)", 2}, {"draft_pct", "draft (%)", 1}, {"verify_pct", "verify (%)", 1},
           {"accept_pct", "accept (%)", 1}, {"other_pct", "other (%)", 1}},
          json::array()};
  for (const RunSummary& s : traces)
    for (const std::string& c : s.categories) {
      const RunMetrics& m = s.by_category.at(c);
      if (m.requests == 0 || m.wall_ms <= 0) continue;
      const double n = static_cast<double>(m.requests);
      t.rows.push_back({{"method", s.label}, {"category", c}, {"requests", m.requests}, {"wall_ms", m.wall_ms / n},
                        {"draft_ms", m.draft_ms / n}, {"verify_ms", m.verify_ms / n}, {"accept_ms", m.accept_ms / n},
                        {"other_ms", m.other_ms() / n}, {"draft_pct", 100.0 * m.draft_ms / m.wall_ms},
                        {"verify_pct", 100.0 * m.verify_ms / m.wall_ms}, {"accept_pct", 100.0 * m.accept_ms / m.wall_ms},
                        {"other_pct", 100.0 * m.other_ms() / m.wall_ms}});
    }
  return t;
}

}  // namespace

Section deployment_section(const ReportInputs& in) {
  Section s{"deployment", "Deployment", {}};
  if (in.traces.empty() && in.bench.empty()) {
    s.blocks.push_back(Paragraph{"no deploy traces or bench results given: run specd bench --methods ... --traces F.sqlite "
                                 "--json F.json and pass --traces F.sqlite --bench F.json to specd report",
                                 Tone::NotCalibrated});
    return s;
  }
  const std::vector<BenchRun> bench = bench_runs(in.bench);
  const std::vector<RunSummary> traces = summarize_traces(in.traces);
  s.blocks.push_back(Paragraph{
      "Each bench file and each trace run is shown apart (a method in several inputs carries its file name and run id). "
      "Speedup: bench JSON gives Spec-Bench's mean over prompts of the method's throughput over AR's with its normal 95% "
      "interval; from traces it is the same mean ratio, item by item against the ar run of the same file (same workload "
      "item), over the first timed run's wall time, with the same interval (1.96 standard errors, as specd bench)."});
  Table speed = speed_table(bench, traces);
  s.blocks.push_back(Heading{"Speed"});
  Chart chart = speedup_chart(speed);
  if (!chart.table.rows.empty()) s.blocks.push_back(std::move(chart));
  s.blocks.push_back(std::move(speed));
  s.blocks.push_back(Heading{"Drift and quality"});
  s.blocks.push_back(quality_table(bench, traces));
  for (const RunSummary& r : traces)
    if (!r.ar_run && !(lookup_method(r.method) && lookup_method(r.method)->autoregressive))
      s.blocks.push_back(Paragraph{"traces " + r.file + " run " + std::to_string(r.run_id) + " (" + r.method +
                                   "): no ar run in that file, so no speedup or exact match from the traces"});

  s.blocks.push_back(Heading{"Acceptance per draft position and accepted lengths"});
  const std::vector<const RunSummary*> drafting = drafting_runs(traces);
  if (drafting.empty()) {
    s.blocks.push_back(Paragraph{in.traces.empty() ? "no deploy traces given: per-step numbers need specd bench --traces F.sqlite, "
                                                     "passed as --traces F.sqlite"
                                                   : "the traces hold no speculative step (AR only)",
                                 Tone::NotCalibrated});
  } else {
    s.blocks.push_back(position_chart(drafting));
    s.blocks.push_back(position_table(drafting));
    s.blocks.push_back(length_chart(drafting));
    s.blocks.push_back(length_table(drafting));
  }
  s.blocks.push_back(Heading{"Time split"});
  Chart time = time_chart(traces);
  if (time.table.rows.empty()) {
    s.blocks.push_back(Paragraph{"no deploy traces given: the time split needs specd bench --traces F.sqlite", Tone::NotCalibrated});
  } else {
    s.blocks.push_back(std::move(time));
    s.blocks.push_back(time_table(traces));
  }
  return s;
}

}  // namespace specd::report
