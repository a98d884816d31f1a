#include "model/cpu/matmul.h"
#include "model/cpu/simd.h"

#include "io/half_precision.h"

#include <algorithm>
#include <cstring>


namespace specd::cpu {
namespace {

// Scalar and vector loads of weights of each stored type, widened to float.
template <WeightType T> struct Weights;
template <> struct Weights<WeightType::F32> {
  using Element = float;
  static float scalar(const float* p) { return *p; }
#ifdef SPECD_HAVE_AVX2
  static __m256 load8(const float* p) { return _mm256_loadu_ps(p); }
#endif
};
template <> struct Weights<WeightType::BF16> {
  using Element = uint16_t;
  static float scalar(const uint16_t* p) { return bf16_to_float(*p); }
#ifdef SPECD_HAVE_AVX2
  static __m256 load8(const uint16_t* p) {
    __m256i wide = _mm256_cvtepu16_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p)));
    return _mm256_castsi256_ps(_mm256_slli_epi32(wide, 16));
  }
#endif
};
template <> struct Weights<WeightType::F16> {
  using Element = uint16_t;
  static float scalar(const uint16_t* p) { return half_to_float(*p); }
#ifdef SPECD_HAVE_AVX2
  static __m256 load8(const uint16_t* p) { return _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p))); }
#endif
};

// R rows of x against P panels (16 * P outputs) from panel `panel` and x row `row`. Accumulators
// R x 2P, R broadcasts and one W vector stay within AVX2's 16 ymm registers for (1,4), (2,2),
// (3,2). Every W load feeds R FMAs; x comes in as broadcasts, one per row and k.
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
    __m256 xb[R];
    SPECD_UNROLL for (int r = 0; r < R; ++r) xb[r] = _mm256_broadcast_ss(x + r * in + k);
    SPECD_UNROLL for (int q = 0; q < 2 * P; ++q) {
      __m256 wv = W::load8(w + (q / 2) * panel_stride + k * kPanelWidth + (q % 2) * 8);
      SPECD_UNROLL for (int r = 0; r < R; ++r) acc[r][q] = _mm256_fmadd_ps(xb[r], wv, acc[r][q]);
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
  float sums[R][width] = {};
  for (int64_t k = 0; k < in; ++k)
    SPECD_UNROLL for (int r = 0; r < R; ++r)
      for (int64_t c = 0; c < width; ++c)
        sums[r][c] += x[r * in + k] * W::scalar(w + (c / kPanelWidth) * panel_stride + k * kPanelWidth + c % kPanelWidth);
#endif
  const int64_t valid = std::min<int64_t>(width, a.out - col0);
  SPECD_UNROLL for (int r = 0; r < R; ++r) {
    for (int64_t c = 0; c < valid; ++c) {
      float v = sums[r][c] + (a.bias ? a.bias[col0 + c] : 0.0f);
      y[r * a.out + c] = a.accumulate ? y[r * a.out + c] + v : v;
    }
  }
}

// All x rows against P panels: tiles of 3 rows, with 4 left over split 2 + 2 rather than 3 + 1
// (a one-row tile of two panels has too few accumulators to hide the FMA latency).
template <WeightType T, int P>
void all_rows(const MatmulArgs& a, int64_t panel) {
  int64_t r = 0;
  while (a.rows - r >= 5 || a.rows - r == 3) {
    panel_tile<T, 3, P>(a, panel, r);
    r += 3;
  }
  for (; a.rows - r >= 2; r += 2) panel_tile<T, 2, P>(a, panel, r);
  if (r < a.rows) panel_tile<T, 1, P>(a, panel, r);
}

// Panels [begin, end) for all x rows.
template <WeightType T>
void matmul_panels(const MatmulArgs& a, int64_t begin, int64_t end) {
  int64_t p = begin;
  if (a.rows == 1)
    for (; p + 4 <= end; p += 4) panel_tile<T, 1, 4>(a, p, 0);
  for (; p + 2 <= end; p += 2) all_rows<T, 2>(a, p);
  if (p < end) all_rows<T, 1>(a, p);
}

template <WeightType T>
void matmul_typed(const MatmulArgs& a, int threads) {
  // Blocks of 4 panels (64 outputs): a multiple of every tile width, small enough to balance.
  const int64_t panels = panel_count(a.out), block = 4;
  const int64_t blocks = (panels + block - 1) / block;
  if (threads <= 1 || blocks < 2) {
    matmul_panels<T>(a, 0, panels);
    return;
  }
#pragma omp parallel for num_threads(threads) schedule(static)
  for (int64_t b = 0; b < blocks; ++b) matmul_panels<T>(a, b * block, std::min(panels, (b + 1) * block));
}

template <typename Element>
void pack_typed(const Element* w, int64_t out, int64_t in, Element* packed) {
  for (int64_t p = 0; p < panel_count(out); ++p)
    for (int64_t k = 0; k < in; ++k)
      for (int64_t c = 0; c < kPanelWidth; ++c) {
        const int64_t row = p * kPanelWidth + c;
        packed[(p * in + k) * kPanelWidth + c] = row < out ? w[row * in + k] : Element(0);
      }
}

}  // namespace

void pack_panels(const void* w, WeightType type, int64_t out, int64_t in, void* packed) {
  if (type == WeightType::F32)
    pack_typed(static_cast<const float*>(w), out, in, static_cast<float*>(packed));
  else  // BF16 and F16 move as opaque 16-bit words
    pack_typed(static_cast<const uint16_t*>(w), out, in, static_cast<uint16_t*>(packed));
}

void matmul(const MatmulArgs& a, int threads) {
  switch (a.type) {
    case WeightType::F32: return matmul_typed<WeightType::F32>(a, threads);
    case WeightType::BF16: return matmul_typed<WeightType::BF16>(a, threads);
    case WeightType::F16: return matmul_typed<WeightType::F16>(a, threads);
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
  }
}

}  // namespace specd::cpu
