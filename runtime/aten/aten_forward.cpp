// The forward pass in ATen operations: runs on any device libtorch has (CUDA included), and is
// the reference the CPU kernels are tested against.
#include <ATen/ATen.h>

#include <algorithm>
#include <limits>

#include "aten/aten_kv_storage.h"
#include "aten/aten_weights.h"

namespace specd {
namespace {

// x / rms(x), row-wise; the gain lives in the next projection (see LayerWeights).
at::Tensor rms_normalize(const at::Tensor& x, double eps) {
  return x * x.mul(x).mean(-1, /*keepdim=*/true).add_(eps).rsqrt_();
}

// y = x W^T + b. One row goes through gemv: BLAS sgemm with one row is 2-2.6x slower.
at::Tensor project(const at::Tensor& x, const at::Tensor& weight, const at::Tensor& bias) {
  if (x.size(0) == 1) {
    at::Tensor row = bias.defined() ? at::addmv(bias, weight, x[0]) : at::mv(weight, x[0]);
    return row.unsqueeze(0);
  }
  return bias.defined() ? at::addmm(bias, x, weight.t()) : at::mm(x, weight.t());
}

// residual += x W^T, in place.
void project_add(at::Tensor& residual, const at::Tensor& x, const at::Tensor& weight) {
  if (x.size(0) == 1) {
    residual[0].addmv_(weight, x[0]);
  } else {
    residual.addmm_(x, weight.t());
  }
}

// Rotates the first and second halves of each head (Hugging Face's rotate_half convention).
void apply_rope(at::Tensor heads, const at::Tensor& cos, const at::Tensor& sin) {
  int64_t half = heads.size(-1) / 2;
  at::Tensor a = heads.narrow(-1, 0, half);
  at::Tensor b = heads.narrow(-1, half, half);
  at::Tensor new_a = a * cos - b * sin;
  b.mul_(cos).addcmul_(a, sin);
  a.copy_(new_a);
}

// Additive mask over the rows after the shared prefix ([n, span]): 0 where new token i sees the
// row, -inf elsewhere. Undefined when there is nothing to mask (one token on a plain prefix).
at::Tensor attention_mask(const ForwardPlan& plan, c10::Device device) {
  const int64_t n = plan.n, span = plan.span();
  const float hidden = -std::numeric_limits<float>::infinity();
  if (n == 1 && plan.shared == plan.past) return {};
  if (plan.causal) return at::full({n, n}, hidden, at::TensorOptions().device(device)).triu_(1);
  std::vector<float> mask(static_cast<size_t>(n * span), hidden);
  for (int64_t k = 0; k < n * span; ++k)
    if (plan.visible[k]) mask[k] = 0.0f;
  return at::from_blob(mask.data(), {n, span}, at::TensorOptions().dtype(at::kFloat)).to(device, false, true);
}

// A float32 copy in host memory.
FloatRows host_rows(const at::Tensor& t) {
  const at::Tensor h = t.to(at::kCPU, at::kFloat).contiguous();
  FloatRows rows(h.size(0), h.size(1));
  std::copy(h.data_ptr<float>(), h.data_ptr<float>() + h.numel(), rows.values.begin());
  return rows;
}

}  // namespace

ForwardResult forward_aten(const ModelConfig& cfg, const AtenWeights& weights, AtenKvStorage& cache,
                           const ForwardRequest& request, const ForwardPlan& plan) {
  at::InferenceMode guard;
  const int64_t n = plan.n, past = plan.past;
  const int64_t heads = cfg.num_attention_heads, kv_heads = cfg.num_key_value_heads, head_dim = cfg.head_dim;
  const int64_t group = heads / kv_heads;
  const c10::Device device = weights.embed.device();
  const auto long_options = at::TensorOptions().dtype(at::kLong);

  auto token_index = at::tensor(request.tokens, long_options).to(device);
  const std::vector<int64_t> rope_shape{n, 1, head_dim / 2};
  const auto float_options = at::TensorOptions().dtype(at::kFloat);
  at::Tensor cos = at::from_blob(const_cast<float*>(plan.rope_cos.data()), rope_shape, float_options).to(device, false, true);
  at::Tensor sin = at::from_blob(const_cast<float*>(plan.rope_sin.data()), rope_shape, float_options).to(device, false, true);
  at::Tensor mask = attention_mask(plan, device);

  ForwardResult result;
  auto wants_hidden = [&](int layer) {
    return std::find(request.hidden_layers.begin(), request.hidden_layers.end(), layer) != request.hidden_layers.end();
  };

  at::Tensor x = weights.embed.index_select(0, token_index);  // [n, hidden]
  if (wants_hidden(0)) result.hidden.push_back(host_rows(x));
  for (int64_t l = 0; l < cfg.num_hidden_layers; ++l) {
    const AtenLayerWeights& w = weights.layers[l];
    at::Tensor qkv = project(rms_normalize(x, cfg.rms_norm_eps), w.qkv, w.qkv_bias).view({n, heads + 2 * kv_heads, head_dim});
    apply_rope(qkv.narrow(1, 0, heads + kv_heads), cos, sin);  // queries and keys together
    at::Tensor q = qkv.narrow(1, 0, heads);
    at::Tensor keys = cache.keys(l), values = cache.values(l);
    keys.narrow(1, past, n).copy_(qkv.narrow(1, heads, kv_heads).transpose(0, 1));
    values.narrow(1, past, n).copy_(qkv.narrow(1, heads + kv_heads, kv_heads).transpose(0, 1));

    // Grouped-query attention without repeating keys: the `group` query heads that share a
    // kv head are stacked as rows of one matrix per kv head.
    at::Tensor q_grouped = n == 1 ? q.view({kv_heads, group, head_dim})
                                  : q.reshape({n, kv_heads, group, head_dim}).permute({1, 2, 0, 3}).reshape({kv_heads, group * n, head_dim});
    // Rows stored as BF16 or F16 (rounded by copy_, to nearest even) are widened for the products.
    const at::Tensor seen_keys = keys.narrow(1, 0, past + n).to(at::kFloat);
    const at::Tensor seen_values = values.narrow(1, 0, past + n).to(at::kFloat);
    at::Tensor scores = at::bmm(q_grouped, seen_keys.transpose(1, 2));  // [kv, group*n, past+n]
    if (mask.defined()) scores.view({kv_heads, group, n, past + n}).narrow(3, plan.shared, plan.span()).add_(mask);
    at::Tensor attended = at::bmm(at::softmax(scores, -1), seen_values);  // [kv, group*n, head_dim]
    at::Tensor merged = n == 1 ? attended.view({1, heads * head_dim})
                               : attended.view({kv_heads, group, n, head_dim}).permute({2, 0, 1, 3}).reshape({n, heads * head_dim});
    project_add(x, merged, w.o);
    if (w.o_bias.defined()) x.add_(w.o_bias);

    at::Tensor gate_up = project(rms_normalize(x, cfg.rms_norm_eps), w.gate_up, {});
    const int64_t inter = cfg.intermediate_size;
    at::Tensor act = at::silu(gate_up.narrow(1, 0, inter)).mul_(gate_up.narrow(1, inter, inter));
    project_add(x, act, w.down);
    if (wants_hidden(static_cast<int>(l) + 1)) result.hidden.push_back(host_rows(x));
  }

  if (request.logits == LogitsWanted::All) {
    result.logits = host_rows(project(rms_normalize(x, cfg.rms_norm_eps), weights.lm_head, {}));
  } else if (request.logits == LogitsWanted::Last) {
    const int64_t rows = std::clamp<int64_t>(request.last_rows, 1, n);
    result.logits = host_rows(project(rms_normalize(x.narrow(0, n - rows, rows), cfg.rms_norm_eps), weights.lm_head, {}));
  }
  return result;
}

FloatRows logits_aten(const ModelConfig& cfg, const AtenWeights& weights, const float* hidden, int64_t rows, c10::Device device) {
  const at::Tensor x = at::from_blob(const_cast<float*>(hidden), {rows, cfg.hidden_size}, at::kFloat).to(device);
  return host_rows(project(rms_normalize(x, cfg.rms_norm_eps), weights.lm_head, {}));
}

}  // namespace specd
