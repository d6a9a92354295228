// step09 — given: the int32 min-plus kernel on the benchmark's double matrices.
//
// The shared benchmark hands every variant the same random doubles in [-1, 1).
// The minplus_i32_dpx variant turns them into fixed-point integers (x * 2^20,
// rounded; +inf and NaN to MinPlusI32::kInf), runs gemm_device<MinPlusI32>,
// and turns the result back. The conversions read and write every matrix once
// (a few per cent of the time at n = 8192, included in the variant's time);
// step09_ceiling times the kernel alone on integer data. Its check converts
// the same way on the host and compares exactly.
#pragma once

#include <cmath>
#include <cstdint>

#include "lab/cuda.hpp"
#include "semiring.hpp"

namespace lab::step09 {

constexpr double kI32Scale = 1 << 20;

LAB_STEP09_HD int32_t to_i32(double x) {
  const double v = x * kI32Scale;
  if (!(v <= double(MinPlusI32::kMax))) return MinPlusI32::kInf;  // above the range, +inf, NaN: no path
  if (v < -double(MinPlusI32::kMax)) return -MinPlusI32::kMax;
  return int32_t(rint(v));
}
LAB_STEP09_HD double from_i32(int32_t v) {
  return v >= MinPlusI32::kInf ? MinPlus::zero() : double(v) / kI32Scale;
}

inline namespace LAB_IMPL_NS {

/// Device buffers for the integer copies of A, B and C, kept between calls
/// (they grow when a call needs more).
struct I32Scratch {
  cuda::DeviceBuffer<int32_t> a, b, c;
};

/// C <- from_i32(to_i32(A) (x) to_i32(B)), or with (+) to_i32(C), on device
/// views, queued on `stream`.
void minplus_i32_on_doubles(ConstMatView A, ConstMatView B, MatView C, bool accumulate, I32Scratch& scratch,
                            cudaStream_t stream);

}  // namespace LAB_IMPL_NS
}  // namespace lab::step09
