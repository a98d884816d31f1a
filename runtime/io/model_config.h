#pragma once
// The architecture of a Llama-family model as Hugging Face's `config.json` describes it
// (model_type llama, mistral or qwen2), validated on parsing.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace specd {

enum class RopeScalingType { None, Linear, Llama3 };

struct RopeScaling {
  RopeScalingType type = RopeScalingType::None;
  double factor = 1.0;  // Linear and Llama3
  // Llama3 only.
  double low_freq_factor = 1.0;
  double high_freq_factor = 4.0;
  int64_t original_max_position_embeddings = 8192;

  bool operator==(const RopeScaling& other) const;
  bool operator!=(const RopeScaling& other) const { return !(*this == other); }
};

// Limits on config.json's sizes, each far above any published model, checked at load so that no
// size, and no product of sizes (tensor shapes, parameter counts, bytes), can overflow or drive
// an absurd allocation. A field beyond its limit is refused naming config.json and the field.
constexpr int64_t kMaxVocabSize = int64_t{1} << 24;     // 16,777,216 (ids fit kMaxTokenId)
constexpr int64_t kMaxModelWidth = int64_t{1} << 20;    // hidden_size, intermediate_size, heads × head_dim
constexpr int64_t kMaxHiddenLayers = 1024;
constexpr int64_t kMaxPositions = int64_t{1} << 24;     // max_position_embeddings, sliding_window
constexpr int64_t kMaxParameters = int64_t{1} << 40;    // about 1.1 trillion weights in all

struct ModelConfig {
  std::string model_type;  // llama, mistral, qwen2
  int64_t vocab_size = 0;
  int64_t hidden_size = 0;
  int64_t intermediate_size = 0;
  int64_t num_hidden_layers = 0;
  int64_t num_attention_heads = 0;
  int64_t num_key_value_heads = 0;  // defaults to num_attention_heads
  int64_t head_dim = 0;             // defaults to hidden_size / num_attention_heads
  int64_t max_position_embeddings = 0;
  double rope_theta = 10000.0;
  double rms_norm_eps = 1e-6;
  RopeScaling rope_scaling;
  bool tie_word_embeddings = false;
  bool qkv_bias = false;     // qwen2 always; llama with attention_bias
  bool o_proj_bias = false;  // llama with attention_bias
  std::optional<int64_t> sliding_window;  // mistral; qwen2 only when use_sliding_window
  std::optional<int64_t> bos_token_id;
  std::vector<int64_t> eos_token_ids;  // config.json's eos_token_id, an integer or a list
  std::optional<int64_t> pad_token_id;
  std::string torch_dtype;  // as written ("bfloat16"), empty when absent

  // `where` names the source in error messages (usually the config.json path).
  static ModelConfig from_json(const nlohmann::json& json, const std::string& where);
  static ModelConfig from_file(const std::string& path);
  // A Hugging Face config.json that transformers loads and from_json reads back equal.
  nlohmann::json to_json() const;

  bool operator==(const ModelConfig& other) const;
  bool operator!=(const ModelConfig& other) const { return !(*this == other); }
};

// Writes DIR/config.json atomically.
void write_hf_config(const std::string& dir, const ModelConfig& config);

}  // namespace specd
