#include "model/cpu/matmul.h"
#include "model/cpu/matmul_bf16_dot.h"
#include "model/cpu/spin_pool.h"
#include "util/simd.h"

#include "io/half_precision.h"

#include <algorithm>
#include <cstring>
#include <stdexcept>


namespace specd::cpu {
namespace {

// Loads of one panel row (16 weights of one k) widened to float: `scalar(p, c)` gives column c,
// `load16` the columns 0-7 and 8-15 as two vectors.
template <WeightType T> struct Weights;
template <> struct Weights<WeightType::F32> {
  using Element = float;
  static float scalar(const float* p, int64_t c) { return p[c]; }
#ifdef SPECD_HAVE_AVX2
  static void load16(const float* p, __m256& low, __m256& high) {
    low = _mm256_loadu_ps(p);
    high = _mm256_loadu_ps(p + 8);
    // Pin both in registers: GCC would otherwise fold the load into every FMA that reads it,
    // and R loads of the same vector make the tile load-bound.
    asm("" : "+x"(low), "+x"(high));
  }
#endif
};
// BF16 panels are stored interleaved (see panel_slot): one 256-bit load holds columns j and 8 + j
// in the low and high halves of 32-bit lane j, so a shift and a mask widen all 16, one cheap op
// per 8 weights. The conversion, not the FMA, bounds a BF16 decoding step otherwise.
template <> struct Weights<WeightType::BF16> {
  using Element = uint16_t;
  static float scalar(const uint16_t* p, int64_t c) { return bf16_to_float(p[panel_slot(WeightType::BF16, c)]); }
#ifdef SPECD_HAVE_AVX2
  static void load16(const uint16_t* p, __m256& low, __m256& high) {
    const __m256i v = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p));
    low = _mm256_castsi256_ps(_mm256_slli_epi32(v, 16));
    high = _mm256_and_ps(_mm256_castsi256_ps(v), _mm256_castsi256_ps(_mm256_set1_epi32(static_cast<int>(0xFFFF0000u))));
  }
#endif
};
template <> struct Weights<WeightType::F16> {
  using Element = uint16_t;
  static float scalar(const uint16_t* p, int64_t c) { return half_to_float(p[c]); }
#ifdef SPECD_HAVE_AVX2
  static void load16(const uint16_t* p, __m256& low, __m256& high) {
    low = _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p)));
    high = _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p + 8)));
  }
#endif
};

#ifdef SPECD_HAVE_AVX2
// x[k] in all 8 lanes, loaded where it is used: as an intrinsic, GCC hoists a tile's R broadcasts
// to the top of the k loop (and merges those of the P panels), and with 2RP accumulators live
// the 5- and 6-row tiles spill accumulators to the stack (1.6x slower than a 4-row tile per row).
inline __m256 broadcast(const float* p) {
  __m256 v;
  asm volatile("vbroadcastss %1, %0" : "=x"(v) : "m"(*p));
  return v;
}
#endif

#ifdef SPECD_HAVE_AVX2
// Weights are prefetched this far ahead in each panel: they stream from L3, and with several rows
// per tile the arithmetic no longer hides the loads (as in matmul_bf16_dot.cpp).
constexpr int64_t kPrefetchBytes = 3072;
#endif

