// An artifact's values in their domains (artifact/value_domains.h, the method table's
// threshold_problems): a cell of the wrong type, a count below zero, a token outside the
// vocabulary, a NaN constant or an out-of-range threshold is refused by the reader every command
// uses and reported by verify, in one line naming the file and the field; the writer never
// stores one. The hostile cases of issue 29 as regression tests.
#include <catch2/catch.hpp>

#include <cmath>
#include <limits>

#include "artifact/artifact_arrays.h"
#include "artifact/value_domains.h"
#include "artifact/verify.h"
#include "artifact_fixtures.h"
#include <hdf5.h>

#include "io/hdf5_file.h"
#include "io/sqlite_db.h"
#include "speculative/method_params.h"

using namespace specd;
using test::ScopedTempDir;

namespace {

// The pair the reader reads first (its order: count descending, then the tokens).
constexpr const char* kFirstPair = "(SELECT draft_token || ',' || target_token FROM csd_pairs ORDER BY count DESC, draft_token, target_token LIMIT 1)";

// Runs SQL on the artifact's calibration.sqlite and seals the result, as a tamperer would.
void tamper_tables(const std::string& dir, const std::string& sql) {
  {
    sqlite::Database db(dir + "/calibration.sqlite", sqlite::Database::Mode::ReadWriteCreate);
    db.exec(sql);
  }
  test::reseal(dir);
}

// Rewrites calibration.h5 from `artifact` (values the writer would refuse) and seals it.
void tamper_arrays(const std::string& dir, const Artifact& artifact) {
  std::filesystem::remove(dir + "/calibration.h5");
  write_artifact_arrays(dir + "/calibration.h5", artifact);
  test::reseal(dir);
}

std::vector<std::string> verify(const std::string& dir) {
  return verify_artifact(dir, "", "", [](const Artifact& a) { return threshold_problems(a); });
}

bool mentions(const std::vector<std::string>& lines, const std::string& text) {
  return std::any_of(lines.begin(), lines.end(), [&](const std::string& l) { return l.find(text) != std::string::npos; });
}

}  // namespace

TEST_CASE("artifact values: a cell of the wrong type is refused naming the table, column and row, never read as 0", "[artifact][hostile]") {
  ScopedTempDir tmp("values");
  const std::string dir = tmp.file("art");
  write_artifact(dir, test::synthetic_artifact());
  const std::string sqlite = dir + "/calibration.sqlite";
  const std::string first_pair = "draft_token || ',' || target_token = " + std::string(kFirstPair);
  tamper_tables(dir, "UPDATE csd_pairs SET count = 'many' WHERE " + first_pair);
  CHECK(test::artifact_read_error(dir) == sqlite + ": csd_pairs.count of row 1 is of another type, not an integer");
  CHECK_THAT(verify(dir).at(0), Catch::Contains("csd_pairs.count of row"));

  write_artifact(dir, test::synthetic_artifact());
  tamper_tables(dir, "UPDATE prompts SET steps = 2.5 WHERE policy = 'csd' AND prompt_index = 3");
  CHECK_THAT(test::artifact_read_error(dir), Catch::Contains("prompts.steps of row 4 is of another type, not an integer"));

  write_artifact(dir, test::synthetic_artifact());
  tamper_tables(dir, "UPDATE thresholds SET value = 'six' WHERE name = 'lambda'");
  CHECK_THAT(test::artifact_read_error(dir), Catch::Contains("thresholds.value of row 1 is of another type, not a number"));
  // A token id beyond int32 never wraps into a valid one.
  write_artifact(dir, test::synthetic_artifact());
  tamper_tables(dir, "UPDATE csd_pairs SET draft_token = 4294967297 WHERE " + first_pair);
  CHECK_THAT(test::artifact_read_error(dir), Catch::Contains("csd_pairs.draft_token of row 1 is 4294967297, outside 0..2^31-1"));
}

