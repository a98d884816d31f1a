// The deployment section and the acceptance drift check: numbers from hand-built trace runs
// equal hand-computed ones (per-position acceptance, accepted-length histogram, MAT, time split,
// exact match, rescued/relaxed rates), the traces' speedup interval is specd bench's on the same
// ratios, a drift flag fires on a constructed disagreement and not on agreement, and no inputs
// give the "not given" paragraph.
#include <catch2/catch.hpp>

#include <cmath>
#include <filesystem>
#include <string>
#include <vector>

#include "analysis/sections.h"
#include "analysis/trace_metrics.h"
#include "stats/statistics.h"
#include "stats/intervals.h"
#include "trace/trace_sink.h"

using namespace specd;
using namespace specd::report;
using nlohmann::json;

namespace {

StepTrace step(int32_t drafted, int32_t accepted, int32_t rescued = 0, int32_t relaxed = 0) {
  StepTrace s;
  s.drafter = "model";
  s.draft_size = drafted, s.accepted_length = accepted, s.rescued = rescued, s.relaxed = relaxed;
  s.draft_ms = 1.0, s.verify_ms = 2.0, s.accept_ms = 0.5;
  s.lossless = rescued + relaxed == 0;
  return s;
}

TraceRequest request(int64_t index, const std::string& item, const std::string& category, int tokens, double wall_ms,
                     const std::string& hash) {
  TraceRequest q;
  q.info = RequestInfo{index, item, category, 10};
  q.outcome.output_tokens.assign(tokens, 7);
  q.outcome.wall_ms = wall_ms;
  q.output_hash = hash;
  return q;
}

TraceRunData run(int64_t id, const std::string& method, const std::string& options = R"({"temperature":0})") {
  TraceRunData r;
  r.run.id = id;
  r.run.info.method = method;
  r.run.info.command_line = "specd bench --methods sd";
  r.run.info.options_json = options;
  return r;
}

void add_request(TraceRunData& r, const TraceRequest& q, const std::vector<StepTrace>& steps) {
  r.requests.push_back(q);
  for (size_t i = 0; i < steps.size(); ++i) r.steps.push_back({q.info.index, static_cast<int64_t>(i), q.info.workload, q.info.category, steps[i]});
}

// ar and sd over two items: item a (qa) and b (math). Hand-computed numbers in the tests below.
TraceFile two_runs() {
  TraceFile f{"/tmp/two.sqlite", {}};
  TraceRunData ar = run(1, "ar");
  add_request(ar, request(0, "a", "qa", 11, 100.0, "h1"), {});
  add_request(ar, request(1, "b", "math", 7, 50.0, "h2"), {});
  TraceRunData sd = run(2, "sd");
  add_request(sd, request(0, "a", "qa", 11, 50.0, "h1"), {step(4, 4), step(4, 1), step(4, 0), step(2, 2)});
  add_request(sd, request(1, "b", "math", 7, 40.0, "hX"), {step(3, 3, 1, 0), step(4, 2, 0, 1)});
  f.runs = {ar, sd};
  return f;
}

const Table* find_table(const std::vector<Block>& blocks, const std::string& caption_start) {
  for (const Block& b : blocks) {
    if (const Table* t = std::get_if<Table>(&b); t && t->caption.rfind(caption_start, 0) == 0) return t;
    if (const Chart* c = std::get_if<Chart>(&b); c && c->table.caption.rfind(caption_start, 0) == 0) return &c->table;
  }
  FAIL("no table captioned " << caption_start);
  return nullptr;
}

json find_row(const Table& t, const json& match) {
  for (const json& row : t.rows) {
    bool ok = true;
    for (const auto& [k, v] : match.items()) ok = ok && row.contains(k) && row[k] == v;
    if (ok) return row;
  }
  FAIL("no row " << match.dump() << " in " << t.caption);
  return {};
}

std::vector<std::string> texts(const std::vector<Block>& blocks, Tone tone) {
  std::vector<std::string> out;
  for (const Block& b : blocks)
    if (const Paragraph* p = std::get_if<Paragraph>(&b); p && p->tone == tone) out.push_back(p->text);
  return out;
}

bool any_starts(const std::vector<std::string>& lines, const std::string& prefix) {
  for (const auto& l : lines)
    if (l.rfind(prefix, 0) == 0) return true;
  return false;
}

}  // namespace

