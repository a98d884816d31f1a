#pragma once
// Per-step quantities a trace records that are derived from the tree, the acceptance result and
// the target's logits.
#include <cstdint>
#include <string>

#include "speculative/acceptor.h"
#include "speculative/draft_tree.h"

namespace specd {

// M model, R retrieval, B branch, S successor (the root has no letter).
char draft_source_letter(DraftSource source);

// One letter per accepted drafted token in path order, comma-separated ("R,R,M"); "" when none.
std::string accepted_sources(const DraftTree& tree, const AcceptResult& result);

// Entropy in nats of softmax(logits) at temperature 1, whatever the sampling options, so that
// traces at different temperatures (and greedy ones) measure the same model uncertainty.
double softmax_entropy(const float* logits, int64_t vocab);

}  // namespace specd
