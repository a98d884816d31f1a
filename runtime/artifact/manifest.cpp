#include "artifact/manifest.h"

#include <algorithm>

#include "io/json_reader.h"
#include "util/error.h"

namespace specd {

using nlohmann::json;

namespace {

constexpr const char* kFormat = "specd-artifact";

bool is_sha256(const std::string& text) {
  return text.size() == 64 && std::all_of(text.begin(), text.end(), [](char c) {
           return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f');
         });
}

const json& object_field(const JsonObjectReader& reader, const std::string& key) {
  const json& value = reader.at(key);
  if (!value.is_object()) reader.fail(key, "must be an object");
  return value;
}

std::string sha256_field(const JsonObjectReader& reader, const std::string& key) {
  const std::string value = reader.string(key);
  if (!is_sha256(value)) reader.fail(key, "must be 64 lowercase hex digits");
  return value;
}

ModelFingerprint parse_fingerprint(const json& object, const std::string& where, const std::string& prefix) {
  JsonObjectReader reader(object, where, prefix);
  ModelFingerprint fingerprint;
  fingerprint.path = reader.string("path");
  fingerprint.config_sha256 = sha256_field(reader, "config_sha256");
  fingerprint.tokenizer_sha256 = sha256_field(reader, "tokenizer_sha256");
  fingerprint.embedding_sha256 = sha256_field(reader, "embedding_sha256");
  fingerprint.vocab_size = reader.integer("vocab_size");
  if (fingerprint.vocab_size <= 0) reader.fail("vocab_size", "must be positive");
  return fingerprint;
}

}  // namespace

json fingerprint_json(const ModelFingerprint& f) {
  return {{"path", f.path},
          {"config_sha256", f.config_sha256},
          {"tokenizer_sha256", f.tokenizer_sha256},
          {"embedding_sha256", f.embedding_sha256},
          {"vocab_size", f.vocab_size}};
}

json provenance_json(const CalibrationProvenance& p) {
  json out = {{"command_line", p.command_line},
              {"prompts", {{"path", p.prompts_path}, {"sha256", p.prompts_sha256}, {"count", p.prompt_count}}},
              {"shard", {{"index", p.shard_index}, {"count", p.shard_count}}},
              {"seed", p.seed},
              {"sampling", {{"temperature", p.temperature}, {"top_k", p.top_k}, {"top_p", p.top_p}}},
              {"options", p.options},
              {"counts", p.counts},
              {"wall_s", p.wall_s}};
  if (!p.shards.empty()) out["shards"] = p.shards;
  return out;
}

json manifest_json(const Artifact& a, const std::map<std::string, ManifestFile>& files) {
  json file_entries = json::object();
  for (const auto& [name, file] : files) file_entries[name] = {{"sha256", file.sha256}, {"schema_version", file.schema_version}};
  json calibrations = json::object();
  if (a.csd) calibrations[kCsdPolicy] = provenance_json(a.csd->provenance);
  if (a.sam_corpus) calibrations[kSamCorpusPolicy] = provenance_json(a.sam_corpus->provenance);
  return {{"format", kFormat},
          {"schema_version", a.schema_version},
          {"created_at", a.created_at},
          {"tool", {{"name", "specd"}, {"version", a.tool_version}, {"git_commit", a.git_commit}}},
          {"pair", {{"target", fingerprint_json(a.target)}, {"draft", a.draft ? fingerprint_json(*a.draft) : json(nullptr)}}},
          {"files", file_entries},
          {"calibrations", calibrations}};
}

CalibrationProvenance parse_provenance(const json& object, const std::string& where, const std::string& prefix) {
  JsonObjectReader reader(object, where, prefix);
  CalibrationProvenance p;
  p.command_line = reader.string("command_line");
  JsonObjectReader prompts(object_field(reader, "prompts"), where, prefix + "prompts.");
  p.prompts_path = prompts.string("path");
  p.prompts_sha256 = sha256_field(prompts, "sha256");
  p.prompt_count = prompts.integer("count");
  JsonObjectReader shard(object_field(reader, "shard"), where, prefix + "shard.");
  const int64_t shard_count = shard.integer("count");
  const int64_t shard_index = shard.integer("index");
  if (shard_count < 1 || shard_count > INT32_MAX) shard.fail("count", "must be a positive int32");
  if (shard_index < 0 || shard_index >= shard_count) shard.fail("index", "must be in [0, shard.count)");
  p.shard_count = static_cast<int32_t>(shard_count);
  p.shard_index = static_cast<int32_t>(shard_index);
  if (reader.has("shards")) {
    const json& shards = reader.at("shards");
    if (!shards.is_array()) reader.fail("shards", "must be an array");
    for (size_t i = 0; i < shards.size(); ++i) {
      if (!shards[i].is_object()) reader.fail("shards", "must hold objects");
      p.shards.push_back(shards[i]);
    }
  }
  const json& seed = reader.at("seed");
  if (!seed.is_number_unsigned() && !(seed.is_number_integer() && seed.get<int64_t>() >= 0))
    reader.fail("seed", "must be a non-negative integer");
  p.seed = seed.get<uint64_t>();
  JsonObjectReader sampling(object_field(reader, "sampling"), where, prefix + "sampling.");
  p.temperature = sampling.number("temperature");
  p.top_k = sampling.integer("top_k");
  p.top_p = sampling.number("top_p");
  p.options = object_field(reader, "options");
  p.counts = object_field(reader, "counts");
  for (const auto& [key, value] : p.counts.items())
    if (!value.is_number()) reader.fail("counts", "must hold numbers ('" + key + "' does not)");
  p.wall_s = reader.number("wall_s");
  return p;
}

Manifest parse_manifest(const json& manifest, const std::string& where) {
  if (!manifest.is_object()) input_error(where, "must be a JSON object");
  JsonObjectReader reader(manifest, where);
  if (reader.string("format") != kFormat) reader.fail("format", "must be \"" + std::string(kFormat) + "\"");
  const int64_t version = reader.integer("schema_version");
  if (version != kArtifactSchemaVersion)
    input_error(where, "schema version " + std::to_string(version) + ", this specd reads " +
                           std::to_string(kArtifactSchemaVersion));
  Manifest out;
  Artifact& a = out.header;
  a.schema_version = static_cast<int32_t>(version);
  a.created_at = reader.string("created_at");
  JsonObjectReader tool(object_field(reader, "tool"), where, "tool.");
  a.tool_version = tool.string("version");
  a.git_commit = tool.string("git_commit");
  const json& pair_object = object_field(reader, "pair");
  JsonObjectReader pair(pair_object, where, "pair.");
  a.target = parse_fingerprint(object_field(pair, "target"), where, "pair.target.");
  if (pair.has("draft")) a.draft = parse_fingerprint(object_field(pair, "draft"), where, "pair.draft.");
  else if (!pair_object.contains("draft")) pair.at("draft");  // must be present, null for a model-free pair

  JsonObjectReader files(object_field(reader, "files"), where, "files.");
  for (const char* name : {kSqliteFile, kH5File}) {
    JsonObjectReader file(object_field(files, name), where, std::string("files.") + name + ".");
    out.files[name] = {sha256_field(file, "sha256"), file.integer("schema_version")};
  }
  const json& calibrations = object_field(reader, "calibrations");
  for (const auto& [name, provenance] : calibrations.items()) {
    if (name != kCsdPolicy && name != kSamCorpusPolicy) input_error(where, "unknown calibration " + single_quoted(name));
    if (!provenance.is_object()) input_error(where, "field " + single_quoted("calibrations." + name) + " must be an object");
  }
  if (calibrations.contains(kCsdPolicy))
    a.csd = CsdCalibration{parse_provenance(calibrations[kCsdPolicy], where, "calibrations.csd."), {}, {}, {}};
  if (calibrations.contains(kSamCorpusPolicy))
    a.sam_corpus = SamCorpusCalibration{parse_provenance(calibrations[kSamCorpusPolicy], where, "calibrations.sam_corpus."), {}, {}};
  return out;
}

Manifest read_manifest(const std::string& dir) {
  const std::string path = dir + "/" + kManifestFile;
  return parse_manifest(read_json_file(path), path);
}

}  // namespace specd
