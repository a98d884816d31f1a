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
  std::vector<float> x, normed, qkv, attended, gate_up, act, scores, gathered;
  std::vector<SeenRows> seen;  // per request of the batch
  std::vector<int64_t> unit_offsets;
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

// One request's share of a layer's batched attention (cpu::attend_batch): a unit is one KV head's
// query heads for a block of consecutive tokens, whose common prefix comes from the key tiles.
template <class E>
struct AttentionUnits {
  const AttentionShape* s;
  const float* qkv;
  float* out;
  const E *keys, *values, *tiles;
  const SeenRows* seen;
  int64_t group, heads_per_unit, head_chunks, tokens_per_unit, token_blocks;  // group: query heads per KV head

  AttentionUnits(const AttentionShape& shape, const float* qkv, float* out, const E* keys, const E* values, const E* tiles,
                 const SeenRows& seen)
      : s(&shape), qkv(qkv), out(out), keys(keys), values(values), tiles(tiles), seen(&seen), group(shape.heads / shape.kv_heads) {
    heads_per_unit = std::min<int64_t>(group, cpu::kMaxBatchQueries);
    head_chunks = (group + heads_per_unit - 1) / heads_per_unit;
    tokens_per_unit = std::max<int64_t>(1, cpu::kMaxBatchQueries / heads_per_unit);
    token_blocks = (s->n + tokens_per_unit - 1) / tokens_per_unit;
  }
  int64_t count() const { return s->kv_heads * head_chunks * token_blocks; }
  int64_t scratch_floats() const { return cpu::batch_attention_scratch(cpu::kMaxBatchQueries, s->past + s->n, s->head_dim); }

  void run(int64_t unit, float* scratch) const {
    const int64_t g = unit / (head_chunks * token_blocks), chunk = unit / token_blocks % head_chunks;
    const int64_t i0 = unit % token_blocks * tokens_per_unit, i1 = std::min(s->n, i0 + tokens_per_unit);
    const int64_t h0 = g * group + chunk * heads_per_unit, h1 = std::min(g * group + group, h0 + heads_per_unit);
    const int64_t kv_offset = g * s->capacity * s->head_dim;
    cpu::QueryBatch<E> batch;
    batch.tiles = tiles + g * cpu::key_tiles_per_head(s->capacity, s->head_dim);
    batch.keys = keys + kv_offset;
    batch.values = values + kv_offset;
    batch.head_dim = s->head_dim;
    batch.shared = seen->prefix[i0];
    for (int64_t i = i0; i < i1; ++i) batch.shared = std::min(batch.shared, seen->prefix[i]);
    batch.count = 0;
    for (int64_t i = i0; i < i1; ++i)
      for (int64_t h = h0; h < h1; ++h) {
        const int q = batch.count++;
        batch.q[q] = qkv + i * s->qkv_width + h * s->head_dim;
        batch.own[q] = cpu::AttentionKeys<E>{nullptr, nullptr, s->head_dim, seen->prefix[i], seen->rows.data() + seen->offsets[i],
                                          seen->offsets[i + 1] - seen->offsets[i]};
        batch.out[q] = out + i * s->heads * s->head_dim + h * s->head_dim;
      }
    cpu::attend_batch(batch, s->scale, scratch);
  }
};

// Every request's units of one layer in one parallel loop: a loop per request would wake the
// workers once per request and layer, a cost a decoding step of many one-row requests pays many
// times over.
template <class E>
void attend_all(const std::vector<AttentionUnits<E>>& parts, std::vector<int64_t>& offsets, std::vector<float>& scratch, int threads) {
  offsets.assign(1, 0);
  int64_t per_thread = 0;
  for (const AttentionUnits<E>& part : parts) {
    offsets.push_back(offsets.back() + part.count());
    per_thread = std::max(per_thread, part.scratch_floats());
  }
  scratch.resize(static_cast<size_t>(threads * per_thread));
  cpu::parallel_for(threads, offsets.back(), [&](int64_t first, int64_t last, int thread) {
    size_t r = static_cast<size_t>(std::upper_bound(offsets.begin(), offsets.end(), first) - offsets.begin()) - 1;
    for (int64_t unit = first; unit < last; ++unit) {
      while (unit >= offsets[r + 1]) ++r;
      parts[r].run(unit - offsets[r], scratch.data() + thread * per_thread);
    }
  });
}

