#pragma once
// The next-step divergence ARC-Decode calibrates against (the ARC-Decode paper Algorithm 1, lines 7-8).
#include <cstdint>

namespace specd {

// Jensen-Shannon divergence, in nats, between the next-step distributions of two logits rows of
// `vocab` entries. Each row is softmaxed at `temperature` (0 means 1: greedy decoding has no
// sampling distribution of its own) and restricted to the active support S, the union of the two
// rows' top-k tokens (ties broken toward the lower token id): there each row is renormalized to a
// distribution on S, mu is added to every entry of S, and it is renormalized again, so
// every entry is at least mu / (1 + |S| mu) (the paper's smoothing on the active support). The
// result lies in [0, ln 2]; it is 0 for equal rows and symmetric in the two.
// std::invalid_argument for vocab < 1, k < 1, temperature < 0, mu < 0, or a NaN or all -inf row.
double topk_js_divergence(const float* logits_q, const float* logits_r, int64_t vocab, double temperature, int32_t k,
                          double mu);

}  // namespace specd
