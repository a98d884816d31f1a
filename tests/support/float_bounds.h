#pragma once
// Float32 rounding: the unit roundoff, Higham's gamma_K (a float32 sum of K products in any order,
// the products' rounding included, is within gamma_K * sum |x_i y_i| of exact: Higham, "Accuracy
// and Stability of Numerical Algorithms", 2nd ed., eq. 3.5; two orders are within twice that), and
// the error of the kernels' vector exp. The tests' floating-point bounds are built from these, so
// they hold under any BLAS kernel, SIMD width or order of summation.
#include <cstdint>

namespace specd::test {

constexpr double kFloat32UnitRoundoff = 0x1p-24;

// The relative error of the kernels' vector exp (util/vector_math.cpp): Cephes' polynomial, 2e-7
// (3.4 u), plus the range reduction's and the evaluation's roundings; at most 8 u.
constexpr double kVectorExpRelativeError = 8 * kFloat32UnitRoundoff;

// Higham's gamma_K for float32.
inline double float32_gamma(int64_t k) {
  const double ku = static_cast<double>(k) * kFloat32UnitRoundoff;
  return ku / (1 - ku);
}

}  // namespace specd::test
