// The calibration artifact on disk: write -> read round trips, equal contents give equal files,
// the deployment reader, and every refusal is one line naming the file and the problem.
#include <catch2/catch.hpp>

#include <algorithm>
#include <filesystem>
#include <fstream>

#include "artifact/artifact_arrays.h"
#include "artifact/artifact_reader.h"
#include "artifact/artifact_tables.h"
#include "artifact/fingerprint.h"
#include "artifact/verify.h"
#include "artifact_fixtures.h"
#include "calibrate/artifact_writer.h"
#include "io/hdf5_file.h"
#include "util/error.h"
#include "util/version.h"

using namespace specd;
using test::ScopedTempDir;

namespace {

bool one_line(const std::string& text) { return !text.empty() && text.find('\n') == std::string::npos; }

}  // namespace

TEST_CASE("artifact: write -> read gives back every field", "[artifact]") {
  ScopedTempDir tmp("artifact");
  const std::string dir = tmp.file("art");
  const Artifact written = test::synthetic_artifact();
  write_artifact(dir, written);
  const Artifact read = read_artifact(dir);
  CHECK(read.created_at == written.created_at);
  CHECK(read.target == written.target);
  CHECK(read.draft == written.draft);
  CHECK(read.csd->provenance == written.csd->provenance);
  CHECK(read.csd->prompts == written.csd->prompts);
  CHECK(read.csd->rejections == written.csd->rejections);
  CHECK(read.csd->pairs == written.csd->pairs);
  CHECK(read.sam_corpus->documents == written.sam_corpus->documents);
  CHECK(read.thresholds == written.thresholds);
  CHECK(read.arc->samples == written.arc->samples);
  CHECK(read.arc->constants == written.arc->constants);
  CHECK(read.arc->audit == written.arc->audit);
  CHECK(read == written);
  CHECK(std::filesystem::exists(dir + "/manifest.json"));
  CHECK(verify_artifact(dir, "", "").empty());

  SECTION("a model-free pair with only a SAM corpus, and one with nothing calibrated") {
    Artifact model_free = written;
    model_free.draft.reset();
    model_free.csd.reset();
    model_free.thresholds.clear();
    write_artifact(dir, model_free);
    CHECK(read_artifact(dir) == model_free);
    Hdf5File arrays = open_artifact_arrays(dir + "/calibration.h5");
    CHECK_FALSE(arrays.exists("/csd"));
    CHECK(arrays.exists("/sam_corpus/offsets"));
    Artifact empty = model_free;
    empty.sam_corpus.reset();
    write_artifact(dir, empty);
    CHECK(read_artifact(dir) == empty);
    CHECK(verify_artifact(dir, "", "").empty());
  }
}