TEST_CASE("deployment: per-position acceptance, histogram, MAT, time split, exact match and rates by hand", "[report][deploy]") {
  ReportInputs in;
  in.traces = {two_runs()};
  const Section s = deployment_section(in);
  REQUIRE(s.id == "deployment");

  // Positions: reach = min(drafted, accepted + 1) per step; d=1: 6 steps, 5 accepted; d=2: 5, 4;
  // d=3: 3, 2; d=4: 1, 1.
  const Table& pos = *find_table(s.blocks, "Acceptance per draft position, overall");
  const int64_t reached[] = {6, 5, 3, 1}, accepted[] = {5, 4, 2, 1};
  for (int d = 1; d <= 4; ++d) {
    const json row = find_row(pos, {{"method", "sd"}, {"position", d}});
    CHECK(row["reached"] == reached[d - 1]);
    CHECK(row["accepted"] == accepted[d - 1]);
    CHECK(row["rate"].get<double>() == Approx(100.0 * accepted[d - 1] / reached[d - 1]));
    const Interval w = wilson_interval(accepted[d - 1], reached[d - 1]);
    CHECK(row["low"].get<double>() == Approx(100.0 * w.low));
  }
  CHECK(pos.rows.size() == 4);
  // Per category: qa's steps (4,4) (4,1) (4,0) (2,2): d=1 3/4, d=2 2/3, d=3 1/1.
  const json qa = find_row(*find_table(s.blocks, "Acceptance per draft position and category"), {{"method", "sd"}, {"category", "qa"}});
  CHECK(qa["p1"].get<double>() == Approx(75.0));
  CHECK(qa["p2"].get<double>() == Approx(200.0 / 3));
  CHECK(qa["p3"].get<double>() == Approx(100.0));
  CHECK(qa["p5"].is_null());

  // Accepted lengths 4, 1, 0, 2, 3, 2 over 6 steps.
  const Table& hist = *find_table(s.blocks, "Accepted-length histogram");
  const int64_t counts[] = {1, 1, 2, 1, 1};
  for (int l = 0; l <= 4; ++l) {
    const json row = find_row(hist, {{"method", "sd"}, {"length", l}});
    CHECK(row["steps"] == counts[l]);
    CHECK(row["share"].get<double>() == Approx(100.0 * counts[l] / 6));
  }

  // MAT (no bench tally: traced steps): 18 tokens / 6 steps; qa 11/4, math 7/2. Acceptance 12/21.
  const Table& speed = *find_table(s.blocks, "Speed per method and category");
  const json overall = find_row(speed, {{"method", "sd"}, {"category", "overall"}});
  CHECK(overall["mat"].get<double>() == Approx(3.0));
  CHECK(overall["acceptance"].get<double>() == Approx(100.0 * 12 / 21));
  CHECK(overall["tokens_per_s"].get<double>() == Approx(18 * 1000.0 / 90));
  CHECK(find_row(speed, {{"method", "sd"}, {"category", "qa"}})["mat"].get<double>() == Approx(2.75));
  CHECK(find_row(speed, {{"method", "sd"}, {"category", "math"}})["mat"].get<double>() == Approx(3.5));

  // Time split: 6 steps of 1 / 2 / 0.5 ms over 2 requests of 90 ms wall in all.
  const Table& time = *find_table(s.blocks, "Time split per request, overall");
  CHECK(find_row(time, {{"method", "sd"}, {"part", "draft"}})["ms"].get<double>() == Approx(3.0));
  CHECK(find_row(time, {{"method", "sd"}, {"part", "verify"}})["ms"].get<double>() == Approx(6.0));
  CHECK(find_row(time, {{"method", "sd"}, {"part", "accept"}})["ms"].get<double>() == Approx(1.5));
  CHECK(find_row(time, {{"method", "sd"}, {"part", "other"}})["ms"].get<double>() == Approx(34.5));
  CHECK(find_row(time, {{"method", "sd"}, {"part", "verify"}})["share"].get<double>() == Approx(100.0 * 12 / 90));
  CHECK(find_row(time, {{"method", "ar"}, {"part", "other"}})["share"].get<double>() == Approx(100.0));

  // Exact match: item a's hash equals AR's, b's does not; 1 rescued and 1 relaxed of 18 tokens.
  const Table& quality = *find_table(s.blocks, "Drift and quality");
  const json q = find_row(quality, {{"method", "sd"}, {"category", "overall"}});
  CHECK(q["exact"] == "1/2");
  CHECK(q["exact_pct"].get<double>() == Approx(50.0));
  CHECK(q["rescued_pct"].get<double>() == Approx(100.0 / 18));
  CHECK(q["relaxed_pct"].get<double>() == Approx(100.0 / 18));
  CHECK(q["lossless"] == "no");
  CHECK(find_row(quality, {{"method", "sd"}, {"category", "qa"}})["exact"] == "1/1");
  CHECK(q["nll"].is_null());  // no bench tally in these requests
}

