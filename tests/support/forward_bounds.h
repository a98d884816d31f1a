#pragma once
// How far two float32 evaluations of one transformer forward may differ when they differ only in
// the order of their sums. The ATen forward's BLAS picks its kernel and blocking from the batch's
// shape and the CPU's SIMD width, so a token's logits move with how it was batched and with the
// machine; a fixed tolerance that holds on one BLAS kernel fails on another. (The CPU kernels sum
// in one fixed order whatever the batch, so the oracles compare them bit for bit instead.)
//
// Derivation (gamma_K: tests/support/float_bounds.h). To first order the relative errors of the
// reductions a logit depends on add up: per decoder layer the input norm's sum of squares
// (hidden), the q/k/v projections (hidden), the attention scores (head_dim), the softmax's
// denominator and the weighted values (context), the output projection (heads * head_dim), the
// MLP's norm (hidden), gate and up (hidden) and down (intermediate); then the final norm (hidden).
// Each is taken at unit gain to the final normed state n (every block reads an RMS-normalised
// input), so |dn| <= eps |n| with eps the sum of those gammas. The head adds its own
// gamma_hidden, and logit i moves by at most |w_i| (eps + gamma_hidden) |n| (Cauchy-Schwarz), where
// |n| <= sqrt(hidden) * max |final norm gain|. The bound is read from the checkpoint's head rows
// and final norm, not from any machine's result.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>

#include "io/checkpoint.h"
#include "io/model_config.h"
#include "float_bounds.h"

namespace specd::test {

// The first-order relative error of `layers` decoder layers' output for inputs of at most
// `context` tokens (prefix and new tokens together).
inline double float32_layers_error(const ModelConfig& cfg, int64_t context, int64_t layers) {
  const int64_t hidden = cfg.hidden_size;
  const double per_layer = 3 * float32_gamma(hidden)                           // input norm, q/k/v
                           + float32_gamma(cfg.head_dim)                       // scores
                           + 2 * float32_gamma(context)                        // softmax denominator, weighted values
                           + float32_gamma(cfg.num_attention_heads * cfg.head_dim)  // output projection
                           + 3 * float32_gamma(hidden)                         // MLP norm, gate, up
                           + float32_gamma(cfg.intermediate_size);             // down
  return static_cast<double>(layers) * per_layer;
}

// The largest difference two float32 evaluations of the forward of the checkpoint in `dir` may
// show in any logit, for inputs of at most `context` tokens.
inline double float32_reorder_bound(const std::string& dir, const ModelConfig& cfg, int64_t context) {
  const int64_t hidden = cfg.hidden_size;
  // Every layer, the final norm and the head.
  const double eps = float32_layers_error(cfg, context, cfg.num_hidden_layers) + 2 * float32_gamma(hidden);

  const Checkpoint checkpoint = Checkpoint::open_dir(dir);
  const TensorView* head = checkpoint.find("lm_head.weight");
  if (head == nullptr) head = &checkpoint.get("model.embed_tokens.weight");  // tied embeddings
  double head_row = 0;  // max_i |w_i|
  for (int64_t r = 0; r < cfg.vocab_size; ++r) {
    double sq = 0;
    for (int64_t c = 0; c < hidden; ++c) sq += std::pow(tensor_element(*head, r * hidden + c), 2);
    head_row = std::max(head_row, std::sqrt(sq));
  }
  const TensorView& norm = checkpoint.get("model.norm.weight");
  double gain = 0;
  for (int64_t c = 0; c < hidden; ++c) gain = std::max(gain, static_cast<double>(std::abs(tensor_element(norm, c))));
  const double state = std::sqrt(static_cast<double>(hidden)) * gain;  // |n|
  return 2 * head_row * eps * state;  // two evaluations
}

// The same for another state x whose relative error `eps` bounds (a sum of gammas as above, e.g.
// float32_layers_error for a layer's output, plus a norm's and a projection's for its keys):
// |dx| <= eps |x| over each token's `width` elements, and |x| <= sqrt(width) * max |x_j|, where
// `largest` is the largest |x_j| of either evaluation.
inline double float32_reorder_bound_state(double eps, int64_t width, double largest) {
  return 2 * eps * std::sqrt(static_cast<double>(width)) * largest;  // two evaluations
}

}  // namespace specd::test