// R rows of x against P panels (16 * P outputs) from panel `panel` and x row `row`. Accumulators
// R x 2P, the broadcasts and the W vectors stay within AVX2's 16 ymm registers for (1,4), (2,2),
// (3,2) and (R<=6,1). Every W load feeds R FMAs; x comes in as broadcasts, one per row and k.
template <WeightType T, int R, int P>
inline void panel_tile(const MatmulArgs& a, int64_t panel, int64_t row) {
  using W = Weights<T>;
  constexpr int64_t width = P * kPanelWidth;
  const int64_t in = a.in, panel_stride = in * kPanelWidth;
  const auto* w = static_cast<const typename W::Element*>(a.w) + panel * panel_stride;
  const float* x = a.x + row * in;
  const int64_t col0 = panel * kPanelWidth;
  float* y = a.y + row * a.out + col0;
#ifdef SPECD_HAVE_AVX2
  __m256 acc[R][2 * P];
  SPECD_UNROLL for (int r = 0; r < R; ++r)
    SPECD_UNROLL for (int q = 0; q < 2 * P; ++q) acc[r][q] = _mm256_setzero_ps();
  for (int64_t k = 0; k < in; ++k) {
    SPECD_UNROLL for (int p = 0; p < P; ++p) {
      __m256 low, high;
      _mm_prefetch(reinterpret_cast<const char*>(w + p * panel_stride + k * kPanelWidth) + kPrefetchBytes, _MM_HINT_T0);
      W::load16(w + p * panel_stride + k * kPanelWidth, low, high);
      SPECD_UNROLL for (int r = 0; r < R; ++r) {
        const __m256 xb = broadcast(x + r * in + k);
        acc[r][2 * p] = _mm256_fmadd_ps(xb, low, acc[r][2 * p]);
        acc[r][2 * p + 1] = _mm256_fmadd_ps(xb, high, acc[r][2 * p + 1]);
      }
    }
  }
  if (col0 + width <= a.out) {
    SPECD_UNROLL for (int r = 0; r < R; ++r) {
      SPECD_UNROLL for (int q = 0; q < 2 * P; ++q) {
        float* out = y + r * a.out + q * 8;
        __m256 v = acc[r][q];
        if (a.bias) v = _mm256_add_ps(v, _mm256_loadu_ps(a.bias + col0 + q * 8));
        if (a.accumulate) v = _mm256_add_ps(v, _mm256_loadu_ps(out));
        _mm256_storeu_ps(out, v);
      }
    }
    return;
  }
  alignas(32) float sums[R][width];
  SPECD_UNROLL for (int r = 0; r < R; ++r)
    SPECD_UNROLL for (int q = 0; q < 2 * P; ++q) _mm256_store_ps(&sums[r][q * 8], acc[r][q]);
#else
  // The portable path: each k's weights widened once, for all R rows.
  float sums[R][width] = {};
  for (int64_t k = 0; k < in; ++k) {
    float wk[width];
    for (int p = 0; p < P; ++p)
      for (int64_t c = 0; c < kPanelWidth; ++c) wk[p * kPanelWidth + c] = W::scalar(w + p * panel_stride + k * kPanelWidth, c);
    SPECD_UNROLL for (int r = 0; r < R; ++r) {
      const float xk = x[r * in + k];
      for (int64_t c = 0; c < width; ++c) sums[r][c] += xk * wk[c];
    }
  }
#endif
  const int64_t valid = std::min<int64_t>(width, a.out - col0);
  SPECD_UNROLL for (int r = 0; r < R; ++r) {
    for (int64_t c = 0; c < valid; ++c) {
      float v = sums[r][c] + (a.bias ? a.bias[col0 + c] : 0.0f);
      y[r * a.out + c] = a.accumulate ? y[r * a.out + c] + v : v;
    }
  }
}

// A tile of `count` rows (1-6) over one panel, or (1-3) over two: the register budget.
template <WeightType T, int P>
void tile_of(const MatmulArgs& a, int64_t panel, int64_t row, int64_t count) {
  switch (count) {
    case 1: return panel_tile<T, 1, P>(a, panel, row);
    case 2: return panel_tile<T, 2, P>(a, panel, row);
    case 3: return panel_tile<T, 3, P>(a, panel, row);
  }
  if constexpr (P == 1) {
    switch (count) {
      case 4: return panel_tile<T, 4, 1>(a, panel, row);
      case 5: return panel_tile<T, 5, 1>(a, panel, row);
      case 6: return panel_tile<T, 6, 1>(a, panel, row);
    }
  }
  throw std::logic_error("matmul: no tile for this row count");
}

