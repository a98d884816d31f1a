// Parameter sweeps in the artifact (specd calibrate sweep): their runs and choice round-trip
// through the three files, version-2 artifacts (before sweeps) still read, the choice rule on
// hand-made runs (lossless: fastest; lossy: fastest within the NLL and chrF bounds, chrF only at
// T = 0; none when none qualifies), recomputed from what the reader returns, and shards merge
// into the whole sweep with the same choice.
#include <catch2/catch.hpp>

#include <functional>

#include <cmath>

#include "artifact/artifact_tables.h"
#include "artifact/manifest.h"
#include "artifact/verify.h"
#include "artifact_fixtures.h"
#include "calibrate/sweep_choice.h"
#include "io/hdf5_file.h"

namespace specd {
namespace {

// A run with an 'overall' row (and two categories whose numbers are the overall's, shifted).
SweepRun make_run(int32_t index, std::vector<double> values, double speedup, double nll, double ar_nll, double chrf) {
  SweepRun r;
  r.index = index;
  r.values = std::move(values);
  for (double v : r.values) r.point += (r.point.empty() ? "" : " ") + std::to_string(static_cast<int>(v));
  for (const char* category : {"code", "qa", "overall"}) {
    SweepStats s;
    s.category = category;
    s.prompts = category == std::string("overall") ? 6 : 3;
    s.new_tokens = 64 * s.prompts;
    s.equal_to_ar = chrf == 100 ? s.prompts : 1;
    s.mat = 1.5 + index * 0.125;
    s.acceptance = 0.25 + index / 64.0;
    s.tokens_per_s = 100 * speedup;
    s.ar_tokens_per_s = 100;
    s.speedup = speedup + (category == std::string("overall") ? 0 : 0.01);
    s.speedup_ci95 = 0.03125;
    s.decode_speedup = speedup * 1.1;
    s.relaxed_per_token = 0.0625 * index;
    s.rescued_per_token = 0;
    s.nll_per_token = nll;
    s.ar_nll_per_token = ar_nll;
    s.chrf_vs_ar = chrf;
    s.nll_increase_mean = nll - ar_nll + 0.001;
    s.nll_increase_sd = 0.0625;
    s.chrf_mean = chrf - 0.5;
    s.chrf_sd = 2.5;
    s.tv_mean = 0.015625 * index;
    s.tv_sd = 0.03125;
    r.stats.push_back(s);
  }
  r.cost_curve = {{1, 2.5}, {2, 2.75}, {4, 3.0 + index / 1024.0}};
  r.wall_s = 1.25 * (index + 1);
  return r;
}

// pld over tokens x match (2 x 2): run 0 the base, runs 1..4 the grid.
SweepCalibration make_sweep(bool lossless, double temperature = 0) {
  SweepCalibration s;
  s.provenance = test::fake_provenance("sweep");
  s.provenance.temperature = temperature;
  s.provenance.options = {{"family", "pld"}, {"grid", {{"tokens", {"5", "10"}}, {"match", {"earliest", "latest"}}}}, {"repeats", 1}};
  s.family = "pld";
  s.lossless = lossless;
  s.grid = {{"tokens", {5, 10}, {"5", "10"}}, {"match", {0, 1}, {"earliest", "latest"}}};
  s.planned_runs = 5;
  s.max_nll_increase = 0.05;
  s.min_chrf = 90;
  s.confidence = 0;  // the version-3 rule on point estimates, which the cases below pin; the contract's tests have their own
  //                   index  values   speedup  nll   ar_nll  chrF
  s.runs.push_back(make_run(0, {10, 0}, 1.20, 2.00, 2.00, 100));
  s.runs.push_back(make_run(1, {5, 0}, 1.10, 2.01, 2.00, 95));
  s.runs.push_back(make_run(2, {5, 1}, 1.50, 2.10, 2.00, 97));   // fastest, NLL +0.10
  s.runs.push_back(make_run(3, {10, 0}, 1.35, 2.04, 2.00, 85));  // chrF below 90
  s.runs.push_back(make_run(4, {10, 1}, 1.30, 2.05, 2.00, 92));  // NLL +0.05: on the bound
  s.provenance.counts = derived_counts(s);
  return s;
}

// Turns a written artifact without arrays into one of an older `version`: `sql` on its tables
// (what that version lacks), each file's version and the manifest's set to it, `edit` on the
// manifest, the digests resealed.
void as_version(const std::string& dir, int version, const std::string& sql, const std::function<void(nlohmann::json&)>& edit = {}) {
  {
    sqlite::Database db(dir + "/calibration.sqlite", sqlite::Database::Mode::ReadWriteCreate);
    db.exec(sql + " PRAGMA user_version = " + std::to_string(version) + "; VACUUM;");
  }
  {
    Hdf5File file = Hdf5File::create(dir + "/calibration.h5");
    file.write_root_attribute("schema_version", version);
    file.close();
  }
  test::edit_manifest(dir, [&](nlohmann::json& m) {
    m["schema_version"] = version;
    m["files"]["calibration.sqlite"]["schema_version"] = version;
    m["files"]["calibration.h5"]["schema_version"] = version;
    if (edit) edit(m);
  });
  test::reseal(dir);
}

Artifact with_sweep(const SweepCalibration& sweep) {
  Artifact a = test::synthetic_artifact();
  a.sweeps.push_back(sweep);
  return a;
}

}  // namespace

TEST_CASE("sweep choice: lossless takes the fastest run, ties go to the lower index", "[artifact][sweep]") {
  SweepCalibration s = make_sweep(/*lossless=*/true);
  SweepChoice c = choose_sweep_run(s);
  REQUIRE(c.run);
  CHECK(*c.run == 2);  // NLL and chrF do not bound a lossless family
  CHECK(c.reason == "sweep run 2 of 5: 1.50x AR, fastest lossless");
  s.runs[4].stats.back().speedup = 1.50;
  CHECK(*choose_sweep_run(s).run == 2);
  s.runs[1].stats.back().speedup = 1.60;
  CHECK(*choose_sweep_run(s).run == 1);
}

TEST_CASE("sweep choice: lossy takes the fastest run within the NLL and chrF bounds", "[artifact][sweep]") {
  SweepCalibration s = make_sweep(/*lossless=*/false);
  SweepChoice c = choose_sweep_run(s);
  REQUIRE(c.run);
  // Run 2 (NLL +0.10) and run 3 (chrF 85) are out; run 4 sits on the NLL bound (<=) and is the fastest left.
  CHECK(*c.run == 4);
  CHECK(c.reason == "sweep run 4 of 5: 1.30x AR, fastest within NLL/token at most 0.05 nats over AR, chrF vs AR at least 90");
  CHECK_FALSE(sweep_run_within_bounds(s, s.runs[2]));
  CHECK_FALSE(sweep_run_within_bounds(s, s.runs[3]));

  SECTION("a looser NLL bound admits run 2") {
    s.max_nll_increase = 0.2;
    CHECK(*choose_sweep_run(s).run == 2);
  }
  SECTION("at T > 0 chrF vs AR is not applied: run 3 qualifies") {
    s.provenance.temperature = 0.7;
    CHECK_FALSE(sweep_applies_chrf(s));
    const SweepChoice warm = choose_sweep_run(s);
    CHECK(*warm.run == 3);
    CHECK(warm.reason.find("chrF") == std::string::npos);
  }
  SECTION("none qualifies: no run, a reason, and the family's old rows go") {
    s.max_nll_increase = -1;  // every run drifts more than that
    Artifact a = with_sweep(s);
    a.thresholds.push_back({"pld", "max_ngram", 7, "sweep run 1 of 3: 1.10x AR, fastest lossless"});
    a.thresholds.push_back({"pld", "min_ngram", 2, "a user"});
    const SweepChoice none = apply_sweep_choice(a, a.sweeps.back());
    CHECK_FALSE(none.run);
    CHECK(none.reason == "no run of 5 stays within the bounds (NLL/token at most -1 nats over AR, chrF vs AR at least 90)");
    CHECK_FALSE(a.sweeps.back().chosen);
    CHECK(a.sweeps.back().choice == none.reason);
    // The earlier sweep's row goes (its runs are replaced); csd's rows and a row not from a sweep stay.
    REQUIRE(a.thresholds.size() == 3);
    CHECK(a.thresholds[2] == Threshold{"pld", "min_ngram", 2, "a user"});
  }
}

TEST_CASE("sweep choice: the chosen point replaces the family's thresholds, grid parameters only", "[artifact][sweep]") {
  Artifact a = with_sweep(make_sweep(/*lossless=*/true));
  a.thresholds.push_back({"pld", "max_ngram", 4, "sweep run 3 of 7: 1.20x AR, fastest lossless"});  // an earlier sweep's
  a.thresholds.push_back({"pld", "tokens", 7, "a user"});                                            // in the grid
  a.thresholds.push_back({"pld", "min_ngram", 2, "a user"});                                         // neither
  apply_sweep_choice(a, a.sweeps.back());
  CHECK(a.sweeps.back().chosen == 2);
  std::vector<Threshold> pld;
  for (const Threshold& t : a.thresholds)
    if (t.policy == "pld") pld.push_back(t);
  REQUIRE(pld.size() == 3);
  CHECK(pld[0] == Threshold{"pld", "min_ngram", 2, "a user"});
  CHECK(pld[1] == Threshold{"pld", "tokens", 5, "sweep run 2 of 5: 1.50x AR, fastest lossless"});
  CHECK(pld[2] == Threshold{"pld", "match", 1, "sweep run 2 of 5: 1.50x AR, fastest lossless"});
}

TEST_CASE("sweep artifact: runs, grid and choice round-trip, and the choice recomputes from what is read", "[artifact][sweep]") {
  test::ScopedTempDir tmp("sweep");
  const std::string dir = tmp.file("art");
  Artifact written = with_sweep(make_sweep(/*lossless=*/false));
  apply_sweep_choice(written, written.sweeps.back());
  std::sort(written.thresholds.begin(), written.thresholds.end(),
            [](const Threshold& x, const Threshold& y) { return std::tie(x.policy, x.name) < std::tie(y.policy, y.name); });
  write_artifact(dir, written);
  const Artifact read = read_artifact(dir);
  REQUIRE(read.sweeps.size() == 1);
  CHECK(read.sweeps[0].runs == written.sweeps[0].runs);
  CHECK(read.sweeps[0].grid == written.sweeps[0].grid);
  CHECK(read.sweeps[0] == written.sweeps[0]);
  CHECK(read.thresholds == written.thresholds);
  CHECK(read == written);
  CHECK(verify_artifact(dir, "", "") == std::vector<std::string>{});
  CHECK(ArtifactReader(dir).sweeps() == read.sweeps);

  // The choice is a function of the stored runs and settings.
  SweepCalibration again = read.sweeps[0];
  again.chosen.reset();
  again.choice.clear();
  Artifact recomputed = read;
  recomputed.thresholds.clear();
  apply_sweep_choice(recomputed, again);
  CHECK(again.chosen == read.sweeps[0].chosen);
  CHECK(again.choice == read.sweeps[0].choice);
  for (const Threshold& t : recomputed.thresholds)
    CHECK(std::find(read.thresholds.begin(), read.thresholds.end(), t) != read.thresholds.end());

  const nlohmann::json manifest = nlohmann::json::parse(test::read_text_file(dir + "/manifest.json"));
  CHECK(manifest["schema_version"] == kArtifactSchemaVersion);
  const nlohmann::json& entry = manifest["calibrations"]["sweep"]["pld"];
  CHECK(entry["chosen"] == 4);
  CHECK(entry["counts"]["runs"] == 5);
  CHECK(entry["planned_runs"] == 5);
  CHECK(ArtifactTables(dir + "/calibration.sqlite").sweep_families() == std::vector<std::string>{"pld"});

  SECTION("a new sweep of the family replaces the old one; other families stay") {
    Artifact next = read;
    SweepCalibration sam = make_sweep(true);
    sam.family = "sam";
    sam.provenance.options["family"] = "sam";
    next.sweeps.push_back(sam);
    write_artifact(dir, next);
    CHECK(read_artifact(dir).sweeps.size() == 2);
    CHECK(read_artifact(dir).sweeps[1].family == "sam");
  }
  SECTION("a chosen run the tables lack is refused") {
    test::edit_manifest(dir, [](nlohmann::json& m) {
      m["calibrations"]["sweep"]["pld"]["chosen"] = 3;
      m["calibrations"]["sweep"]["pld"]["counts"]["runs"] = 4;
    });
    { sqlite::Database db(dir + "/calibration.sqlite", sqlite::Database::Mode::ReadWriteCreate);
      db.exec("DELETE FROM sweep_categories WHERE run_index = 3; DELETE FROM sweep_runs WHERE run_index = 3"); }
    test::reseal(dir);
    CHECK(test::artifact_read_error(dir) == dir + "/manifest.json: calibrations.sweep.pld.chosen is run 3, which calibration.sqlite lacks");
  }
  SECTION("sweep runs the manifest does not list are refused") {
    test::edit_manifest(dir, [](nlohmann::json& m) { m["calibrations"].erase("sweep"); });
    CHECK(test::artifact_read_error(dir) == dir + "/calibration.sqlite: sweep runs of 'pld', which the manifest does not list");
  }
}

TEST_CASE("sweep artifact: a version-2 artifact (before sweeps) still reads, version 2 cannot hold a sweep", "[artifact][sweep]") {
  test::ScopedTempDir tmp("sweep");
  const std::string dir = tmp.file("art");
  Artifact v2;
  v2.created_at = "2026-11-22T12:00:00Z";
  v2.tool_version = "0.1.0";
  v2.git_commit = std::string(40, 'b');
  v2.target = test::fake_fingerprint("target");
  v2.thresholds = {{"csd", "lambda", 6, "paper default"}};
  write_artifact(dir, v2);
  as_version(dir, 2, "DROP TABLE arc_gate; DROP TABLE sweep_categories; DROP TABLE sweep_runs;");
  Artifact expected = v2;
  expected.schema_version = 2;
  CHECK(read_artifact(dir) == expected);
  CHECK(verify_artifact(dir, "", "").empty());
  CHECK(ArtifactReader(dir).sweeps().empty());
  CHECK(ArtifactReader(dir).thresholds() == v2.thresholds);

  SECTION("a version-2 manifest listing a sweep") {
    const std::string v3 = tmp.file("v3");
    write_artifact(v3, with_sweep(make_sweep(true)));
    test::edit_manifest(v3, [](nlohmann::json& m) { m["schema_version"] = 2; });
    CHECK(test::artifact_read_error(v3) == v3 + "/manifest.json: unknown calibration 'sweep' in schema version 2");
  }
}

TEST_CASE("sweep artifact: a version-4 artifact (no TV bound or per-prompt TV) still reads, as no TV bound", "[artifact][sweep]") {
  test::ScopedTempDir tmp("sweep");
  const std::string dir = tmp.file("art");
  SweepCalibration sweep = make_sweep(false, 0.7);
  sweep.max_tv = 0.05;
  Artifact v4;  // a sweep alone: no arrays to carry over
  v4.created_at = "2026-11-25T12:00:00Z";
  v4.tool_version = "0.1.0";
  v4.git_commit = std::string(40, 'c');
  v4.target = test::fake_fingerprint("target");
  v4.sweeps.push_back(sweep);
  write_artifact(dir, v4);
  as_version(dir, 4, "ALTER TABLE sweep_categories DROP COLUMN tv_mean; ALTER TABLE sweep_categories DROP COLUMN tv_sd;",
             [](nlohmann::json& m) { m["calibrations"]["sweep"]["pld"]["bounds"].erase("max_tv"); });
  CHECK(verify_artifact(dir, "", "").empty());
  const Artifact read = read_artifact(dir);
  REQUIRE(read.sweeps.size() == 1);
  CHECK(read.sweeps[0].max_tv == 1);
  for (const SweepRun& r : read.sweeps[0].runs)
    for (const SweepStats& st : r.stats) CHECK((st.tv_mean == 0 && st.tv_sd == 0));
}

TEST_CASE("sweep artifact: shards (runs index % N) merge into the whole sweep and choose as it does", "[artifact][sweep][merge]") {
  test::ScopedTempDir tmp("sweep");
  Artifact whole;
  whole.target = test::fake_fingerprint("target");
  whole.sweeps.push_back(make_sweep(/*lossless=*/false));
  apply_sweep_choice(whole, whole.sweeps.back());
  for (int32_t count : {2, 3}) {
    INFO(count << " shards");
    std::vector<Artifact> shards;
    std::vector<std::string> names;
    for (int32_t index = count - 1; index >= 0; --index) {
      Artifact shard = whole;
      shard.thresholds.clear();
      SweepCalibration& s = shard.sweeps.back();
      s.runs.clear();
      for (const SweepRun& r : whole.sweeps.back().runs)
        if (r.index % count == index) s.runs.push_back(r);
      s.provenance.shard_index = index;
      s.provenance.shard_count = count;
      s.provenance.counts = derived_counts(s);
      s.chosen.reset();
      s.choice = "a shard";
      const std::string dir = tmp.file("shard-" + std::to_string(index) + "-of-" + std::to_string(count));
      write_artifact(dir, shard);
      shards.push_back(read_artifact(dir));
      names.push_back(dir);
    }
    const Artifact merged = merge_artifacts(shards, names);
    REQUIRE(merged.sweeps.size() == 1);
    CHECK(merged.sweeps[0].runs == whole.sweeps[0].runs);
    CHECK(merged.sweeps[0].chosen == whole.sweeps[0].chosen);
    CHECK(merged.sweeps[0].choice == whole.sweeps[0].choice);
    CHECK(merged.thresholds == whole.thresholds);
    CHECK(merged.sweeps[0].provenance.shards.size() == static_cast<size_t>(count));
    write_artifact(tmp.file("merged"), merged);
    CHECK(read_artifact(tmp.file("merged")).sweeps[0].runs == whole.sweeps[0].runs);

    // A run found in two shards is refused.
    shards[1].sweeps[0].runs.push_back(shards[0].sweeps[0].runs.front());
    CHECK(test::merge_error(shards).find("is also in") != std::string::npos);
  }
}

TEST_CASE("sweep choice: the drift contract's tests, family-wise over the planned runs", "[artifact][sweep]") {
  // Five planned runs at 95%: each test at level 0.05 / 5 = 0.01. The t quantiles of 9 degrees of
  // freedom: t(0.995) = 3.2498355440153697 (p = 0.005), t(0.95) = 1.8331129326536335 (p = 0.05).
  SweepCalibration s = make_sweep(/*lossless=*/false);
  s.confidence = 0.95;
  s.max_changed = 1;
  auto set = [&](SweepRun& r, double nll_margin_in_se, double chrf_margin_in_se, int64_t changed) {
    SweepStats& o = r.stats.back();
    o.prompts = 10;
    o.equal_to_ar = 10 - changed;
    o.nll_increase_sd = 0.02;
    o.nll_increase_mean = s.max_nll_increase - nll_margin_in_se * 0.02 / std::sqrt(10.0);
    o.chrf_sd = 3;
    o.chrf_mean = s.min_chrf + chrf_margin_in_se * 3 / std::sqrt(10.0);
  };
  for (SweepRun& r : s.runs) set(r, 10, 10, 0);
  set(s.runs[2], 3.2498355440153697, 10, 0);  // the fastest: p(NLL) = 0.005, valid
  set(s.runs[3], 1.8331129326536335, 10, 0);  // p(NLL) = 0.05: not valid at 0.01
  set(s.runs[4], 10, 1.8331129326536335, 0);  // p(chrF) = 0.05: not valid
  const SweepRunTest t2 = sweep_run_test(s, s.runs[2]);
  CHECK(t2.level == Approx(0.01));
  CHECK(t2.p_nll == Approx(0.005).epsilon(1e-6));
  CHECK(t2.p_changed == 0);  // max_changed 1: not applied
  CHECK(t2.valid);
  CHECK(sweep_run_test(s, s.runs[3]).p_nll == Approx(0.05).epsilon(1e-9));
  CHECK_FALSE(sweep_run_within_bounds(s, s.runs[3]));
  CHECK(sweep_run_test(s, s.runs[4]).p_chrf == Approx(0.05).epsilon(1e-9));
  CHECK_FALSE(sweep_run_within_bounds(s, s.runs[4]));
  SweepChoice c = choose_sweep_run(s);
  REQUIRE(c.run);
  CHECK(*c.run == 2);
  CHECK(c.reason.find("95% confidence over the 5 planned runs") != std::string::npos);

  SECTION("exact match at T = 0: at most half the outputs changed, by the exact binomial") {
    s.max_changed = 0.5;
    // No output changed out of 10: p = 0.5^10 < 0.01; one changed: p = 11 / 1024 > 0.01.
    CHECK(sweep_run_test(s, s.runs[2]).p_changed == Approx(std::pow(0.5, 10)).epsilon(1e-12));
    CHECK(*choose_sweep_run(s).run == 2);
    set(s.runs[2], 3.2498355440153697, 10, 1);
    CHECK(sweep_run_test(s, s.runs[2]).p_changed == Approx(11.0 / 1024).epsilon(1e-12));
    CHECK(*choose_sweep_run(s).run == 0);  // runs 3 and 4 fail their tests: run 0 (1.20x) is the fastest left
  }
  SECTION("at T > 0 only the NLL test applies") {
    s.provenance.temperature = 0.7;
    CHECK(sweep_run_test(s, s.runs[4]).p_chrf == 0);
    CHECK(sweep_run_within_bounds(s, s.runs[4]));
  }
  SECTION("at T > 0 with a TV bound: the expected TV per token by a one-sided t-test") {
    s.provenance.temperature = 0.7;
    s.max_tv = 0.05;
    auto set_tv = [&](SweepRun& r, double margin_in_se) {
      SweepStats& o = r.stats.back();
      o.tv_sd = 0.04;
      o.tv_mean = s.max_tv - margin_in_se * 0.04 / std::sqrt(10.0);
    };
    for (SweepRun& r : s.runs) set_tv(r, 10);
    set_tv(s.runs[2], 1.8331129326536335);  // p(TV) = 0.05: not valid at 0.01
    CHECK(sweep_run_test(s, s.runs[2]).p_tv == Approx(0.05).epsilon(1e-9));
    CHECK_FALSE(sweep_run_within_bounds(s, s.runs[2]));
    // Neither chrF nor the NLL test applies with a TV bound at T > 0: run 3 (1.35x, p(NLL) 0.05) is the fastest left.
    CHECK(sweep_run_test(s, s.runs[3]).p_nll == 0);
    CHECK(*choose_sweep_run(s).run == 3);
    set_tv(s.runs[2], 3.2498355440153697);  // p(TV) = 0.005: valid
    CHECK(sweep_run_test(s, s.runs[2]).p_tv == Approx(0.005).epsilon(1e-6));
    CHECK(*choose_sweep_run(s).run == 2);
    CHECK(choose_sweep_run(s).reason.find("expected TV per token at most 0.05") != std::string::npos);
    s.provenance.temperature = 0;  // greedy: TV is not applied (chrF and exact match are)
    set_tv(s.runs[2], -5);
    CHECK(sweep_run_test(s, s.runs[2]).p_tv == 0);
  }
  SECTION("a run of one prompt cannot pass a t-test") {
    s.runs[2].stats.back().prompts = 1;
    CHECK(sweep_run_test(s, s.runs[2]).p_nll == 1);
    CHECK_FALSE(sweep_run_within_bounds(s, s.runs[2]));
  }
}

}  // namespace specd
