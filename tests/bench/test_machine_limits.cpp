// The ceilings specd bench prints beside its figures (the CPU description: tests/util/test_machine.cpp).
#include <catch2/catch.hpp>

#include "bench/machine_limits.h"

using namespace specd;

TEST_CASE("the measured ceilings are positive and name what they measured", "[limits]") {
  const MachineLimits limits = measure_machine_limits(1);
  CHECK(limits.threads == 1);
  CHECK(limits.read_buffer_bytes >= (int64_t{64} << 20));
  CHECK(limits.read_gbps > 0);
  CHECK(limits.f32_gflops > 0);
  CHECK((limits.f32_loop == "avx512" || limits.f32_loop == "avx2" || limits.f32_loop == "scalar"));
  if (limits.bf16_gflops) CHECK(*limits.bf16_gflops > 0);
}
