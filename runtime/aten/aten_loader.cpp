// Reads a Hugging Face checkpoint into the layout of the forward pass that will run it
// (see LayerWeights).
#include <ATen/ATen.h>

#include <cmath>

#include "aten/aten_weights.h"
#include "io/checkpoint.h"

namespace specd {
namespace {

at::ScalarType scalar_type(DType dtype) {
  switch (dtype) {
    case DType::F32: return at::kFloat;
    case DType::F16: return at::kHalf;
    case DType::BF16: return at::kBFloat16;
    case DType::F64: return at::kDouble;
    default: throw std::logic_error("check_checkpoint admits only float tensors");
  }
}

// A float32 copy on the target device (the checkpoint's memory map is not kept alive); the
// tensor's file pages are given back once copied.
at::Tensor read(const Checkpoint& checkpoint, const std::string& name, c10::Device device) {
  const TensorView& view = checkpoint.get(name);
  auto raw = at::from_blob(const_cast<void*>(view.data), view.shape, at::TensorOptions().dtype(scalar_type(view.dtype)));
  at::Tensor copy = raw.to(at::TensorOptions().dtype(at::kFloat).device(device), false, /*copy=*/true);
  checkpoint.drop_pages(name);
  return copy;
}

// W' = W diag(gain): the norm's gain moves into the projection that reads its output.
at::Tensor fold_gain(const at::Tensor& weight, const at::Tensor& gain) { return (weight * gain.unsqueeze(0)).contiguous(); }

AtenLayerWeights load_layer(const Checkpoint& checkpoint, const ModelConfig& cfg, int layer, c10::Device device) {
  const std::string p = "model.layers." + std::to_string(layer) + ".";
  auto get = [&](const std::string& name) { return read(checkpoint, p + name, device); };
  const double q_scale = 1.0 / std::sqrt(static_cast<double>(cfg.head_dim));
  AtenLayerWeights w;
  w.qkv = fold_gain(at::cat({get("self_attn.q_proj.weight") * q_scale, get("self_attn.k_proj.weight"), get("self_attn.v_proj.weight")}),
                    get("input_layernorm.weight"));
  if (cfg.qkv_bias)
    w.qkv_bias = at::cat({get("self_attn.q_proj.bias") * q_scale, get("self_attn.k_proj.bias"), get("self_attn.v_proj.bias")});
  w.o = get("self_attn.o_proj.weight");
  if (cfg.o_proj_bias) w.o_bias = get("self_attn.o_proj.bias");
  w.gate_up = fold_gain(at::cat({get("mlp.gate_proj.weight"), get("mlp.up_proj.weight")}), get("post_attention_layernorm.weight"));
  w.down = get("mlp.down_proj.weight");
  return w;
}

}  // namespace

AtenWeights load_aten_weights(const ModelConfig& cfg, const Checkpoint& checkpoint, c10::Device device) {
  at::InferenceMode guard;
  AtenWeights w;
  w.embed = read(checkpoint, "model.embed_tokens.weight", device);
  const bool tied = cfg.tie_word_embeddings || checkpoint.find("lm_head.weight") == nullptr;
  w.lm_head = fold_gain(tied ? w.embed : read(checkpoint, "lm_head.weight", device), read(checkpoint, "model.norm.weight", device));
  for (int l = 0; l < cfg.num_hidden_layers; ++l) w.layers.push_back(load_layer(checkpoint, cfg, l, device));
  return w;
}

}  // namespace specd
