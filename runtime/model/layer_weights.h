#pragma once
// One decoder layer's weights in the layout its forward pass wants: q/k/v fused into one
// projection and gate/up into another.
//  - For the ATen forward: float32, RMSNorm gains folded into the projection that follows them
//    and 1/sqrt(head_dim) folded into the query rows (fewer operations per step).
//  - For the CPU kernels: the checkpoint's own dtype (BF16/F16 stay 16-bit, halving the bytes a
//    memory-bound decoding step reads), so nothing is folded; gains are separate. Each matrix is
//    packed once into the kernels' panel layout (pack_for_cpu_kernels), a flat tensor.
#include <ATen/core/Tensor.h>

namespace specd {

struct LayerWeights {
  at::Tensor qkv;       // [(heads + 2 * kv_heads) * head_dim, hidden]
  at::Tensor qkv_bias;  // [(heads + 2 * kv_heads) * head_dim] float32, or undefined
  at::Tensor o;         // [hidden, heads * head_dim]
  at::Tensor o_bias;    // [hidden] float32, or undefined
  at::Tensor gate_up;   // [2 * intermediate, hidden]
  at::Tensor down;      // [hidden, intermediate]
  at::Tensor input_gain, post_gain;  // [hidden] float32; undefined when folded
};

}  // namespace specd
