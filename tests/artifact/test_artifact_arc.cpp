// ARC-Decode's calibration in the per-pair artifact: samples and whitening in calibration.h5,
// constants and the held-out audit in calibration.sqlite, settings and the "all" constants in the
// manifest; round trips, stored order, refusals in one line, version-1 artifacts, merges of
// shards, the journal and `specd artifact inspect`'s summary.
#include <catch2/catch.hpp>

#include <algorithm>
#include <filesystem>
#include <sstream>

#include "artifact/artifact_arrays.h"
#include "artifact/artifact_reader.h"
#include "artifact/artifact_summary.h"
#include "artifact/artifact_tables.h"
#include "artifact/verify.h"
#include "artifact_fixtures.h"
#include "calibrate/artifact_merge.h"
#include "calibrate/artifact_writer.h"
#include "calibrate/calibration_journal.h"
#include "io/hdf5_file.h"
#include "util/error.h"

using namespace specd;
using test::ScopedTempDir;

namespace {

void edit_tables(const std::string& dir, const std::string& sql) {
  {
    sqlite::Database db(dir + "/calibration.sqlite", sqlite::Database::Mode::ReadWriteCreate);
    db.exec(sql);
  }
  test::reseal(dir);
}

// Rewrites calibration.h5 as the writer would, after `edit` changed the artifact's arc part.
void rewrite_arrays(const std::string& dir, Artifact artifact, const std::function<void(ArcCalibration&)>& edit) {
  edit(*artifact.arc);
  write_artifact_arrays(dir + "/calibration.h5", artifact);
  test::reseal(dir);
}

}  // namespace

TEST_CASE("arc artifact: write -> read gives back samples, whitening, constants, audit and settings", "[artifact][arc]") {
  ScopedTempDir tmp("arc");
  const std::string dir = tmp.file("art");
  Artifact written = test::synthetic_artifact(15);
  written.arc->delta = 0.1;
  written.arc->top_k = 7;
  written.arc->mu = 3e-5;
  written.arc->epsilon = 1e-7;
  const ArcCalibration& arc = *written.arc;
  REQUIRE(arc.samples.size() > 10);
  REQUIRE(std::count_if(arc.samples.begin(), arc.samples.end(), [](const ArcSample& x) { return x.held_out; }) > 0);
  write_artifact(dir, written);
  const Artifact read = read_artifact(dir);
  CHECK(read.arc->samples == arc.samples);  // float64 columns: exact
  CHECK(read.arc->whitening == arc.whitening);
  CHECK(read.arc->constants == arc.constants);  // "all", "depth=2", "depth=10": the fit's order, not text order
  CHECK(read.arc->audit == arc.audit);
  CHECK(read.arc->prompts == arc.prompts);
  CHECK(read.arc->provenance == arc.provenance);
  CHECK(read.arc->delta == 0.1);
  CHECK(read.arc->top_k == 7);
  CHECK(read.arc->mu == 3e-5);
  CHECK(read.arc->epsilon == 1e-7);
  CHECK(read == written);
  CHECK(verify_artifact(dir, "", "").empty());

  const nlohmann::json manifest = nlohmann::json::parse(test::read_text_file(dir + "/manifest.json"));
  CHECK(manifest["schema_version"] == kArtifactSchemaVersion);
  const nlohmann::json& entry = manifest["calibrations"]["arc"];
  CHECK(entry["delta"] == 0.1);
  CHECK(entry["top_k"] == 7);
  CHECK(entry["constants"] == arc_constants_json(arc.constants.front()));
  CHECK(entry["counts"]["calibration_samples"] == arc.constants.front().samples);
  CHECK(entry["counts"]["held_out_samples"] == static_cast<int64_t>(arc.samples.size()) - arc.constants.front().samples);

  SECTION("the deployment reader") {
    ArtifactReader reader(dir);
    CHECK(reader.manifest().arc->constants == std::vector<ArcConstants>{arc.constants.front()});  // from the manifest alone
    CHECK(reader.manifest().arc->samples.empty());
    CHECK(reader.arc_calibration() == read.arc);
    Artifact csd_only = written;
    csd_only.arc.reset();
    write_artifact(dir, csd_only);
    CHECK_THROWS_WITH(ArtifactReader(dir).arc_calibration(), dir + ": holds no arc calibration (run specd calibrate arc)");
    CHECK(read_artifact(dir) == csd_only);
    CHECK_FALSE(open_artifact_arrays(dir + "/calibration.h5").exists("/arc"));
  }
  SECTION("an arc calibration without constants (a merge before the fit) and without samples") {
    Artifact unfitted = written;
    unfitted.arc->constants.clear();
    unfitted.arc->audit.clear();
    write_artifact(dir, unfitted);
    CHECK(read_artifact(dir) == unfitted);
    CHECK(nlohmann::json::parse(test::read_text_file(dir + "/manifest.json"))["calibrations"]["arc"]["constants"].is_null());
    unfitted.arc->samples.clear();
    unfitted.arc->provenance.counts = derived_counts(*unfitted.arc);
    write_artifact(dir, unfitted);
    CHECK(read_artifact(dir) == unfitted);
    CHECK(verify_artifact(dir, "", "").empty());
  }
}

