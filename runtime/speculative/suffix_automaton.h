#pragma once
// Incremental suffix automaton over token ids: SAM-Decoding's retrieval structure
// (SAM Decoding, Hu et al., arXiv:2411.10666, §3.1-3.2). It answers "what is the longest suffix of the
// committed text (plus one candidate token) that occurred before, and where did it first end?"
// in amortised constant time per token (times a log of the distinct-token count for the root's
// transitions), and copies the tokens that followed that earliest occurrence as a draft.
#include <cstddef>
#include <cstdint>
#include <vector>

namespace specd {

class SuffixAutomaton {
 public:
  // A match: the last `length` tokens of some query string, which form one of the substrings of
  // automaton state `state`. {0, 0} means "no match". Kept as an explicit (state, length) pair
  // because a later insertion may split the state; every use re-derives the right state.
  struct Match {
    int32_t state = 0;
    int32_t length = 0;
  };

  SuffixAutomaton();
  void clear();
  void reserve(size_t tokens);

  // Feeds one token of the text: first advances the running match with it against the text so
  // far (transfer before insert, so the match points at an earlier occurrence, never at the
  // token itself), then inserts it. This is SAM-Decoding's add_tokens for one token.
  void append(int32_t token);
  // Inserts one token without touching the running match (the plain online construction).
  void extend(int32_t token);

  const std::vector<int32_t>& text() const { return text_; }
  int32_t size() const { return static_cast<int32_t>(text_.size()); }
  int32_t num_states() const { return static_cast<int32_t>(states_.size()); }

  // The running match after the last append(): the longest suffix of text() that also occurs
  // in text() without its last token.
  Match match() const { return match_; }
  // The longest suffix of text() + token that occurs in text(), the token not inserted.
  Match lookup(int32_t token) const { return transfer(match_, token); }
  // Extends a match of some query string by one token: the longest suffix of query + token that
  // occurs in text().
  Match transfer(Match from, int32_t token) const;

  // Number of tokens up to and including the end of the earliest occurrence of the matched
  // string (its "first end position", 1-based), so the tokens that followed it start at
  // text()[first_end(m)]. Requires m.length > 0.
  int32_t first_end(Match m) const;

  // SAM-Decoding's draft for a match ending with the start (root) token, without the padding:
  // while fewer than `n_predicts` tokens follow the earliest occurrence and a shorter suffix with
  // an earlier occurrence exists (a suffix link other than the root), move to it (to_anc); then
  // copy up to n_predicts - 1 tokens after that occurrence (n_predicts counts the start token,
  // as in the reference). Fewer tokens when the text ends; none when m.length == 0. to_anc false:
  // copy from the match's own earliest occurrence (the reference's static corpus does).
  void continuation(Match m, int32_t n_predicts, std::vector<int32_t>& out, bool to_anc = true) const;

 private:
  struct Edge {
    int32_t token;
    int32_t target;
  };
  // Transitions are kept sorted by token: most states have one to three, the root has one per
  // distinct token, so a sorted vector is compact and still logarithmic for the big ones.
  struct State {
    std::vector<Edge> next;
    int32_t link;
    int32_t length;
    int32_t min_endpos;
  };

  static int32_t find(const State& state, int32_t token);  // target state, -1 when absent
  static void set(State& state, int32_t token, int32_t target);
  // The state that holds the match's string now (walks up suffix links past splits).
  Match normalize(Match m) const;

  std::vector<State> states_;
  std::vector<int32_t> text_;
  int32_t last_ = 0;
  Match match_;
};

}  // namespace specd
