#pragma once
// One speculative step's draft: node 0 is the root (the bonus token chosen at the end of the last
// step, not yet in the KV cache); every other node is a drafted token whose parent precedes it.
// A chain is a tree with one path. Flat arrays, one entry per node.
#include <cstdint>
#include <limits>
#include <memory>
#include <string>
#include <vector>

namespace specd {

enum class DraftSource : uint8_t { Root, Model, Retrieval, Branch, Successor };
const char* draft_source_name(DraftSource source);

struct DraftTree {
  std::vector<int32_t> tokens;
  std::vector<int32_t> parents;  // parents[0] == -1; parents[i] < i
  std::vector<int32_t> depths;   // depths[0] == 0
  std::vector<DraftSource> sources;
  // Probability the drafter gave node i's token (1 for deterministic drafts such as top-k
  // expansion or retrieval: the point-mass rule applies to them).
  std::vector<float> q;
  // child_q[i]: the drafter's full distribution over the vocabulary at node i, from which node i's
  // children were *sampled* (empty when they were not sampled). Rejection sampling needs it for
  // the residual.
  std::vector<std::shared_ptr<const std::vector<float>>> child_q;
  // The drafter's score of node i, for pruners and traces: the cumulative draft log-probability
  // for model drafts, NaN when the drafter has none (retrieval).
  std::vector<float> scores;

  explicit DraftTree(int32_t root_token);
  int32_t size() const { return static_cast<int32_t>(tokens.size()); }
  int32_t depth() const;  // the deepest node's (0 for the root alone)
  // Appends a node and returns its index.
  int32_t add(int32_t parent, int32_t token, DraftSource source, float q = 1.0f,
              float score = std::numeric_limits<float>::quiet_NaN());
  // The subtree of the nodes `keep` marks (the root always; a kept node's parent must be kept),
  // in the original order.
  DraftTree keep_only(const std::vector<char>& keep) const;
  std::vector<int32_t> children(int32_t node) const;
  // Node indices from the root to `node`, root first.
  std::vector<int32_t> path_to(int32_t node) const;
  // Throws std::logic_error when the arrays disagree or a parent does not precede its child.
  void check() const;
};

}  // namespace specd
