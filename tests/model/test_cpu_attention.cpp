// The batched attention kernel (several queries of one KV head at once, shared rows from the key
// tiles) against the one-query kernel, for every supported head size, 1 to 16 queries, shared
// prefixes that do and do not end on a tile boundary, and queries with further prefix rows and
// tree rows of their own.
#include "catch_torch.h"
#include "test_skip.h"

#include <algorithm>
#include <cmath>
#include <random>
#include <vector>

#include "model/cpu/attention.h"

using namespace specd;

TEST_CASE("batched attention equals one-query attention for every query", "[model][attention]") {
  const int64_t head_dim = GENERATE(16, 32, 64, 128);
  if (!cpu::batch_attention_supported(head_dim)) SPECD_SKIP("no batched attention kernel in this build (it needs AVX-512)");
  const int64_t rows = 75;
  std::mt19937 rng(static_cast<uint32_t>(head_dim));
  std::normal_distribution<float> normal(0.0f, 1.0f);
  std::vector<float> keys(rows * head_dim), values(rows * head_dim);
  for (float& x : keys) x = normal(rng);
  for (float& x : values) x = normal(rng);
  std::vector<float> tiles(((rows + 15) / 16) * head_dim * 16, 0.0f);
  cpu::write_key_tiles(keys.data(), head_dim, 0, rows, tiles.data());

  for (int count : {1, 2, 3, 5, 8, 9, 16}) {
    for (int64_t shared : {0, 1, 16, 33, 60}) {
      CAPTURE(head_dim, count, shared);
      std::vector<float> q(count * head_dim);
      for (float& x : q) x = normal(rng);
      // Query j sees the shared rows, j % 4 more prefix rows, and every third row after 64 up to
      // its own (a tree path).
      std::vector<std::vector<int32_t>> extra(count);
      std::vector<float> out(count * head_dim, 0.0f), expected(count * head_dim, 0.0f);
      cpu::QueryBatch batch;
      batch.tiles = tiles.data();
      batch.keys = keys.data();
      batch.values = values.data();
      batch.head_dim = head_dim;
      batch.shared = shared;
      batch.count = count;
      for (int j = 0; j < count; ++j) {
        for (int32_t r = 64 + j % 3; r < rows; r += 3) extra[j].push_back(r);
        batch.q[j] = q.data() + j * head_dim;
        batch.own[j] = cpu::AttentionKeys{nullptr, nullptr, head_dim, shared + j % 4, extra[j].data(),
                                          static_cast<int64_t>(extra[j].size())};
        batch.out[j] = out.data() + j * head_dim;
      }
      const float scale = 1.0f / std::sqrt(static_cast<float>(head_dim));
      std::vector<float> scratch(cpu::batch_attention_scratch(count, rows, head_dim));
      cpu::attend_batch(batch, scale, scratch.data());

      std::vector<float> scores(rows);
      for (int j = 0; j < count; ++j) {
        cpu::AttentionKeys kv = batch.own[j];
        kv.keys = keys.data();
        kv.values = values.data();
        cpu::attend_head(kv, batch.q[j], scale, scores.data(), expected.data() + j * head_dim);
      }
      float worst = 0;
      for (size_t i = 0; i < out.size(); ++i) worst = std::max(worst, std::abs(out[i] - expected[i]));
      CHECK(worst < 1e-5f);
    }
  }
}
