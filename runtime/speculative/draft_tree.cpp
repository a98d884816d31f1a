#include "speculative/draft_tree.h"

#include <algorithm>
#include <stdexcept>

namespace specd {

const char* draft_source_name(DraftSource source) {
  switch (source) {
    case DraftSource::Root: return "root";
    case DraftSource::Model: return "model";
    case DraftSource::Retrieval: return "retrieval";
    case DraftSource::Branch: return "branch";
    case DraftSource::Successor: return "successor";
  }
  return "?";
}

DraftTree::DraftTree(int32_t root_token)
    : tokens{root_token}, parents{-1}, depths{0}, sources{DraftSource::Root}, q{1.0f}, child_q(1), scores{std::numeric_limits<float>::quiet_NaN()} {}

int32_t DraftTree::add(int32_t parent, int32_t token, DraftSource source, float token_q, float score) {
  if (parent < 0 || parent >= size()) throw std::logic_error("DraftTree::add: parent out of range");
  tokens.push_back(token);
  parents.push_back(parent);
  depths.push_back(depths[parent] + 1);
  sources.push_back(source);
  q.push_back(token_q);
  child_q.emplace_back();
  scores.push_back(score);
  return size() - 1;
}

DraftTree DraftTree::keep_only(const std::vector<char>& keep) const {
  if (static_cast<int32_t>(keep.size()) != size()) throw std::logic_error("DraftTree::keep_only: one mark per node");
  DraftTree kept(tokens[0]);
  kept.child_q[0] = child_q[0];
  kept.scores[0] = scores[0];
  std::vector<int32_t> index(tokens.size(), -1);
  index[0] = 0;
  for (int32_t i = 1; i < size(); ++i) {
    if (!keep[i]) continue;
    if (index[parents[i]] < 0) throw std::logic_error("DraftTree::keep_only: a kept node's parent was dropped");
    index[i] = kept.add(index[parents[i]], tokens[i], sources[i], q[i], scores[i]);
    kept.child_q[index[i]] = child_q[i];
  }
  return kept;
}

int32_t DraftTree::depth() const { return *std::max_element(depths.begin(), depths.end()); }

std::vector<int32_t> DraftTree::children(int32_t node) const {
  std::vector<int32_t> result;
  for (int32_t i = node + 1; i < size(); ++i)
    if (parents[i] == node) result.push_back(i);
  return result;
}

std::vector<int32_t> DraftTree::path_to(int32_t node) const {
  std::vector<int32_t> path;
  for (int32_t i = node; i >= 0; i = parents[i]) path.push_back(i);
  std::reverse(path.begin(), path.end());
  return path;
}

void DraftTree::check() const {
  const size_t n = tokens.size();
  if (n == 0 || parents.size() != n || depths.size() != n || sources.size() != n || q.size() != n || child_q.size() != n ||
      scores.size() != n)
    throw std::logic_error("DraftTree: arrays of different sizes");
  if (parents[0] != -1 || depths[0] != 0) throw std::logic_error("DraftTree: node 0 must be the root");
  for (size_t i = 1; i < n; ++i) {
    if (parents[i] < 0 || parents[i] >= static_cast<int32_t>(i)) throw std::logic_error("DraftTree: a parent must precede its child");
    if (depths[i] != depths[parents[i]] + 1) throw std::logic_error("DraftTree: depth != parent depth + 1");
  }
}

}  // namespace specd