// Layer l's new rows of one request of the batch: rotates its new tokens' queries and keys in
// `qkv` (its rows), writes their keys and values to its cache (rounded to E) and, for the batched
// kernel, the key tiles.
template <class E>
void write_rows(const AttentionShape& s, CpuKvStorage& cache, int64_t l, float* qkv, bool batched, int64_t tiles_from,
                const float* rope_cos, const float* rope_sin, int threads) {
  E* keys = cache.keys<E>(l);
  E* values = cache.values<E>(l);
  const int64_t half = s.head_dim / 2;
  cpu::parallel_rows(s.n, threads, [&](int64_t first, int64_t last) {
    for (int64_t i = first; i < last; ++i) {
      float* row = qkv + i * s.qkv_width;
      rotate_heads(row, s.heads + s.kv_heads, s.head_dim, rope_cos + i * half, rope_sin + i * half);
      for (int64_t g = 0; g < s.kv_heads; ++g) {
        const int64_t slot = (g * s.capacity + s.past + i) * s.head_dim;
        cpu::narrow_kv_row(row + (s.heads + g) * s.head_dim, s.head_dim, keys + slot);
        cpu::narrow_kv_row(row + (s.heads + s.kv_heads + g) * s.head_dim, s.head_dim, values + slot);
      }
    }
  });
  if (!batched) return;
  E* tiles = cache.key_tiles<E>(l);
  for (int64_t g = 0; g < s.kv_heads; ++g)
    cpu::write_key_tiles(keys + g * s.capacity * s.head_dim, s.head_dim, tiles_from, s.past + s.n,
                         tiles + g * cpu::key_tiles_per_head(s.capacity, s.head_dim));
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

}  // namespace

