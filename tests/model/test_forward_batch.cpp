// Batched forwards across requests (what specd serve's steps run): every request's result must
// equal its own forward alone, bit for bit, whatever else shares the batch, on every KV type.
#include <catch2/catch.hpp>

#include <cstring>

#include "fixture_models.h"

using namespace specd;

namespace {

std::vector<int64_t> tokens(int64_t n, int64_t seed, int64_t vocab) {
  std::vector<int64_t> t;
  for (int64_t i = 0; i < n; ++i) t.push_back((i * 37 + seed * 101 + 3) % vocab);
  return t;
}

bool same_rows(const FloatRows& a, const FloatRows& b) {
  return a.rows == b.rows && a.cols == b.cols && std::memcmp(a.values.data(), b.values.data(), a.values.size() * sizeof(float)) == 0;
}

}  // namespace

TEST_CASE("a batched forward gives each request its own forward's logits, hidden states and cache, bit for bit", "[model][batch]") {
  const ModelConfig cfg = test::tiny_config();
  const std::string dir = test::write_model("forward-batch", cfg, DType::BF16);
  for (KvType kv : {KvType::F32, KvType::BF16, KvType::F16}) {
    INFO(kv_type_name(kv));
    const auto model = test::load_model(dir, false, 2, false, kv);
    // Three requests at different lengths: a prefill, a chain step, a tree verify.
    std::vector<ForwardRequest> steps(3);
    steps[0].tokens = tokens(11, 1, cfg.vocab_size);
    steps[0].logits = LogitsWanted::Last;
    steps[0].hidden_layers = {0, 2};
    steps[1].tokens = tokens(1, 2, cfg.vocab_size);
    steps[2].tokens = tokens(5, 3, cfg.vocab_size);
    steps[2].parents = {-1, 0, 0, 1, 2};
    std::vector<KvCache> alone, together;
    const int64_t prefixes[] = {0, 7, 19};
    for (int r = 0; r < 3; ++r) {
      alone.push_back(model->new_cache(64));
      together.push_back(model->new_cache(64));
      if (prefixes[r] > 0) {
        ForwardRequest prefix;
        prefix.tokens = tokens(prefixes[r], 10 + r, cfg.vocab_size);
        prefix.logits = LogitsWanted::None;
        model->forward(alone[r], prefix);
        model->forward(together[r], prefix);
      }
    }
    std::vector<ForwardResult> expected;
    for (int r = 0; r < 3; ++r) expected.push_back(model->forward(alone[r], steps[r]));
    const std::vector<ForwardResult> got =
        model->forward_batch({&together[0], &together[1], &together[2]}, {&steps[0], &steps[1], &steps[2]});
    REQUIRE(got.size() == 3);
    for (int r = 0; r < 3; ++r) {
      INFO("request " << r);
      CHECK(same_rows(got[r].logits, expected[r].logits));
      REQUIRE(got[r].hidden.size() == expected[r].hidden.size());
      for (size_t h = 0; h < got[r].hidden.size(); ++h) CHECK(same_rows(got[r].hidden[h], expected[r].hidden[h]));
      CHECK(together[r].length() == alone[r].length());
    }
    // The caches hold the same rows: the next step of each request agrees too.
    ForwardRequest next;
    next.tokens = tokens(2, 9, cfg.vocab_size);
    for (int r = 0; r < 3; ++r) {
      if (steps[r].parents.empty()) CHECK(same_rows(model->forward(together[r], next).logits, model->forward(alone[r], next).logits));
    }
  }
}

TEST_CASE("a batch refuses one cache twice", "[model][batch]") {
  const ModelConfig cfg = test::tiny_config();
  const auto model = test::load_model(test::write_model("forward-batch-twice", cfg), false, 1);
  KvCache cache = model->new_cache(16);
  ForwardRequest step;
  step.tokens = {1};
  CHECK_THROWS_AS(model->forward_batch({&cache, &cache}, {&step, &step}), std::logic_error);
}
