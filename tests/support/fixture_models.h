#pragma once
// Small random-weight checkpoints written by the tests themselves.
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "io/model_config.h"
#include "io/random_checkpoint.h"
#include "io/remove_tree.h"
#include "model/llama_model.h"

namespace specd::test {

// A tiny Llama with grouped-query attention and non-trivial norm gains.
inline ModelConfig tiny_config(const std::string& model_type = "llama") {
  ModelConfig cfg;
  cfg.model_type = model_type;
  cfg.vocab_size = 301;
  cfg.hidden_size = 64;
  cfg.intermediate_size = 96;
  cfg.num_hidden_layers = 3;
  cfg.num_attention_heads = 4;
  cfg.num_key_value_heads = 2;
  cfg.head_dim = 16;
  cfg.max_position_embeddings = 256;
  cfg.rms_norm_eps = 1e-5;
  cfg.rope_theta = 10000.0;
  cfg.qkv_bias = model_type == "qwen2";
  cfg.eos_token_ids = {300};
  return cfg;
}

// n token ids below `vocab`, a fixed pseudo-random sequence per seed.
inline std::vector<int64_t> some_tokens(int64_t n, int64_t vocab, int64_t seed) {
  std::vector<int64_t> tokens;
  for (int64_t i = 0; i < n; ++i) tokens.push_back((i * 131 + seed * 17 + 5) % vocab);
  return tokens;
}

inline std::string fixture_dir(const std::string& name) {
  auto dir = std::filesystem::path(SPECD_BINARY_DIR) / "test-fixtures" / name;
  specd::remove_tree(dir.string());
  std::filesystem::create_directories(dir);
  return dir.string();
}

// Weights ~ N(0, 0.2): large enough that attention is far from uniform, so that a wrong mask or
// position shows up in the logits.
inline std::string write_model(const std::string& name, const ModelConfig& cfg, DType dtype = DType::F32, uint64_t seed = 7,
                               size_t max_shard_bytes = 0) {
  std::string dir = fixture_dir(name);
  RandomCheckpointOptions options;
  options.dtype = dtype;
  options.stddev = 0.2;
  options.norm_gain_jitter = 0.2;
  options.seed = seed;
  options.max_shard_bytes = max_shard_bytes;
  write_random_checkpoint(dir, cfg, options);
  return dir;
}

// aten: the device-generic ATen forward instead of the CPU kernels. fp32_activations: no BF16
// rounding of activations for BF16 weights (cpu/matmul_bf16_dot.h). kv: the KV caches' type.
// device: "cpu", or a CUDA device (always the ATen forward).
inline std::shared_ptr<LlamaModel> load_model(const std::string& dir, bool aten = false, int threads = 1,
                                              bool fp32_activations = false, KvType kv = KvType::F32,
                                              const std::string& device_name = "cpu") {
  DeviceSpec device;
  device.name = device_name;
  device.threads = threads;
  device.aten_on_cpu = aten && device_name == "cpu";
  device.fp32_activations = fp32_activations;
  device.kv_type = kv;
  return LlamaModel::load(dir, device);
}

// The CPU kernels at every KV cache type and the ATen forward with a float32 cache, for GENERATE:
// the exact oracles hold for each. (The ATen forward with 16-bit caches is not batch-invariant
// at the cache's rounding; test_forward_oracles.cpp checks it within that.) With SPECD_TEST_CUDA
// set (scripts/cuda_check.sh) the ATen forward on the default CUDA device joins them: asked for,
// it must run, so a machine without CUDA fails these tests instead of skipping them.
struct Backend {
  bool aten;
  KvType kv;
  std::string device = "cpu";
};
inline std::vector<Backend> all_backends() {
  std::vector<Backend> backends{{false, KvType::F32}, {false, KvType::BF16}, {false, KvType::F16}, {true, KvType::F32}};
  if (std::getenv("SPECD_TEST_CUDA")) backends.push_back({true, KvType::F32, "cuda"});
  return backends;
}
inline std::string backend_name(const Backend& b) {
  return std::string(b.aten ? "aten" : "cpu") + "/kv-" + kv_type_name(b.kv) + (b.device == "cpu" ? "" : "/" + b.device);
}
inline std::shared_ptr<LlamaModel> load_model(const std::string& dir, const Backend& b, int threads = 1) {
  return load_model(dir, b.aten, threads, false, b.kv, b.device);
}

}  // namespace specd::test