TEST_CASE("artifact values: counts, token ids, constants and rates outside their domain are refused and reported", "[artifact][hostile]") {
  ScopedTempDir tmp("values");
  const std::string dir = tmp.file("art");
  const Artifact good = test::synthetic_artifact();
  REQUIRE(value_problems(good).empty());
  REQUIRE(threshold_problems(good).empty());

  // Each case: a change the writer refuses, then written past it and found by the reader and verify.
  struct Case {
    std::string name, expected;
    std::function<void(Artifact&)> change;
  };
  const std::vector<Case> cases = {
      {"a token outside the vocabulary", "/sam_corpus/tokens of document 1 is 4096, outside the target's vocabulary",
       [](Artifact& a) { a.sam_corpus->documents[1][0] = 4096; }},
      {"a NaN whitening", "/arc/whitening[2] is nan, not a finite scale >= 0",
       [](Artifact& a) { a.arc->whitening[2] = std::numeric_limits<float>::quiet_NaN(); }},
      {"an infinite logit gap", "logit_gap is -inf, not finite",
       [](Artifact& a) { a.csd->rejections[0].logit_gap = -std::numeric_limits<float>::infinity(); }},
      {"a JS above ln 2", "js is 0.9, outside [0, ln 2]", [](Artifact& a) { a.arc->samples[0].js = 0.9; }},
      {"a negative bound", "u_emb_raw is -1, not a finite bound >= 0", [](Artifact& a) { a.arc->samples[0].u_emb_raw = -1; }},
      {"a root entropy above 1", "root_entropy is 1.5, outside [0, 1]", [](Artifact& a) { a.arc->samples[0].root_entropy = 1.5f; }},
  };
  for (const Case& c : cases) {
    SECTION(c.name) {
      Artifact bad = good;
      c.change(bad);
      CHECK(mentions(value_problems(bad), c.expected));
      CHECK_THROWS_WITH(write_artifact(tmp.file("refused"), bad), Catch::Contains(c.expected));
      CHECK_FALSE(std::filesystem::exists(tmp.file("refused")));
      write_artifact(dir, good);
      tamper_arrays(dir, bad);
      const std::string error = test::artifact_read_error(dir);
      CHECK_THAT(error, Catch::StartsWith(dir + "/calibration.h5: ") && Catch::Contains(c.expected));
      CHECK(error.find('\n') == std::string::npos);
      CHECK(mentions(verify(dir), c.expected));
    }
  }
  SECTION("values of the tables") {
    Artifact bad = good;
    bad.arc->constants[0].tau_delta = std::numeric_limits<double>::quiet_NaN();
    bad.arc->audit[0].coverage = 1.25;
    bad.csd->prompts[2].accepted = bad.csd->prompts[2].drafted + 1;
    const std::vector<std::string> problems = value_problems(bad);
    CHECK(mentions(problems, "calibration.sqlite: arc_constants 'all' tau_delta is nan"));
    CHECK(mentions(problems, "calibration.sqlite: arc_audit all 'all' coverage is 1.25, outside [0, 1]"));
    CHECK(mentions(problems, "calibration.sqlite: prompts (csd, 2) accepted/drafted is "));
    // +inf is the constant of a bucket with too few samples: in its domain.
    Artifact few = good;
    few.arc->constants[0].c_s = std::numeric_limits<double>::infinity();
    CHECK_FALSE(mentions(value_problems(few), "c_s"));
  }
  SECTION("a damaged column gives a few lines and a count, not a line per row") {
    Artifact bad = good;
    for (CsdRejection& r : bad.csd->rejections) r.logit_gap = std::numeric_limits<float>::quiet_NaN();
    const std::vector<std::string> problems = value_problems(bad);
    REQUIRE(bad.csd->rejections.size() > 10);
    CHECK(problems.size() == 4);
    CHECK(mentions(problems, "more of /csd/rejections/logit_gap out of their domain"));
  }
}

TEST_CASE("artifact values: thresholds no method has, or outside their parameter's range, are reported by verify", "[artifact][hostile]") {
  ScopedTempDir tmp("values");
  const std::string dir = tmp.file("art");
  write_artifact(dir, test::synthetic_artifact());
  REQUIRE(verify(dir).empty());
  tamper_tables(dir, "UPDATE thresholds SET value = -3 WHERE name = 'lambda'; UPDATE thresholds SET value = 7 WHERE name = 'tau'");
  const std::vector<std::string> problems = verify(dir);
  REQUIRE(problems.size() == 2);
  CHECK_THAT(problems[0], Catch::StartsWith(dir + "/calibration.sqlite: thresholds (csd, lambda): ") && Catch::Contains("(got -3)"));
  CHECK_THAT(problems[1], Catch::StartsWith(dir + "/calibration.sqlite: thresholds (csd, tau): ") && Catch::Contains("(got 7)"));

  write_artifact(dir, test::synthetic_artifact());
  tamper_tables(dir, "INSERT INTO thresholds (policy, name, value, source) VALUES ('csd', 'gamma_max', 4, 'hand-made')");
  CHECK(verify(dir) == std::vector<std::string>{dir + "/calibration.sqlite: thresholds (csd, gamma_max): no method family 'csd' with a "
                                                      "parameter 'gamma_max' (specd methods lists them)"});
  tamper_tables(dir, "UPDATE thresholds SET value = 1e308 * 10 WHERE name = 'gamma_max'");
  CHECK(mentions(verify(dir), "thresholds (csd, gamma_max) value is inf, not finite"));
}

