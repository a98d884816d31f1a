#pragma once
// The machine's ceilings, measured once when specd bench starts, so that its figures read as
// fractions of what this CPU can do: a STREAM-like read bandwidth and the peak FLOP/s of F32 FMAs
// and (with AVX512-BF16) BF16 dot products, each with the thread count the model uses.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "util/machine.h"

namespace specd {

struct MachineLimits {
  CpuInfo cpu;
  int threads = 1;
  int64_t read_buffer_bytes = 0;      // the array summed by the bandwidth measurement
  double read_gbps = 0;               // 1e9 bytes/s
  std::string f32_loop;               // "avx512", "avx2" or "scalar": what this build measured
  double f32_gflops = 0;              // an FMA = 2 FLOP
  std::optional<double> bf16_gflops;  // vdpbf16ps, 4 FLOP per fp32 lane; absent without AVX512-BF16
};

// Best of a few passes of each; a few hundred ms at most (most of it first-touching the buffer).
MachineLimits measure_machine_limits(int threads);

}  // namespace specd
