#include "artifact/fingerprint.h"

#include "io/checkpoint.h"
#include "io/json_reader.h"
#include "io/sha256.h"
#include "util/error.h"

namespace specd {
namespace {

constexpr const char* kEmbedding = "model.embed_tokens.weight";

std::string short_hash(const std::string& hash) { return hash.size() > 12 ? hash.substr(0, 12) + "…" : hash; }

}  // namespace

ModelFingerprint fingerprint_model(const std::string& model_dir) {
  ModelFingerprint fingerprint;
  fingerprint.path = model_dir;
  const std::string config_path = model_dir + "/config.json";
  fingerprint.config_sha256 = sha256_file(config_path);
  fingerprint.vocab_size = JsonObjectReader(read_json_file(config_path), config_path).integer("vocab_size");
  fingerprint.tokenizer_sha256 = sha256_file(model_dir + "/tokenizer.json");
  const Checkpoint checkpoint = Checkpoint::open_dir(model_dir);
  const TensorView& embedding = checkpoint.get(kEmbedding);
  Sha256 hash;
  hash.update(std::string(dtype_name(embedding.dtype)) + " " + shape_string(embedding.shape) + "\n");
  hash.update(embedding.data, embedding.nbytes);
  fingerprint.embedding_sha256 = hash.hex_digest();
  return fingerprint;
}

std::vector<std::string> compare_fingerprints(const std::string& role, const ModelFingerprint& artifact,
                                              const ModelFingerprint& model) {
  std::vector<std::string> lines;
  auto hash = [&](const char* what, const std::string& a, const std::string& m) {
    if (a != m) lines.push_back(role + " " + what + " sha256 differs: artifact " + short_hash(a) + ", model " + short_hash(m));
  };
  hash("config.json", artifact.config_sha256, model.config_sha256);
  hash("tokenizer.json", artifact.tokenizer_sha256, model.tokenizer_sha256);
  hash("embedding (model.embed_tokens.weight)", artifact.embedding_sha256, model.embedding_sha256);
  if (artifact.vocab_size != model.vocab_size)
    lines.push_back(role + " vocab_size differs: artifact " + std::to_string(artifact.vocab_size) + ", model " +
                    std::to_string(model.vocab_size));
  return lines;
}

void check_pair(const std::string& artifact_dir, const Artifact& artifact, const std::string& target_dir,
                const std::string& draft_dir) {
  auto refuse = [&](const std::string& line, const std::string& model_dir) {
    input_error(artifact_dir, "made for another model pair: " + line + " (" + model_dir + ")");
  };
  for (const std::string& line : compare_fingerprints("target", artifact.target, fingerprint_model(target_dir)))
    refuse(line, target_dir);
  if (draft_dir.empty()) return;
  if (!artifact.draft) refuse("calibrated without a draft model", draft_dir);
  for (const std::string& line : compare_fingerprints("draft", *artifact.draft, fingerprint_model(draft_dir)))
    refuse(line, draft_dir);
}

}  // namespace specd
