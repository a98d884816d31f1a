// The report's verdict section on hand-made inputs: one row per deployed method with its speed
// over AR and over its paper's baseline from the same bench file, the contract its thresholds were
// chosen under, what the deploy run showed, the command that reproduces it; DRIFT and SLOWER THAN
// AR lines where the numbers say so, and none where they do not.
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "analysis/sections.h"

using namespace specd;
using namespace specd::report;
using nlohmann::json;

namespace {

json overall(double speedup, double half, double nll, const std::string& equal, double exact) {
  return {{"overall", {{"speedup", speedup}, {"speedup_ci95", half}, {"nll_per_token", nll}, {"equal_to_ar", equal}, {"exact_match_rate", exact}}}};
}

const Table& verdict_table(const Section& s) {
  for (const Block& b : s.blocks)
    if (const Table* t = std::get_if<Table>(&b)) return *t;
  FAIL("no table");
  throw 0;
}

std::vector<std::string> flags(const Section& s) {
  std::vector<std::string> out;
  for (const Block& b : s.blocks)
    if (const Paragraph* p = std::get_if<Paragraph>(&b); p && p->tone == Tone::Flag) out.push_back(p->text);
  return out;
}

}  // namespace

TEST_CASE("report verdict: speed over AR and the baseline, the contract, deploy drift, the command", "[report]") {
  ReportInputs in;
  in.artifact_dir = "artifacts/pair";
  SweepCalibration sweep;
  sweep.family = "csd";
  sweep.lossless = false;
  sweep.confidence = 0.95;
  sweep.planned_runs = 4;
  sweep.max_nll_increase = 0.05;
  sweep.chosen = 2;
  sweep.choice = "sweep run 2 of 4: 1.30x AR, fastest within the contract";
  in.artifact.sweeps.push_back(sweep);

  BenchFile b;
  b.path = "t0.json";
  b.json = {{"temperature", 0}, {"max_prompts", 20}, {"repeats", 1}, {"draft_budget", "auto"},
            {"lossless", {{"ar", true}, {"sd", true}, {"csd", false}}},
            {"results", {{"ar", overall(1, 0, 2.00, "20/20", 1)}, {"sd", overall(1.25, 0.05, 2.00, "20/20", 1)},
                         {"csd", overall(1.50, 0.10, 2.02, "15/20", 0.75)}}}};
  in.bench.push_back(b);

  Section s = verdict_section(in);
  const Table& t = verdict_table(s);
  REQUIRE(t.rows.size() == 2);  // ar is the reference, not a row
  const json& csd = t.rows[0]["method"] == "csd" ? t.rows[0] : t.rows[1];
  CHECK(csd["kind"] == "LOSSY");
  CHECK(csd["baseline"] == "sd");
  // No paired ratio in this bench file: the ratio of the two means, without an interval.
  CHECK(csd["over_baseline"].get<double>() == Approx(1.2));
  CHECK(csd["over_baseline_low"].is_null());
  CHECK(csd["speedup_low"].get<double>() == Approx(1.4));
  CHECK(csd["contract"].get<std::string>().find("NLL/token at most 0.05 nats over AR") == 0);
  CHECK(csd["contract"].get<std::string>().find("sweep run 2 of 4") != std::string::npos);
  CHECK(csd["deploy"] == "NLL/token +0.020 over AR; 25.0% of outputs differ from AR's");
  CHECK(csd["command"] == "specd bench --methods sd,csd --artifact artifacts/pair --temperature 0 --max-prompts 20 --repeats 1 --draft-budget auto");
  CHECK(flags(s).empty());

  SECTION("a bench file with the paired ratio: it and its interval, not the ratio of means") {
    in.bench[0].json["results"]["csd"]["overall"]["over_baseline"] = 1.10;
    in.bench[0].json["results"]["csd"]["overall"]["over_baseline_ci95"] = 0.04;
    const Section with_pairs = verdict_section(in);
    const Table& paired = verdict_table(with_pairs);
    const json& row = paired.rows[0]["method"] == "csd" ? paired.rows[0] : paired.rows[1];
    CHECK(row["over_baseline"].get<double>() == Approx(1.10));
    CHECK(row["over_baseline_low"].get<double>() == Approx(1.06));
    CHECK(row["over_baseline_high"].get<double>() == Approx(1.14));
  }
  SECTION("outside the contract at deploy, and slower than AR") {
    in.bench[0].json["results"]["csd"] = overall(0.80, 0.05, 2.10, "10/20", 0.5);
    s = verdict_section(in);
    const std::vector<std::string> f = flags(s);
    REQUIRE(f.size() == 2);
    CHECK(f[0] == "DRIFT: csd at deploy is outside its contract: NLL/token +0.100 over AR; 50.0% of outputs differ from AR's");
    CHECK(f[1] == "SLOWER THAN AR: csd runs at 0.80x AR (95% interval up to 0.85x)");
  }
  SECTION("no bench results: says so") {
    in.bench.clear();
    s = verdict_section(in);
    REQUIRE(s.blocks.size() == 1);
    CHECK(std::get<Paragraph>(s.blocks[0]).tone == Tone::NotCalibrated);
  }
}
