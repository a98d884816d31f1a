#include "model/cpu/cpu_weights.h"

#include <algorithm>
#include <cstring>
#include <stdexcept>
#include <string>

#include "io/checkpoint.h"
#include "io/half_precision.h"
#include "io/model_config.h"

namespace specd {
namespace {

size_t element_bytes(cpu::WeightType type) { return type == cpu::WeightType::F32 ? 4 : 2; }

// The kernels read F32, BF16 and F16 as stored; F64 is narrowed to F32.
cpu::WeightType kernel_type(DType dtype) {
  switch (dtype) {
    case DType::BF16: return cpu::WeightType::BF16;
    case DType::F16: return cpu::WeightType::F16;
    default: return cpu::WeightType::F32;
  }
}

// Rows a matrix is read and packed in (a multiple of the panel width): what a load holds beyond
// the packed weights is one such slice and its file pages, not a whole matrix.
constexpr int64_t kSliceRows = 256;

class CpuWeightLoader {
 public:
  CpuWeightLoader(const Checkpoint& checkpoint, bool bf16_pairs) : checkpoint_(checkpoint), bf16_pairs_(bf16_pairs) {}

  std::vector<float> vector(const std::string& name) const {
    const TensorView& view = checkpoint_.get(name);
    std::vector<float> values(view.nbytes / dtype_size(view.dtype));
    for (size_t i = 0; i < values.size(); ++i) values[i] = tensor_element(view, static_cast<int64_t>(i));
    return values;
  }

  // The rows of `names` stacked ([sum of rows, in]) and packed, a slice of rows at a time. Parts
  // that share a kernel type are copied as stored; mixed types are all widened to F32.
  PackedMatrix matrix(const std::vector<std::string>& names) const {
    Parts parts = stacked(names);
    PackedMatrix m;
    m.type = parts.type == cpu::WeightType::BF16 && bf16_pairs_ ? cpu::WeightType::BF16Pairs : parts.type;
    m.out = parts.rows;
    m.in = parts.in;
    const size_t bytes = element_bytes(parts.type);
    const int64_t panel = cpu::packed_elements(m.type, cpu::kPanelWidth, m.in);  // elements per panel
    m.data = HostBuffer(static_cast<size_t>(cpu::packed_elements(m.type, m.out, m.in)) * bytes);
    HostBuffer slice(static_cast<size_t>(std::min(kSliceRows, m.out) * m.in) * bytes);
    for (int64_t first = 0; first < m.out; first += kSliceRows) {
      const int64_t rows = std::min(kSliceRows, m.out - first);
      read_rows(parts, first, rows, slice.data());
      cpu::pack_panels(slice.data(), m.type, rows, m.in, m.data.as<char>() + static_cast<size_t>(first / cpu::kPanelWidth * panel) * bytes);
    }
    return m;
  }

  // The table row-major in its kernel type (embedding lookups widen one row).
  HostBuffer table(const std::string& name, cpu::WeightType& type) const {
    Parts parts = stacked({name});
    type = parts.type;
    const size_t row_bytes = static_cast<size_t>(parts.in) * element_bytes(type);
    HostBuffer buffer(static_cast<size_t>(parts.rows) * row_bytes);
    for (int64_t first = 0; first < parts.rows; first += kSliceRows)
      read_rows(parts, first, std::min(kSliceRows, parts.rows - first), buffer.as<char>() + first * row_bytes);
    return buffer;
  }

  bool has(const std::string& name) const { return checkpoint_.find(name) != nullptr; }

 private:
  struct Parts {
    std::vector<std::string> names;
    std::vector<const TensorView*> views;
    cpu::WeightType type = cpu::WeightType::F32;
    int64_t rows = 0, in = 0;
  };

  Parts stacked(const std::vector<std::string>& names) const {
    Parts parts;
    parts.names = names;
    for (const auto& name : names) parts.views.push_back(&checkpoint_.get(name));
    parts.type = kernel_type(parts.views[0]->dtype);
    parts.in = parts.views[0]->shape.at(1);
    for (const TensorView* view : parts.views) {
      if (kernel_type(view->dtype) != parts.type) parts.type = cpu::WeightType::F32;
      parts.rows += view->shape.at(0);
    }
    return parts;
  }