TEST_CASE("deployment: the traces' speedup and its interval are specd bench's on the same ratios", "[report][deploy]") {
  ReportInputs in;
  in.traces = {two_runs()};
  const Section s = deployment_section(in);
  const Table& speed = *find_table(s.blocks, "Speed per method and category");
  // Item a: (11/50) / (11/100) = 2; item b: (7/40) / (7/50) = 1.25.
  MeanAccumulator bench;
  bench.add(2.0), bench.add(1.25);
  const json row = find_row(speed, {{"method", "sd"}, {"category", "overall"}});
  CHECK(row["speedup"].get<double>() == Approx(1.625));
  CHECK(row["speedup_low"].get<double>() == Approx(bench.mean() - bench.ci95()));
  CHECK(row["speedup_high"].get<double>() == Approx(bench.mean() + bench.ci95()));
  CHECK(row["speedup_high"].get<double>() - row["speedup"].get<double>() == Approx(1.96 * 0.375));  // sd of {2, 1.25} / sqrt 2
  CHECK(find_row(speed, {{"method", "ar"}, {"category", "overall"}})["speedup"].get<double>() == Approx(1.0));
}

TEST_CASE("deployment: bench JSON rows carry its speedup and interval, quality and rates", "[report][deploy]") {
  ReportInputs in;
  json results = {{"ar", {{"overall", {{"prompts", 2}, {"mat", 1.0}, {"acceptance_rate", 0.0}, {"speedup", 1.0}, {"speedup_ci95", 0.0}}}}},
                  {"csd", {{"qa", {{"prompts", 2}, {"mat", 2.5}, {"acceptance_rate", 0.6}, {"tokens_per_s", 100.0}, {"speedup", 1.5},
                                   {"speedup_ci95", 0.25}, {"equal_to_ar", "1/2"}, {"exact_match_rate", 0.5}, {"nll_per_token", 1.25},
                                   {"chrf", 40.0}, {"rescued_per_token", 0.02}, {"relaxed_per_token", 0.0}}}}}};
  in.bench = {{"/tmp/b.json", {{"results", results}, {"lossless", {{"ar", true}, {"csd", false}}}}}};
  const Section s = deployment_section(in);
  const json row = find_row(*find_table(s.blocks, "Speed per method and category"), {{"method", "csd"}, {"category", "qa"}});
  CHECK(row["speedup_low"].get<double>() == Approx(1.25));
  CHECK(row["speedup_high"].get<double>() == Approx(1.75));
  CHECK(row["acceptance"].get<double>() == Approx(60.0));
  const json q = find_row(*find_table(s.blocks, "Drift and quality"), {{"method", "csd"}, {"category", "qa"}});
  CHECK(q["exact"] == "1/2");
  CHECK(q["nll"].get<double>() == Approx(1.25));
  CHECK(q["rescued_pct"].get<double>() == Approx(2.0));
  CHECK(q["lossless"] == "no");
  // No traces: the per-step parts say so instead of failing.
  CHECK(any_starts(texts(s.blocks, Tone::NotCalibrated), "no deploy traces given"));
}

TEST_CASE("deployment: no traces and no bench JSON give the not-given paragraph", "[report][deploy]") {
  const Section s = deployment_section(ReportInputs{});
  REQUIRE(s.blocks.size() == 1);
  CHECK(any_starts(texts(s.blocks, Tone::NotCalibrated), "no deploy traces or bench results given"));
  const auto drift = drift_acceptance_blocks(ReportInputs{});
  CHECK(any_starts(texts(drift, Tone::NotCalibrated), "not calibrated"));
}

