// The report's ARC parts and the provenance section, on synthetic artifacts: the numbers of
// their tables against independent counts over the samples (brute force, the paper's formulas),
// the flags on constructed cases, and "not calibrated" where the artifact holds no ARC calibration.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <map>
#include <string>
#include <vector>

#include "analysis/sections.h"
#include "artifact_fixtures.h"
#include "stats/arc_fit.h"
#include "stats/intervals.h"

namespace specd {
namespace {

// A deploy audit holding only coverage rows (as audit_arc gives them).
ArcDeployAudit audit_of(std::vector<ArcAuditRow> rows) {
  ArcDeployAudit audit;
  audit.rows = std::move(rows);
  return audit;
}

using report::Block;
using report::Paragraph;
using report::ReportInputs;
using report::Table;
using report::Tone;

ReportInputs inputs_of(const Artifact& artifact) {
  ReportInputs in;
  in.artifact_dir = "art";
  in.artifact = artifact;
  return in;
}

// The table whose caption starts with `prefix`, standing alone or beside a chart.
const Table& table_titled(const std::vector<Block>& blocks, const std::string& prefix) {
  for (const Block& b : blocks) {
    const Table* t = std::get_if<Table>(&b);
    if (!t && std::get_if<report::Chart>(&b)) t = &std::get<report::Chart>(b).table;
    if (t && t->caption.rfind(prefix, 0) == 0) return *t;
  }
  FAIL("no table captioned \"" << prefix << "...\"");
  throw;  // not reached
}

std::vector<std::string> paragraphs(const std::vector<Block>& blocks, Tone tone) {
  std::vector<std::string> out;
  for (const Block& b : blocks)
    if (const Paragraph* p = std::get_if<Paragraph>(&b); p && p->tone == tone) out.push_back(p->text);
  return out;
}

bool any_starts_with(const std::vector<std::string>& texts, const std::string& prefix) {
  for (const std::string& t : texts)
    if (t.rfind(prefix, 0) == 0) return true;
  return false;
}

// A synthetic ARC calibration with enough samples for delta 0.01 (the fixture's rule "paper",
// buckets by depth, delta 0.25, every third prompt held out).
Artifact arc_artifact() {
  Artifact a = test::synthetic_artifact(150, 11);
  REQUIRE(a.arc);
  REQUIRE_FALSE(a.arc->constants.empty());
  REQUIRE_FALSE(a.arc->audit.empty());
  return a;
}

int64_t held_out_count(const ArcCalibration& arc) {
  int64_t n = 0;
  for (const ArcSample& s : arc.samples) n += s.held_out;
  return n;
}

TEST_CASE("report ARC coverage: per-group rows are audit_arc's and equal a brute-force count", "[report][arc]") {
  const Artifact a = arc_artifact();
  const ArcCalibration& arc = *a.arc;
  const report::Section s = report::arc_coverage_section(inputs_of(a));
  const Table& t = table_titled(s.blocks, "Held-out coverage of JS <= U_min per group");
  const std::vector<ArcAuditRow> audit = audit_arc(arc.samples, arc.constants, prompt_categories(arc.prompts));
  REQUIRE(t.rows.size() == audit.size());
  for (size_t i = 0; i < audit.size(); ++i) {
    const nlohmann::json& row = t.rows[i];
    INFO(row.dump());
    CHECK(row["kind"] == audit[i].group_kind);
    CHECK(row["group"] == audit[i].group);
    CHECK(row["samples"] == audit[i].samples);
    CHECK(row["covered"] == audit[i].covered);
    CHECK(row["coverage"].get<double>() == Approx(100 * audit[i].coverage));
    CHECK(row["cp_low"].get<double>() == Approx(100 * audit[i].cp_low));
    CHECK(row["cp_high"].get<double>() == Approx(100 * audit[i].cp_high));
    CHECK(row["target"].get<double>() == Approx(75.0));
  }
  // Brute force: each held-out sample under its bucket's constants, counted per category and depth.
  std::map<std::string, std::pair<int64_t, int64_t>> counts;  // label -> (samples, covered)
  const std::map<int32_t, std::string> category = prompt_categories(arc.prompts);
  for (const ArcSample& x : arc.samples) {
    if (!x.held_out) continue;
    const ArcConstants* c = &arc.constants[0];
    for (const ArcConstants& k : arc.constants)
      if (k.bucket == "depth=" + std::to_string(x.depth) && k.rank <= k.samples) c = &k;
    const double u_min = std::min(x.u_emb_raw == 0 ? 0 : c->c_s * x.u_emb_raw, x.u_logit_raw == 0 ? 0 : c->alpha_kappa * x.u_logit_raw);
    for (const std::string& label : {std::string("all"), "category " + category.at(x.prompt), "depth " + std::to_string(x.depth)}) {
      counts[label].first += 1;
      counts[label].second += x.js <= u_min;
    }
  }
  REQUIRE(counts.size() == t.rows.size());
  for (const nlohmann::json& row : t.rows) {
    const auto& [n, k] = counts.at(row["label"].get<std::string>());
    CHECK(row["samples"] == n);
    CHECK(row["covered"] == k);
    CHECK(row["wilson_low"].get<double>() == Approx(100 * wilson_interval(k, n).low));
    CHECK(row["wilson_high"].get<double>() == Approx(100 * wilson_interval(k, n).high));
  }
  CHECK(any_starts_with(paragraphs(s.blocks, Tone::Plain), "recomputed with audit_arc from the stored samples and constants: equal"));
  CHECK(any_starts_with(paragraphs(s.blocks, Tone::Plain), "recomputed from the stored samples: equal to the stored constants"));
  // Flags: exactly the groups whose whole Wilson interval lies below 1 - delta.
  int64_t below = 0;
  for (const ArcAuditRow& r : audit) below += r.samples > 0 && r.wilson_high < 1 - arc.delta;
  int64_t flagged = 0;
  for (const std::string& p : paragraphs(s.blocks, Tone::Flag)) flagged += p.rfind("BELOW 1 - delta", 0) == 0;
  CHECK(flagged == below);

  // Stored audit rows or constants that the samples do not give are flagged.
  Artifact tampered = a;
  tampered.arc->audit[0].covered += 1;
  tampered.arc->constants[0].tau_delta *= 1.5;
  const report::Section t2 = report::arc_coverage_section(inputs_of(tampered));
  CHECK(any_starts_with(paragraphs(t2.blocks, Tone::Flag), "recomputed with audit_arc from the stored samples and constants: DIFFERENT"));
  CHECK(any_starts_with(paragraphs(t2.blocks, Tone::Flag), "recomputed from the stored samples: DIFFERENT"));
}

TEST_CASE("report ARC coverage: the delta curve at the artifact's own delta is the stored audit", "[report][arc]") {
  const Artifact a = arc_artifact();
  const ArcCalibration& arc = *a.arc;
  const report::Section s = report::arc_coverage_section(inputs_of(a));
  const Table& curve = table_titled(s.blocks, "Held-out coverage when the constants are refitted at each delta");
  std::vector<double> deltas;
  for (const nlohmann::json& row : curve.rows) deltas.push_back(row["delta"].get<double>());
  CHECK(deltas == std::vector<double>{0.01, 0.02, 0.05, 0.1, 0.15, 0.2, 0.25, 0.3});  // 0.25: the artifact's own
  const nlohmann::json& own = curve.rows[6];
  const ArcAuditRow& stored = arc.audit.front();
  REQUIRE(stored.group_kind == "all");
  CHECK(own["samples"] == stored.samples);
  CHECK(own["covered"] == stored.covered);
  CHECK(own["coverage"].get<double>() == Approx(100 * stored.coverage));
  CHECK(own["wilson_low"].get<double>() == Approx(100 * stored.wilson_low));
  CHECK(own["cp_high"].get<double>() == Approx(100 * stored.cp_high));
  CHECK(own["tau_delta"].get<double>() == arc.constants.front().tau_delta);
  CHECK(own["nominal"].get<double>() == Approx(75.0));
  // Another delta: the paper's rule refitted by hand (ratios and tau_delta at that delta, depth buckets).
  const std::vector<ArcConstants> at10 = fit_arc_constants(arc.samples, 0.1, ArcBuckets{true, {}}, 0.1);
  int64_t covered = 0;
  for (const ArcSample& x : arc.samples)
    if (x.held_out) covered += x.js <= arc_bound(constants_for(at10, x.depth, x.root_entropy), x.u_emb_raw, x.u_logit_raw);
  CHECK(curve.rows[3]["covered"] == covered);
  CHECK(curve.rows[3]["samples"] == held_out_count(arc));

  // A calibration too small for delta 0.01 (fewer than 99 calibration samples) leaves that row empty.
  const Artifact small = test::synthetic_artifact(12, 7);
  REQUIRE_FALSE(small.arc->constants.empty());
  const report::Section s2 = report::arc_coverage_section(inputs_of(small));
  const Table& small_curve = table_titled(s2.blocks, "Held-out coverage when the constants are refitted at each delta");
  CHECK_FALSE(small_curve.rows[0].contains("coverage"));
  CHECK(small_curve.rows.back().contains("coverage"));
}

TEST_CASE("report ARC coverage: histograms hold every sample, the binding side is counted", "[report][arc]") {
  const Artifact a = arc_artifact();
  const ArcCalibration& arc = *a.arc;
  const report::Section s = report::arc_coverage_section(inputs_of(a));
  for (const char* name : {"u_emb_raw", "u_logit_raw", "JS(q, r)", "U_min"}) {
    const Table& h = table_titled(s.blocks, name);
    int64_t total = 0;
    for (const nlohmann::json& row : h.rows) total += row["samples"].get<int64_t>();
    CHECK(total == static_cast<int64_t>(arc.samples.size()));
  }
  int64_t logit = 0;
  for (const ArcSample& x : arc.samples) {
    if (!x.held_out) continue;
    const ArcConstants& c = constants_for(arc.constants, x.depth, x.root_entropy);
    logit += c.alpha_kappa * x.u_logit_raw < c.c_s * x.u_emb_raw;  // the fixture's raw bounds are positive
  }
  const Table& binds = table_titled(s.blocks, "Which bound is the smaller");
  CHECK(binds.rows[1]["samples"] == logit);
  CHECK(binds.rows[0]["samples"] == held_out_count(arc) - logit);
}

TEST_CASE("report ARC what-if: relaxable shares and coverage equal a brute-force count", "[report][arc]") {
  const Artifact a = arc_artifact();
  const ArcCalibration& arc = *a.arc;
  const std::vector<Block> blocks = report::what_if_arc_blocks(inputs_of(a));
  CHECK(any_starts_with(paragraphs(blocks, Tone::Plain), "Estimates from the stored held-out samples; no model run."));
  const Table& t = table_titled(blocks, "What-if grid");
  const std::vector<double> deltas = {0.01, 0.05, 0.1, 0.2, 0.25}, thetas = {0, 0.3, 0.5, 0.7, 0.9};
  REQUIRE(t.rows.size() == deltas.size() * thetas.size());
  const int64_t n = held_out_count(arc);
  size_t i = 0;
  for (double delta : deltas) {
    const std::vector<ArcConstants> c = fit_arc_constants(arc.samples, delta, ArcBuckets{true, {}}, delta);
    for (double theta : thetas) {
      const nlohmann::json& row = t.rows[i++];
      INFO("delta " << delta << " theta " << theta);
      CHECK(row["delta"].get<double>() == delta);
      CHECK(row["theta"].get<double>() == theta);
      int64_t relaxable = 0, covered = 0, bounded = 0;
      for (const ArcSample& x : arc.samples) {
        if (!x.held_out) continue;
        const ArcConstants& k = constants_for(c, x.depth, x.root_entropy);
        const double u = arc_bound(k, x.u_emb_raw, x.u_logit_raw);
        if (u > (1 - theta) * k.tau_delta) continue;  // the paper's form: accept when U <= (1 - theta) tau_delta
        ++relaxable;
        covered += x.js <= k.tau_delta;
        bounded += x.js <= u;
      }
      CHECK(row["relaxable_n"] == relaxable);
      CHECK(row["covered_n"] == covered);
      CHECK(row["bounded_n"] == bounded);
      CHECK(row["relaxable"].get<double>() == Approx(100.0 * relaxable / n));
      CHECK(row["relaxable_low"].get<double>() == Approx(100 * wilson_interval(relaxable, n).low));
      CHECK(row["coverage_high"].get<double>() == Approx(100 * wilson_interval(covered, relaxable).high));
    }
  }
  // Relaxing more as theta falls: the share never grows with theta.
  for (size_t r = 1; r < t.rows.size(); ++r)
    if (t.rows[r]["delta"] == t.rows[r - 1]["delta"]) CHECK(t.rows[r]["relaxable_n"] <= t.rows[r - 1]["relaxable_n"]);
}

// One arc run whose steps evaluated `evaluated` candidates, the first `eligible` of them at LTS
// 0.9 (relaxed), the others at -2; two more candidates equal to the target's top token (LTS 1)
// that the comparison leaves out.
report::TraceFile arc_trace(int64_t evaluated, int64_t eligible) {
  report::TraceRunData data;
  data.run.id = 3;
  data.run.info.method = "arc";
  data.run.info.command_line = "specd bench --methods arc";
  data.run.info.options_json = R"({"arc-theta": 0.3, "temperature": 1.0})";
  for (int64_t i = 0; i < evaluated + 2; ++i) {
    const bool same = i >= evaluated, ok = i < eligible;
    nlohmann::json node = {{"node", 1}, {"depth", 1}, {"token", same ? 7 : 8}, {"target", 7}, {"u_emb", 0.1}, {"u_logit", 0.2},
                           {"lts", same ? 1.0 : ok ? 0.9 : -2.0}, {"relaxed", same || ok}};
    StepTraceRow step;
    step.request = 0;
    step.step = i;
    step.record.detail = parse_step_detail(nlohmann::json{{"acceptance", {{"lts", {node}}}}}.dump(), "test");
    data.steps.push_back(step);
  }
  data.steps.push_back(StepTraceRow{});  // a step without detail
  return {"deploy.sqlite", {data}};
}

TEST_CASE("report ARC drift: flags on disjoint intervals, none on equal ones", "[report][arc]") {
  const Artifact a = arc_artifact();
  const ArcCalibration& arc = *a.arc;
  const std::vector<ArcAuditRow> held = audit_arc(arc.samples, arc.constants, prompt_categories(arc.prompts));
  auto drift_flags = [](const std::vector<Block>& blocks) {
    std::vector<std::string> out;
    for (const std::string& p : paragraphs(blocks, Tone::Flag))
      if (p.rfind("DRIFT: ", 0) == 0) out.push_back(p);
    return out;
  };

  SECTION("coverage at deploy") {
    ReportInputs in = inputs_of(a);
    in.traces.push_back({"deploy.sqlite", {}});
    in.arc_deploy_note = "1 arc runs audited";
    // Equal to the held-out rows: no interval is disjoint; a group whose whole interval lies below
    // 1 - delta is flagged at deploy as it is in the held-out table (this fixture's coverage is random).
    in.arc_deploy_audit = audit_of(held);
    std::vector<Block> blocks = report::drift_coverage_blocks(in);
    int64_t below = 0;
    for (const ArcAuditRow& r : held) below += r.samples > 0 && r.wilson_high < 1 - arc.delta;
    std::vector<std::string> flags = drift_flags(blocks);
    CHECK(static_cast<int64_t>(flags.size()) == below);
    for (const std::string& f : flags) CHECK(f.find("wholly below 1 - delta") != std::string::npos);
    const Table& t = table_titled(blocks, "Coverage of JS <= U_min: held-out samples");
    CHECK(t.rows.size() == 2 * held.size());
    CHECK(t.rows[0]["split"] == "held-out");
    CHECK(t.rows[1]["split"] == "deploy");
    CHECK(t.rows[1]["covered"] == held[0].covered);
    CHECK(t.rows[1]["coverage_low"].get<double>() == Approx(100 * held[0].wilson_low));

    // The same proportions at a delta every group reaches: no flag at all.
    Artifact lenient = a;
    lenient.arc->delta = 0.9;
    ReportInputs in_lenient = inputs_of(lenient);
    in_lenient.traces = in.traces;
    in_lenient.arc_deploy_audit = audit_of(held);
    const std::vector<Block> quiet = report::drift_coverage_blocks(in_lenient);
    CHECK(drift_flags(quiet).empty());
    CHECK(any_starts_with(paragraphs(quiet, Tone::Plain), "no drift: "));

    // Deploy covers 100 of 1000 overall: disjoint from the held-out interval.
    ArcAuditRow bad = held.front();
    bad.samples = 1000, bad.covered = 100, bad.coverage = 0.1;
    in.arc_deploy_audit = audit_of({bad});
    blocks = report::drift_coverage_blocks(in);
    flags = drift_flags(blocks);
    REQUIRE(flags.size() == 1);
    CHECK(flags[0].find("all at deploy covers 10.0%") != std::string::npos);
    CHECK(flags[0].find("disjoint") != std::string::npos);

    // No deploy audit: the note says why, nothing is flagged.
    in.arc_deploy_audit.reset();
    in.arc_deploy_note = "--no-model: deploy coverage not measured";
    blocks = report::drift_coverage_blocks(in);
    CHECK(any_starts_with(paragraphs(blocks, Tone::Plain), "no deploy coverage: --no-model"));
  }

  SECTION("relaxable rate at deploy against the calibration's prediction") {
    int64_t n = 0, predicted = 0;
    for (const ArcSample& x : arc.samples) {
      if (!x.held_out) continue;
      const ArcConstants& k = constants_for(arc.constants, x.depth, x.root_entropy);
      ++n;
      predicted += arc_bound(k, x.u_emb_raw, x.u_logit_raw) <= 0.7 * k.tau_delta;
    }
    REQUIRE(predicted > n / 10);
    ReportInputs in = inputs_of(a);
    in.traces.push_back(arc_trace(n, predicted));  // the same share as predicted
    std::vector<Block> blocks = report::drift_coverage_blocks(in);
    CHECK(drift_flags(blocks).empty());
    const Table& t = table_titled(blocks, "Relaxable candidates at deploy");
    REQUIRE(t.rows.size() == 1);
    CHECK(t.rows[0]["evaluated"] == n);  // the two equal to the top token are left out
    CHECK(t.rows[0]["held_out"] == n);
    CHECK(t.rows[0]["theta"].get<double>() == 0.3);
    CHECK(t.rows[0]["theta_source"] == "run options");
    CHECK(t.rows[0]["deploy"].get<double>() == Approx(100.0 * predicted / n));
    CHECK(t.rows[0]["predicted"].get<double>() == Approx(100.0 * predicted / n));
    CHECK(t.rows[0]["relaxed"].get<double>() == Approx(100.0 * predicted / n));

    in.traces = {arc_trace(500, 0)};  // nothing relaxable at deploy
    blocks = report::drift_coverage_blocks(in);
    REQUIRE(drift_flags(blocks).size() == 1);
    CHECK(drift_flags(blocks)[0].find("deploy.sqlite #3 (arc, theta 0.3) found 0.0%") != std::string::npos);

    // An artifact threshold decides theta when the run did not type --arc-theta.
    Artifact with_theta = a;
    with_theta.thresholds.push_back({"arc", "theta", 0.95, "test"});
    ReportInputs in2 = inputs_of(with_theta);
    in2.traces = {arc_trace(n, predicted)};
    const std::vector<Block> blocks2 = report::drift_coverage_blocks(in2);
    const Table& t2 = table_titled(blocks2, "Relaxable candidates at deploy");
    CHECK(t2.rows[0]["theta"].get<double>() == 0.95);
    CHECK(t2.rows[0]["deploy"].get<double>() == Approx(0.0));  // LTS 0.9 < 0.95

    // What the run recorded it deployed decides, whatever artifact the report is given.
    report::TraceFile recorded = arc_trace(n, predicted);
    recorded.runs[0].run.info.options_json = R"j({"arc-theta": 0.3, "deployed": {"theta": {"value": 0.5, "source": "artifact (sweep)"}}})j";
    in2.traces = {recorded};
    const std::vector<Block> blocks3 = report::drift_coverage_blocks(in2);
    const Table& t3 = table_titled(blocks3, "Relaxable candidates at deploy");
    CHECK(t3.rows[0]["theta"].get<double>() == 0.5);
    CHECK(t3.rows[0]["theta_source"] == "artifact (sweep)");
  }

  SECTION("no traces") {
    const std::vector<Block> blocks = report::drift_coverage_blocks(inputs_of(a));
    CHECK(any_starts_with(paragraphs(blocks, Tone::Plain), "no deploy traces given"));
    CHECK(drift_flags(blocks).empty());
  }
}

TEST_CASE("report ARC parts: an artifact without ARC calibration says not calibrated", "[report][arc]") {
  Artifact a = test::synthetic_artifact(12, 7);
  a.arc.reset();
  for (const Artifact& artifact : {a, [&] {
                                     Artifact shard = test::synthetic_artifact(12, 7);
                                     shard.arc->constants.clear();  // a shard: samples, no constants
                                     shard.arc->audit.clear();
                                     return shard;
                                   }()}) {
    ReportInputs in = inputs_of(artifact);
    in.traces.push_back(arc_trace(3, 1));
    in.arc_deploy_note = "the artifact holds no ARC-Decode calibration";
    const report::Section coverage = report::arc_coverage_section(in);
    const std::vector<Block> drift = report::drift_coverage_blocks(in), what_if = report::what_if_arc_blocks(in);
    for (const std::vector<Block>* blocks : {&coverage.blocks, &drift, &what_if}) {
      const std::vector<std::string> nc = paragraphs(*blocks, Tone::NotCalibrated);
      REQUIRE(nc.size() == 1);
      CHECK(nc[0].rfind("not calibrated: ", 0) == 0);
      CHECK(paragraphs(*blocks, Tone::Flag).empty());
    }
    CHECK(paragraphs(coverage.blocks, Tone::NotCalibrated)[0].find(artifact.arc ? "specd artifact merge" : "specd calibrate arc") !=
          std::string::npos);
  }
}

// Every "field" a chart's specification names, at any depth.
void spec_fields(const nlohmann::json& spec, std::vector<std::string>& out) {
  if (spec.is_object()) {
    for (const auto& [key, value] : spec.items()) {
      if (key == "field" && value.is_string()) out.push_back(value);
      spec_fields(value, out);
    }
  } else if (spec.is_array()) {
    for (const nlohmann::json& v : spec) spec_fields(v, out);
  }
}

TEST_CASE("report ARC parts: every chart draws columns of its own table and carries no data", "[report][arc]") {
  const Artifact a = arc_artifact();
  ReportInputs in = inputs_of(a);
  in.traces.push_back(arc_trace(40, 20));
  in.arc_deploy_audit = audit_of(audit_arc(a.arc->samples, a.arc->constants, prompt_categories(a.arc->prompts)));
  std::vector<Block> blocks = report::arc_coverage_section(in).blocks;
  for (std::vector<Block> part : {report::drift_coverage_blocks(in), report::what_if_arc_blocks(in)})
    blocks.insert(blocks.end(), part.begin(), part.end());
  int charts = 0;
  for (const Block& b : blocks) {
    const report::Chart* chart = std::get_if<report::Chart>(&b);
    if (!chart) continue;
    ++charts;
    INFO(chart->title);
    CHECK_FALSE(chart->title.empty());
    CHECK_FALSE(chart->spec.contains("data"));
    CHECK_FALSE(chart->table.rows.empty());
    std::vector<std::string> fields;
    spec_fields(chart->spec, fields);
    for (const std::string& f : fields) {
      bool column = false;
      for (const report::Column& c : chart->table.columns) column = column || c.field == f;
      CHECK(column);
      if (!column) WARN("field " << f << " is not a column");
    }
  }
  CHECK(charts == 9);  // coverage, delta curve, four histograms, deploy coverage, relaxable share, what-if
}

TEST_CASE("report provenance: the pair, verify's verdict, each calibration present and the thresholds", "[report][arc]") {
  Artifact a = test::synthetic_artifact(12, 7);
  SweepCalibration sweep;
  sweep.family = "pld";
  sweep.provenance = test::fake_provenance("sweep");
  sweep.provenance.shard_count = 2, sweep.provenance.shard_index = 1;
  a.sweeps.push_back(sweep);
  ReportInputs in = inputs_of(a);
  report::Section s = report::provenance_section(in);
  const Table& pair = table_titled(s.blocks, "The pair's fingerprints");
  REQUIRE(pair.rows.size() == 2);
  CHECK(pair.rows[0]["role"] == "target");
  CHECK(pair.rows[0]["config"] == a.target.config_sha256.substr(0, 12));
  CHECK(pair.rows[1]["vocab"] == 4096);
  const Table& made = table_titled(s.blocks, "How each calibration was made");
  std::vector<std::string> names;
  for (const nlohmann::json& row : made.rows) names.push_back(row["calibration"]);
  CHECK(names == std::vector<std::string>{"csd", "sam_corpus", "arc", "sweep pld"});
  CHECK(made.rows[0]["seed"] == "18446744073709551557");
  CHECK(made.rows[0]["command"] == a.csd->provenance.command_line);
  CHECK(made.rows[0]["prompts_sha256"] == a.csd->provenance.prompts_sha256.substr(0, 12));
  CHECK(made.rows[2]["temperature"].get<double>() == 1.0);
  CHECK(made.rows[3]["shard"] == "shard 1 of 2");
  const Table& options = table_titled(s.blocks, "Each calibration's options and counts");
  CHECK(nlohmann::json::parse(options.rows[0]["options"].get<std::string>()) == a.csd->provenance.options);
  CHECK(nlohmann::json::parse(options.rows[2]["counts"].get<std::string>()) == a.arc->provenance.counts);
  const Table& thresholds = table_titled(s.blocks, "Thresholds the artifact deploys");
  REQUIRE(thresholds.rows.size() == 2);
  CHECK(thresholds.rows[0]["policy"] == "csd");
  CHECK(thresholds.rows[0]["value"].get<double>() == 6.0);
  CHECK(any_starts_with(paragraphs(s.blocks, Tone::Plain), "verified: "));
  CHECK(paragraphs(s.blocks, Tone::Flag).empty());

  in.verify_problems = {"art/calibration.sqlite: sha256 differs from the manifest", "art/manifest.json: counts differ"};
  s = report::provenance_section(in);
  const std::vector<std::string> flags = paragraphs(s.blocks, Tone::Flag);
  REQUIRE(flags.size() == 3);
  CHECK(flags[0].rfind("NOT VERIFIED", 0) == 0);
  CHECK(flags[1] == in.verify_problems[0]);
  CHECK(flags[2] == in.verify_problems[1]);

  Artifact bare = a;
  bare.csd.reset(), bare.sam_corpus.reset(), bare.arc.reset(), bare.sweeps.clear(), bare.thresholds.clear();
  s = report::provenance_section(inputs_of(bare));
  CHECK(paragraphs(s.blocks, Tone::NotCalibrated).size() == 1);
}

}  // namespace
TEST_CASE("report ARC coverage: a gate chosen on deploy sites is shown with the theta it deployed", "[report][arc]") {
  Artifact a = arc_artifact();
  a.arc->provenance.options.update({{"sites", "deploy"}, {"theta_grid", {0.9, 0.3}}, {"js_tolerance", 0.1}, {"risk", 0.1}, {"confidence", 0.95}});
  // Two deploy sites at theta 0.3, both relaxed, one above the tolerance.
  for (double js : {0.05, 0.5}) {
    ArcSample s;
    s.prompt = a.arc->samples.front().prompt;
    s.depth = 1;
    s.target_token = 1;
    s.draft_token = 2;
    s.js = js;
    s.deploy_site = s.relaxed = true;
    s.theta = 0.3;
    a.arc->samples.push_back(s);
  }
  fit_arc(*a.arc, ArcBuckets{}, "test");
  REQUIRE(a.arc->gate.size() == 2);
  const std::vector<Block> blocks = report::arc_coverage_section(inputs_of(a)).blocks;
  const Table& t = table_titled(blocks, "Learn-then-Test per theta");
  REQUIRE(t.rows.size() == 2);
  CHECK(t.rows[1]["theta"] == 0.3);
  CHECK(t.rows[1]["relaxed"] == 2);
  CHECK(t.rows[1]["misses"] == 1);
  CHECK(t.rows[1]["valid"] == "no");
  const std::vector<std::string> flagged = paragraphs(blocks, Tone::Flag);
  CHECK(std::any_of(flagged.begin(), flagged.end(), [](const std::string& p) { return p.rfind("deployed theta 2: ", 0) == 0; }));
}

}  // namespace specd
