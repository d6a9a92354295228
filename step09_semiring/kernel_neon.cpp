// step09_semiring — TODO for the student on 64-bit Arm: the semiring step of the NEON micro-kernel.
//
// What to do: write `update` for MinPlus and for MaxPlus below, as in
// kernel_avx512.cpp but on 2 doubles (a NEON register, float64x2_t). The
// kernel around them is step04's 8 x 6 tile in 24 registers
// (vector_kernel.hpp). Its test runs on any 64-bit Arm CPU; a build for
// x86-64 leaves it out, and there the AVX2 and AVX-512 kernels are yours instead.
// Test:   ./lab test step09
//
// The NaN rule comes from the instruction you choose. vminnmq_f64 (FMINNM,
// IEEE 754's minNum) returns the number when one operand is a quiet NaN, on
// either side; vminq_f64 (FMIN) returns the NaN. A sum is never a signalling
// NaN, and the accumulators start at the zero and only ever take numbers, so
// the first skips a NaN sum (semiring.hpp: NaN reads as the zero) and the
// second would spread it to C. (C itself may hold a signalling NaN, which
// FMINNM would not skip: fold compares and selects instead, as vminpd does.)
#include <cstdint>

#include "lab/todo.hpp"
#include "semiring_kernel.hpp"

#if defined(__aarch64__)
#include <arm_neon.h>

namespace {

using lab::step09::MaxPlus;
using lab::step09::MinPlus;
using lab::step09::PlusTimes;

struct Q {
  using type = float64x2_t;
  static constexpr int kWidth = 2;
  static type set1(double x) { return vdupq_n_f64(x); }
  static type load(const double* p) { return vld1q_f64(p); }
  static type loadu(const double* p) { return vld1q_f64(p); }
  static void storeu(double* p, type v) { vst1q_f64(p, v); }
};

// A semiring's steps on 2 doubles (what each does: kernel_avx512.cpp).
template <class S>
struct Ops;

template <>
struct Ops<PlusTimes> {
  static float64x2_t zero() { return vdupq_n_f64(0.0); }
  static float64x2_t update(float64x2_t acc, float64x2_t a, float64x2_t b) { return vfmaq_f64(acc, a, b); }
  static float64x2_t fold(float64x2_t c, float64x2_t acc) { return vaddq_f64(c, acc); }
};

template <>
struct Ops<MinPlus> {
  static float64x2_t zero() { return vdupq_n_f64(MinPlus::zero()); }
  static float64x2_t update(float64x2_t acc, float64x2_t a, float64x2_t b) {
    // TODO: vaddq_f64, then vminnmq_f64(sum, acc) (minNum: a NaN sum is skipped; vminq_f64 is not)
    LAB_TODO("step09 NEON MinPlus update: acc <- min(a + b, acc)");
  }
  static float64x2_t fold(float64x2_t c, float64x2_t acc) { return vbslq_f64(vcltq_f64(c, acc), c, acc); }
};

template <>
struct Ops<MaxPlus> {
  static float64x2_t zero() { return vdupq_n_f64(MaxPlus::zero()); }
  static float64x2_t update(float64x2_t acc, float64x2_t a, float64x2_t b) {
    // TODO: as MinPlus, with vmaxnmq_f64
    LAB_TODO("step09 NEON MaxPlus update: acc <- max(a + b, acc)");
  }
  static float64x2_t fold(float64x2_t c, float64x2_t acc) { return vbslq_f64(vcgtq_f64(c, acc), c, acc); }
};

// GCC schedules instructions before it allocates registers on Arm (not on
// x86): it then hoists the 24 adds of a k step ahead of their mins, and the
// sums no longer fit beside the 24 accumulators: they go to the stack. In the
// order of the source, one temporary suffices (24 + 4 of A + 1 of B + 1).
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC push_options
#pragma GCC optimize("no-schedule-insns")
#endif
#include "vector_kernel.hpp"
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC pop_options
#endif

constexpr int kV = 4, kNr = 6;  // step04's NEON tile: 8 x 6
static_assert(kV * Q::kWidth <= lab::step09::kMaxMr && kNr <= lab::step09::kMaxNr,
              "edge tiles need a buffer of kMaxMr x kMaxNr");

}  // namespace

namespace lab::step09 {
inline namespace LAB_IMPL_NS {
template <class S>
MicroKernel microkernel_neon() {
  return {step04::Isa::neon, kV * Q::kWidth, kNr, &vector_kernel<Q, Ops<S>, kV, kNr>};
}
}  // namespace LAB_IMPL_NS
}  // namespace lab::step09

#else

namespace lab::step09 {
inline namespace LAB_IMPL_NS {
template <class S>
MicroKernel microkernel_neon() {
  return {step04::Isa::neon, 8, 6, nullptr};
}
}  // namespace LAB_IMPL_NS
}  // namespace lab::step09

#endif

template lab::step09::MicroKernel lab::step09::microkernel_neon<lab::step09::PlusTimes>();
template lab::step09::MicroKernel lab::step09::microkernel_neon<lab::step09::MinPlus>();
template lab::step09::MicroKernel lab::step09::microkernel_neon<lab::step09::MaxPlus>();