  // Rows [first, first + count) of the stacked parts into `out` as elements of parts.type; the
  // file pages read are given back.
  void read_rows(const Parts& parts, int64_t first, int64_t count, void* out) const {
    const size_t bytes = element_bytes(parts.type);
    char* at = static_cast<char*>(out);
    int64_t part_first = 0;
    for (size_t p = 0; p < parts.views.size() && count > 0; ++p) {
      const TensorView& view = *parts.views[p];
      const int64_t part_rows = view.shape.at(0);
      if (first < part_first + part_rows) {
        const int64_t row = first - part_first, take = std::min(count, part_rows - row);
        const size_t stored = dtype_size(view.dtype);
        const int64_t begin = row * parts.in, elements = take * parts.in;
        if (stored == bytes) {
          std::memcpy(at, static_cast<const char*>(view.data) + begin * stored, static_cast<size_t>(elements) * stored);
        } else {
          float* f = reinterpret_cast<float*>(at);
          for (int64_t i = 0; i < elements; ++i) f[i] = tensor_element(view, begin + i);
        }
        // Everything of the tensor up to here, not just this slice: a page fault maps the cached
        // pages around it too (fault-around, 64 KiB), so pages of slices dropped before come back
        // mapped as the next slice is read; dropping each slice alone left ~10% of a checkpoint
        // resident until the load ended (24 MiB of shape c BF16).
        checkpoint_.drop_pages(parts.names[p], 0, static_cast<size_t>(begin + elements) * stored);
        at += static_cast<size_t>(elements) * bytes;
        first += take;
        count -= take;
      }
      part_first += part_rows;
    }
  }

  const Checkpoint& checkpoint_;
  bool bf16_pairs_;
};

}  // namespace

int64_t CpuWeights::bytes() const {
  auto floats = [](const std::vector<float>& v) { return static_cast<int64_t>(v.size() * sizeof(float)); };
  int64_t total = static_cast<int64_t>(embed.size() + lm_head.data.size()) + floats(final_gain);
  for (const CpuLayerWeights& l : layers) {
    for (const PackedMatrix* m : {&l.qkv, &l.o, &l.gate_up, &l.down}) total += static_cast<int64_t>(m->data.size());
    total += floats(l.qkv_bias) + floats(l.o_bias) + floats(l.input_gain) + floats(l.post_gain);
  }
  return total;
}

CpuWeights load_cpu_weights(const ModelConfig& cfg, const Checkpoint& checkpoint, bool bf16_pairs) {
  CpuWeightLoader reader(checkpoint, bf16_pairs);
  CpuWeights w;
  for (int l = 0; l < cfg.num_hidden_layers; ++l) {
    const std::string p = "model.layers." + std::to_string(l) + ".";
    CpuLayerWeights layer;
    layer.input_gain = reader.vector(p + "input_layernorm.weight");
    layer.post_gain = reader.vector(p + "post_attention_layernorm.weight");
    layer.qkv = reader.matrix({p + "self_attn.q_proj.weight", p + "self_attn.k_proj.weight", p + "self_attn.v_proj.weight"});
    if (cfg.qkv_bias) {
      for (const char* part : {"q", "k", "v"}) {
        std::vector<float> bias = reader.vector(p + "self_attn." + part + "_proj.bias");
        layer.qkv_bias.insert(layer.qkv_bias.end(), bias.begin(), bias.end());
      }
    }
    layer.o = reader.matrix({p + "self_attn.o_proj.weight"});
    if (cfg.o_proj_bias) layer.o_bias = reader.vector(p + "self_attn.o_proj.bias");
    layer.gate_up = reader.matrix({p + "mlp.gate_proj.weight", p + "mlp.up_proj.weight"});
    layer.down = reader.matrix({p + "mlp.down_proj.weight"});
    w.layers.push_back(std::move(layer));
  }
  const bool tied = cfg.tie_word_embeddings || !reader.has("lm_head.weight");
  w.lm_head = reader.matrix({tied ? "model.embed_tokens.weight" : "lm_head.weight"});
  w.embed = reader.table("model.embed_tokens.weight", w.embed_type);
  w.final_gain = reader.vector("model.norm.weight");
  return w;
}

}  // namespace specd
