// Suffix automaton oracle: after every appended token, the running match, lookups with a candidate
// root token, their earliest end positions and SAM-Decoding's to_anc draft all equal a brute-force
// search over the text, on random (small and large alphabet), copy-heavy and periodic strings.
#include <catch2/catch.hpp>

#include <algorithm>
#include <random>
#include <vector>

#include "token_strings.h"
#include "speculative/suffix_automaton.h"

using specd::SuffixAutomaton;

namespace {

using specd::test::Tokens;
using specd::test::copy_heavy_tokens;
using specd::test::random_tokens;


Tokens periodic_tokens(int length, int period) {
  Tokens text(length);
  for (int i = 0; i < length; ++i) text[i] = 1000 + i % period;
  return text;
}

Tokens fibonacci_word(int length) {  // many repeats of many lengths: exercises state splits
  Tokens a{0}, b{0, 1};
  while (static_cast<int>(b.size()) < length) {
    Tokens c = b;
    c.insert(c.end(), a.begin(), a.end());
    a = std::move(b);
    b = std::move(c);
  }
  b.resize(length);
  return b;
}

// common[j-1] = length of the longest common suffix of text[0, j) and query, j = 1..limit.
std::vector<int> common_suffixes(const Tokens& text, int limit, const Tokens& query) {
  std::vector<int> common(limit);
  for (int j = 1; j <= limit; ++j) {
    int k = 0;
    while (k < j && k < static_cast<int>(query.size()) && text[j - 1 - k] == query[query.size() - 1 - k]) ++k;
    common[j - 1] = k;
  }
  return common;
}

struct Brute {
  int length = 0;     // longest suffix of query occurring in text[0, limit)
  int first_end = 0;  // 1-based end of its earliest occurrence (0 when length is 0)
};

Brute brute_match(const std::vector<int>& common) {
  Brute best;
  for (size_t j = 1; j <= common.size(); ++j)
    if (common[j - 1] > best.length) best = Brute{common[j - 1], static_cast<int>(j)};
  return best;
}

// SAM-Decoding's to_anc + gen_draft, in terms of occurrence sets: a suffix of length k of the
// query belongs to the same automaton state as length k-1 iff both occur at the same set of end
// positions; the state's suffix link is the root iff its shortest string has length 1.
Tokens brute_continuation(const Tokens& text, const std::vector<int>& common, int match_length, int n_predicts) {
  if (match_length == 0 || n_predicts <= 1) return {};
  auto occurrences = [&](int k) { return std::count_if(common.begin(), common.end(), [k](int c) { return c >= k; }); };
  auto first_end = [&](int k) {
    for (size_t j = 1; j <= common.size(); ++j)
      if (common[j - 1] >= k) return static_cast<int>(j);
    return 0;
  };
  const int n = static_cast<int>(text.size());
  int k = match_length;
  for (;;) {
    int shortest = k;
    while (shortest > 1 && occurrences(shortest - 1) == occurrences(k)) --shortest;
    if (shortest > 1 && n_predicts > n - first_end(k))
      k = shortest - 1;
    else
      break;
  }
  const int e = first_end(k);
  return Tokens(text.begin() + e, text.begin() + std::min(n, e + n_predicts - 1));
}

void check_against_brute_force(const Tokens& text, uint32_t seed) {
  std::mt19937 rng(seed);
  SuffixAutomaton sam;
  for (int n = 1; n <= static_cast<int>(text.size()); ++n) {
    sam.append(text[n - 1]);
    Tokens prefix(text.begin(), text.begin() + n);
    REQUIRE(sam.text() == prefix);

    // Transfer before insert: the match may not use the token just appended.
    const Brute running = brute_match(common_suffixes(prefix, n - 1, prefix));
    INFO("n = " << n);
    REQUIRE(sam.match().length == running.length);
    if (running.length > 0) REQUIRE(sam.first_end(sam.match()) == running.first_end);

    // Candidate roots: the true next token, one seen at random, one never seen.
    const int32_t candidates[] = {n < static_cast<int>(text.size()) ? text[n] : text[0], prefix[rng() % n], -7};
    for (int32_t root : candidates) {
      Tokens query = prefix;
      query.push_back(root);
      const std::vector<int> common = common_suffixes(prefix, n, query);
      const Brute expected = brute_match(common);
      INFO("root = " << root);
      const SuffixAutomaton::Match m = sam.lookup(root);
      REQUIRE(m.length == expected.length);
      if (expected.length == 0) continue;
      REQUIRE(sam.first_end(m) == expected.first_end);
      for (int n_predicts : {2, 5, 40}) {
        Tokens draft;
        sam.continuation(m, n_predicts, draft);
        REQUIRE(draft == brute_continuation(prefix, common, m.length, n_predicts));
      }
    }
    // lookup() does not move the running match.
    REQUIRE(sam.match().length == running.length);
  }
  REQUIRE(sam.num_states() <= std::max(2, 2 * static_cast<int>(text.size()) - 1));
}

}  // namespace