std::vector<ForwardResult> forward_cpu_kernels(const ModelConfig& cfg, const CpuWeights& weights, const std::vector<CpuForwardPart>& batch,
                                               int threads) {
  const int64_t hidden = cfg.hidden_size;
  const int64_t heads = cfg.num_attention_heads, kv_heads = cfg.num_key_value_heads, head_dim = cfg.head_dim;
  const int64_t qkv_width = (heads + 2 * kv_heads) * head_dim, inter = cfg.intermediate_size;
  const float eps = static_cast<float>(cfg.rms_norm_eps);
  const size_t parts = batch.size();
  // Request r's new tokens are rows [first[r], first[r] + n) of every matrix below: the weights are
  // read once for all of them, each request attends over its own cache.
  std::vector<int64_t> first(parts + 1, 0);
  for (size_t r = 0; r < parts; ++r) first[r + 1] = first[r] + batch[r].plan->n;
  const int64_t n = first[parts];
  Workspace& ws = workspace();
  ws.x.resize(n * hidden);
  ws.normed.resize(n * std::max(hidden, inter));
  ws.qkv.resize(n * qkv_width);
  ws.attended.resize(n * heads * head_dim);
  ws.gate_up.resize(n * 2 * inter);
  ws.act.resize(n * inter);
  ws.seen.resize(parts);

  std::vector<AttentionShape> shapes;
  std::vector<int64_t> tiles_from;
  std::vector<ForwardResult> results(parts);
  const bool batched = cpu::batch_attention_supported(head_dim);
  std::vector<KvType> kv_types;  // the batch's, each once (one for a server's requests)
  for (size_t r = 0; r < parts; ++r) {
    const ForwardPlan& plan = *batch[r].plan;
    const ForwardRequest& request = *batch[r].request;
    for (int64_t i = 0; i < plan.n; ++i)
      cpu::widen_row(weights.embed.data(), weights.embed_type, request.tokens[i], hidden, &ws.x[(first[r] + i) * hidden]);
    shapes.push_back(AttentionShape{plan.n, plan.past, plan.shared, heads, kv_heads, head_dim, batch[r].cache->capacity(), qkv_width,
                                    1.0f / std::sqrt(static_cast<float>(head_dim))});
    collect_seen_rows(shapes.back(), plan.visible.data(), ws.seen[r]);
    tiles_from.push_back(std::min(batch[r].cache->key_tiles_rows(), plan.past));  // rows whose tiles are stale
    if (std::find(kv_types.begin(), kv_types.end(), batch[r].cache->type()) == kv_types.end()) kv_types.push_back(batch[r].cache->type());
  }
  // The rows of `x` each request asked to see at `layer` (Hugging Face's hidden_states numbering).
  auto keep_hidden = [&](int layer) {
    for (size_t r = 0; r < parts; ++r) {
      const std::vector<int>& wanted = batch[r].request->hidden_layers;
      if (std::find(wanted.begin(), wanted.end(), layer) == wanted.end()) continue;
      FloatRows rows(batch[r].plan->n, hidden);
      std::copy(ws.x.begin() + first[r] * hidden, ws.x.begin() + first[r + 1] * hidden, rows.values.begin());
      results[r].hidden.push_back(std::move(rows));
    }
  };
  keep_hidden(0);

  for (int64_t l = 0; l < cfg.num_hidden_layers; ++l) {
    const CpuLayerWeights& w = weights.layers[l];
    normalize_rows(ws.x.data(), ws.normed.data(), n, hidden, w.input_gain, eps, threads);
    project(ws.normed.data(), n, w.qkv, w.qkv_bias, ws.qkv.data(), false, threads);
    for (size_t r = 0; r < parts; ++r) {
      CpuKvStorage& cache = *batch[r].cache;
      const ForwardPlan& plan = *batch[r].plan;
      cpu::with_kv_element(cache.type(), [&](auto element) {
        using E = decltype(element);
        float* qkv = &ws.qkv[first[r] * qkv_width];
        write_rows<E>(shapes[r], cache, l, qkv, batched, tiles_from[r], plan.rope_cos.data(), plan.rope_sin.data(), threads);
        if (!batched)
          attend(shapes[r], qkv, cache.keys<E>(l), cache.values<E>(l), ws.seen[r], &ws.attended[first[r] * heads * head_dim], ws.scores,
                 threads);
      });
    }
    if (batched)
      for (KvType type : kv_types)
        cpu::with_kv_element(type, [&](auto element) {
          using E = decltype(element);
          thread_local std::vector<AttentionUnits<E>> units;
          units.clear();
          for (size_t r = 0; r < parts; ++r) {
            CpuKvStorage& cache = *batch[r].cache;
            if (cache.type() != type) continue;
            units.emplace_back(shapes[r], &ws.qkv[first[r] * qkv_width], &ws.attended[first[r] * heads * head_dim], cache.keys<E>(l),
                               cache.values<E>(l), cache.key_tiles<E>(l), ws.seen[r]);
          }
          attend_all(units, ws.unit_offsets, ws.scores, threads);
        });
    project(ws.attended.data(), n, w.o, w.o_bias, ws.x.data(), true, threads);

    normalize_rows(ws.x.data(), ws.normed.data(), n, hidden, w.post_gain, eps, threads);
    project(ws.normed.data(), n, w.gate_up, {}, ws.gate_up.data(), false, threads);
    cpu::parallel_rows(n, threads, [&](int64_t first_row, int64_t last_row) {
      for (int64_t i = first_row; i < last_row; ++i) {
        const float* row = &ws.gate_up[i * 2 * inter];
        cpu::silu_mul(row, row + inter, &ws.act[i * inter], inter);
      }
    });
    project(ws.act.data(), n, w.down, {}, ws.x.data(), true, threads);
    keep_hidden(static_cast<int>(l) + 1);
  }

  if (batched)
    for (size_t r = 0; r < parts; ++r) batch[r].cache->set_key_tiles_rows(batch[r].plan->past + batch[r].plan->n);

  // Logits of the rows each request asked for, all in one final norm and lm_head.
  std::vector<int64_t> logits_from(parts), logits_rows(parts, 0);
  int64_t total = 0;
  for (size_t r = 0; r < parts; ++r) {
    const ForwardRequest& request = *batch[r].request;
    const int64_t rows = batch[r].plan->n;
    if (request.logits == LogitsWanted::None) continue;
    logits_rows[r] = request.logits == LogitsWanted::All ? rows : std::clamp<int64_t>(request.last_rows, 1, rows);
    logits_from[r] = first[r] + rows - logits_rows[r];
    total += logits_rows[r];
  }
  if (total == 0) return results;
  const float* x = ws.x.data();
  if (parts > 1) {  // gather the rows; one request's are already contiguous
    ws.gathered.resize(total * hidden);
    int64_t at = 0;
    for (size_t r = 0; r < parts; ++r) {
      std::copy(ws.x.begin() + logits_from[r] * hidden, ws.x.begin() + (logits_from[r] + logits_rows[r]) * hidden,
                ws.gathered.begin() + at * hidden);
      at += logits_rows[r];
    }
    x = ws.gathered.data();
  } else {
    x += logits_from[0] * hidden;
  }
  FloatRows logits = output_logits(cfg, weights, x, total, ws.normed, threads);
  if (parts == 1) {
    results[0].logits = std::move(logits);
    return results;
  }
  int64_t at = 0;
  for (size_t r = 0; r < parts; ++r) {
    if (logits_rows[r] == 0) continue;
    FloatRows own(logits_rows[r], cfg.vocab_size);
    std::copy(logits.values.begin() + at * cfg.vocab_size, logits.values.begin() + (at + logits_rows[r]) * cfg.vocab_size,
              own.values.begin());
    results[r].logits = std::move(own);
    at += logits_rows[r];
  }
  return results;
}

FloatRows logits_cpu_kernels(const ModelConfig& cfg, const CpuWeights& weights, const float* hidden, int64_t rows, int threads) {
  std::vector<float> normed(static_cast<size_t>(rows * cfg.hidden_size));
  return output_logits(cfg, weights, hidden, rows, normed, threads);
}

}  // namespace specd
