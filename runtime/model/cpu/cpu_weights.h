#pragma once
// Everything specd's CPU kernels read, in host memory and without libtorch: each matrix in the
// checkpoint's own element type (BF16/F16 stay 16-bit, halving the bytes a memory-bound decoding
// step reads), packed once into the kernels' panel layout (cpu/matmul.h); q/k/v fused into one
// projection and gate/up into another; norm gains and biases as float32, applied separately.
#include <cstdint>
#include <vector>

#include "model/cpu/matmul.h"
#include "util/host_buffer.h"

namespace specd {

class Checkpoint;
struct ModelConfig;

struct PackedMatrix {
  HostBuffer data;  // pack_panels' layout, elements of `type`
  cpu::WeightType type = cpu::WeightType::F32;
  int64_t out = 0, in = 0;
};

struct CpuLayerWeights {
  PackedMatrix qkv;      // [(heads + 2 * kv_heads) * head_dim, hidden]
  PackedMatrix o;        // [hidden, heads * head_dim]
  PackedMatrix gate_up;  // [2 * intermediate, hidden]
  PackedMatrix down;     // [hidden, intermediate]
  std::vector<float> qkv_bias, o_bias;  // empty when the model has none
  std::vector<float> input_gain, post_gain;
};

struct CpuWeights {
  HostBuffer embed;  // [vocab, hidden] row-major, elements of embed_type (widen_row reads a row)
  cpu::WeightType embed_type = cpu::WeightType::F32;
  PackedMatrix lm_head;  // its own packed copy, also when tied to the embedding
  std::vector<float> final_gain;
  std::vector<CpuLayerWeights> layers;

  int64_t bytes() const;
};

// Reads and packs the checkpoint (checked against the config by the caller) one matrix at a time,
// giving each tensor's file pages back once it is packed, so that the peak memory of a load is
// the packed weights plus one matrix. bf16_pairs: BF16 matrices in the k-pair layout of the BF16
// dot-product kernels (cpu/matmul_bf16_dot.h).
CpuWeights load_cpu_weights(const ModelConfig& cfg, const Checkpoint& checkpoint, bool bf16_pairs);

}  // namespace specd