TEST_CASE("artifact: the writer stores rows in key order and derives pairs, counts and the tool", "[artifact]") {
  ScopedTempDir tmp("artifact");
  const Artifact canonical = test::synthetic_artifact();
  Artifact shuffled = canonical;
  std::reverse(shuffled.csd->prompts.begin(), shuffled.csd->prompts.end());
  std::reverse(shuffled.csd->rejections.begin(), shuffled.csd->rejections.end());
  std::reverse(shuffled.sam_corpus->prompts.begin(), shuffled.sam_corpus->prompts.end());
  std::reverse(shuffled.sam_corpus->documents.begin(), shuffled.sam_corpus->documents.end());
  std::reverse(shuffled.thresholds.begin(), shuffled.thresholds.end());
  shuffled.csd->pairs.clear();
  shuffled.csd->provenance.counts = {{"skipped", 2}};  // the caller's own counts stay beside the derived ones
  shuffled.created_at = shuffled.tool_version = shuffled.git_commit = "";
  write_artifact(tmp.file("art"), shuffled);
  const Artifact read = read_artifact(tmp.file("art"));
  CHECK(read.csd->prompts == canonical.csd->prompts);
  // Rejections of one (prompt, step, depth) keep their order; the fixture has few such ties.
  Artifact expected_order = canonical;
  std::reverse(expected_order.csd->rejections.begin(), expected_order.csd->rejections.end());
  sort_rejections(expected_order.csd->rejections);
  CHECK(read.csd->rejections == expected_order.csd->rejections);
  CHECK(read.csd->pairs == canonical.csd->pairs);
  nlohmann::json counts = canonical.csd->provenance.counts;
  counts["skipped"] = 2;
  CHECK(read.csd->provenance.counts == counts);
  CHECK(read.sam_corpus->prompts == canonical.sam_corpus->prompts);
  CHECK(read.sam_corpus->documents == canonical.sam_corpus->documents);
  CHECK(read.thresholds == canonical.thresholds);
  CHECK(read.tool_version == std::string(specd_version()));
  CHECK(read.created_at.size() == 20);
  CHECK((read.git_commit == "unknown" || read.git_commit.size() == 40));

  Artifact inconsistent = canonical;
  inconsistent.csd->provenance.counts["rejections"] = 999;
  CHECK_THROWS_AS(write_artifact(tmp.file("bad"), inconsistent), std::invalid_argument);
  inconsistent = canonical;
  inconsistent.csd->prompts.push_back(inconsistent.csd->prompts.front());
  inconsistent.csd->provenance.counts = nlohmann::json::object();
  CHECK_THROWS_WITH(write_artifact(tmp.file("bad"), inconsistent), Catch::Contains("prompt 0 appears twice"));
  CHECK_FALSE(std::filesystem::exists(tmp.file("bad")));
}

TEST_CASE("artifact: writing the same artifact twice gives identical tables, datasets and files", "[artifact]") {
  ScopedTempDir tmp("artifact");
  const Artifact artifact = test::synthetic_artifact(40);
  write_artifact(tmp.file("a"), artifact);
  write_artifact(tmp.file("b"), artifact);
  const std::string dump = test::table_dump(tmp.file("a/calibration.sqlite"));
  CHECK(dump == test::table_dump(tmp.file("b/calibration.sqlite")));
  CHECK(dump.find("== csd_pairs\n0|10|") != std::string::npos);  // rows in primary-key order
  CHECK(dump.find("'csd'|'lambda'|6.0|'paper default'\n'csd'|'tau'|0.01|'paper default'") != std::string::npos);
  Hdf5File a = open_artifact_arrays(tmp.file("a/calibration.h5"));
  Hdf5File b = open_artifact_arrays(tmp.file("b/calibration.h5"));
  for (const char* column : {"prompt", "step", "depth", "draft_token", "target_token"})
    CHECK(a.read_int32(std::string("/csd/rejections/") + column) == b.read_int32(std::string("/csd/rejections/") + column));
  CHECK(a.read_float32("/csd/rejections/logit_gap") == b.read_float32("/csd/rejections/logit_gap"));
  CHECK(a.read_int32("/sam_corpus/tokens") == b.read_int32("/sam_corpus/tokens"));
  CHECK(a.read_int64("/sam_corpus/offsets") == b.read_int64("/sam_corpus/offsets"));
  // With no object timestamps and fixed format bounds, HDF5 1.10 and SQLite write equal bytes, so
  // the manifests (which hold both hashes) are equal too.
  for (const char* file : {"calibration.sqlite", "calibration.h5", "manifest.json"})
    CHECK(test::read_text_file(tmp.file("a/") + file) == test::read_text_file(tmp.file("b/") + file));
}

