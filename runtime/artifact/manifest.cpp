#include "artifact/manifest.h"

#include <algorithm>
#include <optional>

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

ArcConstants parse_arc_constants(const json& object, const std::string& where, const std::string& prefix) {
  JsonObjectReader reader(object, where, prefix);
  ArcConstants c;
  c.bucket = reader.string("bucket");
  c.samples = reader.integer("samples");
  c.rank = reader.integer("rank");
  c.c_s = reader.number("c_s");
  c.alpha_kappa = reader.number("alpha_kappa");
  c.tau_delta = reader.number("tau_delta");
  if (c.samples < 0) reader.fail("samples", "must not be negative");
  if (c.rank < 1) reader.fail("rank", "must be positive");
  return c;
}

// The manifest's part of an arc calibration: provenance, settings and the "all" constants (the
// other buckets and the samples live in the other files).
ArcCalibration parse_arc_calibration(const json& object, const std::string& where, const std::string& prefix) {
  JsonObjectReader reader(object, where, prefix);
  ArcCalibration arc;
  arc.provenance = parse_provenance(object, where, prefix);
  arc.delta = reader.number("delta");
  if (!(arc.delta > 0 && arc.delta < 1)) reader.fail("delta", "must be in (0, 1)");
  arc.top_k = static_cast<int32_t>(reader.integer_in("top_k", 2, INT32_MAX));
  arc.mu = reader.number("mu");
  if (!(arc.mu >= 0)) reader.fail("mu", "must not be negative");
  arc.epsilon = reader.number("epsilon");
  if (!(arc.epsilon > 0)) reader.fail("epsilon", "must be positive");
  if (!object.contains("constants")) reader.at("constants");  // required, null before the fit
  if (reader.has("constants")) {
    const json& constants = reader.at("constants");
    if (!constants.is_object()) reader.fail("constants", "must be an object or null");
    arc.constants.push_back(parse_arc_constants(constants, where, prefix + "constants."));
  }
  return arc;
}

SweepCalibration parse_sweep_calibration(const json& object, const std::string& where, const std::string& prefix) {
  JsonObjectReader reader(object, where, prefix);
  SweepCalibration sweep;
  sweep.provenance = parse_provenance(object, where, prefix);
  sweep.family = reader.string("family");
  const json& lossless = reader.at("lossless");
  if (!lossless.is_boolean()) reader.fail("lossless", "must be true or false");
  sweep.lossless = lossless.get<bool>();
  const json& grid = reader.at("grid");
  if (!grid.is_array() || grid.empty()) reader.fail("grid", "must be a non-empty array");
  for (size_t i = 0; i < grid.size(); ++i) {
    if (!grid[i].is_object()) reader.fail("grid", "must hold objects");
    JsonObjectReader axis_reader(grid[i], where, prefix + "grid[" + std::to_string(i) + "].");
    SweepAxis axis;
    axis.name = axis_reader.string("name");
    const json& values = axis_reader.at("values");
    const json& texts = axis_reader.at("texts");
    if (!values.is_array() || values.empty() || !std::all_of(values.begin(), values.end(), [](const json& v) { return v.is_number(); }))
      axis_reader.fail("values", "must be a non-empty array of numbers");
    if (!texts.is_array() || texts.size() != values.size() ||
        !std::all_of(texts.begin(), texts.end(), [](const json& v) { return v.is_string(); }))
      axis_reader.fail("texts", "must be an array of strings, one per value");
    axis.values = values.get<std::vector<double>>();
    axis.texts = texts.get<std::vector<std::string>>();
    sweep.grid.push_back(std::move(axis));
  }
  sweep.planned_runs = static_cast<int32_t>(reader.integer_in("planned_runs", 1, INT32_MAX));
  JsonObjectReader bounds(object_field(reader, "bounds"), where, prefix + "bounds.");
  sweep.max_nll_increase = bounds.number("max_nll_increase");
  sweep.min_chrf = bounds.number("min_chrf");
  // Version 4 added the contract's exact-match bound and confidence; a version-3 sweep chose on
  // its point estimates (confidence 0).
  sweep.max_changed = bounds.has("max_changed") ? bounds.number("max_changed") : 1.0;
  sweep.confidence = bounds.has("confidence") ? bounds.number("confidence") : 0.0;
  sweep.max_tv = bounds.has("max_tv") ? bounds.number("max_tv") : 1.0;  // version 5
  if (reader.has("chosen")) sweep.chosen = static_cast<int32_t>(reader.integer_in("chosen", 0, sweep.planned_runs - 1));
  else if (!object.contains("chosen")) reader.at("chosen");  // required, null when none was chosen
  sweep.choice = reader.string("choice");
  return sweep;
}

}  // namespace