TEST_CASE("arc artifact: samples are stored by (prompt, step), a step's samples in recorded order", "[artifact][arc]") {
  ScopedTempDir tmp("arc");
  const Artifact canonical = test::synthetic_artifact(12);
  Artifact shuffled = canonical;
  std::reverse(shuffled.arc->samples.begin(), shuffled.arc->samples.end());
  std::reverse(shuffled.arc->prompts.begin(), shuffled.arc->prompts.end());
  write_artifact(tmp.file("art"), shuffled);
  const Artifact read = read_artifact(tmp.file("art"));
  CHECK(read.arc->prompts == canonical.arc->prompts);
  std::vector<ArcSample> expected = shuffled.arc->samples;
  std::stable_sort(expected.begin(), expected.end(),
                   [](const ArcSample& x, const ArcSample& y) { return std::tie(x.prompt, x.step) < std::tie(y.prompt, y.step); });
  CHECK(read.arc->samples == expected);
  CHECK(read.arc->samples != canonical.arc->samples);  // the fixture's steps hold several samples: the tie order shows
  // Rows in primary-key order; equal artifacts give equal tables and bytes.
  write_artifact(tmp.file("again"), shuffled);
  const std::string dump = test::table_dump(tmp.file("art/calibration.sqlite"));
  CHECK(dump == test::table_dump(tmp.file("again/calibration.sqlite")));
  CHECK(dump.find("== arc_constants\n'all'|0|") != std::string::npos);
  // Stored in key (text) order; the ordinal column keeps the fit's numeric order for the reader.
  REQUIRE(dump.find("'depth=10'|") != std::string::npos);
  CHECK(dump.find("'depth=10'|") < dump.find("'depth=2'|"));
  for (const char* file : {"calibration.sqlite", "calibration.h5", "manifest.json"})
    CHECK(test::read_text_file(tmp.file("art/") + file) == test::read_text_file(tmp.file("again/") + file));
}

