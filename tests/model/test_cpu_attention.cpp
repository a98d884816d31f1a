// The batched attention kernel (several queries of one KV head at once, shared rows from the key
// tiles) against the one-query kernel, for every supported head size, 1 to 16 queries, shared
// prefixes that do and do not end on a tile boundary, and queries with further prefix rows and
// tree rows of their own; at every KV element type, and each type's kernels against the float
// kernels over the widened rows.
#include "catch_torch.h"
#include "test_skip.h"
#include "float_bounds.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <random>
#include <vector>

#include "model/cpu/attention.h"

using namespace specd;
using cpu::Bf16;
using cpu::Half;

namespace {

// Normal(0, 1) rows rounded to E.
template <class E>
std::vector<E> random_rows(std::mt19937& rng, int64_t count) {
  std::normal_distribution<float> normal(0.0f, 1.0f);
  std::vector<float> x(count);
  for (float& v : x) v = normal(rng);
  std::vector<E> rows(count);
  cpu::narrow_kv_row(x.data(), count, rows.data());
  return rows;
}

template <class E>
std::vector<float> widened(const std::vector<E>& rows) {
  std::vector<float> x(rows.size());
  cpu::widen_kv_row(rows.data(), static_cast<int64_t>(rows.size()), x.data());
  return x;
}

// How far two float32 evaluations of one query's attention over (a subset of) `rows` rows may
// differ. A score s_r = scale q.k_r is within e_s = gamma_(head_dim+1) scale sum_i |q_i k_ri| of
// exact; exp adds its own error (float_bounds.h) and the shift by the max u |s_r - m|, so each
// weight moves by a relative delta <= e_s + exp's + max |s_r - m| u; the normaliser's sum of n
// weights adds gamma_n, and the output, a weighted mean of the values, moves by at most
// 2 (delta + gamma_n) max |v| in each evaluation (float_bounds.h for gamma).
double attention_bound(const float* q, const std::vector<float>& keys, const std::vector<float>& values, int64_t head_dim,
                       int64_t rows, float scale) {
  double spread = 0, largest_score = 0;
  for (int64_t r = 0; r < rows; ++r) {
    double magnitude = 0, score = 0;
    for (int64_t i = 0; i < head_dim; ++i) {
      magnitude += std::abs(static_cast<double>(q[i]) * keys[r * head_dim + i]);
      score += static_cast<double>(q[i]) * keys[r * head_dim + i];
    }
    spread = std::max(spread, magnitude * scale);
    largest_score = std::max(largest_score, std::abs(score) * scale);
  }
  double largest_value = 0;
  for (float v : values) largest_value = std::max(largest_value, static_cast<double>(std::abs(v)));
  const double delta = test::float32_gamma(head_dim + 1) * spread + test::kVectorExpRelativeError +
                       2 * largest_score * test::kFloat32UnitRoundoff;
  return 2 * 2 * (delta + test::float32_gamma(rows)) * largest_value;  // two evaluations
}

}  // namespace

TEMPLATE_TEST_CASE("batched attention equals one-query attention for every query", "[model][attention]", float, Bf16, Half) {
  using E = TestType;
  const int64_t head_dim = GENERATE(16, 32, 64, 128);
  if (!cpu::batch_attention_supported(head_dim)) SPECD_SKIP("no batched attention kernel in this build (it needs AVX-512)");
  const int64_t rows = 75;
  std::mt19937 rng(static_cast<uint32_t>(head_dim));
  std::normal_distribution<float> normal(0.0f, 1.0f);
  const std::vector<E> keys = random_rows<E>(rng, rows * head_dim), values = random_rows<E>(rng, rows * head_dim);
  std::vector<E> tiles(((rows + 15) / 16) * head_dim * 16);
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
      cpu::QueryBatch<E> batch;
      batch.tiles = tiles.data();
      batch.keys = keys.data();
      batch.values = values.data();
      batch.head_dim = head_dim;
      batch.shared = shared;
      batch.count = count;
      for (int j = 0; j < count; ++j) {
        for (int32_t r = 64 + j % 3; r < rows; r += 3) extra[j].push_back(r);
        batch.q[j] = q.data() + j * head_dim;
        batch.own[j] = cpu::AttentionKeys<E>{nullptr, nullptr, head_dim, shared + j % 4, extra[j].data(),
                                          static_cast<int64_t>(extra[j].size())};
        batch.out[j] = out.data() + j * head_dim;
      }
      const float scale = 1.0f / std::sqrt(static_cast<float>(head_dim));
      std::vector<float> scratch(cpu::batch_attention_scratch(count, rows, head_dim));
      cpu::attend_batch(batch, scale, scratch.data());

      std::vector<float> scores(rows);
      for (int j = 0; j < count; ++j) {
        cpu::AttentionKeys<E> kv = batch.own[j];
        kv.keys = keys.data();
        kv.values = values.data();
        cpu::attend_head(kv, batch.q[j], scale, scores.data(), expected.data() + j * head_dim);
      }
      const std::vector<float> key_floats = widened(keys), value_floats = widened(values);
      double worst = 0;  // the largest difference as a share of its query's bound
      for (int j = 0; j < count; ++j) {
        const double bound = attention_bound(batch.q[j], key_floats, value_floats, head_dim, rows, scale);
        for (int64_t i = 0; i < head_dim; ++i)
          worst = std::max(worst, std::abs(static_cast<double>(out[j * head_dim + i]) - expected[j * head_dim + i]) / bound);
      }
      CHECK(worst <= 1.0);
    }
  }
}

