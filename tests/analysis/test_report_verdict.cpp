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

// An artifact whose csd thresholds a sweep chose (run 2 of 4) under an NLL contract.
ReportInputs csd_deployment() {
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
  return in;
}

std::vector<std::string> flags(const Section& s) {
  std::vector<std::string> out;
  for (const Block& b : s.blocks)
    if (const Paragraph* p = std::get_if<Paragraph>(&b); p && p->tone == Tone::Flag) out.push_back(p->text);
  return out;
}

}  // namespace

TEST_CASE("report verdict: speed over AR and the baseline, the contract, deploy drift, the command", "[report]") {
  ReportInputs in = csd_deployment();

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
  SECTION("a variant of a method: against the baseline the bench paired it with, its plain method") {
    in.bench[0].json["lossless"]["csd:lambda=24"] = false;
    in.bench[0].json["results"]["csd:lambda=24"] = overall(1.56, 0.10, 2.01, "18/20", 0.9);
    in.bench[0].json["results"]["csd:lambda=24"]["overall"]["over_baseline"] = 1.04;
    in.bench[0].json["results"]["csd:lambda=24"]["overall"]["over_baseline_ci95"] = 0.02;
    in.bench[0].json["baselines"] = {{"csd", "sd"}, {"csd:lambda=24", "csd"}};
    const Section with_variant = verdict_section(in);
    const Table& rows = verdict_table(with_variant);
    REQUIRE(rows.rows.size() == 3);
    for (const json& row : rows.rows) {
      if (row["method"] == "csd") CHECK(row["baseline"] == "sd");
      if (row["method"] != "csd:lambda=24") continue;
      CHECK(row["baseline"] == "csd");
      CHECK(row["baseline_speedup"].get<double>() == Approx(1.50));
      CHECK(row["over_baseline"].get<double>() == Approx(1.04));
      CHECK(row["over_baseline_low"].get<double>() == Approx(1.02));
      CHECK(row["contract"] == "a variant: thresholds typed in --methods (not a contract)");
      CHECK(row["deploy"] == "NLL/token +0.010 over AR");
      CHECK(row["command"].get<std::string>().find("specd bench --methods csd,csd:lambda=24 ") == 0);
    }
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

namespace {

std::vector<std::string> plain(const Section& s) {
  std::vector<std::string> out;
  for (const Block& b : s.blocks)
    if (const Paragraph* p = std::get_if<Paragraph>(&b); p && p->tone == Tone::Plain) out.push_back(p->text);
  return out;
}

json machine(const std::string& cpu, int64_t cache_mib) {
  return {{"cpu", cpu}, {"features", {"avx2", "fma"}}, {"cache_level", 3}, {"cache_bytes", cache_mib << 20}, {"threads", 2}, {"device", "cpu"}};
}

}  // namespace

// Speedups of two machines do not compare, and a sweep's "fastest" is its machine's: the verdict
// says where each bench file was measured and flags a mix.
TEST_CASE("report verdict: the machine each bench file was measured on, a mix flagged, a sweep's other machine noted", "[report]") {
  ReportInputs in = csd_deployment();
  in.artifact.sweeps[0].provenance.machine = machine("AMD EPYC 9B14", 32);
  const json results = {{"ar", overall(1, 0, 2.00, "20/20", 1)}, {"sd", overall(1.25, 0.05, 2.00, "20/20", 1)},
                        {"csd", overall(1.50, 0.10, 2.00, "20/20", 1)}};
  in.bench.push_back(BenchFile{"t0.json", json{{"lossless", {{"sd", true}, {"csd", false}}}, {"results", results}, {"machine", machine("AMD EPYC 9B14", 32)}}});
  in.bench.push_back(BenchFile{"t1.json", json{{"results", json{{"ar", overall(1, 0, 2.00, "20/20", 1)}}}, {"machine", machine("AMD EPYC 9B14", 32)}}});

  Section s = verdict_section(in);
  CHECK(plain(s) == std::vector<std::string>{"Measured on AMD EPYC 9B14, 32 MiB L3, 2 threads (every bench file)."});
  CHECK(flags(s).empty());

  SECTION("another machine for one bench file: flagged, and the sweep's machine named") {
    in.bench[0].json["machine"] = machine("Intel(R) Xeon(R) Processor", 300);
    s = verdict_section(in);
    CHECK(flags(s) == std::vector<std::string>{
                          "MIXED MACHINES: the bench files were measured on different machines, so speedups from different files do not "
                          "compare: t0.json: Intel(R) Xeon(R) Processor, 300 MiB L3, 2 threads; t1.json: AMD EPYC 9B14, 32 MiB L3, 2 threads"});
    CHECK(plain(s) == std::vector<std::string>{
                          "csd's thresholds were chosen by a sweep measured on AMD EPYC 9B14, 32 MiB L3, 2 threads, and this run was measured "
                          "on Intel(R) Xeon(R) Processor, 300 MiB L3, 2 threads: its drift contract carries over, its choice of the fastest "
                          "point may not."});
  }
  SECTION("an older bench file first in the list, without a machine: the others still agree") {
    BenchFile old = in.bench[1];
    old.path = "old.json";
    old.json.erase("machine");
    in.bench.insert(in.bench.begin(), old);
    s = verdict_section(in);
    CHECK(flags(s).empty());
    CHECK(plain(s) == std::vector<std::string>{"Measured on: t0.json: AMD EPYC 9B14, 32 MiB L3, 2 threads; t1.json: AMD EPYC 9B14, 32 MiB L3, 2 threads.",
                                               "The machine is not recorded in old.json (written by a specd before bench --json recorded "
                                               "it): compare its speedups only with its own."});
  }
  SECTION("a bench file that does not record its machine") {
    in.bench[1].json.erase("machine");
    s = verdict_section(in);
    CHECK(flags(s).empty());
    CHECK(plain(s) == std::vector<std::string>{"Measured on: t0.json: AMD EPYC 9B14, 32 MiB L3, 2 threads.",
                                               "The machine is not recorded in t1.json (written by a specd before bench --json recorded "
                                               "it): compare its speedups only with its own."});
  }
}