json sweep_calibration_json(const SweepCalibration& sweep) {
  json out = provenance_json(sweep.provenance);
  out["family"] = sweep.family;
  out["lossless"] = sweep.lossless;
  json grid = json::array();
  for (const SweepAxis& axis : sweep.grid) grid.push_back({{"name", axis.name}, {"values", axis.values}, {"texts", axis.texts}});
  out["grid"] = grid;
  out["planned_runs"] = sweep.planned_runs;
  out["bounds"] = {{"max_nll_increase", sweep.max_nll_increase}, {"min_chrf", sweep.min_chrf}, {"max_changed", sweep.max_changed},
                   {"max_tv", sweep.max_tv}, {"confidence", sweep.confidence}};
  out["chosen"] = sweep.chosen ? json(*sweep.chosen) : json(nullptr);
  out["choice"] = sweep.choice;
  return out;
}

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
  if (!p.job.is_null()) out["shard"]["job"] = p.job;
  if (!p.machine.is_null()) out["machine"] = p.machine;
  if (!p.shards.empty()) out["shards"] = p.shards;
  return out;
}

json arc_constants_json(const ArcConstants& c) {
  return {{"bucket", c.bucket}, {"samples", c.samples},         {"rank", c.rank},
          {"c_s", c.c_s},       {"alpha_kappa", c.alpha_kappa}, {"tau_delta", c.tau_delta}};
}

json arc_calibration_json(const ArcCalibration& arc) {
  json out = provenance_json(arc.provenance);
  out["delta"] = arc.delta;
  out["top_k"] = arc.top_k;
  out["mu"] = arc.mu;
  out["epsilon"] = arc.epsilon;
  out["constants"] = arc.constants.empty() ? json(nullptr) : arc_constants_json(arc.constants.front());
  return out;
}