// Widening is exact, so attention over BF16 or F16 rows is float attention over the widened rows,
// bit for bit, on every path (batched or not, vector blocks or scalar): what the model-level
// batch-invariance oracle at each KV precision rests on.
TEMPLATE_TEST_CASE("attention over narrow KV rows equals float attention over their widened rows", "[model][attention]", Bf16,
                   Half) {
  using E = TestType;
  const int64_t head_dim = GENERATE(12, 16, 40, 64);
  const int64_t rows = 50, shared = 20;
  std::mt19937 rng(static_cast<uint32_t>(head_dim) + 1);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  const std::vector<E> keys = random_rows<E>(rng, rows * head_dim), values = random_rows<E>(rng, rows * head_dim);
  const std::vector<float> wide_keys = widened(keys), wide_values = widened(values);
  std::vector<float> q(head_dim);
  for (float& x : q) x = normal(rng);
  std::vector<int32_t> extra{41, 44, 49};
  const float scale = 1.0f / std::sqrt(static_cast<float>(head_dim));
  CAPTURE(head_dim);

  std::vector<float> scores(rows), out(head_dim), expected(head_dim);
  cpu::attend_head(cpu::AttentionKeys<E>{keys.data(), values.data(), head_dim, 33, extra.data(), 3}, q.data(), scale,
                   scores.data(), out.data());
  cpu::attend_head(cpu::AttentionKeys<float>{wide_keys.data(), wide_values.data(), head_dim, 33, extra.data(), 3}, q.data(),
                   scale, scores.data(), expected.data());
  CHECK(out == expected);

  if (!cpu::batch_attention_supported(head_dim)) return;
  std::vector<E> tiles(((rows + 15) / 16) * head_dim * 16);
  std::vector<float> wide_tiles(tiles.size());
  cpu::write_key_tiles(keys.data(), head_dim, 0, rows, tiles.data());
  cpu::write_key_tiles(wide_keys.data(), head_dim, 0, rows, wide_tiles.data());
  cpu::QueryBatch<E> batch{tiles.data(), keys.data(), values.data(), head_dim, shared, 1, {q.data()}, {}, {out.data()}};
  batch.own[0] = cpu::AttentionKeys<E>{nullptr, nullptr, head_dim, 33, extra.data(), 3};
  cpu::QueryBatch<float> wide{wide_tiles.data(), wide_keys.data(), wide_values.data(), head_dim, shared, 1, {q.data()}, {}, {expected.data()}};
  wide.own[0] = cpu::AttentionKeys<float>{nullptr, nullptr, head_dim, 33, extra.data(), 3};
  std::vector<float> scratch(cpu::batch_attention_scratch(1, rows, head_dim));
  cpu::attend_batch(batch, scale, scratch.data());
  cpu::attend_batch(wide, scale, scratch.data());
  CHECK(out == expected);
}

// The vector loads widen exactly what the scalar widening gives, for every 16-bit pattern that is
// a number (NaN payloads may be quieted by the instruction).
TEMPLATE_TEST_CASE("KV element loads widen every 16-bit number as the scalar conversion does", "[model][attention]", Bf16, Half) {
  using E = TestType;
  std::vector<E> all(65536);
  for (uint32_t b = 0; b < 65536; ++b) all[b] = E{static_cast<uint16_t>(b)};
  std::vector<float> scalar(all.size()), loaded(all.size());
  cpu::widen_kv_row(all.data(), 65536, scalar.data());
#if defined(__AVX512F__)
  for (size_t i = 0; i < all.size(); i += 16) _mm512_storeu_ps(loaded.data() + i, cpu::KvElement<E>::load16(all.data() + i));
#elif defined(SPECD_HAVE_AVX2)
  for (size_t i = 0; i < all.size(); i += 8) _mm256_storeu_ps(loaded.data() + i, cpu::KvElement<E>::load8(all.data() + i));
#else
  SPECD_SKIP("no vector loads in this build");
#endif
  int64_t numbers = 0;
  for (size_t i = 0; i < all.size(); ++i) {
    if (std::isnan(scalar[i])) {
      CHECK(std::isnan(loaded[i]));
      continue;
    }
    ++numbers;
    REQUIRE(std::memcmp(&scalar[i], &loaded[i], sizeof(float)) == 0);  // -0 and subnormals included
    CHECK(cpu::KvElement<E>::narrow(scalar[i]).bits == i);               // and narrowing gives the bits back
  }
  CHECK(numbers > 60000);
}
