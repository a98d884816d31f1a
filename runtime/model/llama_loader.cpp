// Reads a Hugging Face checkpoint into LlamaModel's fused layout.
#include <ATen/ATen.h>

#include <cmath>

#include "io/checkpoint.h"
#include "io/expected_tensors.h"
#include "io/rope_frequencies.h"
#include "model/cpu_threads.h"
#include "model/llama_model.h"
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
  WeightReader(const Checkpoint& checkpoint, c10::Device device) : checkpoint_(checkpoint), device_(device) {}

  // A float32 copy on the target device; the checkpoint's memory map is not kept alive.
  at::Tensor get(const std::string& name) const {
    TensorView view = checkpoint_.get(name);
    auto raw = at::from_blob(const_cast<void*>(view.data), view.shape, at::TensorOptions().dtype(scalar_type(view.dtype)));
    return raw.to(at::TensorOptions().dtype(at::kFloat).device(device_), false, /*copy=*/true);
  }
  bool has(const std::string& name) const { return checkpoint_.find(name) != nullptr; }

 private:
  const Checkpoint& checkpoint_;
  c10::Device device_;
};

// W' = W diag(gain): the norm's gain moves into the projection that reads its output.
at::Tensor fold_gain(const at::Tensor& weight, const at::Tensor& gain) { return weight * gain.unsqueeze(0); }

LayerWeights load_layer(const WeightReader& reader, const ModelConfig& cfg, int layer) {
  const std::string p = "model.layers." + std::to_string(layer) + ".";
  const double q_scale = 1.0 / std::sqrt(static_cast<double>(cfg.head_dim));
  at::Tensor in_gain = reader.get(p + "input_layernorm.weight");
  at::Tensor post_gain = reader.get(p + "post_attention_layernorm.weight");

  LayerWeights w;
  at::Tensor q = reader.get(p + "self_attn.q_proj.weight") * q_scale;
  w.qkv = fold_gain(at::cat({q, reader.get(p + "self_attn.k_proj.weight"), reader.get(p + "self_attn.v_proj.weight")}), in_gain)
              .contiguous();
  if (reader.has(p + "self_attn.q_proj.bias")) {
    w.qkv_bias = at::cat({reader.get(p + "self_attn.q_proj.bias") * q_scale, reader.get(p + "self_attn.k_proj.bias"),
                          reader.get(p + "self_attn.v_proj.bias")});
  }
  w.o = reader.get(p + "self_attn.o_proj.weight");
  if (reader.has(p + "self_attn.o_proj.bias")) w.o_bias = reader.get(p + "self_attn.o_proj.bias");
  w.gate_up = fold_gain(at::cat({reader.get(p + "mlp.gate_proj.weight"), reader.get(p + "mlp.up_proj.weight")}), post_gain)
                  .contiguous();
  w.down = reader.get(p + "mlp.down_proj.weight");
  return w;
}

// cos/sin of position * inverse frequency for every position the model can address.
std::pair<at::Tensor, at::Tensor> rope_tables(const ModelConfig& cfg, c10::Device device) {
  std::vector<double> inv_freq = rope_inverse_frequencies(cfg);
  auto freqs = at::tensor(inv_freq, at::TensorOptions().dtype(at::kDouble));
  auto positions = at::arange(cfg.max_position_embeddings, at::TensorOptions().dtype(at::kDouble));
  auto angles = at::outer(positions, freqs);
  auto options = at::TensorOptions().dtype(at::kFloat).device(device);
  return {angles.cos().to(options), angles.sin().to(options)};
}

}  // namespace

std::shared_ptr<LlamaModel> LlamaModel::load(const std::string& dir, const DeviceSpec& device_spec) {
  c10::Device device = resolve_device(device_spec);
  ModelConfig cfg = ModelConfig::from_file(dir + "/config.json");
  Checkpoint checkpoint = Checkpoint::open_dir(dir);
  check_checkpoint(cfg, checkpoint);

  at::InferenceMode guard;
  std::shared_ptr<LlamaModel> model(new LlamaModel(dir, cfg, device, resolve_thread_count(device_spec.threads)));
  WeightReader reader(checkpoint, device);
  ModelWeights& w = *model->weights_;
  w.embed = reader.get("model.embed_tokens.weight");
  at::Tensor head = (cfg.tie_word_embeddings || !reader.has("lm_head.weight")) ? w.embed : reader.get("lm_head.weight");
  w.lm_head = fold_gain(head, reader.get("model.norm.weight")).contiguous();
  for (int l = 0; l < cfg.num_hidden_layers; ++l) w.layers.push_back(load_layer(reader, cfg, l));
  std::tie(w.rope_cos, w.rope_sin) = rope_tables(cfg, device);
  return model;
}

}  // namespace specd
