// step09 internals: the semiring micro-kernel contract (CPU).
//
// The same contract as step04's (step04_simd/microkernel.hpp), with the
// semiring's operations in place of the multiply-add. A micro-kernel gets
//   a: a packed MR x kc panel of A (step04's pack_a layout, 64-byte aligned),
//   b: a packed kc x NR panel of B (step04's pack_b layout),
//   c: an MR x NR tile of C, column-major with leading dimension ldc,
// and computes C <- a (x) b (accumulate == false: C is never read) or
// C <- C (+) (a (x) b), the sum of the kc terms of every element taken in the
// order p = 0, 1, ... (as the reference does). kc >= 1.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "semiring.hpp"

namespace lab::step09 {
inline namespace LAB_IMPL_NS {

using KernelFn = void (*)(int64_t kc, const double* a, const double* b, bool accumulate, double* c, int64_t ldc);

struct MicroKernel {
  step04::Isa isa;
  int mr, nr;   ///< the tile of C the kernel keeps in registers
  KernelFn fn;  ///< nullptr where the build cannot have this kernel (another architecture's)
};

/// The largest tile any kernel uses (edge tiles go through a buffer this big).
constexpr int kMaxMr = 16, kMaxNr = 14;

// One per instruction set (kernel_<isa>.cpp), for S = PlusTimes, MinPlus, MaxPlus.
template <class S>
MicroKernel microkernel_generic();
template <class S>
MicroKernel microkernel_avx2();
template <class S>
MicroKernel microkernel_avx512();
template <class S>
MicroKernel microkernel_neon();

/// The kernel of `isa` for S (the caller has checked step04::isa_supported).
template <class S>
MicroKernel microkernel(step04::Isa isa) {
  switch (isa) {
    case step04::Isa::avx512:
      return microkernel_avx512<S>();
    case step04::Isa::avx2:
      return microkernel_avx2<S>();
    case step04::Isa::neon:
      return microkernel_neon<S>();
    case step04::Isa::generic:
      break;
  }
  return microkernel_generic<S>();
}

/// What step09 takes from the student's step04 besides pack_a and pack_b: the
/// instruction set. gemm<S> runs the one step04 chose for its DGEMM
/// (step04::best_isa), so while a step04 kernel this CPU could run is a TODO,
/// step04 falls back to a narrower one (generic at worst) and step09's own
/// kernel of that instruction set is never used. One entry per such kernel:
/// its instruction set and its TODO ("not implemented yet: step04 AVX-512 ...").
struct Step04Todo {
  step04::Isa isa;
  std::string message;
};
std::vector<Step04Todo> step04_kernels_todo();

}  // namespace LAB_IMPL_NS
}  // namespace lab::step09
