// SAM-Decoding's static corpus (stored in the artifact; its storage is tested with the artifact):
// the SAM drafter drafts from the corpus exactly when its match, less len_bias, beats the
// dynamic match and reaches the threshold, and then copies what followed the corpus's earliest
// occurrence, as a brute-force search finds it.
#include <catch2/catch.hpp>

#include <algorithm>
#include <random>

#include "speculative/sam_corpus.h"
#include "speculative/sam_drafter.h"
#include "test_helpers.h"
#include "token_strings.h"
#include "util/error.h"

using namespace specd;
using specd::test::Tokens;

namespace {

constexpr int32_t kSeparator = 0;

// Longest suffix of `query` that occurs in `text`, and the end (exclusive) of its earliest occurrence.
std::pair<int, int> brute_longest(const Tokens& text, const Tokens& query) {
  int best = 0, end = 0;
  for (int k = 1; k <= static_cast<int>(query.size()); ++k) {
    const auto found = std::search(text.begin(), text.end(), query.end() - k, query.end());
    if (found == text.end()) break;
    best = k;
    end = static_cast<int>(found - text.begin()) + k;
  }
  return {best, end};
}

}  // namespace

TEST_CASE("SAM drafts from the static corpus when its match, less len_bias, is the longer one", "[spec][sam]") {
  std::mt19937 rng(5);
  for (int len_bias : {0, 2, 5}) {
    for (int threshold : {1, 3, 5}) {
      struct {
        std::vector<Tokens> documents;
      } corpus;
      for (int d = 0; d < 6; ++d) {
        Tokens document = test::copy_heavy_tokens(rng, 120, 7);
        for (int32_t& t : document) t += 1;  // ids 1..7: the separator 0 never matches text
        corpus.documents.push_back(document);
      }
      Tokens corpus_text;
      for (const Tokens& document : corpus.documents) {
        corpus_text.insert(corpus_text.end(), document.begin(), document.end());
        corpus_text.push_back(kSeparator);
      }
      const StaticSam statics(corpus.documents, kSeparator);
      SamOptions options;
      options.len_bias = len_bias;
      options.len_threshold = threshold;
      options.n_predicts = 6;
      SamDrafter drafter(options, nullptr, &statics);
      // A request that copies spans of corpus documents between random stretches.
      Tokens text;
      while (text.size() < 400) {
        if (rng() % 2) {
          const Tokens& document = corpus.documents[rng() % corpus.documents.size()];
          const size_t from = rng() % 100;
          text.insert(text.end(), document.begin() + from, document.begin() + from + 5 + rng() % 15);
        } else {
          for (int i = 0; i < 8; ++i) text.push_back(1 + static_cast<int32_t>(rng() % 7));
        }
      }
      const size_t prompt = 30;
      drafter.begin(Tokens(text.begin(), text.begin() + prompt), 0);
      Tokens committed(text.begin(), text.begin() + prompt);
      int from_corpus = 0;
      for (size_t pos = prompt; pos < text.size(); ++pos) {
        const int32_t root = text[pos];
        const DraftTree tree = drafter.propose(DraftRequest{committed, root, 5, 5});
        Tokens query = committed;
        query.push_back(root);
        const auto [dynamic_length, dynamic_end] = brute_longest(committed, query);
        const auto [corpus_length, corpus_end] = brute_longest(corpus_text, query);
        const bool use_corpus = corpus_length - len_bias > dynamic_length;
        const int best = std::max(dynamic_length, corpus_length - len_bias);
        INFO("len_bias " << len_bias << " threshold " << threshold << " pos " << pos << " corpus match " << corpus_length
                          << " ending " << corpus_end << " drafter's " << drafter.last_match_length() << " dynamic " << dynamic_length);
        if (use_corpus && best >= threshold) {
          ++from_corpus;
          REQUIRE(drafter.proposal_class() == SamDrafter::kStaticClass + std::min(corpus_length, 16));
          const Tokens expected(corpus_text.begin() + corpus_end,
                                corpus_text.begin() + std::min<size_t>(corpus_text.size(), corpus_end + 5));
          REQUIRE(Tokens(tree.tokens.begin() + 1, tree.tokens.end()) == expected);
        } else if (best >= threshold) {
          REQUIRE(drafter.proposal_class() == std::min(dynamic_length, 16));
        } else {
          REQUIRE(tree.size() == 1);
        }
        const Tokens now{root};
        committed.push_back(root);
        const AcceptResult result;
        drafter.observe(StepFeedback{tree, result, now, TargetOutputs{}});
      }
      CHECK(from_corpus > 0);  // the oracle was exercised
    }
  }
}