TEST_CASE("deployment: a trace written by the sink reads back to the same numbers", "[report][deploy]") {
  const std::string path = (std::filesystem::temp_directory_path() / "specd_report_deploy_test.sqlite").string();
  std::filesystem::remove(path);
  {
    SqliteTraceSink sink(path);
    RunInfo ar_info, sd_info;
    ar_info.command_line = sd_info.command_line = "specd bench --methods sd";
    ar_info.target_model = sd_info.target_model = "m";
    ar_info.method = "ar", sd_info.method = "sd";
    ar_info.specd_version = sd_info.specd_version = "0";
    const int ar = sink.add_run(ar_info), sd = sink.add_run(sd_info);
    sink.write_requests({{ar, RequestRecord{{0, "a", "qa", 5}, {}, {std::vector<int32_t>(11, 3), 100.0, ""}}},
                         {sd, RequestRecord{{0, "a", "qa", 5}, {step(4, 4), step(4, 1), step(4, 0), step(2, 2)}, {std::vector<int32_t>(11, 3), 50.0, ""}}}});
    sink.finish_run(ar), sink.finish_run(sd);
  }
  ReportInputs in;
  in.traces = {read_trace_file(path)};
  const Section s = deployment_section(in);
  const json row = find_row(*find_table(s.blocks, "Speed per method and category"), {{"method", "sd"}, {"category", "qa"}});
  CHECK(row["mat"].get<double>() == Approx(2.75));
  CHECK(row["speedup"].get<double>() == Approx(2.0));
  CHECK(find_row(*find_table(s.blocks, "Drift and quality"), {{"method", "sd"}, {"category", "qa"}})["exact"] == "1/1");
  std::filesystem::remove(path);
}

TEST_CASE("deployment: the ratio interval is the t interval of the linearized residuals", "[report][deploy]") {
  // R = 15 / 30 = 0.5; residuals 0, 1, -1: s^2 = 1, se = sqrt(1 / 3) / 10; t(2) = 4.302653.
  const auto e = ratio_interval({{5, 10}, {6, 10}, {4, 10}});
  REQUIRE(e);
  REQUIRE(e->interval);
  CHECK(e->value == Approx(0.5));
  CHECK(e->interval->high - 0.5 == Approx(4.302653 * std::sqrt(1.0 / 3) / 10).epsilon(1e-6));
  CHECK_FALSE(ratio_interval({{5, 10}})->interval);
  CHECK_FALSE(ratio_interval({}));
}

namespace {

Artifact csd_artifact(int64_t accepted, int64_t drafted) {
  Artifact a;
  CsdCalibration csd;
  csd.provenance.temperature = 0;
  csd.provenance.options = {{"gamma", 4}};
  for (int i = 0; i < 2; ++i) {
    CalibratedPrompt p;
    p.index = i, p.id = "c" + std::to_string(i), p.category = "qa";
    p.accepted = accepted / 2, p.drafted = drafted / 2;
    csd.prompts.push_back(p);
  }
  a.csd = csd;
  return a;
}

// A run of `method` with 50 steps in category qa, each drafting 4 and accepting `accepted` of
// which `rescued` were rescued.
TraceFile deploy(const std::string& method, int32_t accepted, int32_t rescued) {
  TraceFile f{"/tmp/deploy.sqlite", {}};
  TraceRunData r = run(1, method);
  add_request(r, request(0, "a", "qa", 50 * (accepted + 1), 100.0, "h"), std::vector<StepTrace>(50, step(4, accepted, rescued)));
  f.runs = {r};
  return f;
}

}  // namespace

TEST_CASE("drift: CSD's lossless acceptance flags a disagreement beyond the Wilson intervals, not an agreement", "[report][deploy]") {
  ReportInputs in;
  in.artifact = csd_artifact(160, 200);  // 80%

  SECTION("deploy sd accepts 25%: DRIFT") {
    in.traces = {deploy("sd", 1, 0)};
    const auto blocks = drift_acceptance_blocks(in);
    CHECK(any_starts(texts(blocks, Tone::Flag), "DRIFT: sd lossless acceptance in qa"));
    const json row = find_row(*find_table(blocks, "CSD: lossless acceptance at deploy"), {{"run", "sd"}, {"category", "qa"}});
    CHECK(row["dep"].get<double>() == Approx(25.0));
    CHECK(row["cal"].get<double>() == Approx(80.0));
    CHECK(row["verdict"] == "DRIFT");
  }
  SECTION("deploy csd accepts 100% of which a quarter rescued: lossless 75%, agrees") {
    in.traces = {deploy("csd", 4, 1)};
    const auto blocks = drift_acceptance_blocks(in);
    CHECK(texts(blocks, Tone::Flag).empty());
    const json row = find_row(*find_table(blocks, "CSD: lossless acceptance at deploy"), {{"run", "csd"}, {"category", "qa"}});
    CHECK(row["dep"].get<double>() == Approx(75.0));
    CHECK(row["dep_counts"] == "150/200");
    CHECK(row["verdict"] == "agrees");
  }
  SECTION("no sd or csd run: nothing to compare") {
    in.traces = {deploy("pld", 1, 0)};
    const auto blocks = drift_acceptance_blocks(in);
    CHECK(any_starts(texts(blocks, Tone::NotCalibrated), "nothing to compare for CSD"));
  }
}