TEST_CASE("arc artifact: inconsistent ARC rows are refused in one line naming the file", "[artifact][arc]") {
  ScopedTempDir tmp("arc");
  const std::string dir = tmp.file("art");
  const Artifact artifact = test::synthetic_artifact(12);
  const ArcCalibration& arc = *artifact.arc;
  const int64_t n = arc.constants.front().samples;

  SECTION("the writer refuses what the reader would (a caller's bug)") {
    Artifact bad = artifact;
    bad.arc->samples.front().prompt = 99;
    bad.arc->provenance.counts = nlohmann::json::object();
    CHECK_THROWS_WITH(write_artifact(dir, bad),
                      "write_artifact: calibration.h5: an arc sample of prompt 99, which the arc prompts table lacks");
    bad = artifact;
    bad.arc->constants.front().samples = n + 1;
    CHECK_THROWS_AS(write_artifact(dir, bad), std::invalid_argument);
    bad = artifact;
    std::swap(bad.arc->constants[0], bad.arc->constants[1]);
    CHECK_THROWS_WITH(write_artifact(dir, bad),
                      Catch::Contains("the first arc_constants row is bucket '" + bad.arc->constants[0].bucket + "', expected 'all'"));
    CHECK_FALSE(std::filesystem::exists(dir));
  }
  write_artifact(dir, artifact);
  SECTION("constants that do not count the calibration samples") {
    edit_tables(dir, "UPDATE arc_constants SET samples = samples + 1, rank = rank + 1 WHERE bucket = 'all'");
    // The manifest repeats the "all" row: the first difference found.
    CHECK(test::artifact_read_error(dir) ==
          dir + "/manifest.json: calibrations.arc.constants differs from the first row of arc_constants in calibration.sqlite");
    test::edit_manifest(dir, [&](nlohmann::json& m) {
      m["calibrations"]["arc"]["constants"]["samples"] = n + 1;
      m["calibrations"]["arc"]["constants"]["rank"] = arc.constants.front().rank + 1;
    });
    const std::string expected = dir + "/calibration.sqlite: arc_constants 'all' counts " + std::to_string(n + 1) +
                                 " samples, calibration.h5 holds " + std::to_string(n) + " calibration samples";
    CHECK(test::artifact_read_error(dir) == expected);
    CHECK(verify_artifact(dir, "", "") == std::vector<std::string>{expected});
  }
  SECTION("a rank beyond n + 1") {
    edit_tables(dir, "UPDATE arc_constants SET rank = samples + 2 WHERE bucket = 'depth=2'");
    CHECK_THAT(test::artifact_read_error(dir), Catch::StartsWith(dir + "/calibration.sqlite: arc_constants 'depth=2' has rank "));
  }
  SECTION("an audit row that does not count the held-out samples of its group") {
    edit_tables(dir, "UPDATE arc_audit SET samples = samples + 5, covered = 0 WHERE group_kind = 'all'");
    CHECK_THAT(test::artifact_read_error(dir), Catch::StartsWith(dir + "/calibration.sqlite: arc_audit all 'all' counts "));
  }
  SECTION("constants in the tables but null in the manifest") {
    test::edit_manifest(dir, [](nlohmann::json& m) { m["calibrations"]["arc"]["constants"] = nullptr; });
    CHECK(test::artifact_read_error(dir) == dir + "/manifest.json: calibrations.arc.constants is null, calibration.sqlite holds arc_constants");
  }
  SECTION("a sample of a prompt the arc prompts lack") {
    rewrite_arrays(dir, artifact, [](ArcCalibration& a) { a.samples.back().prompt = 77; });
    CHECK(test::artifact_read_error(dir) == dir + "/calibration.h5: an arc sample of prompt 77, which the arc prompts table lacks");
  }
  SECTION("counts in the manifest that the samples do not give") {
    test::edit_manifest(dir, [](nlohmann::json& m) { m["calibrations"]["arc"]["counts"]["held_out_samples"] = 0; });
    CHECK_THAT(test::artifact_read_error(dir), Catch::StartsWith(dir + "/manifest.json: calibrations.arc.counts.held_out_samples is 0, the rows give "));
  }
  SECTION("/arc in calibration.h5 but no arc calibration in the manifest") {
    Artifact no_arc = artifact;
    no_arc.arc.reset();
    write_artifact(dir, no_arc);
    write_artifact_arrays(dir + "/calibration.h5", artifact);
    test::reseal(dir);
    CHECK(test::artifact_read_error(dir) == dir + "/calibration.h5: /arc is present but the manifest lists no arc calibration");
    CHECK(verify_artifact(dir, "", "") ==
          std::vector<std::string>{dir + "/calibration.h5: /arc is present but the manifest lists no arc calibration"});
  }
  SECTION("arc prompts in calibration.sqlite but no arc calibration in the manifest") {
    test::edit_manifest(dir, [](nlohmann::json& m) { m["calibrations"].erase("arc"); });
    CHECK(test::artifact_read_error(dir) == dir + "/calibration.sqlite: prompts of policy 'arc', which the manifest does not list");
  }
  SECTION("bad settings in the manifest") {
    test::edit_manifest(dir, [](nlohmann::json& m) { m["calibrations"]["arc"]["delta"] = 1.5; });
    CHECK(test::artifact_read_error(dir) == dir + "/manifest.json: field 'calibrations.arc.delta' must be in (0, 1)");
    test::edit_manifest(dir, [](nlohmann::json& m) {
      m["calibrations"]["arc"]["delta"] = 0.05;
      m["calibrations"]["arc"].erase("constants");
    });
    CHECK(test::artifact_read_error(dir) == dir + "/manifest.json: missing field 'calibrations.arc.constants'");
  }
}