// Panels [begin, end) for all x rows: tiles of up to 3 rows span two panels, larger ones one.
template <WeightType T>
void matmul_panels(const MatmulArgs& a, int64_t begin, int64_t end) {
  int64_t p = begin;
  if (a.rows == 1) {
    for (; p + 4 <= end; p += 4) panel_tile<T, 1, 4>(a, p, 0);
    for (; p < end; ++p) panel_tile<T, 1, 1>(a, p, 0);
    return;
  }
  // Tiles of up to 6 rows (RowTiles). A tile needs 2 rows or more to have enough accumulators to
  // hide the FMA latency, which one row gets from four panels instead.
  const RowTiles tiles(a.rows, 6);
  for (; p < end; p += 2) {
    const bool pair = p + 1 < end;
    int64_t row = 0;
    for (int64_t t = 0; t < tiles.count; ++t) {
      const int64_t rows = tiles.rows(t);
      if (rows <= 3 && pair) {
        tile_of<T, 2>(a, p, row, rows);
      } else {
        tile_of<T, 1>(a, p, row, rows);
        if (pair) tile_of<T, 1>(a, p + 1, row, rows);
      }
      row += rows;
    }
  }
}

template <WeightType T>
void matmul_typed(const MatmulArgs& a, int threads) {
  // Blocks of 4 panels (64 outputs): a multiple of every tile width, small enough to balance.
  const int64_t panels = panel_count(a.out), block = 4;
  const int64_t blocks = (panels + block - 1) / block;
  parallel_for(threads, blocks, [&](int64_t first, int64_t last, int) {
    matmul_panels<T>(a, first * block, std::min(panels, last * block));
  });
}

template <typename Element>
void pack_typed(const Element* w, WeightType type, int64_t out, int64_t in, Element* packed) {
  for (int64_t p = 0; p < panel_count(out); ++p)
    for (int64_t k = 0; k < in; ++k)
      for (int64_t c = 0; c < kPanelWidth; ++c) {
        const int64_t row = p * kPanelWidth + c;
        packed[(p * in + k) * kPanelWidth + panel_slot(type, c)] = row < out ? w[row * in + k] : Element(0);
      }
}

}  // namespace

int64_t packed_elements(WeightType type, int64_t out, int64_t in) {
  return type == WeightType::BF16Pairs ? bf16_pair_elements(out, in) : panel_count(out) * kPanelWidth * in;
}

void pack_panels(const void* w, WeightType type, int64_t out, int64_t in, void* packed) {
  if (type == WeightType::BF16Pairs)
    pack_bf16_pairs(static_cast<const uint16_t*>(w), out, in, static_cast<uint16_t*>(packed));
  else if (type == WeightType::F32)
    pack_typed(static_cast<const float*>(w), type, out, in, static_cast<float*>(packed));
  else  // BF16 and F16 move as opaque 16-bit words
    pack_typed(static_cast<const uint16_t*>(w), type, out, in, static_cast<uint16_t*>(packed));
}

void matmul(const MatmulArgs& a, int threads) {
  switch (a.type) {
    case WeightType::F32: return matmul_typed<WeightType::F32>(a, threads);
    case WeightType::BF16: return matmul_typed<WeightType::BF16>(a, threads);
    case WeightType::F16: return matmul_typed<WeightType::F16>(a, threads);
    case WeightType::BF16Pairs: return matmul_bf16_dot(a, threads);
  }
}

void widen_row(const void* w, WeightType type, int64_t row, int64_t width, float* out) {
  switch (type) {
    case WeightType::F32:
      std::memcpy(out, static_cast<const float*>(w) + row * width, width * sizeof(float));
      return;
    case WeightType::BF16:
      for (int64_t i = 0; i < width; ++i) out[i] = bf16_to_float(static_cast<const uint16_t*>(w)[row * width + i]);
      return;
    case WeightType::F16:
      for (int64_t i = 0; i < width; ++i) out[i] = half_to_float(static_cast<const uint16_t*>(w)[row * width + i]);
      return;
    case WeightType::BF16Pairs: throw std::logic_error("widen_row: a packed matrix has no rows");
  }
}

}  // namespace specd::cpu