TEST_CASE("artifact: the deployment reader loads the manifest, the CSD memory, thresholds and documents", "[artifact]") {
  ScopedTempDir tmp("artifact");
  const std::string dir = tmp.file("art");
  const Artifact artifact = test::synthetic_artifact();
  write_artifact(dir, artifact);
  ArtifactReader reader(dir);
  CHECK(reader.manifest().target == artifact.target);
  CHECK(reader.manifest().csd->provenance == artifact.csd->provenance);
  CHECK(reader.manifest().csd->rejections.empty());  // rows are not read
  CHECK(reader.files().at("calibration.sqlite").sha256 == sha256_file(dir + "/calibration.sqlite"));
  CHECK(reader.csd_pairs() == artifact.csd->pairs);
  CHECK(reader.thresholds() == artifact.thresholds);
  CHECK(reader.sam_corpus_documents() == artifact.sam_corpus->documents);

  Artifact model_free = artifact;
  model_free.csd.reset();
  model_free.sam_corpus.reset();
  write_artifact(dir, model_free);
  ArtifactReader bare(dir);
  CHECK_THROWS_WITH(bare.csd_pairs(), dir + ": holds no csd calibration (run specd calibrate csd)");
  CHECK_THROWS_WITH(bare.sam_corpus_documents(), Catch::StartsWith(dir + ": holds no sam_corpus calibration"));
}

TEST_CASE("artifact: the table DDL compiled in is schemas/artifact.sql", "[artifact]") {
  CHECK(std::string(artifact_schema_sql()) == test::read_text_file(std::string(SPECD_SOURCE_DIR) + "/schemas/artifact.sql"));
  CHECK(std::string(artifact_schema_sql()).find("PRAGMA user_version = " + std::to_string(kArtifactSqliteVersion) + ";") !=
        std::string::npos);
}

TEST_CASE("artifact: unknown schema versions are refused in one line naming the file", "[artifact]") {
  ScopedTempDir tmp("artifact");
  const std::string dir = tmp.file("art");
  write_artifact(dir, test::synthetic_artifact());

  SECTION("manifest.json") {
    test::edit_manifest(dir, [](nlohmann::json& m) { m["schema_version"] = 7; });
    CHECK(test::artifact_read_error(dir) == dir + "/manifest.json: schema version 7, this specd reads 1 to 6");
    CHECK_THROWS_WITH(ArtifactReader(dir), dir + "/manifest.json: schema version 7, this specd reads 1 to 6");
    CHECK(verify_artifact(dir, "", "") == std::vector<std::string>{dir + "/manifest.json: schema version 7, this specd reads 1 to 6"});
  }
  SECTION("the manifest's record of a file's version") {
    test::edit_manifest(dir, [](nlohmann::json& m) { m["files"]["calibration.h5"]["schema_version"] = 6; });
    CHECK(test::artifact_read_error(dir) == dir + "/manifest.json: files.calibration.h5.schema_version is 6, this specd reads 1 to 5");
  }
  SECTION("calibration.sqlite's user_version") {
    {
      sqlite::Database db(dir + "/calibration.sqlite", sqlite::Database::Mode::ReadWriteCreate);
      db.exec("PRAGMA user_version = 6");
    }
    CHECK_THROWS_WITH(ArtifactReader(dir).thresholds(), Catch::StartsWith(dir + "/calibration.sqlite: sha256 differs from manifest.json"));
    test::reseal(dir);
    CHECK(test::artifact_read_error(dir) == dir + "/calibration.sqlite: schema version 6, this specd reads 1 to 5");
    CHECK_THROWS_WITH(ArtifactReader(dir).csd_pairs(), dir + "/calibration.sqlite: schema version 6, this specd reads 1 to 5");
  }
  SECTION("calibration.h5's schema_version attribute") {
    Hdf5File file = Hdf5File::create(dir + "/calibration.h5");
    file.write_root_attribute("schema_version", 9);
    file.close();
    test::reseal(dir);
    CHECK(test::artifact_read_error(dir) == dir + "/calibration.h5: schema version 9, this specd reads 1 to 5");
  }
}