TEST_CASE("drift: a sweep's chosen run against the deploy's t interval", "[report][deploy]") {
  Artifact a;
  SweepCalibration sweep;
  sweep.family = "pld";
  sweep.provenance.temperature = 0;
  SweepRun chosen;
  chosen.index = 1;
  chosen.point = "tokens=5";
  SweepStats qa;
  qa.category = "qa", qa.prompts = 3, qa.acceptance = 0.5, qa.mat = 2.0;
  chosen.stats = {qa};
  sweep.runs = {chosen};
  sweep.chosen = 1;
  a.sweeps = {sweep};

  // Three requests of one step each drafting 10: accepted 5, 6, 4 (mean 50%) or 9, 8, 9.
  auto traces = [](std::vector<int32_t> accepted, const std::string& settings) {
    TraceFile f{"/tmp/pld.sqlite", {}};
    TraceRunData r = run(1, "pld", json{{"temperature", 0}, {"settings", settings}}.dump());
    for (size_t i = 0; i < accepted.size(); ++i)
      add_request(r, request(static_cast<int64_t>(i), "i" + std::to_string(i), "qa", 2, 10.0, "h"), {step(10, accepted[i])});
    f.runs = {r};
    return f;
  };
  ReportInputs in;
  in.artifact = a;
  const std::string settings = "tokens=5 (artifact (sweep run 1 of 3: 1.2x AR, fastest lossless))";

  in.traces = {traces({5, 6, 4}, settings)};
  auto blocks = drift_acceptance_blocks(in);
  const json agree = find_row(*find_table(blocks, "pld (sweep): acceptance and MAT"), {{"category", "qa"}, {"quantity", "acceptance (%)"}});
  CHECK(agree["deploy"].get<double>() == Approx(50.0));
  CHECK(agree["verdict"] == "agrees");
  CHECK(texts(blocks, Tone::Flag).empty());

  in.traces = {traces({9, 8, 9}, settings)};
  blocks = drift_acceptance_blocks(in);
  CHECK(any_starts(texts(blocks, Tone::Flag), "DRIFT: pld acceptance (%) in qa"));
  // MAT: 2 tokens per step in every request: equals calibration's 2.0, an interval of zero width.
  CHECK(find_row(*find_table(blocks, "pld (sweep): acceptance and MAT"), {{"quantity", "MAT (tokens/step)"}})["verdict"] == "agrees");

  in.traces = {traces({5, 6, 4}, "tokens=7 (option --tokens)")};
  blocks = drift_acceptance_blocks(in);
  CHECK(any_starts(texts(blocks, Tone::NotCalibrated), "nothing to compare for pld (sweep) against pld"));
}

// The report's list of sources says where each trace file's runs were measured (traces version 5).
TEST_CASE("deployment: a trace file's machine, from its runs' records", "[report][deploy]") {
  const auto machine = [](const std::string& cpu) {
    return nlohmann::json{{"cpu", cpu}, {"features", nlohmann::json::array()}, {"cache_level", 3}, {"cache_bytes", 33554432}, {"threads", 2}, {"device", "cpu"}}.dump();
  };
  TraceFile file{"t.sqlite", {}};
  for (int i = 0; i < 2; ++i) {
    TraceRunData run;
    run.run.info.machine_json = machine("AMD EPYC 9B14");
    file.runs.push_back(run);
  }
  CHECK(traces_machine_text(file) == "measured on AMD EPYC 9B14, 32 MiB L3, 2 threads");
  file.runs[1].run.info.machine_json.clear();
  CHECK(traces_machine_text(file) == "measured on AMD EPYC 9B14, 32 MiB L3, 2 threads; some runs do not say");
  file.runs[1].run.info.machine_json = machine("Intel(R) Xeon(R) Processor");
  CHECK(traces_machine_text(file) == "measured on 2 machines");
  for (TraceRunData& run : file.runs) run.run.info.machine_json.clear();
  CHECK(traces_machine_text(file).empty());
}
