#pragma once
// The Llama architecture as a trainable torch::nn module: the same computation as the runtime's
// LlamaModel (RMSNorm, RoPE rotate_half, causal grouped-query attention, SwiGLU, tied or untied
// head) over a batch of equal-length sequences. Parameter names are Hugging Face's without the
// "model." prefix ("layers.0.self_attn.q_proj.weight"), so export and import are a rename.
#include <torch/torch.h>

#include <cstdint>

#include "io/model_config.h"

namespace specd::training {

class RmsNormImpl : public torch::nn::Module {
 public:
  RmsNormImpl(int64_t size, double eps);
  torch::Tensor forward(const torch::Tensor& x);

 private:
  torch::Tensor weight_;
  double eps_;
};
TORCH_MODULE(RmsNorm);

class AttentionImpl : public torch::nn::Module {
 public:
  explicit AttentionImpl(const ModelConfig& cfg);
  // x [batch, seq, hidden]; cos/sin [seq, head_dim/2]; mask [group * seq, seq]: the additive causal
  // mask repeated for the query heads sharing a kv head.
  torch::Tensor forward(const torch::Tensor& x, const torch::Tensor& cos, const torch::Tensor& sin,
                        const torch::Tensor& mask);

  torch::nn::Linear q_proj{nullptr}, k_proj{nullptr}, v_proj{nullptr}, o_proj{nullptr};

 private:
  int64_t heads_, kv_heads_, head_dim_;
};
TORCH_MODULE(Attention);

class MlpImpl : public torch::nn::Module {
 public:
  explicit MlpImpl(const ModelConfig& cfg);
  torch::Tensor forward(const torch::Tensor& x);

  torch::nn::Linear gate_proj{nullptr}, up_proj{nullptr}, down_proj{nullptr};
};
TORCH_MODULE(Mlp);

class DecoderLayerImpl : public torch::nn::Module {
 public:
  explicit DecoderLayerImpl(const ModelConfig& cfg);
  torch::Tensor forward(const torch::Tensor& x, const torch::Tensor& cos, const torch::Tensor& sin,
                        const torch::Tensor& mask);

  RmsNorm input_layernorm{nullptr}, post_attention_layernorm{nullptr};
  Attention self_attn{nullptr};
  Mlp mlp{nullptr};
};
TORCH_MODULE(DecoderLayer);

class TrainLlamaImpl : public torch::nn::Module {
 public:
  // Only what the runtime's llama path supports without extras: no biases, no rope scaling.
  explicit TrainLlamaImpl(const ModelConfig& cfg);

  // tokens [batch, seq] int64 at positions 0..seq-1 → logits [batch, seq, vocab] float32.
  torch::Tensor forward(const torch::Tensor& tokens);

  // Weights ~ N(0, 0.02), the projections into the residual stream scaled by 1/sqrt(2·layers)
  // (GPT-2), norm gains 1. Draws from torch's global generator.
  void initialize_weights();

  const ModelConfig& config() const { return cfg_; }
  int64_t parameter_count() const;

  torch::nn::Embedding embed_tokens{nullptr};
  torch::nn::ModuleList layers;
  RmsNorm norm{nullptr};
  torch::nn::Linear lm_head{nullptr};  // null when the embeddings are tied

 private:
  ModelConfig cfg_;
  torch::Tensor rope_cos_, rope_sin_;  // [max_position_embeddings, head_dim/2], buffers not saved
};
TORCH_MODULE(TrainLlama);

// Rejects configs the training module cannot represent (InputError naming the field).
void check_trainable(const ModelConfig& cfg);

}  // namespace specd::training