TEST_CASE("suffix automaton matches brute force on random small-alphabet text", "[spec][sam]") {
  std::mt19937 rng(11);
  for (int alphabet : {1, 2, 3, 5}) {
    INFO("alphabet " << alphabet);
    check_against_brute_force(random_tokens(rng, 300, alphabet), 100 + alphabet);
  }
}

TEST_CASE("suffix automaton matches brute force on random large-alphabet text", "[spec][sam]") {
  std::mt19937 rng(12);
  check_against_brute_force(random_tokens(rng, 400, 150000), 7);
  // Few distinct tokens of large ids, so the root has many transitions (binary-searched).
  Tokens text = random_tokens(rng, 400, 40);
  for (auto& t : text) t = 149000 + t * 17;
  check_against_brute_force(text, 8);
}

TEST_CASE("suffix automaton matches brute force on repetitive text", "[spec][sam]") {
  std::mt19937 rng(13);
  check_against_brute_force(copy_heavy_tokens(rng, 400, 150000), 1);
  check_against_brute_force(copy_heavy_tokens(rng, 400, 6), 2);
  for (int period : {1, 2, 7}) check_against_brute_force(periodic_tokens(200, period), 3);
  check_against_brute_force(fibonacci_word(300), 4);
}

TEST_CASE("a match kept across later insertions stays valid", "[spec][sam]") {
  // Insertions split states; a stored (state, length) must still name its string afterwards.
  std::mt19937 rng(14);
  for (int round = 0; round < 40; ++round) {
    const Tokens text = round % 2 ? copy_heavy_tokens(rng, 200, 4) : random_tokens(rng, 200, 2);
    const int cut = 1 + static_cast<int>(rng() % 120);
    SuffixAutomaton sam;
    for (int i = 0; i < cut; ++i) sam.append(text[i]);
    const SuffixAutomaton::Match kept = sam.match();
    for (int i = cut; i < static_cast<int>(text.size()); ++i) (i % 2 ? sam.append(text[i]) : sam.extend(text[i]));
    if (kept.length == 0) continue;
    const Tokens x(text.begin() + cut - kept.length, text.begin() + cut);  // the kept string
    REQUIRE(sam.first_end(kept) == brute_match(common_suffixes(text, text.size(), x)).first_end);
    for (int32_t c : {0, 1, 2, 3}) {
      Tokens query = x;
      query.push_back(c);
      const Brute expected = brute_match(common_suffixes(text, text.size(), query));
      const SuffixAutomaton::Match m = sam.transfer(kept, c);
      REQUIRE(m.length == expected.length);
      if (expected.length > 0) REQUIRE(sam.first_end(m) == expected.first_end);
    }
  }
}

TEST_CASE("suffix automaton basics", "[spec][sam]") {
  SuffixAutomaton sam;
  REQUIRE(sam.size() == 0);
  REQUIRE(sam.lookup(5).length == 0);
  for (int32_t t : {1, 2, 3, 1, 2}) sam.append(t);
  REQUIRE(sam.match().length == 2);           // "1 2" occurred before, ending at position 2
  REQUIRE(sam.first_end(sam.match()) == 2);
  const SuffixAutomaton::Match m = sam.lookup(3);  // "1 2 3", first ending at position 3
  REQUIRE(m.length == 3);
  REQUIRE(sam.first_end(m) == 3);
  Tokens draft;
  sam.continuation(m, 40, draft);  // not padded: only what follows
  REQUIRE(draft == Tokens{1, 2});
  sam.continuation(m, 2, draft);
  REQUIRE(draft == Tokens{1});
  sam.continuation(SuffixAutomaton::Match{}, 40, draft);
  REQUIRE(draft.empty());
  REQUIRE_THROWS(sam.first_end(SuffixAutomaton::Match{}));

  sam.clear();
  REQUIRE(sam.size() == 0);
  REQUIRE(sam.num_states() == 1);
  REQUIRE(sam.match().length == 0);
  REQUIRE(sam.lookup(1).length == 0);
}
