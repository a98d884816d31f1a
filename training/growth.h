#pragma once
// Growing a trained Llama into a larger one that computes the same function (Net2Net: Chen,
// Goodfellow & Shlens, "Net2Net: Accelerating Learning via Knowledge Transfer", arXiv:1511.05641),
// so that a bigger model starts training from a smaller one's quality instead of from noise.
//
// Width: the hidden size, the heads (head_dim kept) and the key/value heads grow by one integer
// factor k, the MLP by an integer factor m. Every hidden coordinate, head and MLP unit is copied;
// a weight that reads copied inputs is split among the copies with random shares that sum to one,
// so the output is unchanged while the copies get different gradients (identical copies would
// stay identical under training). RMSNorm sees the same mean square over copied coordinates; the
// final norm's gains are split likewise so that the tied head's logits are not multiplied by k.
// Depth: the source layers keep their order, spread evenly; each added layer is a residual block
// whose output projections (o_proj, down_proj) are zero, so it adds nothing until it learns.
#include <cstdint>

#include "train_llama.h"

namespace specd::training {

struct GrowthOptions {
  // Spread of the random shares around 1/copies (relative); 0 splits evenly.
  double share_noise = 0.1;
  uint64_t seed = 0;
};

// Overwrites every parameter of `grown` from `source`. InputError naming the field unless the
// grown config is a growth of the source's (same vocabulary, norm eps, rope theta and head_dim;
// hidden, heads and kv-heads by one integer factor; ffn by an integer factor; at least as many
// layers; both with tied embeddings).
void grow_model(const TrainLlama& source, TrainLlama& grown, const GrowthOptions& options);

}  // namespace specd::training