TEST_CASE("artifact: a malformed manifest is refused naming the field", "[artifact]") {
  ScopedTempDir tmp("artifact");
  const std::string dir = tmp.file("art");
  write_artifact(dir, test::synthetic_artifact());
  const std::string where = dir + "/manifest.json: ";
  auto error_after = [&](const std::function<void(nlohmann::json&)>& edit) {
    test::edit_manifest(dir, edit);
    return test::artifact_read_error(dir);
  };
  CHECK(error_after([](auto& m) { m["format"] = "other"; }) == where + "field 'format' must be \"specd-artifact\"");
  CHECK(error_after([](auto& m) { m["format"] = "specd-artifact"; m["pair"]["target"]["vocab_size"] = "x"; }) ==
        where + "field 'pair.target.vocab_size' must be an integer");
  CHECK(error_after([](auto& m) { m["pair"]["target"]["vocab_size"] = 4096; m["pair"].erase("draft"); }) ==
        where + "missing field 'pair.draft'");
  CHECK(error_after([](auto& m) { m["pair"]["draft"] = nullptr; m["calibrations"]["csd"]["shard"]["index"] = 4; }) ==
        where + "field 'calibrations.csd.shard.index' must be in [0, shard.count)");
  CHECK(error_after([](auto& m) { m["calibrations"]["medusa"] = nlohmann::json::object(); }) == where + "unknown calibration 'medusa'");
  test::write_text_file(dir + "/manifest.json", "{");
  CHECK(test::artifact_read_error(dir) == where + "invalid JSON at byte 2: parse error at line 1, column 2: syntax error while parsing object key - "
                              "unexpected end of input; expected string literal");
  std::filesystem::remove(dir + "/manifest.json");
  CHECK_THAT(test::artifact_read_error(dir), Catch::StartsWith(where + "cannot open"));
}

TEST_CASE("artifact: a corrupted calibration.sqlite is refused naming it", "[artifact]") {
  ScopedTempDir tmp("artifact");
  const std::string dir = tmp.file("art");
  write_artifact(dir, test::synthetic_artifact(40));
  const std::string path = dir + "/calibration.sqlite";
  const auto size = std::filesystem::file_size(path);
  REQUIRE(size >= 3 * 4096);
  {
    // The first bytes of a page in the middle: its b-tree page header.
    std::fstream file(path, std::ios::in | std::ios::out | std::ios::binary);
    file.seekp(static_cast<std::streamoff>(size / 4096 / 2 * 4096));
    file.write(std::string(16, '\xa5').data(), 16);
  }
  CHECK_THAT(test::artifact_read_error(dir), Catch::StartsWith(path + ": sha256 differs from manifest.json (file "));
  const std::vector<std::string> before = verify_artifact(dir, "", "");
  REQUIRE_FALSE(before.empty());
  CHECK_THAT(before[0], Catch::StartsWith(path + ": sha256 differs"));

  test::reseal(dir);  // damaged before it was sealed: SQLite's own checks must find it
  const std::string error = test::artifact_read_error(dir);
  CHECK(one_line(error));
  CHECK_THAT(error, Catch::StartsWith(path + ": "));
  CHECK_THAT(error, Catch::Contains("integrity check") || Catch::Contains("malformed"));
  const std::vector<std::string> problems = verify_artifact(dir, "", "");
  REQUIRE_FALSE(problems.empty());
  for (const std::string& line : problems) CHECK_THAT(line, Catch::StartsWith(path + ": "));
}

