#include "model/cpu/matmul_bf16_amx.h"

#include <algorithm>
#include <cstring>
#include <stdexcept>

#if defined(__AVX512F__) && defined(__AVX512BF16__) && defined(__AMX_TILE__) && defined(__AMX_BF16__)
#define SPECD_HAVE_AMX_BF16 1
#include <cpuid.h>
#include <immintrin.h>
#include <sys/syscall.h>
#include <unistd.h>
#endif

#include "model/cpu/bf16_pair_loads.h"
#include "util/simd.h"

namespace specd::cpu {

int64_t amx_row_stride(int64_t pairs) { return (pairs + 15) / 16 * 16; }

#ifdef SPECD_HAVE_AMX_BF16

namespace {

constexpr int kArchReqXcompPerm = 0x1023, kXfeatureTileData = 18;
constexpr int64_t kTilePairs = 16;  // k-pairs per tile instruction (64 bytes a row)

struct TileConfig {
  uint8_t palette = 1, start_row = 0;
  uint8_t reserved[14] = {};
  uint16_t row_bytes[16] = {};
  uint8_t rows[16] = {};
};
static_assert(sizeof(TileConfig) == 64, "ldtilecfg reads 64 bytes");

// Loads the shapes unless this thread has them already (ldtilecfg also zeroes every tile).
void use_tiles(const TileConfig& config) {
  thread_local TileConfig loaded;
  thread_local bool any = false;
  if (any && std::memcmp(&loaded, &config, sizeof config) == 0) return;
  _tile_loadconfig(&config);
  loaded = config;
  any = true;
}

// Adds the bias (and y, when accumulating) to `count` rows of 16 sums and stores them at (row,
// panel). The tiles and the FMA rows both end here, so their epilogues agree to the bit.
void store_rows(const MatmulArgs& a, const float* sums, int64_t count, int64_t panel, int64_t row) {
  const int64_t col0 = panel * kPanelWidth;
  const __mmask16 mask = a.out - col0 >= 16 ? __mmask16(0xFFFF) : __mmask16((1u << (a.out - col0)) - 1);
  const __m512 bias = a.bias ? _mm512_maskz_loadu_ps(mask, a.bias + col0) : _mm512_setzero_ps();
  for (int64_t r = 0; r < count; ++r) {
    float* y = a.y + (row + r) * a.out + col0;
    __m512 v = _mm512_add_ps(_mm512_loadu_ps(sums + r * 16), bias);
    if (a.accumulate) v = _mm512_add_ps(v, _mm512_maskz_loadu_ps(mask, y));
    _mm512_mask_storeu_ps(y, mask, v);
  }
}

// The B operand of panel `panel`, tile `t`: in place, or the last tile's pairs copied into
// `padded` with zero rows after them (a tile always reads 16).
const void* weight_tile(const MatmulArgs& a, int64_t pairs, int64_t panel, int64_t t, uint16_t (&padded)[kTilePairs * 32]) {
  const auto* w = static_cast<const uint16_t*>(a.w) + (panel * pairs + t * kTilePairs) * 32;
  const int64_t here = std::min(kTilePairs, pairs - t * kTilePairs);
  if (here == kTilePairs) return w;
  std::memset(padded, 0, sizeof padded);
  std::memcpy(padded, w, static_cast<size_t>(here) * 64);
  return padded;
}

// One tile of up to 16 rows against P <= 4 panels. Tiles 0..3 hold the sums, 4 the rows of x,
// 5-7 the weights in turn (a load into one overlaps the multiply from another).
template <int P>
void one_row_tile(const MatmulArgs& a, const uint32_t* x, int64_t pairs, int64_t panel, int64_t row, int64_t count) {
  TileConfig config;
  for (int t = 0; t < 8; ++t) {
    config.rows[t] = static_cast<uint8_t>(t < 5 ? count : kTilePairs);
    config.row_bytes[t] = 64;
  }
  use_tiles(config);
  if constexpr (P > 0) _tile_zero(0);
  if constexpr (P > 1) _tile_zero(1);
  if constexpr (P > 2) _tile_zero(2);
  if constexpr (P > 3) _tile_zero(3);
  const int64_t stride = amx_row_stride(pairs), tiles = stride / kTilePairs;
  uint16_t padded[kTilePairs * 32];
  for (int64_t t = 0; t < tiles; ++t) {
    _tile_loadd(4, x + row * stride + t * kTilePairs, stride * 4);
    if constexpr (P > 0) {
      _tile_loadd(5, weight_tile(a, pairs, panel, t, padded), 64);
      _tile_dpbf16ps(0, 4, 5);
    }
    if constexpr (P > 1) {
      _tile_loadd(6, weight_tile(a, pairs, panel + 1, t, padded), 64);
      _tile_dpbf16ps(1, 4, 6);
    }
    if constexpr (P > 2) {
      _tile_loadd(7, weight_tile(a, pairs, panel + 2, t, padded), 64);
      _tile_dpbf16ps(2, 4, 7);
    }
    if constexpr (P > 3) {
      _tile_loadd(5, weight_tile(a, pairs, panel + 3, t, padded), 64);
      _tile_dpbf16ps(3, 4, 5);
    }
  }
  alignas(64) float sums[16 * 16];
  if constexpr (P > 0) { _tile_stored(0, sums, 64); store_rows(a, sums, count, panel, row); }
  if constexpr (P > 1) { _tile_stored(1, sums, 64); store_rows(a, sums, count, panel + 1, row); }
  if constexpr (P > 2) { _tile_stored(2, sums, 64); store_rows(a, sums, count, panel + 2, row); }
  if constexpr (P > 3) { _tile_stored(3, sums, 64); store_rows(a, sums, count, panel + 3, row); }
}

// Two tiles of rows (up to 16 each) against P <= 2 panels, so a weight tile serves both: tiles
// 0, 1 the first rows' sums, 2, 3 the second's, 4 and 5 the rows of x, 6 and 7 the weights.
template <int P>
void two_row_tiles(const MatmulArgs& a, const uint32_t* x, int64_t pairs, int64_t panel, int64_t row, int64_t first, int64_t second) {
  TileConfig config;
  const int64_t rows[8] = {first, first, second, second, first, second, kTilePairs, kTilePairs};
  for (int t = 0; t < 8; ++t) {
    config.rows[t] = static_cast<uint8_t>(rows[t]);
    config.row_bytes[t] = 64;
  }
  use_tiles(config);
  _tile_zero(0);
  _tile_zero(2);
  if constexpr (P > 1) {
    _tile_zero(1);
    _tile_zero(3);
  }
  const int64_t stride = amx_row_stride(pairs), tiles = stride / kTilePairs;
  uint16_t padded[kTilePairs * 32];
  for (int64_t t = 0; t < tiles; ++t) {
    _tile_loadd(4, x + row * stride + t * kTilePairs, stride * 4);
    _tile_loadd(5, x + (row + first) * stride + t * kTilePairs, stride * 4);
    _tile_loadd(6, weight_tile(a, pairs, panel, t, padded), 64);
    _tile_dpbf16ps(0, 4, 6);
    _tile_dpbf16ps(2, 5, 6);
    if constexpr (P > 1) {
      _tile_loadd(7, weight_tile(a, pairs, panel + 1, t, padded), 64);
      _tile_dpbf16ps(1, 4, 7);
      _tile_dpbf16ps(3, 5, 7);
    }
  }
  alignas(64) float sums[16 * 16];
  _tile_stored(0, sums, 64);
  store_rows(a, sums, first, panel, row);
  _tile_stored(2, sums, 64);
  store_rows(a, sums, second, panel, row + first);
  if constexpr (P > 1) {
    _tile_stored(1, sums, 64);
    store_rows(a, sums, first, panel + 1, row);
    _tile_stored(3, sums, 64);
    store_rows(a, sums, second, panel + 1, row + first);
  }
}

// One row against P panels, the tiles' sums by FMA: per 16 k-pairs, E and O from zero, then
// acc + (E + O). 3 P accumulators, 2 P weight vectors and 2 broadcasts: P = 4.
template <int P>
void amx_order_row(const MatmulArgs& a, const float* x, int64_t pairs, int64_t panel) {
  const auto* w = static_cast<const uint16_t*>(a.w) + panel * pairs * 32;
  const int64_t panel_stride = pairs * 32;
  __m512 acc[P];
  SPECD_UNROLL for (int p = 0; p < P; ++p) acc[p] = _mm512_setzero_ps();
  for (int64_t t = 0; t < pairs; t += kTilePairs) {
    __m512 even_sum[P], odd_sum[P];
    SPECD_UNROLL for (int p = 0; p < P; ++p) even_sum[p] = odd_sum[p] = _mm512_setzero_ps();
    const int64_t end = std::min(pairs, t + kTilePairs);
    for (int64_t kp = t; kp < end; ++kp) {
      __m512 even[P], odd[P];
      load_widened_pairs<P>(w, panel_stride, kp, even, odd);
      const __m512 xe = _mm512_set1_ps(x[2 * kp]), xo = _mm512_set1_ps(x[2 * kp + 1]);
      SPECD_UNROLL for (int p = 0; p < P; ++p) {
        even_sum[p] = _mm512_fmadd_ps(xe, even[p], even_sum[p]);
        odd_sum[p] = _mm512_fmadd_ps(xo, odd[p], odd_sum[p]);
      }
    }
    const bool padded = end - t < kTilePairs;  // the tile's zero padding: +0 turns a -0 sum into +0
    SPECD_UNROLL for (int p = 0; p < P; ++p) {
      if (padded) {
        even_sum[p] = _mm512_add_ps(even_sum[p], _mm512_setzero_ps());
        odd_sum[p] = _mm512_add_ps(odd_sum[p], _mm512_setzero_ps());
      }
      acc[p] = _mm512_add_ps(acc[p], _mm512_add_ps(even_sum[p], odd_sum[p]));
    }
  }
  alignas(64) float sums[16];
  SPECD_UNROLL for (int p = 0; p < P; ++p) {
    _mm512_store_ps(sums, acc[p]);
    store_rows(a, sums, 1, panel + p, 0);
  }
}

// CPUID leaf 7: EDX bit 22 AMX-BF16, bit 24 AMX-TILE (GCC and clang name the feature differently
// in __builtin_cpu_supports, where they have it at all).
bool cpu_has_amx_bf16() {
  unsigned eax = 0, ebx = 0, ecx = 0, edx = 0;
  if (!__get_cpuid_count(7, 0, &eax, &ebx, &ecx, &edx)) return false;
  return (edx >> 22 & 1) && (edx >> 24 & 1);
}

bool request_tiles() { return syscall(SYS_arch_prctl, kArchReqXcompPerm, kXfeatureTileData) == 0; }

}  // namespace

bool amx_bf16_usable() {
  static const bool usable = cpu_has_amx_bf16() && request_tiles();
  return usable;
}

void amx_panels(const MatmulArgs& a, const uint32_t* x, int64_t pairs, int64_t begin, int64_t end) {
  const RowTiles tiles(a.rows, 16);
  int64_t row = 0, t = 0;
  // Two tiles of rows at a time over 2 panels, so each weight tile is read once per 32 rows; a last
  // single tile over 4 panels.
  for (; t + 1 < tiles.count; t += 2) {
    const int64_t first = tiles.rows(t), second = tiles.rows(t + 1);
    for (int64_t p = begin; p < end; p += 2) {
      if (end - p >= 2)
        two_row_tiles<2>(a, x, pairs, p, row, first, second);
      else
        two_row_tiles<1>(a, x, pairs, p, row, first, second);
    }
    row += first + second;
  }
  if (t < tiles.count) {
    const int64_t count = tiles.rows(t);
    for (int64_t p = begin; p < end; p += 4) switch (std::min<int64_t>(4, end - p)) {
        case 4: one_row_tile<4>(a, x, pairs, p, row, count); break;
        case 3: one_row_tile<3>(a, x, pairs, p, row, count); break;
        case 2: one_row_tile<2>(a, x, pairs, p, row, count); break;
        default: one_row_tile<1>(a, x, pairs, p, row, count); break;
      }
  }
}

void amx_order_row_panels(const MatmulArgs& a, const float* x, int64_t pairs, int64_t begin, int64_t end) {
  int64_t p = begin;
  for (; p + 4 <= end; p += 4) amx_order_row<4>(a, x, pairs, p);
  for (; p < end; ++p) amx_order_row<1>(a, x, pairs, p);
}

#else

bool amx_bf16_usable() { return false; }
void amx_panels(const MatmulArgs&, const uint32_t*, int64_t, int64_t, int64_t) { throw std::logic_error("this build has no AMX kernels"); }
void amx_order_row_panels(const MatmulArgs&, const float*, int64_t, int64_t, int64_t) {
  throw std::logic_error("this build has no AMX kernels");
}

#endif

}  // namespace specd::cpu
