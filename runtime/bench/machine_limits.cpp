#include "bench/machine_limits.h"

#include <algorithm>
#include <chrono>
#include <memory>

#include "model/cpu/peak_loops.h"
#include "model/cpu/spin_pool.h"
#include "util/simd.h"

namespace specd {
namespace {

constexpr int kPasses = 3;
constexpr int64_t kFlopIterations = int64_t{1} << 21;  // ~5-20 ms a pass per core

// Best wall time (s) of `kPasses` runs of body(thread) on every thread at once.
template <typename Body>
double best_seconds(int threads, const Body& body) {
  double best = 1e30;
  for (int pass = 0; pass < kPasses; ++pass) {
    const auto start = std::chrono::steady_clock::now();
    cpu::on_every_thread(threads, [&](int thread) { body(thread); });
    best = std::min(best, std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
  }
  return best;
}

// Results land here so that the compiler keeps the loops.
volatile float g_sink;

// 4 x the last-level cache the threads can fill (one instance per `sharers` threads): at most a
// quarter of the array can survive in cache from the previous pass, and a streaming sum evicts
// even that before reaching it, so every pass reads DRAM. A fixed 256 MiB would fit in the L3s
// of a large server's threads and cost twice the time here (128 MiB); the floor covers a CPU
// that reports no cache, the cap the start-up time.
int64_t read_buffer_bytes(int threads) {
  const CacheLevel cache = read_last_level_cache();
  const int64_t instances = (threads + cache.sharers - 1) / cache.sharers;
  return std::clamp<int64_t>(4 * cache.bytes * instances, int64_t{64} << 20, int64_t{1} << 30);
}

float sum_floats(const float* p, int64_t count) {
#if defined(__AVX512F__)
  __m512 acc[4] = {_mm512_setzero_ps(), _mm512_setzero_ps(), _mm512_setzero_ps(), _mm512_setzero_ps()};
  for (int64_t i = 0; i + 64 <= count; i += 64) {
    SPECD_UNROLL for (int j = 0; j < 4; ++j) acc[j] = _mm512_add_ps(acc[j], _mm512_loadu_ps(p + i + 16 * j));
  }
  return lane_sum(_mm512_add_ps(_mm512_add_ps(acc[0], acc[1]), _mm512_add_ps(acc[2], acc[3])));
#elif defined(SPECD_HAVE_AVX2)
  __m256 acc[8];
  SPECD_UNROLL for (int j = 0; j < 8; ++j) acc[j] = _mm256_setzero_ps();
  for (int64_t i = 0; i + 64 <= count; i += 64) {
    SPECD_UNROLL for (int j = 0; j < 8; ++j) acc[j] = _mm256_add_ps(acc[j], _mm256_loadu_ps(p + i + 8 * j));
  }
  SPECD_UNROLL for (int j = 1; j < 8; ++j) acc[0] = _mm256_add_ps(acc[0], acc[j]);
  alignas(32) float lanes[8];
  _mm256_store_ps(lanes, acc[0]);
  float total = 0;
  for (float v : lanes) total += v;
  return total;
#else
  float acc[8] = {};
  for (int64_t i = 0; i + 8 <= count; i += 8) {
    SPECD_UNROLL for (int j = 0; j < 8; ++j) acc[j] += p[i + j];
  }
  float total = 0;
  for (float v : acc) total += v;
  return total;
#endif
}

double measure_read_gbps(int threads, int64_t bytes) {
  // Whole blocks of 64 floats per thread, which every sum loop above consumes.
  const int64_t per_thread = bytes / static_cast<int64_t>(sizeof(float)) / threads / 64 * 64;
  std::unique_ptr<float[]> data(new float[per_thread * threads]);
  // Each thread first touches the pages it reads, as the model's workers do with their panels.
  best_seconds(threads, [&](int t) { std::fill_n(data.get() + t * per_thread, per_thread, 1.0f); });
  const double seconds = best_seconds(threads, [&](int t) { g_sink = sum_floats(data.get() + t * per_thread, per_thread); });
  return static_cast<double>(per_thread * threads * sizeof(float)) / seconds / 1e9;
}

double measure_gflops(int threads, int64_t (*loop)(int64_t)) {
  const int64_t flops = loop(kFlopIterations);  // this thread's warm-up, which also gives the count
  return static_cast<double>(flops) * threads / best_seconds(threads, [&](int) { loop(kFlopIterations); }) / 1e9;
}

}  // namespace

MachineLimits measure_machine_limits(int threads) {
  MachineLimits limits;
  limits.cpu = read_cpuinfo();
  limits.threads = std::max(1, threads);
  limits.read_buffer_bytes = read_buffer_bytes(limits.threads);
  limits.read_gbps = measure_read_gbps(limits.threads, limits.read_buffer_bytes);
  limits.f32_loop = cpu::f32_loop_name();
  limits.f32_gflops = measure_gflops(limits.threads, cpu::f32_loop);
  if (cpu::bf16_dot_loop(1) > 0) limits.bf16_gflops = measure_gflops(limits.threads, cpu::bf16_dot_loop);
  return limits;
}

}  // namespace specd