TEST_CASE("artifact: missing, truncated and mismatched HDF5 datasets are refused naming the file and dataset", "[artifact]") {
  ScopedTempDir tmp("artifact");
  const std::string dir = tmp.file("art");
  const Artifact artifact = test::synthetic_artifact();
  write_artifact(dir, artifact);
  const std::string path = dir + "/calibration.h5";
  const size_t n = artifact.csd->rejections.size();
  // Rewrites calibration.h5 with the rejection columns given (each n rows unless overridden).
  auto rewrite = [&](const std::map<std::string, size_t>& lengths, const std::vector<std::string>& skip) {
    Hdf5File file = Hdf5File::create(path);
    file.write_root_attribute("schema_version", kArtifactH5Version);
    write_arc_arrays(file, *artifact.arc);
    for (const char* column : {"prompt", "step", "depth", "draft_token", "target_token"}) {
      if (std::count(skip.begin(), skip.end(), column)) continue;
      const size_t rows = lengths.count(column) ? lengths.at(column) : n;
      file.write(std::string("/csd/rejections/") + column, std::vector<int32_t>(rows, 1));
    }
    if (!std::count(skip.begin(), skip.end(), "logit_gap")) file.write("/csd/rejections/logit_gap", std::vector<float>(n, -1));
    file.write("/sam_corpus/tokens", std::vector<int32_t>{});
    file.write("/sam_corpus/offsets", std::vector<int64_t>{0});
    file.close();
    test::reseal(dir);
  };
  rewrite({{"step", n - 2}}, {});
  CHECK(test::artifact_read_error(dir) ==
        path + ": /csd/rejections/step has " + std::to_string(n - 2) + " rows, /csd/rejections/prompt " + std::to_string(n));
  rewrite({}, {"logit_gap"});
  CHECK(test::artifact_read_error(dir) == path + ": /csd/rejections/logit_gap is missing");
  CHECK(verify_artifact(dir, "", "") == std::vector<std::string>{path + ": /csd/rejections/logit_gap is missing"});
  {
    Hdf5File file = Hdf5File::create(path);
    file.write_root_attribute("schema_version", kArtifactH5Version);
    write_arc_arrays(file, *artifact.arc);
    for (const char* column : {"prompt", "step", "depth", "draft_token", "target_token"})
      file.write(std::string("/csd/rejections/") + column, std::vector<int32_t>(n, 1));
    file.write("/csd/rejections/logit_gap", std::vector<int32_t>(n, 1));  // the wrong dtype
    file.close();
    test::reseal(dir);
  }
  CHECK(test::artifact_read_error(dir) == path + ": /csd/rejections/logit_gap is int32, expected float32");

  write_artifact(dir, artifact);
  std::filesystem::resize_file(path, std::filesystem::file_size(path) / 2);
  test::reseal(dir);
  const std::string truncated = test::artifact_read_error(dir);
  CHECK(one_line(truncated));
  CHECK_THAT(truncated, Catch::StartsWith(path + ": "));
  CHECK_THAT(truncated, Catch::Contains("truncated"));
}

TEST_CASE("artifact: verify reports a file changed after writing and counts that disagree", "[artifact]") {
  ScopedTempDir tmp("artifact");
  const std::string dir = tmp.file("art");
  write_artifact(dir, test::synthetic_artifact());
  test::edit_manifest(dir, [](nlohmann::json& m) {
    m["files"]["calibration.h5"]["sha256"] = std::string(64, '0');
    m["calibrations"]["csd"]["counts"]["rejections"] = 1;
    m["calibrations"]["sam_corpus"]["counts"]["tokens"] = 2;
  });
  const std::vector<std::string> problems = verify_artifact(dir, "", "");
  REQUIRE(problems.size() == 3);
  CHECK_THAT(problems[0], Catch::StartsWith(dir + "/calibration.h5: sha256 differs from manifest.json (file "));
  CHECK_THAT(problems[0], Catch::Contains("manifest 000000000000…)"));
  CHECK_THAT(problems[1], Catch::StartsWith(dir + "/manifest.json: calibrations.csd.counts.rejections is 1, the rows give "));
  CHECK_THAT(problems[2], Catch::StartsWith(dir + "/manifest.json: calibrations.sam_corpus.counts.tokens is 2, the rows give "));
  CHECK_THAT(test::artifact_read_error(dir), Catch::StartsWith(dir + "/calibration.h5: sha256 differs"));
}

