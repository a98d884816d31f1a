#include "model/cpu/matmul_bf16_dot.h"

#include <algorithm>
#include <stdexcept>
#include <vector>

#include "io/half_precision.h"
#include "model/cpu/spin_pool.h"
#include "util/simd.h"

#if defined(__AVX512F__) && defined(__AVX512BF16__) && defined(__AVX512BW__)
#define SPECD_HAVE_AVX512BF16 1
#endif

namespace specd::cpu {

int64_t bf16_pair_elements(int64_t out, int64_t in) { return panel_count(out) * kPanelWidth * ((in + 1) / 2) * 2; }

void pack_bf16_pairs(const uint16_t* w, int64_t out, int64_t in, uint16_t* packed) {
  const int64_t pairs = (in + 1) / 2;
  for (int64_t p = 0; p < panel_count(out); ++p)
    for (int64_t kp = 0; kp < pairs; ++kp)
      for (int64_t c = 0; c < kPanelWidth; ++c)
        for (int64_t j = 0; j < 2; ++j) {
          const int64_t row = p * kPanelWidth + c, k = 2 * kp + j;
          packed[((p * pairs + kp) * kPanelWidth + c) * 2 + j] = (row < out && k < in) ? w[row * in + k] : uint16_t{0};
        }
}

#ifdef SPECD_HAVE_AVX512BF16

bool bf16_dot_supported() { return true; }

namespace {

// R rows against P panels. R x P accumulators + P weight vectors + a broadcast fit AVX-512's 32
// registers for R <= 6 with P = 4, and R = 1 with P = 8.
// Weights are prefetched this many k-pairs (64-byte lines) ahead in each panel. A model's weights
// stream from L3, and with 2 or more rows the tile's arithmetic no longer hides the loads: without
// it, a 4-row tile from L3 took twice its time from L2; with it, ~1.25x.
constexpr int64_t kPrefetchPairs = 48;

template <int R, int P>
void dot_tile(const MatmulArgs& a, const uint32_t* x_pairs, int64_t pairs, int64_t panel, int64_t row) {
  const auto* w = static_cast<const uint16_t*>(a.w) + panel * pairs * 32;
  const int64_t panel_stride = pairs * 32;
  __m512 acc[R][P];
  SPECD_UNROLL for (int r = 0; r < R; ++r)
    SPECD_UNROLL for (int p = 0; p < P; ++p) acc[r][p] = _mm512_setzero_ps();
  const uint32_t* x = x_pairs + row * pairs;
  for (int64_t kp = 0; kp < pairs; ++kp) {
    __m512i wv[P];
    SPECD_UNROLL for (int p = 0; p < P; ++p) {
      _mm_prefetch(reinterpret_cast<const char*>(w + p * panel_stride + (kp + kPrefetchPairs) * 32), _MM_HINT_T0);
      wv[p] = _mm512_loadu_si512(w + p * panel_stride + kp * 32);
      // Pinned in a register: for some R (3) GCC otherwise reloads it for every row.
      asm("" : "+v"(wv[p]));
    }
    SPECD_UNROLL for (int r = 0; r < R; ++r) {
      const __m512bh xb = (__m512bh)_mm512_set1_epi32(static_cast<int>(x[r * pairs + kp]));
      SPECD_UNROLL for (int p = 0; p < P; ++p) acc[r][p] = _mm512_dpbf16_ps(acc[r][p], xb, (__m512bh)wv[p]);
    }
  }
  SPECD_UNROLL for (int p = 0; p < P; ++p) {
    const int64_t col0 = (panel + p) * kPanelWidth;
    if (col0 >= a.out) break;
    const __mmask16 mask = a.out - col0 >= 16 ? __mmask16(0xFFFF) : __mmask16((1u << (a.out - col0)) - 1);
    const __m512 bias = a.bias ? _mm512_maskz_loadu_ps(mask, a.bias + col0) : _mm512_setzero_ps();
    SPECD_UNROLL for (int r = 0; r < R; ++r) {
      float* y = a.y + (row + r) * a.out + col0;
      __m512 v = _mm512_add_ps(acc[r][p], bias);
      if (a.accumulate) v = _mm512_add_ps(v, _mm512_maskz_loadu_ps(mask, y));
      _mm512_mask_storeu_ps(y, mask, v);
    }
  }
}

template <int P>
void tile_rows(const MatmulArgs& a, const uint32_t* x, int64_t pairs, int64_t panel, int64_t row, int64_t count) {
  switch (count) {
    case 1: return dot_tile<1, P>(a, x, pairs, panel, row);
    case 2: return dot_tile<2, P>(a, x, pairs, panel, row);
    case 3: return dot_tile<3, P>(a, x, pairs, panel, row);
    case 4: return dot_tile<4, P>(a, x, pairs, panel, row);
    case 5: return dot_tile<5, P>(a, x, pairs, panel, row);
    case 6: return dot_tile<6, P>(a, x, pairs, panel, row);
  }
  throw std::logic_error("matmul_bf16_dot: no tile for this row count");
}

// Panels [begin, end) for all rows: one row over 8 panels at a time; otherwise near-equal tiles
// of up to 6 rows over 4 panels, so that the weights stream once per tile.
void dot_panels(const MatmulArgs& a, const uint32_t* x, int64_t pairs, int64_t begin, int64_t end) {
  int64_t p = begin;
  if (a.rows == 1)
    for (; p + 8 <= end; p += 8) dot_tile<1, 8>(a, x, pairs, p, 0);
  const int64_t tiles = (a.rows + 5) / 6, base = a.rows / tiles, larger = a.rows % tiles;
  for (; p < end; p += 4) {
    int64_t row = 0;
    for (int64_t t = 0; t < tiles; ++t) {
      const int64_t rows = base + (t < larger ? 1 : 0);
      switch (std::min<int64_t>(4, end - p)) {
        case 4: tile_rows<4>(a, x, pairs, p, row, rows); break;
        case 3: tile_rows<3>(a, x, pairs, p, row, rows); break;
        case 2: tile_rows<2>(a, x, pairs, p, row, rows); break;
        default: tile_rows<1>(a, x, pairs, p, row, rows); break;
      }
      row += rows;
    }
  }
}

// x rows rounded to BF16 (nearest even) and zero-padded to whole pairs, read as 32-bit pairs.
void round_rows(const MatmulArgs& a, int64_t pairs, int64_t first, int64_t last, uint32_t* buffer) {
  for (int64_t r = first; r < last; ++r) {
    auto* out = reinterpret_cast<uint16_t*>(buffer + r * pairs);
    const float* x = a.x + r * a.in;
    int64_t k = 0;
    for (; k + 16 <= a.in; k += 16)
      _mm256_storeu_si256(reinterpret_cast<__m256i*>(out + k), (__m256i)_mm512_cvtneps_pbh(_mm512_loadu_ps(x + k)));
    for (; k < a.in; ++k) out[k] = float_to_bf16(x[k]);
    if (a.in % 2) out[a.in] = 0;
  }
}

const uint32_t* round_activations(const MatmulArgs& a, int64_t pairs, int threads) {
  thread_local std::vector<uint32_t> buffer;
  if (buffer.size() < static_cast<size_t>(a.rows * pairs)) buffer.resize(static_cast<size_t>(a.rows * pairs));
  uint32_t* rounded = buffer.data();  // this thread's buffer: workers name their own `buffer`
  parallel_rows(a.rows, threads, [&](int64_t first, int64_t last) { round_rows(a, pairs, first, last, rounded); });
  return rounded;
}

}  // namespace

void matmul_bf16_dot(const MatmulArgs& a, int threads) {
  const int64_t pairs = (a.in + 1) / 2;
  const uint32_t* x = round_activations(a, pairs, threads);
  const int64_t panels = panel_count(a.out), block = a.rows == 1 ? 8 : 4;
  const int64_t blocks = (panels + block - 1) / block;
  parallel_for(threads, blocks, [&](int64_t first, int64_t last, int) {
    dot_panels(a, x, pairs, first * block, std::min(panels, last * block));
  });
}

#else

bool bf16_dot_supported() { return false; }

void matmul_bf16_dot(const MatmulArgs&, int) { throw std::logic_error("this build has no AVX512-BF16 kernels"); }

#endif

}  // namespace specd::cpu
