#include "io/expected_tensors.h"

#include <unordered_set>

#include "io/json_reader.h"
#include "util/error.h"

namespace specd {

namespace {

bool ends_with(const std::string& text, const std::string& suffix) {
  return text.size() >= suffix.size() &&
         text.compare(text.size() - suffix.size(), suffix.size(), suffix) == 0;
}

bool is_supported_weight_dtype(DType dtype) {
  return dtype == DType::F32 || dtype == DType::F16 || dtype == DType::BF16;
}

void check_tensor(const Checkpoint& checkpoint, const std::string& name,
                  const std::vector<int64_t>& shape) {
  const TensorView& t = checkpoint.get(name);
  const std::string& file = checkpoint.file_of(name);
  if (t.shape != shape) {
    input_error(file, "tensor " + single_quoted(name) + " has shape " + shape_string(t.shape) +
                          ", expected " + shape_string(shape) + " from config.json");
  }
  if (!is_supported_weight_dtype(t.dtype)) {
    input_error(file, "tensor " + single_quoted(name) + " has dtype " + dtype_name(t.dtype) +
                          ", expected F32, F16 or BF16");
  }
}

}  // namespace

std::vector<ExpectedTensor> expected_tensors(const ModelConfig& c) {
  const int64_t H = c.hidden_size, I = c.intermediate_size, V = c.vocab_size;
  const int64_t q_rows = c.num_attention_heads * c.head_dim;
  const int64_t kv_rows = c.num_key_value_heads * c.head_dim;
  std::vector<ExpectedTensor> tensors = {{"model.embed_tokens.weight", {V, H}}};
  for (int64_t layer = 0; layer < c.num_hidden_layers; ++layer) {
    const std::string p = "model.layers." + std::to_string(layer) + ".";
    tensors.push_back({p + "input_layernorm.weight", {H}});
    tensors.push_back({p + "self_attn.q_proj.weight", {q_rows, H}});
    tensors.push_back({p + "self_attn.k_proj.weight", {kv_rows, H}});
    tensors.push_back({p + "self_attn.v_proj.weight", {kv_rows, H}});
    if (c.qkv_bias) {
      tensors.push_back({p + "self_attn.q_proj.bias", {q_rows}});
      tensors.push_back({p + "self_attn.k_proj.bias", {kv_rows}});
      tensors.push_back({p + "self_attn.v_proj.bias", {kv_rows}});
    }
    tensors.push_back({p + "self_attn.o_proj.weight", {H, q_rows}});
    if (c.o_proj_bias) tensors.push_back({p + "self_attn.o_proj.bias", {H}});
    tensors.push_back({p + "post_attention_layernorm.weight", {H}});
    tensors.push_back({p + "mlp.gate_proj.weight", {I, H}});
    tensors.push_back({p + "mlp.up_proj.weight", {I, H}});
    tensors.push_back({p + "mlp.down_proj.weight", {H, I}});
  }
  tensors.push_back({"model.norm.weight", {H}});
  if (!c.tie_word_embeddings) tensors.push_back({"lm_head.weight", {V, H}});
  return tensors;
}

void check_checkpoint(const ModelConfig& config, const Checkpoint& checkpoint) {
  std::unordered_set<std::string> expected;
  for (const ExpectedTensor& e : expected_tensors(config)) {
    if (checkpoint.find(e.name) == nullptr) {
      input_error(checkpoint.file_of(e.name), "missing tensor " + single_quoted(e.name) + " of shape " +
                                                  shape_string(e.shape) + " required by config.json");
    }
    check_tensor(checkpoint, e.name, e.shape);
    expected.insert(e.name);
  }
  for (const std::string& name : checkpoint.names()) {
    if (expected.count(name) != 0 || ends_with(name, ".rotary_emb.inv_freq")) continue;
    if (config.tie_word_embeddings && name == "lm_head.weight") {
      check_tensor(checkpoint, name, {config.vocab_size, config.hidden_size});
      continue;
    }
    input_error(checkpoint.file_of(name), "unexpected tensor " + single_quoted(name) +
                                              " for a " + config.model_type + " model of this config");
  }
}

}  // namespace specd