TEST_CASE("arc artifact: held_out other than 0 or 1 and columns of other lengths are refused naming the dataset", "[artifact][arc]") {
  ScopedTempDir tmp("arc");
  const std::string path = tmp.file("arrays.h5");
  const ArcCalibration arc = *test::synthetic_artifact(12).arc;
  const size_t n = arc.samples.size();
  auto write = [&](const std::string& skip, const std::string& shorten, int32_t held_out) {
    Hdf5File file = Hdf5File::create(path);
    file.write_root_attribute("schema_version", kArtifactH5Version);
    file.write("/arc/whitening", arc.whitening);
    for (const char* column : {"prompt", "step", "depth", "target_token", "draft_token"})
      if (column != skip) file.write(std::string("/arc/samples/") + column, std::vector<int32_t>(n - (column == shorten), 1));
    file.write("/arc/samples/position", std::vector<int64_t>(n, 3));
    file.write("/arc/samples/root_entropy", std::vector<float>(n, 0.5f));
    for (const char* column : {"u_emb_raw", "u_logit_raw", "js"})
      if (column != skip) file.write(std::string("/arc/samples/") + column, std::vector<double>(n - (column == shorten), 0.25));
    file.write("/arc/samples/held_out", std::vector<int32_t>(n, held_out));
    for (const char* column : {"deploy_site", "relaxed"})
      if (column != skip) file.write(std::string("/arc/samples/") + column, std::vector<int32_t>(n - (column == shorten), 0));
    if (std::string("theta") != skip) file.write("/arc/samples/theta", std::vector<double>(n, 0.0));
    file.close();
    return open_artifact_arrays(path);
  };
  CHECK(read_arc_samples(write("", "", 1)).size() == n);
  CHECK_THROWS_WITH(read_arc_samples(write("relaxed", "", 0)), path + ": /arc/samples/relaxed is missing");
  CHECK_THROWS_WITH(read_arc_samples(write("", "deploy_site", 0)),
                    path + ": /arc/samples/deploy_site has " + std::to_string(n - 1) + " rows, /arc/samples/prompt " + std::to_string(n));
  {
    // Version 3 had no deploy-site columns: its samples are candidate samples.
    Hdf5File file = Hdf5File::create(path);
    file.write_root_attribute("schema_version", 3);
    for (const char* column : {"prompt", "step", "depth", "target_token", "draft_token", "held_out"})
      file.write(std::string("/arc/samples/") + column, std::vector<int32_t>(n, 1));
    file.write("/arc/samples/position", std::vector<int64_t>(n, 3));
    file.write("/arc/samples/root_entropy", std::vector<float>(n, 0.5f));
    for (const char* column : {"u_emb_raw", "u_logit_raw", "js"}) file.write(std::string("/arc/samples/") + column, std::vector<double>(n, 0.25));
    file.close();
    const std::vector<ArcSample> old = read_arc_samples(open_artifact_arrays(path));
    REQUIRE(old.size() == n);
    CHECK(old[0].held_out);
    CHECK(!old[0].deploy_site);
    CHECK(!old[0].relaxed);
    CHECK(old[0].theta == 0);
  }
  CHECK_THROWS_WITH(read_arc_samples(write("", "", 2)), path + ": /arc/samples/held_out row 0 is 2, expected 0 or 1");
  CHECK_THROWS_WITH(read_arc_samples(write("", "js", 0)),
                    path + ": /arc/samples/js has " + std::to_string(n - 1) + " rows, /arc/samples/prompt " + std::to_string(n));
  CHECK_THROWS_WITH(read_arc_samples(write("u_logit_raw", "", 0)), path + ": /arc/samples/u_logit_raw is missing");
  {
    Hdf5File file = Hdf5File::create(path);
    file.write_root_attribute("schema_version", kArtifactH5Version);
    file.write("/arc/whitening", std::vector<double>{1.0});
    file.close();
  }
  CHECK_THROWS_WITH(read_arc_whitening(open_artifact_arrays(path)), path + ": /arc/whitening is float64, expected float32");
}

