// Reads a Hugging Face checkpoint into the layout of the forward pass that will run it
// (see LayerWeights).
#include <ATen/ATen.h>

#include <cmath>

#include "io/checkpoint.h"
#include "io/expected_tensors.h"
#include "io/rope_frequencies.h"
#include "model/cpu_threads.h"
#include "model/llama_model.h"
#include "model/cpu/matmul_bf16_dot.h"
#include "model/model_weights.h"

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

class WeightReader {
 public:
  WeightReader(const Checkpoint& checkpoint, c10::Device device, bool keep_16_bit)
      : checkpoint_(checkpoint), device_(device), keep_16_bit_(keep_16_bit) {}

  // A copy on the target device (the checkpoint's memory map is not kept alive): float32, or
  // the stored 16-bit type for matrices when keep_16_bit is set.
  at::Tensor matrix(const std::string& name) const { return read(name, keep_16_bit_); }
  at::Tensor vector(const std::string& name) const { return read(name, false); }
  bool has(const std::string& name) const { return checkpoint_.find(name) != nullptr; }

 private:
  at::Tensor read(const std::string& name, bool keep_16_bit) const {
    const TensorView& view = checkpoint_.get(name);
    at::ScalarType stored = scalar_type(view.dtype);
    at::ScalarType wanted = keep_16_bit && (stored == at::kHalf || stored == at::kBFloat16) ? stored : at::kFloat;
    auto raw = at::from_blob(const_cast<void*>(view.data), view.shape, at::TensorOptions().dtype(stored));
    return raw.to(at::TensorOptions().dtype(wanted).device(device_), false, /*copy=*/true);
  }

  const Checkpoint& checkpoint_;
  c10::Device device_;
  bool keep_16_bit_;
};

// W' = W diag(gain): the norm's gain moves into the projection that reads its output.
at::Tensor fold_gain(const at::Tensor& weight, const at::Tensor& gain) { return (weight * gain.unsqueeze(0)).contiguous(); }

LayerWeights load_layer(const WeightReader& reader, const ModelConfig& cfg, int layer, bool fold) {
  const std::string p = "model.layers." + std::to_string(layer) + ".";
  const double q_scale = fold ? 1.0 / std::sqrt(static_cast<double>(cfg.head_dim)) : 1.0;
  LayerWeights w;
  w.input_gain = reader.vector(p + "input_layernorm.weight");
  w.post_gain = reader.vector(p + "post_attention_layernorm.weight");
  at::Tensor q = reader.matrix(p + "self_attn.q_proj.weight");
  if (fold) q = q * q_scale;
  w.qkv = at::cat({q, reader.matrix(p + "self_attn.k_proj.weight"), reader.matrix(p + "self_attn.v_proj.weight")});
  if (cfg.qkv_bias) {
    w.qkv_bias = at::cat({reader.vector(p + "self_attn.q_proj.bias") * q_scale, reader.vector(p + "self_attn.k_proj.bias"),
                          reader.vector(p + "self_attn.v_proj.bias")});
  }
  w.o = reader.matrix(p + "self_attn.o_proj.weight");
  if (cfg.o_proj_bias) w.o_bias = reader.vector(p + "self_attn.o_proj.bias");
  w.gate_up = at::cat({reader.matrix(p + "mlp.gate_proj.weight"), reader.matrix(p + "mlp.up_proj.weight")});
  w.down = reader.matrix(p + "mlp.down_proj.weight");
  if (fold) {
    w.qkv = fold_gain(w.qkv, w.input_gain);
    w.gate_up = fold_gain(w.gate_up, w.post_gain);
    w.input_gain = w.post_gain = at::Tensor();
  }
  return w;
}

}  // namespace

std::shared_ptr<LlamaModel> LlamaModel::load(const std::string& dir, const DeviceSpec& device_spec) {
  c10::Device device = resolve_device(device_spec);
  ModelConfig cfg = ModelConfig::from_file(dir + "/config.json");
  Checkpoint checkpoint = Checkpoint::open_dir(dir);
  check_checkpoint(cfg, checkpoint);

  at::InferenceMode guard;
  const bool cpu_kernels = device.is_cpu() && !device_spec.aten_on_cpu;
  std::shared_ptr<LlamaModel> model(new LlamaModel(dir, cfg, device, resolve_thread_count(device_spec.threads), cpu_kernels));
  WeightReader reader(checkpoint, device, /*keep_16_bit=*/cpu_kernels);
  ModelWeights& w = *model->weights_;
  w.folded = !cpu_kernels;
  w.embed = reader.matrix("model.embed_tokens.weight");
  w.lm_head = (cfg.tie_word_embeddings || !reader.has("lm_head.weight")) ? w.embed : reader.matrix("lm_head.weight");
  w.final_gain = reader.vector("model.norm.weight");
  if (w.folded) {
    w.lm_head = fold_gain(w.lm_head, w.final_gain);
    w.final_gain = at::Tensor();
  }
  for (int l = 0; l < cfg.num_hidden_layers; ++l) w.layers.push_back(load_layer(reader, cfg, l, w.folded));
  if (cpu_kernels) {
    w.bf16_pairs = !device_spec.fp32_activations && cpu::bf16_dot_supported();
    w.lm_head = pack_for_cpu_kernels(w.lm_head, w.bf16_pairs);  // a copy: a tied embedding stays row-major
    for (LayerWeights& layer : w.layers)
      for (at::Tensor* m : {&layer.qkv, &layer.o, &layer.gate_up, &layer.down}) *m = pack_for_cpu_kernels(*m, w.bf16_pairs);
  }
  w.rope_inv_freq = rope_inverse_frequencies(cfg);
  return model;
}

}  // namespace specd
