// The CPU description and ceilings specd bench prints beside its figures.
#include <catch2/catch.hpp>

#include "bench/machine_limits.h"

using namespace specd;

TEST_CASE("cpuinfo gives the first processor's model and the features the kernels use", "[limits]") {
  const std::string text =
      "processor\t: 0\nmodel name\t: Intel(R) Xeon(R) Platinum 8480C\n"
      "flags\t\t: fpu sse avx2 fma avx512f avx512bw avx512_bf16 avx512_fp16\n\n"
      "processor\t: 1\nmodel name\t: something else\nflags\t\t: fpu\n";
  const CpuInfo info = parse_cpuinfo(text);
  CHECK(info.model == "Intel(R) Xeon(R) Platinum 8480C");
  CHECK(info.features == std::vector<std::string>{"avx2", "fma", "avx512f", "avx512_bf16"});
  const CpuInfo bare = parse_cpuinfo("processor : 0\nflags : fpu sse2 avx512_bf16x\n");
  CHECK(bare.model == "unknown");
  CHECK(bare.features.empty());
}

TEST_CASE("the measured ceilings are positive and name what they measured", "[limits]") {
  const MachineLimits limits = measure_machine_limits(1);
  CHECK(limits.threads == 1);
  CHECK(limits.read_buffer_bytes >= (int64_t{64} << 20));
  CHECK(limits.read_gbps > 0);
  CHECK(limits.f32_gflops > 0);
  CHECK((limits.f32_loop == "avx512" || limits.f32_loop == "avx2" || limits.f32_loop == "scalar"));
  if (limits.bf16_gflops) CHECK(*limits.bf16_gflops > 0);
}