TEST_CASE("arc artifact: version-1 artifacts (before ARC) still read, version 1 cannot hold arc", "[artifact][arc]") {
  ScopedTempDir tmp("arc");
  const std::string dir = tmp.file("art");
  Artifact v1 = test::synthetic_artifact(9);
  v1.arc.reset();
  write_artifact(dir, v1);
  // What specd wrote before version 2: no arc tables, version 1 everywhere.
  {
    sqlite::Database db(dir + "/calibration.sqlite", sqlite::Database::Mode::ReadWriteCreate);
    db.exec(
        "DROP TABLE arc_constants; DROP TABLE arc_audit; DROP TABLE arc_gate; DROP TABLE sweep_categories; DROP TABLE sweep_runs; "
        "PRAGMA user_version = 1; VACUUM;");
  }
  {
    // The arrays as version 1 wrote them: the same datasets, the root attribute 1.
    Hdf5File file = Hdf5File::create(dir + "/calibration.h5");
    file.write_root_attribute("schema_version", 1);
    std::vector<int32_t> columns[5];
    std::vector<float> gaps;
    for (const CsdRejection& r : v1.csd->rejections) {
      for (int c = 0; c < 5; ++c) columns[c].push_back(c == 0 ? r.prompt : c == 1 ? r.step : c == 2 ? r.depth : c == 3 ? r.draft_token : r.target_token);
      gaps.push_back(r.logit_gap);
    }
    const char* names[] = {"prompt", "step", "depth", "draft_token", "target_token"};
    for (int c = 0; c < 5; ++c) file.write(std::string("/csd/rejections/") + names[c], columns[c]);
    file.write("/csd/rejections/logit_gap", gaps);
    std::vector<int32_t> tokens;
    std::vector<int64_t> offsets{0};
    for (const auto& d : v1.sam_corpus->documents) {
      tokens.insert(tokens.end(), d.begin(), d.end());
      offsets.push_back(static_cast<int64_t>(tokens.size()));
    }
    file.write("/sam_corpus/tokens", tokens);
    file.write("/sam_corpus/offsets", offsets);
    file.close();
  }
  test::edit_manifest(dir, [](nlohmann::json& m) {
    m["schema_version"] = 1;
    m["files"]["calibration.sqlite"]["schema_version"] = 1;
    m["files"]["calibration.h5"]["schema_version"] = 1;
  });
  test::reseal(dir);
  Artifact expected = v1;
  expected.schema_version = 1;
  CHECK(read_artifact(dir) == expected);
  CHECK(verify_artifact(dir, "", "").empty());
  CHECK(ArtifactReader(dir).csd_pairs() == v1.csd->pairs);

  SECTION("written back (e.g. by calibrate adding a calibration), it becomes the current version") {
    Artifact read = read_artifact(dir);
    read.arc = test::synthetic_artifact(9).arc;
    write_artifact(dir, read);
    CHECK(nlohmann::json::parse(test::read_text_file(dir + "/manifest.json"))["schema_version"] == kArtifactSchemaVersion);
    CHECK(ArtifactTables(dir + "/calibration.sqlite").version() == kArtifactSqliteVersion);
    read.schema_version = kArtifactSchemaVersion;
    CHECK(read_artifact(dir) == read);
    CHECK(verify_artifact(dir, "", "").empty());
  }
  SECTION("a file whose version is not the one the manifest records") {
    test::edit_manifest(dir, [](nlohmann::json& m) { m["files"]["calibration.sqlite"]["schema_version"] = 2; });
    CHECK(test::artifact_read_error(dir) == dir + "/calibration.sqlite: schema version 1, manifest.json records 2");
  }
  SECTION("a version-1 manifest listing arc") {
    const std::string v2 = tmp.file("v2");
    write_artifact(v2, test::synthetic_artifact(9));
    test::edit_manifest(v2, [](nlohmann::json& m) { m["schema_version"] = 1; });
    CHECK(test::artifact_read_error(v2) == v2 + "/manifest.json: unknown calibration 'arc' in schema version 1");
  }
  SECTION("verify checks a version-1 database against version 1's tables") {
    edit_tables(dir, "CREATE TABLE arc_audit (x INTEGER)");
    CHECK(verify_artifact(dir, "", "") == std::vector<std::string>{dir + "/calibration.sqlite: unexpected table arc_audit"});
  }
}

