#pragma once
// Synthetic calibration artifacts and tiny model directories for the artifact tests.
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <algorithm>
#include <functional>
#include <map>
#include <random>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "artifact/artifact.h"
#include "artifact/artifact_reader.h"
#include "artifact/consistency.h"
#include "artifact/csd_pairs.h"
#include "stats/arc_fit.h"
#include "calibrate/artifact_merge.h"
#include "calibrate/artifact_writer.h"
#include "stats/conformal.h"
#include "io/sha256.h"
#include "io/safetensors.h"
#include "test_helpers.h"
#include "util/error.h"
#include "io/sqlite_db.h"

namespace specd::test {

inline ModelFingerprint fake_fingerprint(const std::string& name) {
  return {"models/" + name, sha256_bytes(name + " config"), sha256_bytes(name + " tokenizer"),
          sha256_bytes(name + " embedding"), 4096};
}

inline CalibrationProvenance fake_provenance(const std::string& policy) {
  CalibrationProvenance p;
  p.command_line = "specd calibrate " + policy + " --out art";
  p.prompts_path = "data/calibration/prompts.jsonl";
  p.prompts_sha256 = sha256_bytes("prompts");
  p.prompt_count = 181;
  p.seed = 18446744073709551557ULL;  // above INT64_MAX: the seed is unsigned
  p.temperature = 0;
  p.top_k = 0;
  p.top_p = 1;
  p.options = policy == kCsdPolicy ? nlohmann::json{{"gamma", 6}} : nlohmann::json::object();
  p.counts = nlohmann::json::object();
  p.wall_s = 12.5;
  p.machine = {{"cpu", "AMD EPYC 9B14"}, {"features", {"avx2", "fma", "avx512f", "avx512_bf16"}}, {"cache_level", 3},
               {"cache_bytes", int64_t{32} << 20}, {"threads", 2}, {"device", "cpu"}};
  return p;
}

// A pld sweep (specd calibrate sweep) of one run, tokens=5, measured at `tokens_per_s` against an
// AR of 100 tokens/s with MAT `mat`, and chosen.
inline SweepCalibration pld_sweep(double tokens_per_s = 100, double mat = 0) {
  SweepCalibration sweep;
  sweep.provenance = fake_provenance("sweep");
  sweep.family = "pld";
  sweep.grid = {{"tokens", {5, 10}, {"5", "10"}}};
  sweep.planned_runs = 3;
  SweepRun run;
  run.index = 1;
  run.values = {5};
  run.point = "tokens=5";
  run.stats.push_back(SweepStats{});
  run.stats.back().category = "overall";
  run.stats.back().tokens_per_s = tokens_per_s;
  run.stats.back().speedup = tokens_per_s / 100;
  run.stats.back().mat = mat;
  run.wall_s = 1000 / tokens_per_s;
  sweep.runs = {run};
  sweep.chosen = 1;
  char speedup[32];
  std::snprintf(speedup, sizeof speedup, "%.2f", tokens_per_s / 100);
  sweep.choice = std::string("sweep run 1 of 3: ") + speedup + "x AR, fastest lossless";
  return sweep;
}

// `prompts` calibration prompts; prompt i's CSD run rejects a few (draft, target) pairs drawn
// from a small vocabulary so pairs repeat; its SAM document has i % 5 * 3 tokens (some empty).
inline Artifact synthetic_artifact(int prompts = 12, uint32_t seed = 7) {
  std::mt19937 rng(seed);
  Artifact a;
  a.created_at = "2026-11-22T12:00:00Z";
  a.tool_version = "0.1.0";
  a.git_commit = std::string(40, 'a');
  a.target = fake_fingerprint("target");
  a.draft = fake_fingerprint("draft");
  CsdCalibration csd;
  csd.provenance = fake_provenance(kCsdPolicy);
  SamCorpusCalibration sam;
  sam.provenance = fake_provenance(kSamCorpusPolicy);
  const char* categories[] = {"code", "qa", "math"};
  for (int i = 0; i < prompts; ++i) {
    CalibratedPrompt p;
    p.index = i;
    p.id = "cal-" + std::to_string(i);
    p.category = categories[i % 3];
    p.prompt_tokens = 40 + i;
    p.new_tokens = 64;
    p.steps = 20 + i % 4;
    p.drafted = p.steps * 6;
    const int events = static_cast<int>(rng() % 6);
    for (int e = 0; e < events; ++e) {
      CsdRejection r;
      r.prompt = i;
      r.step = e * 2 + static_cast<int32_t>(rng() % 2);
      r.depth = 1 + static_cast<int32_t>(rng() % 6);  // depth 1: the root's children
      r.draft_token = static_cast<int32_t>(rng() % 4);
      r.target_token = 10 + static_cast<int32_t>(rng() % 3);
      r.logit_gap = -static_cast<float>(rng() % 1000) / 64.0f;
      csd.rejections.push_back(r);
    }
    p.rejections = events;
    p.accepted = p.drafted - events;
    p.wall_ms = 10.25 * (i + 1);
    csd.prompts.push_back(p);
    CalibratedPrompt answered = p;
    answered.steps = answered.new_tokens;
    answered.drafted = answered.accepted = answered.rejections = 0;
    sam.prompts.push_back(answered);
    std::vector<int32_t> document;
    for (int t = 0; t < i % 5 * 3; ++t) document.push_back(static_cast<int32_t>(rng() % 4096));
    sam.documents.push_back(document);
  }
  csd.pairs = summarize_pairs(csd.rejections);
  csd.provenance.counts = derived_counts(csd);
  sam.provenance.counts = derived_counts(sam);
  a.csd = csd;
  a.sam_corpus = sam;
  // ARC: every third prompt is held out; a step has up to three samples at depths up to 10.
  ArcCalibration arc;
  arc.provenance = fake_provenance(kArcPolicy);
  arc.provenance.temperature = 1;
  arc.provenance.options = {{"delta", 0.25}, {"top_k", 10}, {"mu", 1e-4}, {"epsilon", 1e-6}, {"buckets", "depth"}};
  arc.delta = 0.25;  // a few samples suffice (the conformal rank needs n >= 3)
  arc.top_k = 10;
  arc.prompts = csd.prompts;
  for (int k = 0; k < 8; ++k) arc.whitening.push_back(1.0f / static_cast<float>(k + 1));
  for (const CalibratedPrompt& p : arc.prompts) {
    const int32_t steps = static_cast<int32_t>(rng() % 4);
    for (int32_t step = 0; step < steps; ++step) {
      const int32_t samples = 1 + static_cast<int32_t>(rng() % 3);
      for (int32_t j = 0; j < samples; ++j) {
        ArcSample x;
        x.prompt = p.index;
        x.step = step;
        x.depth = 1 + static_cast<int32_t>(rng() % 10);
        x.position = p.prompt_tokens + step * 4 + x.depth;
        x.target_token = static_cast<int32_t>(rng() % 4096);
        x.draft_token = static_cast<int32_t>(rng() % 4096);
        x.root_entropy = static_cast<float>(rng() % 1000) / 1000.0f;
        x.u_emb_raw = 0.1 + static_cast<double>(rng() % 100000) / 7919.0;  // not representable in float32
        x.u_logit_raw = 0.01 + static_cast<double>(rng() % 100000) / 104729.0;
        x.js = static_cast<double>(rng() % 100000) / 100000.0 * 0.69;  // JS is at most ln 2
        x.held_out = p.index % 3 == 2;
        arc.samples.push_back(x);
      }
    }
  }
  // Too few calibration samples (a tiny fixture) leave it unfitted, as a shard.
  int64_t calibration_samples = 0;
  for (const ArcSample& x : arc.samples) calibration_samples += !x.held_out;
  if (calibration_samples >= conformal_min_samples(arc.delta)) fit_arc(arc, arc_buckets_of(arc, "fixture"), "fixture");
  arc.provenance.counts = derived_counts(arc);
  a.arc = arc;
  a.thresholds = {{"csd", "lambda", 6, "paper default"}, {"csd", "tau", 0.01, "paper default"}};
  return a;
}

// The one-line InputError read_artifact(dir) throws, or "" when it reads.
inline std::string artifact_read_error(const std::string& dir) {
  return input_error_message([&] { read_artifact(dir); });
}

// The one-line InputError merge_artifacts throws for shards named shard0, shard1, ..., or "".
inline std::string merge_error(const std::vector<Artifact>& shards) {
  std::vector<std::string> names;
  for (size_t i = 0; i < shards.size(); ++i) names.push_back("shard" + std::to_string(i));
  return input_error_message([&] { merge_artifacts(shards, names); });
}

// Shard `index` of `count` of a synthetic artifact: the prompts with index % count == index.
inline Artifact shard_of(const Artifact& whole, int32_t index, int32_t count) {
  Artifact a = whole;
  auto keep = [&](int32_t prompt) { return prompt % count == index; };
  auto shard_provenance = [&](CalibrationProvenance& p) {
    p.shard_index = index;
    p.shard_count = count;
    p.command_line += " --shard " + std::to_string(index) + "/" + std::to_string(count);
    p.wall_s = 1.0 + index;
  };
  CsdCalibration& csd = *a.csd;
  csd.prompts.clear();
  csd.rejections.clear();
  for (const auto& p : whole.csd->prompts)
    if (keep(p.index)) csd.prompts.push_back(p);
  for (const auto& r : whole.csd->rejections)
    if (keep(r.prompt)) csd.rejections.push_back(r);
  csd.pairs = summarize_pairs(csd.rejections);
  shard_provenance(csd.provenance);
  csd.provenance.counts = derived_counts(csd);
  SamCorpusCalibration& sam = *a.sam_corpus;
  sam.prompts.clear();
  sam.documents.clear();
  for (size_t i = 0; i < whole.sam_corpus->prompts.size(); ++i)
    if (keep(whole.sam_corpus->prompts[i].index)) {
      sam.prompts.push_back(whole.sam_corpus->prompts[i]);
      sam.documents.push_back(whole.sam_corpus->documents[i]);
    }
  shard_provenance(sam.provenance);
  sam.provenance.counts = derived_counts(sam);
  ArcCalibration& arc = *a.arc;
  arc.prompts.clear();
  arc.samples.clear();
  for (const auto& p : whole.arc->prompts)
    if (keep(p.index)) arc.prompts.push_back(p);
  for (const auto& x : whole.arc->samples)
    if (keep(x.prompt)) arc.samples.push_back(x);
  // A shard holds samples only: the merge fits the whole (calibrate arc --shard writes no constants).
  arc.constants.clear();
  arc.audit.clear();
  arc.provenance.counts = derived_counts(arc);
  shard_provenance(arc.provenance);
  return a;
}

// The `count` shards of `whole`, each written to and read back from tmp (as the shards of real runs
// would be), merged in scrambled order.
inline Artifact merge_written_shards(const Artifact& whole, int32_t count, const ScopedTempDir& tmp) {
  std::vector<Artifact> shards;
  std::vector<std::string> names;
  for (int32_t index = count - 1; index >= 0; --index) {
    const std::string dir = tmp.file("shard-" + std::to_string(index) + "-of-" + std::to_string(count));
    write_artifact(dir, shard_of(whole, index, count));
    shards.push_back(read_artifact(dir));
    names.push_back(dir);
  }
  return merge_artifacts(shards, names);
}

// Every table of an SQLite file, in name order, its rows in storage order (primary-key order for
// these WITHOUT ROWID tables), values quoted exactly as SQLite's quote() writes them.
inline std::string table_dump(const std::string& path) {
  sqlite::Database db(path, sqlite::Database::Mode::ReadOnly);
  std::vector<std::string> tables;
  {
    sqlite::Statement query(db, "SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name");
    while (query.step()) tables.push_back(query.text(0));
  }
  std::string dump;
  for (const std::string& table : tables) {
    sqlite::Statement columns(db, "SELECT group_concat('quote(' || name || ')', ' || ''|'' || ') FROM pragma_table_info(?)");
    columns.bind(1, table);
    columns.step();
    sqlite::Statement rows(db, "SELECT " + columns.text(0) + " FROM " + table);
    dump += "== " + table + "\n";
    while (rows.step()) dump += rows.text(0) + "\n";
  }
  return dump;
}

// Rewrites manifest.json's sha256 of both files to match them as they are now: a file damaged
// before it was sealed, so the checks behind the hash comparison get their turn.
inline void reseal(const std::string& dir) {
  nlohmann::json manifest = nlohmann::json::parse(read_text_file(dir + "/manifest.json"));
  for (const char* name : {kSqliteFile, kH5File}) manifest["files"][name]["sha256"] = sha256_file(dir + "/" + name);
  write_text_file(dir + "/manifest.json", manifest.dump(2));
}

inline void edit_manifest(const std::string& dir, const std::function<void(nlohmann::json&)>& edit) {
  nlohmann::json manifest = nlohmann::json::parse(read_text_file(dir + "/manifest.json"));
  edit(manifest);
  write_text_file(dir + "/manifest.json", manifest.dump(2));
}

// A model directory as fingerprint_model reads it: config.json, tokenizer.json and an F32
// embedding [16, 4] in model.safetensors (values `fill` + i).
inline void write_model_dir(const std::string& dir, const std::string& config, const std::string& tokenizer, float fill) {
  std::filesystem::create_directories(dir);
  write_text_file(dir + "/config.json", config);
  write_text_file(dir + "/tokenizer.json", tokenizer);
  std::vector<float> values(64);
  for (size_t i = 0; i < values.size(); ++i) values[i] = fill + static_cast<float>(i);
  write_safetensors(dir + "/model.safetensors",
                    {{"model.embed_tokens.weight", DType::F32, {16, 4}, values.data(), values.size() * sizeof(float)}});
}

inline const char* kTinyConfig = R"({"model_type": "llama", "vocab_size": 16})";
inline const char* kTinyTokenizer = R"({"model": {"type": "BPE"}})";

}  // namespace specd::test
