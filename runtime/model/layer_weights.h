#pragma once
// One decoder layer's weights in the layout the forward pass wants: q/k/v fused into one
// projection and gate/up into another, RMSNorm gains folded into the projection that follows
// them, and 1/sqrt(head_dim) folded into the query rows.
#include <ATen/core/Tensor.h>

namespace specd {

struct LayerWeights {
  at::Tensor qkv;      // [(heads + 2 * kv_heads) * head_dim, hidden]
  at::Tensor qkv_bias; // [(heads + 2 * kv_heads) * head_dim] or undefined
  at::Tensor o;        // [hidden, heads * head_dim]
  at::Tensor o_bias;   // [hidden] or undefined
  at::Tensor gate_up;  // [2 * intermediate, hidden]
  at::Tensor down;     // [hidden, intermediate]
};

}  // namespace specd