TEST_CASE("arc artifact: shards (samples only) merge into the unsharded samples, fitted as the whole run", "[artifact][arc][merge]") {
  ScopedTempDir tmp("arc");
  const Artifact whole = test::synthetic_artifact(17);
  REQUIRE_FALSE(whole.arc->constants.empty());
  write_artifact(tmp.file("whole"), whole);
  for (int32_t count : {1, 2, 3}) {
    INFO(count << " shards");
    const Artifact merged = test::merge_written_shards(whole, count, tmp);
    CHECK(merged.arc->samples == whole.arc->samples);
    CHECK(merged.arc->prompts == whole.arc->prompts);
    CHECK(merged.arc->whitening == whole.arc->whitening);
    CHECK(merged.arc->provenance.counts == whole.arc->provenance.counts);
    CHECK(merged.arc->provenance.shards.size() == static_cast<size_t>(count));
    CHECK(merged.arc->delta == whole.arc->delta);
    CHECK(merged.arc->constants == whole.arc->constants);
    CHECK(merged.arc->audit == whole.arc->audit);
    const std::string out = tmp.file("merged-" + std::to_string(count));
    write_artifact(out, merged);
    CHECK(test::table_dump(out + "/calibration.sqlite") == test::table_dump(tmp.file("whole/calibration.sqlite")));
    CHECK(read_artifact(out).arc->samples == whole.arc->samples);
  }
  const Artifact s0 = test::shard_of(whole, 0, 2), s1 = test::shard_of(whole, 1, 2);
  Artifact other = s1;
  other.arc->whitening[3] += 1;
  CHECK(test::merge_error({s0, other}) == "shard1: arc whitening differs from shard0's (another target model?)");
  other = s1;
  other.arc->delta = 0.1;
  CHECK(test::merge_error({s0, other}) == "shard1: not a shard of the same arc calibration as shard0 (delta, top_k, mu or epsilon differs)");
  other = s1;
  other.arc->provenance.temperature = 0.7;
  CHECK(test::merge_error({s0, other}) == "shard1: not a shard of the same arc calibration as shard0 (sampling/temperature differs)");
  other = s1;
  other.arc.reset();
  CHECK(test::merge_error({s0, other}) == "shard1: holds other calibrations than shard0");
}

