// The forward pass on specd's own CPU kernels: the same arithmetic as forward_aten (which tests
// hold it to), without ATen's per-operation dispatch, which costs a small model a large share of
// its time, and without BLAS, which is weak for the 1-64 rows that decoding multiplies.
#include "model/cpu/cpu_forward.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <vector>

#include "model/cpu/attention.h"
#include "model/cpu/matmul.h"
#include "model/cpu/spin_pool.h"
#include "util/vector_math.h"

namespace specd {
namespace {

const float* data(const std::vector<float>& v) { return v.empty() ? nullptr : v.data(); }

// y (+)= x W^T (+ bias) with W [out, in] packed by the loader.
void project(const float* x, int64_t rows, const PackedMatrix& w, const std::vector<float>& bias, float* y, bool accumulate,
             int threads) {
  cpu::matmul({x, w.data.data(), w.type, data(bias), y, rows, w.in, w.out, accumulate}, threads);
}

// normed[i] = x[i] / rms(x[i]) * gain for each of `rows` rows.
void normalize_rows(const float* x, float* normed, int64_t rows, int64_t width, const std::vector<float>& gain, float eps,
                    int threads) {
  const float* g = gain.data();
  cpu::parallel_rows(rows, threads, [&](int64_t first, int64_t last) {
    for (int64_t i = first; i < last; ++i) {
      cpu::rms_normalize(x + i * width, normed + i * width, width, eps);
      for (int64_t j = 0; j < width; ++j) normed[i * width + j] *= g[j];
    }
  });
}

// For each new token, the rows it sees: all rows before prefix[i] (the shared prefix, extended
// by any unbroken run after it, as in a chain or a prefill), then a list of further rows (tree
// ancestors and itself).
struct SeenRows {
  std::vector<int64_t> prefix;   // n entries
  std::vector<int32_t> rows;     // token i's further rows start at offsets[i]
  std::vector<int64_t> offsets;  // n + 1 entries
};

// Scratch buffers reused across calls so that a decoding step allocates nothing.
struct Workspace {
  std::vector<float> x, normed, qkv, attended, gate_up, act, scores;
  SeenRows seen;
};

Workspace& workspace() {
  thread_local Workspace ws;
  return ws;
}

// Rotates the halves of each of `count` heads of one token (rotate_half convention).
void rotate_heads(float* heads, int64_t count, int64_t head_dim, const float* cos, const float* sin) {
  const int64_t half = head_dim / 2;
  for (int64_t h = 0; h < count; ++h) {
    float* a = heads + h * head_dim;
    float* b = a + half;
    for (int64_t i = 0; i < half; ++i) {
      float x = a[i], y = b[i];
      a[i] = x * cos[i] - y * sin[i];
      b[i] = y * cos[i] + x * sin[i];
    }
  }
}

struct AttentionShape {
  int64_t n, past, shared, heads, kv_heads, head_dim, capacity, qkv_width;
  float scale;  // 1/sqrt(head_dim)
};

void collect_seen_rows(const AttentionShape& s, const uint8_t* visible, SeenRows& seen) {
  const int64_t span = s.past + s.n - s.shared;
  seen.prefix.clear();
  seen.rows.clear();
  seen.offsets.assign(1, 0);
  for (int64_t i = 0; i < s.n; ++i) {
    const uint8_t* row = visible + i * span;
    int64_t c = 0;
    while (c < span && row[c]) ++c;
    seen.prefix.push_back(s.shared + c);
    for (; c < span; ++c)
      if (row[c]) seen.rows.push_back(static_cast<int32_t>(s.shared + c));
    seen.offsets.push_back(static_cast<int64_t>(seen.rows.size()));
  }
}

// out[i, h] = softmax_j(q[i, h] . K[j]) V[j] over the shared prefix and the rows token i sees.
template <class E>
void attend(const AttentionShape& s, const float* qkv, const E* keys, const E* values, const SeenRows& seen,
            float* out, std::vector<float>& scores, int threads) {
  const int64_t total = s.past + s.n, group = s.heads / s.kv_heads;
  scores.resize(static_cast<size_t>(threads * total));
  cpu::parallel_for(threads, s.heads * s.n, [&](int64_t first, int64_t last, int thread) {
    float* score = scores.data() + thread * total;
    for (int64_t unit = first; unit < last; ++unit) {
      const int64_t h = unit / s.n, i = unit % s.n;
      const int64_t kv_offset = (h / group) * s.capacity * s.head_dim;
      const cpu::AttentionKeys<E> kv{keys + kv_offset, values + kv_offset, s.head_dim, seen.prefix[i],
                                  seen.rows.data() + seen.offsets[i], seen.offsets[i + 1] - seen.offsets[i]};
      cpu::attend_head(kv, qkv + i * s.qkv_width + h * s.head_dim, s.scale, score,
                       out + i * s.heads * s.head_dim + h * s.head_dim);
    }
  });
}

// The same, with the queries that share a KV head batched (cpu::attend_batch): a unit is one KV
// head's query heads for a block of consecutive tokens, whose common prefix comes from the key
// tiles.
template <class E>
void attend_batched(const AttentionShape& s, const float* qkv, const E* keys, const E* values, const E* tiles,
                    const SeenRows& seen, float* out, std::vector<float>& scratch, int threads) {
  const int64_t total = s.past + s.n, group = s.heads / s.kv_heads;
  const int64_t heads_per_unit = std::min<int64_t>(group, cpu::kMaxBatchQueries);
  const int64_t head_chunks = (group + heads_per_unit - 1) / heads_per_unit;
  const int64_t tokens_per_unit = std::max<int64_t>(1, cpu::kMaxBatchQueries / heads_per_unit);
  const int64_t token_blocks = (s.n + tokens_per_unit - 1) / tokens_per_unit;
  const int64_t per_thread = cpu::batch_attention_scratch(cpu::kMaxBatchQueries, total, s.head_dim);
  scratch.resize(static_cast<size_t>(threads * per_thread));
  cpu::parallel_for(threads, s.kv_heads * head_chunks * token_blocks, [&](int64_t first, int64_t last, int thread) {
    for (int64_t unit = first; unit < last; ++unit) {
      const int64_t g = unit / (head_chunks * token_blocks), chunk = unit / token_blocks % head_chunks;
      const int64_t i0 = unit % token_blocks * tokens_per_unit, i1 = std::min(s.n, i0 + tokens_per_unit);
      const int64_t h0 = g * group + chunk * heads_per_unit, h1 = std::min(g * group + group, h0 + heads_per_unit);
      const int64_t kv_offset = g * s.capacity * s.head_dim;
      cpu::QueryBatch<E> batch;
      batch.tiles = tiles + g * cpu::key_tiles_per_head(s.capacity, s.head_dim);
      batch.keys = keys + kv_offset;
      batch.values = values + kv_offset;
      batch.head_dim = s.head_dim;
      batch.shared = seen.prefix[i0];
      for (int64_t i = i0; i < i1; ++i) batch.shared = std::min(batch.shared, seen.prefix[i]);
      batch.count = 0;
      for (int64_t i = i0; i < i1; ++i)
        for (int64_t h = h0; h < h1; ++h) {
          const int q = batch.count++;
          batch.q[q] = qkv + i * s.qkv_width + h * s.head_dim;
          batch.own[q] = cpu::AttentionKeys<E>{nullptr, nullptr, s.head_dim, seen.prefix[i], seen.rows.data() + seen.offsets[i],
                                            seen.offsets[i + 1] - seen.offsets[i]};
          batch.out[q] = out + i * s.heads * s.head_dim + h * s.head_dim;
        }
      cpu::attend_batch(batch, s.scale, scratch.data() + thread * per_thread);
    }
  });
}

// Layer l's attention: rotates the new tokens' queries and keys, writes their keys and values to
// the cache (rounded to E) and the key tiles, and attends into ws.attended.
template <class E>
void attention_layer(const AttentionShape& s, CpuKvStorage& cache, int64_t l, Workspace& ws, bool batched,
                     int64_t tiles_from, const float* rope_cos, const float* rope_sin, int threads) {
  E* keys = cache.keys<E>(l);
  E* values = cache.values<E>(l);
  E* tiles = batched ? cache.key_tiles<E>(l) : nullptr;
  const int64_t half = s.head_dim / 2;
  cpu::parallel_rows(s.n, threads, [&](int64_t first, int64_t last) {
    for (int64_t i = first; i < last; ++i) {
      float* row = &ws.qkv[i * s.qkv_width];
      rotate_heads(row, s.heads + s.kv_heads, s.head_dim, rope_cos + i * half, rope_sin + i * half);
      for (int64_t g = 0; g < s.kv_heads; ++g) {
        const int64_t slot = (g * s.capacity + s.past + i) * s.head_dim;
        cpu::narrow_kv_row(row + (s.heads + g) * s.head_dim, s.head_dim, keys + slot);
        cpu::narrow_kv_row(row + (s.heads + s.kv_heads + g) * s.head_dim, s.head_dim, values + slot);
      }
    }
  });
  if (batched) {
    for (int64_t g = 0; g < s.kv_heads; ++g)
      cpu::write_key_tiles(keys + g * s.capacity * s.head_dim, s.head_dim, tiles_from, s.past + s.n,
                           tiles + g * cpu::key_tiles_per_head(s.capacity, s.head_dim));
    attend_batched(s, ws.qkv.data(), keys, values, tiles, ws.seen, ws.attended.data(), ws.scores, threads);
  } else {
    attend(s, ws.qkv.data(), keys, values, ws.seen, ws.attended.data(), ws.scores, threads);
  }
}

// The final norm and lm_head over `rows` rows of the last layer's output; `normed` is scratch of
// at least rows * hidden_size floats.
FloatRows output_logits(const ModelConfig& cfg, const CpuWeights& weights, const float* x, int64_t rows, std::vector<float>& normed,
                        int threads) {
  normalize_rows(x, normed.data(), rows, cfg.hidden_size, weights.final_gain, static_cast<float>(cfg.rms_norm_eps), threads);
  FloatRows logits(rows, cfg.vocab_size);
  project(normed.data(), rows, weights.lm_head, {}, logits.row(0), false, threads);
  return logits;
}

FloatRows copy_rows(const std::vector<float>& x, int64_t rows, int64_t width) {
  FloatRows copy(rows, width);
  std::copy(x.begin(), x.begin() + rows * width, copy.values.begin());
  return copy;
}

}  // namespace

ForwardResult forward_cpu_kernels(const ModelConfig& cfg, const CpuWeights& weights, CpuKvStorage& cache,
                                  const ForwardRequest& request, const ForwardPlan& plan, int threads) {
  const int64_t n = plan.n, past = plan.past, hidden = cfg.hidden_size;
  const int64_t heads = cfg.num_attention_heads, kv_heads = cfg.num_key_value_heads, head_dim = cfg.head_dim;
  const int64_t qkv_width = (heads + 2 * kv_heads) * head_dim, inter = cfg.intermediate_size;
  const float eps = static_cast<float>(cfg.rms_norm_eps);
  Workspace& ws = workspace();
  ws.x.resize(n * hidden);
  ws.normed.resize(n * std::max(hidden, inter));
  ws.qkv.resize(n * qkv_width);
  ws.attended.resize(n * heads * head_dim);
  ws.gate_up.resize(n * 2 * inter);
  ws.act.resize(n * inter);

  for (int64_t i = 0; i < n; ++i) cpu::widen_row(weights.embed.data(), weights.embed_type, request.tokens[i], hidden, &ws.x[i * hidden]);

  ForwardResult result;
  auto wants_hidden = [&](int layer) {
    return std::find(request.hidden_layers.begin(), request.hidden_layers.end(), layer) != request.hidden_layers.end();
  };
  if (wants_hidden(0)) result.hidden.push_back(copy_rows(ws.x, n, hidden));

  const float* rope_cos = plan.rope_cos.data();
  const float* rope_sin = plan.rope_sin.data();
  const AttentionShape shape{n, past, plan.shared, heads, kv_heads, head_dim, cache.capacity(), qkv_width,
                             1.0f / std::sqrt(static_cast<float>(head_dim))};
  collect_seen_rows(shape, plan.visible.data(), ws.seen);
  const bool batched = cpu::batch_attention_supported(head_dim);
  const int64_t tiles_from = std::min(cache.key_tiles_rows(), past);  // rows whose tiles are stale
  for (int64_t l = 0; l < cfg.num_hidden_layers; ++l) {
    const CpuLayerWeights& w = weights.layers[l];
    normalize_rows(ws.x.data(), ws.normed.data(), n, hidden, w.input_gain, eps, threads);
    project(ws.normed.data(), n, w.qkv, w.qkv_bias, ws.qkv.data(), false, threads);

    cpu::with_kv_element(cache.type(), [&](auto element) {
      attention_layer<decltype(element)>(shape, cache, l, ws, batched, tiles_from, rope_cos, rope_sin, threads);
    });
    project(ws.attended.data(), n, w.o, w.o_bias, ws.x.data(), true, threads);

    normalize_rows(ws.x.data(), ws.normed.data(), n, hidden, w.post_gain, eps, threads);
    project(ws.normed.data(), n, w.gate_up, {}, ws.gate_up.data(), false, threads);
    cpu::parallel_rows(n, threads, [&](int64_t first, int64_t last) {
      for (int64_t i = first; i < last; ++i) {
        const float* row = &ws.gate_up[i * 2 * inter];
        cpu::silu_mul(row, row + inter, &ws.act[i * inter], inter);
      }
    });
    project(ws.act.data(), n, w.down, {}, ws.x.data(), true, threads);
    if (wants_hidden(static_cast<int>(l) + 1)) result.hidden.push_back(copy_rows(ws.x, n, hidden));
  }

  if (batched) cache.set_key_tiles_rows(past + n);

  if (request.logits != LogitsWanted::None) {
    const int64_t first = request.logits == LogitsWanted::All ? 0 : n - std::clamp<int64_t>(request.last_rows, 1, n);
    result.logits = output_logits(cfg, weights, &ws.x[first * hidden], n - first, ws.normed, threads);
  }
  return result;
}

FloatRows logits_cpu_kernels(const ModelConfig& cfg, const CpuWeights& weights, const float* hidden, int64_t rows, int threads) {
  std::vector<float> normed(static_cast<size_t>(rows * cfg.hidden_size));
  return output_logits(cfg, weights, hidden, rows, normed, threads);
}

}  // namespace specd
