#include "model/cpu/matmul_bf16_dot.h"

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <random>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <vector>

#include "io/half_precision.h"
#include "model/cpu/bf16_pair_loads.h"
#include "model/cpu/matmul_bf16_amx.h"
#include "model/cpu/peak_loops.h"
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

// Adds the bias (and y, when accumulating) to R x P accumulators and stores them at (row, panel).
template <int R, int P>
void store_tile(const MatmulArgs& a, __m512 (&acc)[R][P], int64_t panel, int64_t row) {
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

// The panels after a tile's, which the block's row tiles fetch into L2 between them while they
// compute: with more rows than one tile holds, the second tile reads the weights from L2 and the
// memory would otherwise sit idle through it (8 tokens cost one token's reads plus their
// arithmetic, not the larger of the two). Tile `share` of `shares` fetches every shares-th pair.
struct NextPanels {
  int64_t panels = 0;  // 0: nothing to fetch
  int64_t share = 0, shares = 1;
};

// R rows against P panels. R x P accumulators + P weight vectors + a broadcast fit AVX-512's 32
// registers for R <= 6 with P = 4, and R <= 8 with P = 3.
template <int R, int P>
void dot_tile(const MatmulArgs& a, const uint32_t* x_pairs, int64_t pairs, int64_t panel, int64_t row,
              NextPanels next) {
  const auto* w = static_cast<const uint16_t*>(a.w) + panel * pairs * 32;
  const int64_t panel_stride = pairs * 32;
  const auto* w_next = w + P * panel_stride;
  __m512 acc[R][P];
  SPECD_UNROLL for (int r = 0; r < R; ++r)
    SPECD_UNROLL for (int p = 0; p < P; ++p) acc[r][p] = _mm512_setzero_ps();
  const uint32_t* x = x_pairs + row * pairs;
  int64_t until_next = next.share;  // pairs until this tile's next fetch of the next panels
  for (int64_t kp = 0; kp < pairs; ++kp) {
    if (next.panels > 0 && until_next-- == 0) {
      for (int64_t q = 0; q < next.panels; ++q)
        _mm_prefetch(reinterpret_cast<const char*>(w_next + q * panel_stride + kp * 32), _MM_HINT_T1);
      until_next = next.shares - 1;
    }
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
  store_tile<R, P>(a, acc, panel, row);
}

// The same tile with the weights widened to float (a shift and a mask a vector) and two FMAs per
// pair, odd k first: vdpbf16ps adds the odd product, then the even one, each exact product rounded
// once into the sum, so this gives its bits (rows_agree_with_one_row checks it on the CPU at hand;
// denormals, which the instruction flushes, are the exception, and activations and weights have
// none).
// x: the rows rounded to BF16 and widened back, 2 * pairs floats a row. R x P accumulators, 2P
// weight vectors and the broadcasts fit 32 registers for R <= 8 with P = 2.
template <int R, int P>
void widened_tile(const MatmulArgs& a, const float* x_rounded, int64_t pairs, int64_t panel, int64_t row) {
  const auto* w = static_cast<const uint16_t*>(a.w) + panel * pairs * 32;
  const int64_t panel_stride = pairs * 32;
  __m512 acc[R][P];
  SPECD_UNROLL for (int r = 0; r < R; ++r)
    SPECD_UNROLL for (int p = 0; p < P; ++p) acc[r][p] = _mm512_setzero_ps();
  const float* x = x_rounded + row * 2 * pairs;
  for (int64_t kp = 0; kp < pairs; ++kp) {
    __m512 even[P], odd[P];
    load_widened_pairs<P>(w, panel_stride, kp, even, odd);
    SPECD_UNROLL for (int r = 0; r < R; ++r) {
      const __m512 xo = _mm512_set1_ps(x[r * 2 * pairs + 2 * kp + 1]);
      SPECD_UNROLL for (int p = 0; p < P; ++p) acc[r][p] = _mm512_fmadd_ps(xo, odd[p], acc[r][p]);
      const __m512 xe = _mm512_set1_ps(x[r * 2 * pairs + 2 * kp]);
      SPECD_UNROLL for (int p = 0; p < P; ++p) acc[r][p] = _mm512_fmadd_ps(xe, even[p], acc[r][p]);
    }
  }
  store_tile<R, P>(a, acc, panel, row);
}

// tile(std::integral_constant<int, R>{}) for R = count, 1 <= count <= Most: a tile's row count is
// a template argument (its accumulators' array size).
template <int Most, typename Tile>
void with_rows(int64_t count, const Tile& tile) {
  if constexpr (Most >= 1) {
    if (count == Most) return tile(std::integral_constant<int, Most>{});
    with_rows<Most - 1>(count, tile);
  } else {
    throw std::logic_error("matmul_bf16_dot: no tile for this row count");
  }
}

template <int P, int Most>
void tile_rows(const MatmulArgs& a, const uint32_t* x, int64_t pairs, int64_t panel, int64_t row, int64_t count,
               NextPanels next) {
  with_rows<Most>(count, [&](auto rows) { dot_tile<decltype(rows)::value, P>(a, x, pairs, panel, row, next); });
}

template <int P>
void widened_rows(const MatmulArgs& a, const float* x, int64_t pairs, int64_t panel, int64_t row, int64_t count) {
  with_rows<8>(count, [&](auto rows) { widened_tile<decltype(rows)::value, P>(a, x, pairs, panel, row); });
}

// Panels [begin, end) for all rows, P at a time, in near-equal tiles of up to Most rows, so that
// the weights stream once per tile.
template <int P, int Most>
void dot_blocks(const MatmulArgs& a, const uint32_t* x, int64_t pairs, int64_t begin, int64_t end) {
  const RowTiles tiles(a.rows, Most);
  int64_t p = begin;
  for (; p + P <= end; p += P) {
    int64_t row = 0;
    for (int64_t t = 0; t < tiles.count; ++t) {
      const int64_t rows = tiles.rows(t);
      tile_rows<P, Most>(a, x, pairs, p, row, rows, {std::clamp<int64_t>(end - (p + P), 0, P), t, tiles.count});
      row += rows;
    }
  }
  if constexpr (P > 1)
    if (p < end) dot_blocks<P - 1, Most>(a, x, pairs, p, end);
}

// Tiles of up to 6 rows over 4 panels; 7 or 8 rows in one tile over 3 panels (24 accumulators),
// since as two tiles the second one's arithmetic ran from L2 after the first one's reads: on the
// AMD EPYC with AVX512-BF16 the large demo target verified 8 tokens in 3.23 ms that way (with the
// next panels fetched; 3.62 without) and in 2.75 as one tile
// (reports/bench/kernel-ab-bf16-prefetch-epyc.txt has the 3.62 and the 2.75).
bool one_tile_of_eight(int64_t rows) { return rows == 7 || rows == 8; }

void dot_panels(const MatmulArgs& a, const uint32_t* x, int64_t pairs, int64_t begin, int64_t end) {
  if (one_tile_of_eight(a.rows)) return dot_blocks<3, 8>(a, x, pairs, begin, end);
  dot_blocks<4, 6>(a, x, pairs, begin, end);
}

void widened_panels(const MatmulArgs& a, const float* x, int64_t pairs, int64_t begin, int64_t end) {
  const RowTiles tiles(a.rows, 8);
  for (int64_t p = begin; p < end; p += 2) {
    int64_t row = 0;
    for (int64_t t = 0; t < tiles.count; ++t) {
      const int64_t rows = tiles.rows(t);
      if (end - p >= 2)
        widened_rows<2>(a, x, pairs, p, row, rows);
      else
        widened_rows<1>(a, x, pairs, p, row, rows);
      row += rows;
    }
  }
}

// x rows rounded to BF16 (nearest even), read as 32-bit pairs, a row every `stride` pairs, zero
// from `in` on.
void round_rows(const MatmulArgs& a, int64_t stride, int64_t first, int64_t last, uint32_t* buffer) {
  for (int64_t r = first; r < last; ++r) {
    auto* out = reinterpret_cast<uint16_t*>(buffer + r * stride);
    const float* x = a.x + r * a.in;
    int64_t k = 0;
    for (; k + 16 <= a.in; k += 16)
      _mm256_storeu_si256(reinterpret_cast<__m256i*>(out + k), (__m256i)_mm512_cvtneps_pbh(_mm512_loadu_ps(x + k)));
    for (; k < a.in; ++k) out[k] = float_to_bf16(x[k]);
    std::fill(out + a.in, out + 2 * stride, uint16_t{0});
  }
}

// The same rounding, widened back to float for the widened tiles' broadcasts: 2 * pairs a row.
void round_rows_widened(const MatmulArgs& a, int64_t pairs, int64_t first, int64_t last, float* buffer) {
  for (int64_t r = first; r < last; ++r) {
    float* out = buffer + r * 2 * pairs;
    const float* x = a.x + r * a.in;
    int64_t k = 0;
    for (; k + 16 <= a.in; k += 16) {
      const __m256i rounded = (__m256i)_mm512_cvtneps_pbh(_mm512_loadu_ps(x + k));
      _mm512_storeu_ps(out + k, _mm512_castsi512_ps(shift_up(_mm512_maskz_cvtepu16_epi32(0xFFFF, rounded))));
    }
    for (; k < a.in; ++k) out[k] = bf16_to_float(float_to_bf16(x[k]));
    if (a.in % 2) out[a.in] = 0.0f;
  }
}

template <typename Element, typename Round>
const Element* round_activations(const MatmulArgs& a, int64_t row_elements, int threads, const Round& round) {
  thread_local std::vector<Element> buffer;
  if (buffer.size() < static_cast<size_t>(a.rows * row_elements)) buffer.resize(static_cast<size_t>(a.rows * row_elements));
  Element* rounded = buffer.data();  // this thread's buffer: workers name their own `buffer`
  parallel_rows(a.rows, threads, [&](int64_t first, int64_t last) { round(first, last, rounded); });
  return rounded;
}

// How many times the multiply-adds a second of `a` are those of `b`, register-only loops on this
// thread, each the best of 16 short runs (0.03-0.1 ms each) taken in turns: a slow spell of a
// shared machine (another process, a descheduled core) then slows both, not the one it hit.
double loop_speed_ratio(int64_t (*a)(int64_t), int64_t (*b)(int64_t)) {
  constexpr int64_t kIterations = int64_t{1} << 13;
  double best_a = 1e30, best_b = 1e30;
  int64_t flops_a = 0, flops_b = 0;
  auto time = [](int64_t (*loop)(int64_t), int64_t& flops) {
    const auto start = std::chrono::steady_clock::now();
    flops = loop(kIterations);
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  };
  for (int run = 0; run < 16; ++run) {
    best_a = std::min(best_a, time(a, flops_a));
    best_b = std::min(best_b, time(b, flops_b));
  }
  return (static_cast<double>(flops_a) / best_a) / (static_cast<double>(flops_b) / best_b);
}

// A random product with odd `in` and a last partial tile of 16 k-pairs, under `kernel` at 20 rows
// (AMX: two tiles of rows) and one row at a time: whether they agree bit for bit on this CPU.
bool rows_agree_with_one_row(Bf16Kernel kernel) {
  const int64_t out = 40, in = 97, rows = 20;
  std::mt19937 rng(7);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  std::vector<uint16_t> w(out * in);
  for (auto& v : w) v = float_to_bf16(normal(rng));
  std::vector<float> x(rows * in), bias(out), y_rows(rows * out), y_one(rows * out);
  for (auto& v : x) v = normal(rng);
  for (auto& v : bias) v = normal(rng);
  std::vector<uint16_t> packed(bf16_pair_elements(out, in));
  pack_bf16_pairs(w.data(), out, in, packed.data());
  matmul_bf16_dot({x.data(), packed.data(), WeightType::BF16Pairs, bias.data(), y_rows.data(), rows, in, out, false}, 1, kernel);
  for (int64_t r = 0; r < rows; ++r)
    matmul_bf16_dot({x.data() + r * in, packed.data(), WeightType::BF16Pairs, bias.data(), y_one.data() + r * out, 1, in, out, false}, 1,
                    kernel);
  return std::memcmp(y_rows.data(), y_one.data(), y_rows.size() * sizeof(float)) == 0;
}

// AMX tiles where the CPU has them and they give the one-row kernel's bits: 8 tokens cost ~1.3x
// one where the widened tiles cost ~1.8x (reports/bench/kernel-ab-bf16-amx-xeon.txt). Otherwise
// widened tiles from 2 rows where this CPU's cores retire at least 1.5x the multiply-adds a second
// by FMA as by vdpbf16ps (peak_loops.h: register-only loops, so neither the cache nor another
// process on other cores sways the choice, as timing the kernels themselves did under ctest -j2),
// and where they give the instruction's bits here. The Intel Xeon kind (Sapphire Rapids): 347
// against 169 GFLOP/s, and the widened tiles verify 4-16 tokens 1.1-1.5x faster than vdpbf16ps
// (reports/bench/kernel-ab-bf16-widened-xeon.txt); AMD Zen 4: 233 against 467, vdpbf16ps stays.
Bf16Kernel choose_kernel() {
  const char* named = std::getenv("SPECD_BF16_KERNEL");  // an A/B of the kernels on one machine
  if (named && *named) {
    for (Bf16Kernel kernel : {Bf16Kernel::Dot, Bf16Kernel::Widened, Bf16Kernel::Amx})
      if (std::strcmp(named, bf16_kernel_name(kernel)) == 0) {
        if (!bf16_kernel_usable(kernel) || !rows_agree_with_one_row(kernel))
          throw std::runtime_error(std::string("SPECD_BF16_KERNEL: ") + named + " cannot run here, or its rows disagree with one row");
        return kernel;
      }
    throw std::runtime_error(std::string("SPECD_BF16_KERNEL: ") + named + " is none of dot, widened, amx");
  }
  if (amx_bf16_usable() && rows_agree_with_one_row(Bf16Kernel::Amx)) return Bf16Kernel::Amx;
  if (loop_speed_ratio(f32_loop, bf16_dot_loop) < 1.5) return Bf16Kernel::Dot;
  return rows_agree_with_one_row(Bf16Kernel::Widened) ? Bf16Kernel::Widened : Bf16Kernel::Dot;
}

}  // namespace

Bf16Kernel bf16_kernel() {
  static const Bf16Kernel chosen = choose_kernel();
  return chosen;
}

bool bf16_kernel_usable(Bf16Kernel kernel) { return kernel != Bf16Kernel::Amx || amx_bf16_usable(); }

const char* bf16_kernel_name(Bf16Kernel kernel) {
  switch (kernel) {
    case Bf16Kernel::Dot: return "dot";
    case Bf16Kernel::Widened: return "widened";
    case Bf16Kernel::Amx: return "amx";
  }
  return "?";
}

const char* bf16_kernel_summary() {
  switch (bf16_kernel()) {
    case Bf16Kernel::Dot: return "BF16 dot products (vdpbf16ps) at every token count";
    case Bf16Kernel::Widened: return "one token by BF16 dot products, 2 or more by F32 FMA on widened weights (faster on this CPU)";
    case Bf16Kernel::Amx: return "2 or more tokens by AMX tiles, one token by F32 FMA in the tiles' order";
  }
  return "?";
}

void matmul_bf16_dot(const MatmulArgs& a, int threads) { matmul_bf16_dot(a, threads, bf16_kernel()); }

void matmul_bf16_dot(const MatmulArgs& a, int threads, Bf16Kernel kernel) {
  const int64_t pairs = (a.in + 1) / 2;
  const int64_t panels = panel_count(a.out), block = a.rows == 1 ? 8 : one_tile_of_eight(a.rows) ? 3 : 4;
  const int64_t blocks = (panels + block - 1) / block;
  auto on_panels = [&](const auto& body) {
    parallel_for(threads, blocks, [&](int64_t first, int64_t last, int) { body(first * block, std::min(panels, last * block)); });
  };
  const bool amx_order = kernel == Bf16Kernel::Amx && a.rows == 1;
  if ((kernel == Bf16Kernel::Widened && a.rows >= 2) || amx_order) {
    const float* x = round_activations<float>(a, 2 * pairs, threads, [&](int64_t first, int64_t last, float* buffer) {
      round_rows_widened(a, pairs, first, last, buffer);
    });
    if (amx_order) return on_panels([&](int64_t begin, int64_t end) { amx_order_row_panels(a, x, pairs, begin, end); });
    return on_panels([&](int64_t begin, int64_t end) { widened_panels(a, x, pairs, begin, end); });
  }
  const int64_t stride = kernel == Bf16Kernel::Amx ? amx_row_stride(pairs) : pairs;
  const uint32_t* x = round_activations<uint32_t>(a, stride, threads, [&](int64_t first, int64_t last, uint32_t* buffer) {
    round_rows(a, stride, first, last, buffer);
  });
  if (kernel == Bf16Kernel::Amx) return on_panels([&](int64_t begin, int64_t end) { amx_panels(a, x, pairs, begin, end); });
  on_panels([&](int64_t begin, int64_t end) { dot_panels(a, x, pairs, begin, end); });
}

#else

bool bf16_dot_supported() { return false; }

Bf16Kernel bf16_kernel() { return Bf16Kernel::Dot; }
bool bf16_kernel_usable(Bf16Kernel) { return false; }
const char* bf16_kernel_name(Bf16Kernel) { return "none"; }
const char* bf16_kernel_summary() { return "no AVX512-BF16 kernels in this build"; }
void matmul_bf16_dot(const MatmulArgs&, int) { throw std::logic_error("this build has no AVX512-BF16 kernels"); }
void matmul_bf16_dot(const MatmulArgs&, int, Bf16Kernel) { throw std::logic_error("this build has no AVX512-BF16 kernels"); }

#endif

}  // namespace specd::cpu