TEST_CASE("arc journal: a prompt's samples are recorded whole and survive a resume", "[artifact][arc][journal]") {
  ScopedTempDir tmp("arc");
  const std::string path = tmp.file("art.partial/journal.sqlite");
  const nlohmann::json identity = {{"policy", "arc"}, {"seed", 3}};
  const Artifact a = test::synthetic_artifact(8);
  auto samples_of = [&](int32_t prompt) {
    std::vector<ArcSample> out;
    for (const ArcSample& x : a.arc->samples)
      if (x.prompt == prompt) out.push_back(x);
    return out;
  };
  {
    CalibrationJournal journal(path, identity, false);
    for (int32_t i : {5, 1, 3}) journal.record_arc_samples("arc", a.arc->prompts[i], samples_of(i));
    // A prompt recorded twice rolls back whole; the first record stays.
    CHECK_THROWS(journal.record_arc_samples("arc", a.arc->prompts[1], samples_of(2)));
  }
  CalibrationJournal journal(path, identity, true);
  CHECK(journal.finished_prompts("arc") == std::set<int32_t>{1, 3, 5});
  std::vector<ArcSample> expected;
  for (int32_t i : {1, 3, 5})
    for (const ArcSample& x : samples_of(i)) expected.push_back(x);
  CHECK(journal.arc_samples("arc") == expected);  // every field, the doubles exactly
  CHECK(journal.arc_samples("csd").empty());
  for (int32_t i : {0, 2, 4, 6, 7}) journal.record_arc_samples("arc", a.arc->prompts[i], samples_of(i));
  CHECK(journal.prompts("arc") == a.arc->prompts);
  CHECK(journal.arc_samples("arc") == a.arc->samples);
}

TEST_CASE("arc artifact: inspect shows the settings, constants per bucket and the held-out audit", "[artifact][arc]") {
  const Artifact artifact = test::synthetic_artifact(12);
  const ArcCalibration& arc = *artifact.arc;
  const nlohmann::json summary = artifact_summary("art", artifact, 5);
  const nlohmann::json& entry = summary["calibrations"]["arc"];
  CHECK(entry["buckets"].size() == arc.constants.size());
  CHECK(entry["buckets"][1]["bucket"] == arc.constants[1].bucket);
  CHECK(entry["audit"].size() == arc.audit.size());
  CHECK(entry["audit"][0]["group_kind"] == "all");
  CHECK(entry["whitening_size"] == arc.whitening.size());
  std::ostringstream text;
  print_artifact_summary(text, summary);
  const std::string out = text.str();
  CHECK_THAT(out, Catch::Contains("arc:\n"));
  CHECK_THAT(out, Catch::Contains("  delta 0.25, K 10, mu 0.0001, epsilon 1e-06\n"));
  const ArcConstants& all = arc.constants.front();
  CHECK_THAT(out, Catch::Contains("\n    all: " + std::to_string(all.samples) + ", " + std::to_string(all.rank) + ", "));
  const ArcAuditRow& row = arc.audit.front();
  CHECK_THAT(out, Catch::Contains("\n    all: " + std::to_string(row.covered) + "/" + std::to_string(row.samples) + ", "));
  CHECK_THAT(out, Catch::Contains("\n    category math: "));
  CHECK_THAT(artifact_contents_line(artifact),
             Catch::Contains("arc: 12 prompts, " + std::to_string(all.samples) + " calibration samples, " +
                             std::to_string(arc.samples.size() - static_cast<size_t>(all.samples)) + " held-out samples, " + std::to_string(arc.constants.size()) + " buckets"));
}
