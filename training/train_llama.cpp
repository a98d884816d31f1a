#include "train_llama.h"

#include <cmath>
#include <limits>

#include "io/rope_frequencies.h"
#include "util/error.h"

namespace specd::training {
namespace {

torch::nn::Linear linear(int64_t in, int64_t out) {
  return torch::nn::Linear(torch::nn::LinearOptions(in, out).bias(false));
}

// Hugging Face's rotate_half convention: the first and second halves of each head form the pairs.
torch::Tensor apply_rope(const torch::Tensor& x, const torch::Tensor& cos, const torch::Tensor& sin) {
  const int64_t half = x.size(-1) / 2;
  torch::Tensor a = x.narrow(-1, 0, half), b = x.narrow(-1, half, half);
  return torch::cat({a * cos - b * sin, b * cos + a * sin}, -1);
}

}  // namespace

void check_trainable(const ModelConfig& cfg) {
  const std::string where = "model config";
  if (cfg.model_type != "llama") input_error(where, "model_type must be llama, not " + cfg.model_type);
  if (cfg.qkv_bias || cfg.o_proj_bias) input_error(where, "attention biases are not supported in training");
  if (cfg.rope_scaling.type != RopeScalingType::None) input_error(where, "rope_scaling is not supported in training");
  if (cfg.hidden_size <= 0 || cfg.num_hidden_layers <= 0 || cfg.intermediate_size <= 0 || cfg.vocab_size <= 0)
    input_error(where, "hidden, layers, ffn and vocab sizes must be positive");
  if (cfg.num_attention_heads <= 0 || cfg.num_key_value_heads <= 0 || cfg.num_attention_heads % cfg.num_key_value_heads)
    input_error(where, "heads must be a positive multiple of kv-heads");
  if (cfg.head_dim <= 0 || cfg.head_dim % 2) input_error(where, "head_dim must be positive and even");
}

RmsNormImpl::RmsNormImpl(int64_t size, double eps) : eps_(eps) {
  weight_ = register_parameter("weight", torch::ones({size}));
}

torch::Tensor RmsNormImpl::forward(const torch::Tensor& x) {
  return x * (x * x).mean(-1, /*keepdim=*/true).add(eps_).rsqrt() * weight_;
}

AttentionImpl::AttentionImpl(const ModelConfig& cfg)
    : heads_(cfg.num_attention_heads), kv_heads_(cfg.num_key_value_heads), head_dim_(cfg.head_dim) {
  q_proj = register_module("q_proj", linear(cfg.hidden_size, heads_ * head_dim_));
  k_proj = register_module("k_proj", linear(cfg.hidden_size, kv_heads_ * head_dim_));
  v_proj = register_module("v_proj", linear(cfg.hidden_size, kv_heads_ * head_dim_));
  o_proj = register_module("o_proj", linear(heads_ * head_dim_, cfg.hidden_size));
}

torch::Tensor AttentionImpl::forward(const torch::Tensor& x, const torch::Tensor& cos, const torch::Tensor& sin,
                                     const torch::Tensor& mask) {
  const int64_t batch = x.size(0), seq = x.size(1), group = heads_ / kv_heads_;
  auto split_heads = [&](const torch::Tensor& t, int64_t n) { return t.view({batch, seq, n, head_dim_}).transpose(1, 2); };
  torch::Tensor q = apply_rope(split_heads(q_proj(x), heads_), cos, sin);  // [b, heads, seq, d], contiguous
  torch::Tensor k = apply_rope(split_heads(k_proj(x), kv_heads_), cos, sin);
  torch::Tensor v = split_heads(v_proj(x), kv_heads_);

  // Query head h reads kv head h / group (Hugging Face's repeat_kv): the group's query heads are
  // stacked as rows of one matrix per kv head instead of repeating the keys.
  // One batched GEMM computes scale · q kᵀ + causal mask.
  torch::Tensor scores = torch::baddbmm(mask, q.view({batch * kv_heads_, group * seq, head_dim_}),
                                        k.reshape({batch * kv_heads_, seq, head_dim_}).transpose(1, 2), /*beta=*/1.0,
                                        /*alpha=*/1.0 / std::sqrt(static_cast<double>(head_dim_)));
  torch::Tensor probs = torch::softmax(scores, -1).view({batch, kv_heads_, group * seq, seq});
  torch::Tensor attended = torch::matmul(probs, v);  // [b, kv, group*seq, d]
  torch::Tensor merged = attended.view({batch, heads_, seq, head_dim_}).transpose(1, 2).reshape({batch, seq, heads_ * head_dim_});
  return o_proj(merged);
}

MlpImpl::MlpImpl(const ModelConfig& cfg) {
  gate_proj = register_module("gate_proj", linear(cfg.hidden_size, cfg.intermediate_size));
  up_proj = register_module("up_proj", linear(cfg.hidden_size, cfg.intermediate_size));
  down_proj = register_module("down_proj", linear(cfg.intermediate_size, cfg.hidden_size));
}

torch::Tensor MlpImpl::forward(const torch::Tensor& x) { return down_proj(torch::silu(gate_proj(x)) * up_proj(x)); }

DecoderLayerImpl::DecoderLayerImpl(const ModelConfig& cfg) {
  input_layernorm = register_module("input_layernorm", RmsNorm(cfg.hidden_size, cfg.rms_norm_eps));
  self_attn = register_module("self_attn", Attention(cfg));
  post_attention_layernorm = register_module("post_attention_layernorm", RmsNorm(cfg.hidden_size, cfg.rms_norm_eps));
  mlp = register_module("mlp", Mlp(cfg));
}

torch::Tensor DecoderLayerImpl::forward(const torch::Tensor& x, const torch::Tensor& cos, const torch::Tensor& sin,
                                        const torch::Tensor& mask) {
  torch::Tensor h = x + self_attn(input_layernorm(x), cos, sin, mask);
  return h + mlp(post_attention_layernorm(h));
}

TrainLlamaImpl::TrainLlamaImpl(const ModelConfig& cfg) : cfg_(cfg) {
  check_trainable(cfg);
  embed_tokens = register_module("embed_tokens", torch::nn::Embedding(cfg.vocab_size, cfg.hidden_size));
  layers = register_module("layers", torch::nn::ModuleList());
  for (int64_t l = 0; l < cfg.num_hidden_layers; ++l) layers->push_back(DecoderLayer(cfg));
  norm = register_module("norm", RmsNorm(cfg.hidden_size, cfg.rms_norm_eps));
  if (!cfg.tie_word_embeddings) lm_head = register_module("lm_head", linear(cfg.hidden_size, cfg.vocab_size));

  // The runtime's tables, computed the same way (double angles rounded to float).
  std::vector<double> inv_freq = rope_inverse_frequencies(cfg);
  auto freqs = torch::tensor(inv_freq, torch::kDouble);
  auto positions = torch::arange(cfg.max_position_embeddings, torch::kDouble);
  auto angles = torch::outer(positions, freqs);
  rope_cos_ = angles.cos().to(torch::kFloat);
  rope_sin_ = angles.sin().to(torch::kFloat);
  initialize_weights();
}

void TrainLlamaImpl::initialize_weights() {
  torch::NoGradGuard no_grad;
  const double residual_std = 0.02 / std::sqrt(2.0 * static_cast<double>(cfg_.num_hidden_layers));
  for (auto& item : named_parameters()) {
    const std::string& name = item.key();
    torch::Tensor& p = item.value();
    if (p.dim() == 1) {
      p.fill_(1.0);
    } else if (name.find("o_proj") != std::string::npos || name.find("down_proj") != std::string::npos) {
      p.normal_(0.0, residual_std);
    } else {
      p.normal_(0.0, 0.02);
    }
  }
}

int64_t TrainLlamaImpl::parameter_count() const {
  int64_t count = 0;
  for (const auto& p : parameters()) count += p.numel();
  return count;
}

torch::Tensor TrainLlamaImpl::forward(const torch::Tensor& tokens) {
  const int64_t seq = tokens.size(1);
  if (seq > cfg_.max_position_embeddings)
    throw std::invalid_argument("sequence of " + std::to_string(seq) + " tokens exceeds the context length");
  torch::Tensor cos = rope_cos_.narrow(0, 0, seq), sin = rope_sin_.narrow(0, 0, seq);
  // Causal mask for the rows of one kv head: its `group` query heads stacked (see Attention).
  const int64_t group = cfg_.num_attention_heads / cfg_.num_key_value_heads;
  torch::Tensor mask = torch::full({seq, seq}, -std::numeric_limits<float>::infinity()).triu_(1).repeat({group, 1});
  torch::Tensor x = embed_tokens(tokens);
  for (const auto& layer : *layers) x = layer->as<DecoderLayer>()->forward(x, cos, sin, mask);
  torch::Tensor h = norm(x);
  return lm_head ? lm_head(h) : torch::nn::functional::linear(h, embed_tokens->weight);
}

}  // namespace specd::training
