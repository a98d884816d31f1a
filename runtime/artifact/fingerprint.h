#pragma once
// The fingerprint that binds an artifact to a model, and the check that refuses an artifact of
// another pair.
#include <string>
#include <vector>

#include "artifact/artifact.h"

namespace specd {

// SHA-256 of config.json's bytes, of tokenizer.json's bytes and of the input embedding
// `model.embed_tokens.weight` (from model.safetensors or through model.safetensors.index.json):
// the text "<dtype> <shape>\n" (e.g. "BF16 [4096, 256]\n") followed by the tensor's raw bytes as
// stored. vocab_size comes from config.json. InputError naming the file on any problem.
ModelFingerprint fingerprint_model(const std::string& model_dir);

// One line per differing field, `role` first ("target tokenizer.json sha256 differs: artifact
// 1a2b3c4d5e6f…, model 5e6f7a8b9c0d…"); empty when they agree. Paths are not compared.
std::vector<std::string> compare_fingerprints(const std::string& role, const ModelFingerprint& artifact,
                                              const ModelFingerprint& model);

// Throws InputError "ARTIFACT_DIR: made for another model pair: <first differing field>" unless
// the models in target_dir (and draft_dir, unless "") are those the artifact was calibrated for.
// A draft_dir given to an artifact calibrated without a draft model is refused too.
void check_pair(const std::string& artifact_dir, const Artifact& artifact, const std::string& target_dir,
                const std::string& draft_dir);

}  // namespace specd
