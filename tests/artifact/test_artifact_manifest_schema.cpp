// schemas/manifest.schema.json describes the manifests the writer writes: every object's keys are
// the schema's (required ones present, no others), constants and JSON types agree. A small walk
// over the keywords the schema uses, not a full JSON Schema validator (none is packaged for C++).
#include <catch2/catch.hpp>

#include "artifact_fixtures.h"
#include "calibrate/artifact_merge.h"
#include "artifact/artifact_reader.h"
#include "calibrate/artifact_writer.h"

using namespace specd;
using nlohmann::json;

namespace {

bool has_type(const json& value, const std::string& type) {
  if (type == "object") return value.is_object();
  if (type == "array") return value.is_array();
  if (type == "string") return value.is_string();
  if (type == "integer") return value.is_number_integer();
  if (type == "number") return value.is_number();
  if (type == "null") return value.is_null();
  if (type == "boolean") return value.is_boolean();
  return false;
}

// Problems of `value` against `schema` at `where`, appended to `problems`.
void check(const json& root, const json& schema, const json& value, const std::string& where, std::vector<std::string>& problems) {
  if (schema.contains("$ref")) {
    const std::string ref = schema["$ref"];
    return check(root, root.at(json::json_pointer(ref.substr(1))), value, where, problems);
  }
  if (schema.contains("oneOf")) {
    int matches = 0;
    for (const json& option : schema["oneOf"]) {
      std::vector<std::string> option_problems;
      check(root, option, value, where, option_problems);
      matches += option_problems.empty();
    }
    if (matches != 1) problems.push_back(where + ": matches " + std::to_string(matches) + " of oneOf");
    return;
  }
  if (schema.contains("const") && value != schema["const"]) problems.push_back(where + ": not " + schema["const"].dump());
  if (schema.contains("enum") && std::find(schema["enum"].begin(), schema["enum"].end(), value) == schema["enum"].end())
    problems.push_back(where + ": not one of " + schema["enum"].dump());
  if (schema.contains("type") && !has_type(value, schema["type"])) problems.push_back(where + ": not " + schema["type"].dump());
  if (value.is_array() && schema.contains("items"))
    for (size_t i = 0; i < value.size(); ++i) check(root, schema["items"], value[i], where + "/" + std::to_string(i), problems);
  if (!value.is_object()) return;
  for (const json& key : schema.value("required", json::array()))
    if (!value.contains(key.get<std::string>())) problems.push_back(where + ": missing " + key.get<std::string>());
  const json properties = schema.value("properties", json::object());
  for (const auto& [key, member] : value.items()) {
    if (properties.contains(key)) check(root, properties[key], member, where + "/" + key, problems);
    else if (schema.contains("additionalProperties") && schema["additionalProperties"].is_object())
      check(root, schema["additionalProperties"], member, where + "/" + key, problems);
    else if (schema.value("additionalProperties", true) == false) problems.push_back(where + ": unexpected " + key);
  }
}

std::vector<std::string> schema_problems(const std::string& manifest_path) {
  const json schema = json::parse(test::read_text_file(std::string(SPECD_SOURCE_DIR) + "/schemas/manifest.schema.json"));
  std::vector<std::string> problems;
  check(schema, schema, json::parse(test::read_text_file(manifest_path)), "", problems);
  return problems;
}

}  // namespace

TEST_CASE("artifact: written manifests follow schemas/manifest.schema.json", "[artifact]") {
  test::ScopedTempDir tmp("schema");
  const Artifact whole = test::synthetic_artifact(6);
  write_artifact(tmp.file("full"), whole);
  CHECK(schema_problems(tmp.file("full/manifest.json")).empty());

  // Shards run by a scheduler's array job record its job and task; the merge keeps them per shard.
  std::vector<Artifact> shards = {test::shard_of(whole, 1, 2), test::shard_of(whole, 0, 2)};
  for (Artifact& shard : shards)
    shard.csd->provenance.job = {{"scheduler", "slurm"}, {"job_id", "41"}, {"task_id", std::to_string(shard.csd->provenance.shard_index)}};
  write_artifact(tmp.file("shard"), shards[0]);
  CHECK(schema_problems(tmp.file("shard/manifest.json")).empty());
  CHECK(read_artifact(tmp.file("shard")).csd->provenance.job == shards[0].csd->provenance.job);
  const Artifact merged = merge_artifacts(shards, {"one", "zero"});
  CHECK(merged.csd->provenance.job.is_null());
  CHECK(merged.csd->provenance.shards.at(1)["shard"]["job"]["task_id"] == "1");
  CHECK(merged.csd->provenance.machine == whole.csd->provenance.machine);  // both shards ran there
  write_artifact(tmp.file("merged"), merged);
  CHECK(schema_problems(tmp.file("merged/manifest.json")).empty());
  CHECK(read_artifact(tmp.file("merged")).csd->provenance.machine == whole.csd->provenance.machine);

  // Shards of two machines: the merge names none, each shard keeps its own.
  shards[1].csd->provenance.machine["cpu"] = "Intel(R) Xeon(R) Processor";
  shards[1].csd->provenance.machine["cache_level"] = nullptr;
  shards[1].csd->provenance.machine["cache_bytes"] = nullptr;
  const Artifact mixed = merge_artifacts(shards, {"one", "zero"});
  CHECK(mixed.csd->provenance.machine.is_null());
  CHECK(mixed.csd->provenance.shards.at(0)["machine"]["cpu"] == "Intel(R) Xeon(R) Processor");
  write_artifact(tmp.file("mixed"), mixed);
  CHECK(schema_problems(tmp.file("mixed/manifest.json")).empty());
  CHECK(read_artifact(tmp.file("mixed")).csd->provenance == mixed.csd->provenance);

  // A parameter sweep (specd calibrate sweep), chosen and not.
  Artifact swept = whole;
  swept.sweeps = {test::pld_sweep()};
  write_artifact(tmp.file("swept"), swept);
  CHECK(schema_problems(tmp.file("swept/manifest.json")) == std::vector<std::string>{});
  swept.sweeps[0].chosen.reset();
  write_artifact(tmp.file("swept"), swept);
  CHECK(schema_problems(tmp.file("swept/manifest.json")) == std::vector<std::string>{});

  Artifact bare = whole;
  bare.draft.reset();
  bare.csd.reset();
  bare.sam_corpus.reset();
  write_artifact(tmp.file("bare"), bare);
  CHECK(schema_problems(tmp.file("bare/manifest.json")).empty());

  // The walk does find what the schema forbids.
  test::edit_manifest(tmp.file("bare"), [](json& m) {
    m["tool"]["extra"] = 1;
    m["pair"]["target"].erase("vocab_size");
    m["files"]["calibration.h5"]["schema_version"] = 1;
  });
  CHECK(schema_problems(tmp.file("bare/manifest.json")) ==
        std::vector<std::string>{"/files/calibration.h5/schema_version: not 5", "/pair/target: missing vocab_size",
                                 "/tool: unexpected extra"});
  test::edit_manifest(tmp.file("shard"), [](json& m) {
    m["calibrations"]["csd"]["shard"]["job"]["scheduler"] = "pbs";
    m["calibrations"]["csd"]["machine"]["threads"] = "2";
  });
  CHECK(schema_problems(tmp.file("shard/manifest.json")) ==
        std::vector<std::string>{"/calibrations/csd/machine/threads: not \"integer\"",
                                 "/calibrations/csd/shard/job/scheduler: not one of [\"slurm\",\"kubernetes\",\"mpi\"]"});
}