json manifest_json(const Artifact& a, const std::map<std::string, ManifestFile>& files) {
  json file_entries = json::object();
  for (const auto& [name, file] : files) file_entries[name] = {{"sha256", file.sha256}, {"schema_version", file.schema_version}};
  json calibrations = json::object();
  if (a.csd) calibrations[kCsdPolicy] = provenance_json(a.csd->provenance);
  if (a.sam_corpus) calibrations[kSamCorpusPolicy] = provenance_json(a.sam_corpus->provenance);
  if (a.arc) calibrations[kArcPolicy] = arc_calibration_json(*a.arc);
  if (!a.sweeps.empty()) {
    json sweeps = json::object();
    for (const SweepCalibration& s : a.sweeps) sweeps[s.family] = sweep_calibration_json(s);
    calibrations[kSweepCalibration] = sweeps;
  }
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
  if (shard.has("job")) {
    JsonObjectReader job(object_field(shard, "job"), where, prefix + "shard.job.");
    p.job = {{"scheduler", job.string("scheduler")}, {"job_id", job.string("job_id")}, {"task_id", job.string("task_id")}};
  }
  if (reader.has("machine")) {  // version 6
    JsonObjectReader machine(object_field(reader, "machine"), where, prefix + "machine.");
    const json& features = machine.at("features");
    if (!features.is_array() || !std::all_of(features.begin(), features.end(), [](const json& f) { return f.is_string(); }))
      machine.fail("features", "must be an array of strings");
    const std::optional<int64_t> level = machine.optional_integer("cache_level"), bytes = machine.optional_integer("cache_bytes");
    if (level.has_value() != bytes.has_value()) machine.fail("cache_bytes", "must be null exactly when cache_level is");
    if (level && (*level < 1 || *bytes < 1)) machine.fail(*level < 1 ? "cache_level" : "cache_bytes", "must be positive");
    p.machine = {{"cpu", machine.string("cpu")},
                 {"features", features},
                 {"cache_level", level ? json(*level) : json()},
                 {"cache_bytes", bytes ? json(*bytes) : json()},
                 {"threads", machine.integer_in("threads", 1, INT32_MAX)},
                 {"device", machine.string("device")}};
  }
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
  if (version < kOldestArtifactVersion || version > kArtifactSchemaVersion)
    input_error(where, "schema version " + std::to_string(version) + ", this specd reads " + readable_versions(kArtifactSchemaVersion));
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
    if (name != kCsdPolicy && name != kSamCorpusPolicy && !(name == kArcPolicy && version >= 2) &&
        !(name == kSweepCalibration && version >= 3))
      input_error(where, "unknown calibration " + single_quoted(name) +
                             (name == kArcPolicy || name == kSweepCalibration ? " in schema version " + std::to_string(version) : ""));
    if (!provenance.is_object()) input_error(where, "field " + single_quoted("calibrations." + name) + " must be an object");
  }
  if (calibrations.contains(kCsdPolicy))
    a.csd = CsdCalibration{parse_provenance(calibrations[kCsdPolicy], where, "calibrations.csd."), {}, {}, {}};
  if (calibrations.contains(kSamCorpusPolicy))
    a.sam_corpus = SamCorpusCalibration{parse_provenance(calibrations[kSamCorpusPolicy], where, "calibrations.sam_corpus."), {}, {}};
  if (calibrations.contains(kArcPolicy)) a.arc = parse_arc_calibration(calibrations[kArcPolicy], where, "calibrations.arc.");
  if (calibrations.contains(kSweepCalibration))
    for (const auto& [family, sweep] : calibrations[kSweepCalibration].items()) {
      const std::string prefix = std::string("calibrations.") + kSweepCalibration + "." + family + ".";
      a.sweeps.push_back(parse_sweep_calibration(sweep, where, prefix));
      if (a.sweeps.back().family != family) input_error(where, "field " + single_quoted(prefix + "family") + " must be " + single_quoted(family));
    }
  return out;
}

namespace {

// The first field of `given` that the writer's form of the same manifest lacks ("pair.target.x"),
// or "": a key this specd does not write is a typo or another tool's, and ignoring it would
// let a reader and a writer disagree about what the artifact says. The free-form objects
// (options, counts, a shard's job, merged shards) are not compared.
std::string unknown_field(const json& given, const json& written, const std::string& prefix) {
  if (!given.is_object() || !written.is_object()) return "";
  for (const auto& [key, value] : given.items()) {
    if (!written.contains(key)) return prefix + key;
    if (key == "options" || key == "counts" || key == "job" || key == "shards") continue;
    const std::string inner = unknown_field(value, written.at(key), prefix + key + ".");
    if (!inner.empty()) return inner;
  }
  return "";
}

}  // namespace

Manifest read_manifest(const std::string& dir) {
  const std::string path = dir + "/" + kManifestFile;
  const json given = read_json_file(path);
  Manifest manifest = parse_manifest(given, path);
  const std::string unknown = unknown_field(given, manifest_json(manifest.header, manifest.files), "");
  if (!unknown.empty()) input_error(path, "field " + single_quoted(unknown) + " is not one a specd artifact has");
  return manifest;
}

}  // namespace specd
