#include "tokenizer/bpe_merges.h"

#include <queue>

namespace specd {
namespace {

struct Symbol {
  int32_t id;
  int32_t prev;  // -1 at the start
  int32_t next;  // -1 at the end
  bool alive;
};

struct Candidate {
  int32_t rank;
  int32_t pos;  // left symbol of the pair
  int32_t new_id;
  bool operator>(const Candidate& other) const {
    return rank != other.rank ? rank > other.rank : pos > other.pos;
  }
};

}  // namespace

void apply_merges(std::vector<int32_t>& ids, const MergeTable& merges) {
  if (ids.size() < 2) return;
  const int32_t count = static_cast<int32_t>(ids.size());
  std::vector<Symbol> symbols(ids.size());
  for (int32_t i = 0; i < count; ++i) {
    symbols[i] = {ids[i], i - 1, i + 1 < count ? i + 1 : -1, true};
  }
  std::priority_queue<Candidate, std::vector<Candidate>, std::greater<Candidate>> queue;
  const auto offer = [&](int32_t pos) {
    const Symbol& left = symbols[pos];
    if (left.next < 0) return;
    const auto rule = merges.find(merge_pair_key(left.id, symbols[left.next].id));
    if (rule != merges.end()) queue.push({rule->second.rank, pos, rule->second.new_id});
  };
  for (int32_t i = 0; i + 1 < count; ++i) offer(i);

  while (!queue.empty()) {
    const Candidate top = queue.top();
    queue.pop();
    Symbol& left = symbols[top.pos];
    if (!left.alive || left.next < 0) continue;
    // Entries go stale when a neighbour merged first; the pair must still make the same token.
    const auto rule = merges.find(merge_pair_key(left.id, symbols[left.next].id));
    if (rule == merges.end() || rule->second.new_id != top.new_id) continue;

    Symbol& right = symbols[left.next];
    right.alive = false;
    left.id = top.new_id;
    left.next = right.next;
    if (right.next >= 0) symbols[right.next].prev = top.pos;
    if (left.prev >= 0) offer(left.prev);
    offer(top.pos);
  }
  ids.clear();
  for (const Symbol& symbol : symbols) {
    if (symbol.alive) ids.push_back(symbol.id);
  }
}

}  // namespace specd
