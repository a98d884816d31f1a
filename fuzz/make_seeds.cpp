// Writes the seed corpora that are too big to commit, from the project's real files and its test
// fixtures, into OUT/<harness>/: a synthetic calibration artifact (its SQLite tables, HDF5 arrays
// and manifest), a trace file, small safetensors files and the demo model's header, the demo
// configs, a cut-down demo tokenizer, lines of the tokenizer corpus and of the workloads.
// Usage: make_fuzz_seeds OUT
#include <filesystem>
#include <fstream>
#include <iostream>
#include <set>
#include <sstream>

#include <nlohmann/json.hpp>

#include "artifact/artifact_arrays.h"
#include "artifact/artifact_tables.h"
#include "artifact/manifest.h"
#include "artifact_fixtures.h"  // tests/support: synthetic_artifact
#include "io/model_config.h"
#include "io/safetensors.h"
#include "io/sqlite_db.h"
#include "trace/trace_sink.h"

namespace fs = std::filesystem;
using nlohmann::json;
using namespace specd;

namespace {

std::string source(const std::string& relative) { return std::string(SPECD_SOURCE_DIR) + "/" + relative; }

std::vector<std::string> lines_of(const std::string& path, size_t count) {
  std::ifstream in(path, std::ios::binary);
  std::vector<std::string> lines;
  for (std::string line; lines.size() < count && std::getline(in, line);)
    if (!line.empty()) lines.push_back(line);
  return lines;
}

// SQLite files shrink to 512-byte pages, so the fuzzer mutates kilobytes rather than tens of them.
void compact(const std::string& path) {
  sqlite::Database db(path, sqlite::Database::Mode::ReadWriteCreate);
  db.exec("PRAGMA journal_mode = DELETE; PRAGMA page_size = 512; VACUUM;");
}

void artifact_seeds(const fs::path& out) {
  const Artifact artifact = test::synthetic_artifact(6);
  for (const char* dir : {"artifact_sqlite", "artifact_hdf5", "manifest"}) fs::create_directories(out / dir);
  const std::string sqlite_path = (out / "artifact_sqlite" / "synthetic.sqlite").string();
  fs::remove(sqlite_path);
  write_artifact_tables(sqlite_path, artifact);
  compact(sqlite_path);
  write_artifact_arrays((out / "artifact_hdf5" / "synthetic.h5").string(), artifact);
  Artifact csd_only = artifact;
  csd_only.sam_corpus.reset();
  write_artifact_arrays((out / "artifact_hdf5" / "csd-only.h5").string(), csd_only);
  const std::map<std::string, ManifestFile> files = {{kSqliteFile, {sha256_bytes("sqlite"), kArtifactSqliteVersion}},
                                                     {kH5File, {sha256_bytes("h5"), kArtifactH5Version}}};
  test::write_text_file((out / "manifest" / "synthetic.json").string(), manifest_json(artifact, files).dump(2));
  Artifact model_free = artifact;
  model_free.draft.reset();
  model_free.csd.reset();
  test::write_text_file((out / "manifest" / "model-free.json").string(), manifest_json(model_free, files).dump());
}

void trace_seeds(const fs::path& out) {
  fs::create_directories(out / "traces");
  const std::string path = (out / "traces" / "bench.sqlite").string();
  fs::remove(path);
  {
    SqliteTraceSink sink(path);
    for (const char* method : {"pld", "csd"}) {
      RunInfo info{"specd bench --methods pld,csd --traces t.sqlite", "data/models/demo-target", "data/models/demo-draft", method,
                   R"({"gamma": 4})", "0.1.0", "0123456789abcdef0123456789abcdef01234567"};
      const int run = sink.add_run(info);
      for (int request = 0; request < 2; ++request) {
        RequestRecord record{{request, "qa-" + std::to_string(request), "qa", 12}, {}, {{5, 17, 300}, 3.5, R"({"tokens": 3})"}};
        for (int step = 0; step < 3; ++step) {
          StepTrace s;
          s.drafter = method;
          s.draft_size = 4;
          s.accepted_length = step;
          s.accepted_sources = "retrieval";
          s.root_entropy = 1.5;
          s.draft_ms = 0.1, s.verify_ms = 1.2, s.accept_ms = 0.01;
          s.lossless = method == std::string("pld");
          if (!s.lossless) s.rescued = 1, s.accepted_verdicts = "A,C", s.decision_scores = "[-1.25]";
          record.steps.push_back(s);
        }
        sink.write_request(run, record);
      }
      sink.finish_run(run);
    }
  }
  compact(path);
}

void safetensors_seeds(const fs::path& out) {
  const fs::path dir = out / "safetensors";
  fs::create_directories(dir);
  const float f32[4] = {1, -2, 0.5f, 3};
  const uint16_t halves[6] = {0x3c00, 0xc000, 0x3800, 0x0000, 0x7c00, 0x3f80};
  write_safetensors((dir / "mixed.safetensors").string(),
                    {{"model.embed_tokens.weight", DType::F32, {2, 2}, f32, sizeof f32},
                     {"model.norm.weight", DType::F16, {3}, halves, 6},
                     {"lm_head.weight", DType::BF16, {1, 3}, halves + 3, 6},
                     {"scalar", DType::F32, {}, f32, 4},
                     {"empty", DType::F32, {0, 4}, nullptr, 0}},
                    {{"format", "pt"}});
  // The demo draft's real header (every tensor name, shape and offset) with the data cut short.
  std::ifstream in(source("data/models/demo-draft/model.safetensors"), std::ios::binary);
  unsigned char length[8];
  in.read(reinterpret_cast<char*>(length), 8);
  uint64_t header = 0;
  for (int i = 0; i < 8; ++i) header |= uint64_t{length[i]} << (8 * i);
  std::string bytes(8 + header + 64, '\0');
  in.seekg(0);
  in.read(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  test::write_text_file((dir / "demo-draft-header.safetensors").string(), bytes);
}

void config_seeds(const fs::path& out) {
  const fs::path dir = out / "config";
  fs::create_directories(dir);
  for (const char* model : {"demo-target", "demo-draft"})
    fs::copy_file(source(std::string("data/models/") + model + "/config.json"), dir / (std::string(model) + ".json"),
                  fs::copy_options::overwrite_existing);
  ModelConfig config = ModelConfig::from_file(source("data/models/demo-target/config.json"));
  config.model_type = "qwen2";
  config.qkv_bias = true;
  config.rope_scaling = {RopeScalingType::Llama3, 8.0, 1.0, 4.0, 8192};
  test::write_text_file((dir / "qwen2-llama3-rope.json").string(), config.to_json().dump());
  config.model_type = "mistral";
  config.qkv_bias = false;
  config.sliding_window = 4096;
  config.rope_scaling = {RopeScalingType::Linear, 2.0};
  config.eos_token_ids = {0, 1};
  test::write_text_file((dir / "mistral-linear-rope.json").string(), config.to_json().dump());
}

// The demo tokenizer cut to its first merges and the tokens they use, every other section kept.
void tokenizer_seeds(const fs::path& out) {
  fs::create_directories(out / "tokenizer");
  fs::create_directories(out / "tokenizer_encode");
  json demo = json::parse(test::read_text_file(source("data/tokenizer/tokenizer.json")));
  const json& vocab = demo["model"]["vocab"];
  json merges = json::array();
  std::set<std::string> used;
  for (size_t i = 0; i < 40 && i < demo["model"]["merges"].size(); ++i) {
    const json& merge = demo["model"]["merges"][i];
    merges.push_back(merge);
    used.insert(merge[0].get<std::string>());
    used.insert(merge[1].get<std::string>());
    used.insert(merge[0].get<std::string>() + merge[1].get<std::string>());
  }
  json small_vocab = json::object();
  for (const auto& [token, id] : vocab.items())
    if (used.count(token) || token.size() <= 2) small_vocab[token] = id;  // single byte-level characters
  demo["model"]["vocab"] = small_vocab;
  demo["model"]["merges"] = merges;
  const std::string text = "def f(x):\n    return x  # 12 wörds\n<|endoftext|>";
  test::write_text_file((out / "tokenizer" / "demo-cut.json").string(), demo.dump() + std::string(1, '\0') + text);
  test::write_text_file((out / "tokenizer" / "tiny-byte.json").string(),
                        test::read_text_file(source("tests/fixtures/tiny_byte_tokenizer.json")) + std::string(1, '\0') + text);
  int n = 0;
  for (const std::string& line : lines_of(source("tests/fixtures/tokenizer_corpus.txt"), 40))
    test::write_text_file((out / "tokenizer_encode" / ("corpus-" + std::to_string(n++))).string(), line);
}

void workload_seeds(const fs::path& out) {
  fs::create_directories(out / "workload");
  for (const auto& entry : fs::directory_iterator(source("data/workloads"))) {
    if (entry.path().extension() != ".jsonl") continue;
    std::string text;
    for (const std::string& line : lines_of(entry.path().string(), 2)) text += line + "\n";
    test::write_text_file((out / "workload" / entry.path().filename()).string(), text);
  }
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::cerr << "usage: make_fuzz_seeds OUT\n";
    return 2;
  }
  const fs::path out = argv[1];
  try {
    artifact_seeds(out);
    trace_seeds(out);
    safetensors_seeds(out);
    config_seeds(out);
    tokenizer_seeds(out);
    workload_seeds(out);
  } catch (const std::exception& e) {
    std::cerr << "make_fuzz_seeds: " << e.what() << "\n";
    return 1;
  }
  return 0;
}
