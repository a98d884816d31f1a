#pragma once
// Acceptance: given a draft tree and the target's logits at every node (row i predicts the token
// after node i), choose the accepted root-to-node path and the token that follows it (the bonus
// token when every drafted token on the path was accepted, the correction otherwise).
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "sampling/sampler.h"
#include "spec/draft_tree.h"

namespace specd {

enum class NodeVerdict : uint8_t { NotReached, Accepted, Rejected };

struct AcceptResult {
  std::vector<int32_t> path;   // accepted node indices, root first (the root is always accepted)
  int32_t next_token = -1;     // the token after the path: the next step's root
  std::vector<NodeVerdict> verdicts;  // per node
  bool lossless = true;        // false for relaxed/lossy acceptors; traces record it
};

class Acceptor {
 public:
  virtual ~Acceptor() = default;
  virtual std::string name() const = 0;
  // logits: [tree.size(), vocab] row-major float32. `sampler` holds the sampling parameters that
  // shape the target distribution exactly as autoregressive sampling does, and the request's RNG.
  virtual AcceptResult accept(const DraftTree& tree, const float* logits, int64_t vocab, Sampler& sampler) = 0;
};

}  // namespace specd