TEST_CASE("artifact values: an HDF5 dataset declaring more rows than its file holds is refused before allocation", "[artifact][hostile]") {
  ScopedTempDir tmp("values");
  const std::string path = tmp.file("big.h5");
  {
    // 2^40 int32 rows declared, none written: HDF5 allocates a contiguous dataset's storage at its
    // first write, so the file stays a few KB.
    const hid_t file = H5Fcreate(path.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
    REQUIRE(file >= 0);
    H5Gclose(H5Gcreate2(file, "/csd", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT));
    H5Gclose(H5Gcreate2(file, "/csd/rejections", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT));
    const hsize_t rows = hsize_t{1} << 40;
    const hid_t space = H5Screate_simple(1, &rows, nullptr);
    const hid_t dataset = H5Dcreate2(file, "/csd/rejections/step", H5T_STD_I32LE, space, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
    REQUIRE(dataset >= 0);
    H5Dclose(dataset);
    H5Sclose(space);
    H5Fclose(file);
  }
  const Hdf5File file = Hdf5File::open_read(path);
  CHECK(file.length("/csd/rejections/step") == (int64_t{1} << 40));
  CHECK_THROWS_WITH(file.read_int32("/csd/rejections/step"),
                    path + ": /csd/rejections/step declares 1099511627776 rows, more than a file of " +
                        std::to_string(std::filesystem::file_size(path)) + " bytes can hold (damaged or hostile file)");
}

TEST_CASE("artifact values: a manifest field this specd does not write is refused naming it", "[artifact][hostile]") {
  ScopedTempDir tmp("values");
  const std::string dir = tmp.file("art");
  write_artifact(dir, test::synthetic_artifact());
  REQUIRE(test::artifact_read_error(dir).empty());
  test::edit_manifest(dir, [](nlohmann::json& m) { m["calibrations"]["csd"]["sampling"]["temprature"] = 0.5; });
  const std::string expected = dir + "/manifest.json: field 'calibrations.csd.sampling.temprature' is not one a specd artifact has";
  CHECK(test::artifact_read_error(dir) == expected);
  CHECK(verify(dir) == std::vector<std::string>{expected});
  // Free-form objects keep what they hold: a calibration's options and counts.
  write_artifact(dir, test::synthetic_artifact());
  test::edit_manifest(dir, [](nlohmann::json& m) { m["calibrations"]["csd"]["options"]["note"] = "hand-made"; });
  CHECK(test::artifact_read_error(dir).empty());
}

TEST_CASE("artifact values: an HDF5 object specd does not write is reported by verify and refused by readers", "[artifact][hostile]") {
  ScopedTempDir tmp("values");
  const std::string dir = tmp.file("art");
  write_artifact(dir, test::synthetic_artifact());
  REQUIRE(verify(dir).empty());
  {  // another tool's dataset beside specd's, and a group inside a calibration's
    const std::string h5 = dir + "/calibration.h5";
    const hid_t file = H5Fopen(h5.c_str(), H5F_ACC_RDWR, H5P_DEFAULT);
    REQUIRE(file >= 0);
    const hsize_t rows = 2;
    const hid_t space = H5Screate_simple(1, &rows, nullptr);
    const int32_t values[2] = {1, 2};
    const hid_t dataset = H5Dcreate2(file, "/notes", H5T_STD_I32LE, space, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
    REQUIRE(dataset >= 0);
    H5Dwrite(dataset, H5T_NATIVE_INT32, H5S_ALL, H5S_ALL, H5P_DEFAULT, values);
    H5Dclose(dataset);
    H5Sclose(space);
    H5Gclose(H5Gcreate2(file, "/csd/extra", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT));
    H5Fclose(file);
  }
  test::reseal(dir);
  const std::string h5 = dir + "/calibration.h5";
  const std::string root = h5 + ": / holds 4 objects, specd writes 3 of them: the others are another tool's, or the file is damaged";
  const std::string csd = h5 + ": /csd holds 2 objects, specd writes 1 of them: the others are another tool's, or the file is damaged";
  CHECK(verify(dir) == std::vector<std::string>{root, csd});
  CHECK(test::artifact_read_error(dir) == root);
}