TEST_CASE("artifact: check_pair refuses the models of another pair", "[artifact]") {
  ScopedTempDir tmp("artifact");
  const std::string target = tmp.file("target"), draft = tmp.file("draft");
  test::write_model_dir(target, test::kTinyConfig, test::kTinyTokenizer, 0);
  test::write_model_dir(draft, test::kTinyConfig, test::kTinyTokenizer, 100);
  Artifact artifact = test::synthetic_artifact();
  artifact.target = fingerprint_model(target);
  artifact.draft = fingerprint_model(draft);
  CHECK(artifact.target.vocab_size == 16);
  // Token ids inside these models' 16-token vocabulary (verify checks them against it).
  for (ArcSample& s : artifact.arc->samples) s.target_token %= 16, s.draft_token %= 16;
  for (auto& document : artifact.sam_corpus->documents)
    for (int32_t& token : document) token %= 16;
  CHECK(artifact.target.embedding_sha256 != artifact.draft->embedding_sha256);
  const std::string dir = tmp.file("art");
  write_artifact(dir, artifact);
  ArtifactReader reader(dir);
  CHECK_NOTHROW(reader.check_pair(target, draft));
  CHECK_NOTHROW(reader.check_pair(target, ""));
  CHECK(verify_artifact(dir, target, draft).empty());

  const std::string other = tmp.file("other");
  auto refusal = [&](const std::string& target_dir, const std::string& draft_dir) {
    try {
      ArtifactReader(dir).check_pair(target_dir, draft_dir);
    } catch (const InputError& e) {
      return std::string(e.what());
    }
    return std::string();
  };
  test::write_model_dir(other, test::kTinyConfig, R"({"model": {"type": "Unigram"}})", 0);
  CHECK_THAT(refusal(other, draft), Catch::StartsWith(dir + ": made for another model pair: target tokenizer.json sha256 differs: artifact "));
  CHECK_THAT(refusal(other, draft), Catch::EndsWith("(" + other + ")"));
  test::write_model_dir(other, R"({"model_type": "llama", "vocab_size": 17})", test::kTinyTokenizer, 0);
  CHECK_THAT(refusal(target, other), Catch::StartsWith(dir + ": made for another model pair: draft config.json sha256 differs"));
  test::write_model_dir(other, test::kTinyConfig, test::kTinyTokenizer, 1);
  CHECK_THAT(refusal(other, ""), Catch::Contains("target embedding (model.embed_tokens.weight) sha256 differs"));
  const std::vector<std::string> problems = verify_artifact(dir, other, target);
  REQUIRE(problems.size() == 2);
  CHECK_THAT(problems[0], Catch::StartsWith(dir + "/manifest.json: target embedding"));
  CHECK_THAT(problems[1], Catch::StartsWith(dir + "/manifest.json: draft embedding"));

  artifact.draft.reset();
  write_artifact(dir, artifact);
  CHECK_THAT(refusal(target, draft), Catch::Contains("calibrated without a draft model"));

  CHECK_THROWS_WITH(fingerprint_model(tmp.file("missing")), Catch::StartsWith(tmp.file("missing") + "/config.json: cannot open"));
  std::filesystem::remove(other + "/model.safetensors");
  CHECK_THROWS_WITH(fingerprint_model(other), Catch::StartsWith(other + ": "));
}

TEST_CASE("artifact: fingerprints differ field by field", "[artifact]") {
  ModelFingerprint a = test::fake_fingerprint("x"), b = a;
  b.path = "elsewhere";
  CHECK(compare_fingerprints("target", a, b).empty());
  b.tokenizer_sha256 = test::fake_fingerprint("y").tokenizer_sha256;
  b.vocab_size = 32000;
  CHECK(compare_fingerprints("draft", a, b) ==
        std::vector<std::string>{"draft tokenizer.json sha256 differs: artifact " + a.tokenizer_sha256.substr(0, 12) + "…, model " +
                                     b.tokenizer_sha256.substr(0, 12) + "…",
                                 "draft vocab_size differs: artifact 4096, model 32000"});
}
