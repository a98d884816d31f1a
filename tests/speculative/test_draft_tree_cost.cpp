// The pieces of the tree drafter made cheap (issue 10, item 0) against plain references: its
// top-k log-probabilities against a full sort and a double-precision log-softmax, and the
// level-by-level tree forward (tree_base + cached_parents) against one forward of the whole tree.
#include "catch_torch.h"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <random>

#include "fixture_models.h"
#include "float_bounds.h"
#include "forward_bounds.h"
#include "speculative/model_tree_drafter.h"

using namespace specd;

namespace {

// Every id sorted by logit (stable: ties keep the lower id first), and the log-softmax in double.
std::vector<std::pair<int32_t, double>> sorted_log_probs(const std::vector<float>& logits) {
  const double max_logit = *std::max_element(logits.begin(), logits.end());
  double z = 0;
  for (float v : logits) z += std::exp(static_cast<double>(v) - max_logit);
  const double log_z = std::log(z) + max_logit;
  std::vector<int32_t> ids(logits.size());
  std::iota(ids.begin(), ids.end(), 0);
  std::stable_sort(ids.begin(), ids.end(), [&](int32_t a, int32_t b) { return logits[a] > logits[b]; });
  std::vector<std::pair<int32_t, double>> all;
  for (int32_t id : ids) all.emplace_back(id, logits[id] - log_z);
  return all;
}

}  // namespace

TEST_CASE("draft_top_log_probs keeps the k best ids, ties to the lower id, with their log-softmax", "[spec][tree-drafter]") {
  std::mt19937 rng(5);
  std::normal_distribution<float> normal(0.0f, 4.0f);
  std::vector<float> scratch;
  for (int64_t vocab : {1, 3, 7, 8, 301, 4096, 32003}) {
    for (int trial = 0; trial < 4; ++trial) {
      std::vector<float> logits(static_cast<size_t>(vocab));
      for (float& v : logits) v = normal(rng);
      if (trial >= 2 && vocab > 3) {
        // Ties, at the top and across the cut: several ids share the best and the k-th value.
        std::uniform_int_distribution<int64_t> pick(0, vocab - 1);
        const float top = *std::max_element(logits.begin(), logits.end()) + 1.0f;
        for (int i = 0; i < 3; ++i) logits[pick(rng)] = top;
        if (trial == 3) std::fill(logits.begin(), logits.end(), 0.5f);
      }
      const auto expected = sorted_log_probs(logits);
      // The log-probabilities differ from the double ones by the error of log Z: a float32 sum of
      // `vocab` exponentials in any order (gamma_vocab of the sum, all terms positive), each off by
      // the vector exp's error and by the rounding of its argument v - max (u |v - max|).
      const double spread = *std::max_element(logits.begin(), logits.end()) - *std::min_element(logits.begin(), logits.end());
      const double bound = test::float32_gamma(vocab) + test::kVectorExpRelativeError + spread * test::kFloat32UnitRoundoff;
      for (int32_t k : {1, 4, 10}) {
        CAPTURE(vocab, trial, k);
        const auto got = draft_top_log_probs(logits.data(), vocab, k, scratch);
        REQUIRE(got.size() == std::min<size_t>(static_cast<size_t>(k), logits.size()));
        for (size_t i = 0; i < got.size(); ++i) {
          CHECK(got[i].first == expected[i].first);
          CHECK(std::abs(got[i].second - expected[i].second) <= bound);
        }
      }
    }
  }
}

// The drafter grows its tree one level per forward, each level continuing the cached tree rows
// (tree_base, cached_parents, parents as cache rows); the logits of every node must be those of
// one forward of the whole tree (parents as batch indices) on the same prefix.
TEST_CASE("a tree grown level by level gives the logits of one forward of the whole tree", "[model][oracle]") {
  auto cfg = test::tiny_config("llama");
  const auto dtype = GENERATE(DType::F32, DType::BF16);
  const bool aten = GENERATE(false, true);
  const int threads = GENERATE(1, 2);
  CAPTURE(dtype_name(dtype), aten, threads);
  const std::string dir = test::write_model("tree-grown", cfg, dtype, 13);
  auto model = test::load_model(dir, aten, threads);
  at::InferenceMode guard;

  std::vector<int64_t> prefix;
  for (int64_t i = 0; i < 37; ++i) prefix.push_back((i * 89 + 11) % cfg.vocab_size);
  const int64_t base = static_cast<int64_t>(prefix.size());
  // Three levels; parents as indices into `tokens` (-1: the prefix's last token).
  const std::vector<std::vector<int64_t>> level_tokens{{5, 77, 140, 9}, {33, 34, 200, 18}, {250, 1, 2, 3}};
  const std::vector<std::vector<int64_t>> level_parents{{-1, -1, -1, -1}, {0, 0, 2, 3}, {4, 6, 6, 7}};

  auto prefill = [&](KvCache& cache) {
    ForwardRequest request;
    request.tokens = prefix;
    request.logits = LogitsWanted::None;
    model->forward(cache, request);
  };

  KvCache grown = model->new_cache();
  prefill(grown);
  std::vector<at::Tensor> levels;
  std::vector<int64_t> cached_parents;
  for (size_t level = 0; level < level_tokens.size(); ++level) {
    ForwardRequest feed;
    feed.tokens = level_tokens[level];
    for (int64_t p : level_parents[level]) feed.parents.push_back(p < 0 ? -1 : base + p);
    feed.positions.assign(feed.tokens.size(), base + static_cast<int64_t>(level));
    feed.tree_base = base;
    feed.cached_parents = cached_parents;
    levels.push_back(test::tensor(model->forward(grown, feed).logits));
    cached_parents.insert(cached_parents.end(), feed.parents.begin(), feed.parents.end());
  }
  const at::Tensor by_levels = at::cat(levels);

  KvCache whole_cache = model->new_cache();
  prefill(whole_cache);
  ForwardRequest whole;
  for (size_t level = 0; level < level_tokens.size(); ++level) {
    whole.tokens.insert(whole.tokens.end(), level_tokens[level].begin(), level_tokens[level].end());
    whole.parents.insert(whole.parents.end(), level_parents[level].begin(), level_parents[level].end());
    whole.positions.insert(whole.positions.end(), level_tokens[level].size(), base + static_cast<int64_t>(level));
  }
  const at::Tensor at_once = test::tensor(model->forward(whole_cache, whole).logits);

  REQUIRE(by_levels.sizes() == at_once.sizes());
  if (aten) {
    // ATen's batched operations may sum in another order for another batch shape (forward_bounds.h).
    const int64_t context = base + 12;  // the prefix and the tree's 12 nodes
    CHECK((by_levels - at_once).abs().max().item<double>() <= test::float32_reorder_bound(dir, cfg, context));
  } else {
    // The CPU kernels give a token bit-identical logits however its forward is batched.
    CHECK(at::equal(by_levels, at_once));
  }
}
