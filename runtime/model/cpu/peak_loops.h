#pragma once
// Register-only loops that time what one core's vector units retire, with no memory traffic:
// bench's FLOP ceilings (bench/machine_limits.h) and the BF16 kernels' choice between FMA and
// vdpbf16ps for multi-row tiles (matmul_bf16_dot.h).
#include <cstdint>

namespace specd::cpu {

// The widest float FMA this build targets: "avx512", "avx2" or "scalar".
const char* f32_loop_name();
// One run of `iterations` steps on this thread; each returns the FLOPs it did (an FMA lane 2, a
// vdpbf16ps lane 4: two multiply-adds). bf16_dot_loop does nothing and returns 0 where the build
// has no AVX512-BF16.
int64_t f32_loop(int64_t iterations);
int64_t bf16_dot_loop(int64_t iterations);

}  // namespace specd::cpu
