#include "speculative/suffix_automaton.h"

#include <algorithm>
#include <stdexcept>

namespace specd {

namespace {
// Below this many transitions a linear scan beats a binary search.
constexpr size_t kLinearScan = 8;
}  // namespace

SuffixAutomaton::SuffixAutomaton() { clear(); }

void SuffixAutomaton::clear() {
  states_.clear();
  states_.push_back(State{{}, -1, 0, 0});
  text_.clear();
  last_ = 0;
  match_ = Match{};
}

void SuffixAutomaton::reserve(size_t tokens) {
  states_.reserve(2 * tokens + 1);  // a suffix automaton has at most 2n - 1 states
  text_.reserve(tokens);
}

int32_t SuffixAutomaton::find(const State& state, int32_t token) {
  const std::vector<Edge>& next = state.next;
  if (next.size() <= kLinearScan) {
    for (const Edge& edge : next)
      if (edge.token == token) return edge.target;
    return -1;
  }
  auto it = std::lower_bound(next.begin(), next.end(), token,
                             [](const Edge& edge, int32_t t) { return edge.token < t; });
  return it != next.end() && it->token == token ? it->target : -1;
}

void SuffixAutomaton::set(State& state, int32_t token, int32_t target) {
  std::vector<Edge>& next = state.next;
  auto it = std::lower_bound(next.begin(), next.end(), token,
                             [](const Edge& edge, int32_t t) { return edge.token < t; });
  if (it != next.end() && it->token == token)
    it->target = target;
  else
    next.insert(it, Edge{token, target});
}

void SuffixAutomaton::append(int32_t token) {
  match_ = transfer(match_, token);
  extend(token);
}

void SuffixAutomaton::extend(int32_t token) {
  text_.push_back(token);
  const int32_t length = size();
  const int32_t cur = num_states();
  states_.push_back(State{{}, -1, length, length});
  int32_t p = last_;
  while (p != -1 && find(states_[p], token) < 0) {
    set(states_[p], token, cur);
    p = states_[p].link;
  }
  if (p == -1) {
    states_[cur].link = 0;
  } else {
    const int32_t q = find(states_[p], token);
    if (states_[p].length + 1 == states_[q].length) {
      states_[cur].link = q;
    } else {
      // Split q: the clone keeps q's transitions, link and earliest end position (the shorter
      // strings it takes over occurred first exactly where q's did).
      State clone = states_[q];
      clone.length = states_[p].length + 1;
      const int32_t clone_index = num_states();
      states_.push_back(std::move(clone));
      while (p != -1 && find(states_[p], token) == q) {
        set(states_[p], token, clone_index);
        p = states_[p].link;
      }
      states_[q].link = clone_index;
      states_[cur].link = clone_index;
    }
  }
  last_ = cur;
}

SuffixAutomaton::Match SuffixAutomaton::normalize(Match m) const {
  if (m.length <= 0) return Match{};
  // A split moves the shorter strings of a state into its new suffix-link parent; climb until the
  // state's length range (link.length, length] holds the match again.
  while (m.state != 0 && m.length <= states_[states_[m.state].link].length) m.state = states_[m.state].link;
  return m;
}

SuffixAutomaton::Match SuffixAutomaton::transfer(Match from, int32_t token) const {
  Match m = normalize(from);
  int32_t target = find(states_[m.state], token);
  while (target < 0 && m.state != 0) {
    m.state = states_[m.state].link;
    m.length = states_[m.state].length;
    target = find(states_[m.state], token);
  }
  if (target < 0) return Match{};
  return Match{target, m.length + 1};
}

int32_t SuffixAutomaton::first_end(Match m) const {
  if (m.length <= 0) throw std::logic_error("SuffixAutomaton::first_end: empty match");
  return states_[normalize(m).state].min_endpos;
}

void SuffixAutomaton::continuation(Match m, int32_t n_predicts, std::vector<int32_t>& out, bool to_anc) const {
  out.clear();
  if (m.length <= 0 || n_predicts <= 1) return;
  int32_t state = normalize(m).state;
  const int32_t text_length = size();
  while (to_anc && states_[state].link != 0 && n_predicts > text_length - states_[state].min_endpos)
    state = states_[state].link;
  const int32_t begin = states_[state].min_endpos;
  const int32_t end = std::min(text_length, begin + n_predicts - 1);
  out.assign(text_.begin() + begin, text_.begin() + end);
}

}  // namespace specd
