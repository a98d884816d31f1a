#pragma once
// AdaPLD's knobs (the AdaPLD paper §3, Algorithm 1). The paper's defaults: K = 8 branches, L = 30 copied
// tokens, tau_sim = 0.1; the reranking layer is per model (its Table 6), chosen here by
// `specd calibrate sweep --policy adapld --grid layer=...`.
#include <cstdint>

namespace specd {

struct AdaPldOptions {
  int32_t branches = 8;        // K: the target's top-K at the anchor, the main path's first token excluded
  int32_t max_copy = 30;       // L: main copy path length
  double tau_sim = 0.1;        // semantic fallback: token-embedding cosine at least this
  // Hidden-state reranking layer, numbered as Hugging Face's hidden_states (0: the embedding output,
  // l: the output of decoder layer l); -1: the middle layer, (num_layers + 1) / 2.
  int32_t layer = -1;
  // Ablations (adapld-lexical-only, adapld-no-branches, adapld-no-successors) and the variant of
  // Algorithm 1, which drafts successors only on semantic hits (§3.5 drafts them for every branch).
  bool semantic = true;
  bool use_branches = true;
  bool use_successors = true;
  bool successors_on_semantic_only = false;
};

// Throws InputError naming the option when a value is out of range.
void validate(const AdaPldOptions& options);

}  // namespace specd
