#include "speculative/greedy_acceptor.h"

#include <stdexcept>

namespace specd {

void check_tree_for_acceptance(const DraftTree& tree, int64_t vocab) {
  tree.check();
  if (vocab <= 0) throw std::logic_error("acceptor: vocabulary size must be positive");
  for (int32_t token : tree.tokens)
    if (token < 0 || token >= vocab) throw std::logic_error("acceptor: draft token outside the vocabulary");
}

AcceptResult GreedyAcceptor::accept(const DraftTree& tree, const float* logits, int64_t vocab, Sampler&) {
  return accept(tree, logits, vocab);
}

AcceptResult GreedyAcceptor::accept(const DraftTree& tree, const float* logits, int64_t vocab) const {
  check_tree_for_acceptance(tree, vocab);
  const int32_t n = tree.size();
  // matched[i]: every drafted token from the root down to node i equals the argmax at its parent.
  // Parents precede children, so one forward pass suffices; argmax is computed once per parent.
  std::vector<int32_t> target(n, -1);
  std::vector<char> matched(n, 0);
  matched[0] = 1;
  int32_t best = 0;
  for (int32_t i = 1; i < n; ++i) {
    const int32_t parent = tree.parents[i];
    if (!matched[parent]) continue;
    if (target[parent] < 0) target[parent] = argmax(logits + static_cast<int64_t>(parent) * vocab, vocab);
    if (tree.tokens[i] != target[parent]) continue;
    matched[i] = 1;
    if (tree.depths[i] > tree.depths[best]) best = i;  // strict: ties keep the lowest index
  }

  AcceptResult result;
  result.path = tree.path_to(best);
  result.next_token = argmax(logits + static_cast<int64_t>(best) * vocab, vocab);
  result.verdicts.assign(n, NodeVerdict::NotReached);
  std::vector<char> on_path(n, 0);
  for (int32_t node : result.path) on_path[node] = 1;
  for (int32_t i = 0; i < n; ++i) {
    if (on_path[i]) {
      result.verdicts[i] = NodeVerdict::Accepted;
    } else if (on_path[tree.parents[i]]) {
      result.verdicts[i] = NodeVerdict::Rejected;
    }
  }
  result.lossless = true;
  return result;
}

}  // namespace specd
