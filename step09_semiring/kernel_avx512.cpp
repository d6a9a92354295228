// step09_semiring — TODO for the student: the semiring step of the AVX-512 micro-kernel.
//
// What to do: write `update` for MinPlus and for MaxPlus below (PlusTimes is
// done, as the example). Everything around them is step04's kernel
// (vector_kernel.hpp): the same 16 x 14 tile in 28 zmm accumulators, the same
// loads and broadcasts; only the FMA became the semiring's step. The
// contract is in semiring_kernel.hpp.
// Test:   ./lab test step09
//
// Why min-plus runs at half of DGEMM's rate here: a multiply-add is ONE
// instruction (vfmadd), but no CPU has a fused add-min, so every update of a
// min-plus accumulator is two (vaddpd, then vminpd). Where both go to the same
// vector ports as the FMA (on the lab's machines they do), the 28 updates of a
// k step take 28 cycles instead of 14: the bound is 50 % of DGEMM, in GFLOP/s
// counted as 2 mnk for both.
#include <cstdint>

#include "lab/todo.hpp"
#include "semiring_kernel.hpp"

#if defined(__x86_64__) || defined(_M_X64)
#include <immintrin.h>

#include "lab/isa_target.hpp"

// GCC 12's _mm512_min_pd and _mm512_max_pd pass an undefined vector as the
// (unused) merge source of their masked builtin, which -Wmaybe-uninitialized
// reports in every caller; nothing here is uninitialized.
#if !defined(__clang__)
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif
LAB_ISA_BEGIN_AVX512

namespace {

using lab::step09::MaxPlus;
using lab::step09::MinPlus;
using lab::step09::PlusTimes;

struct Zmm {
  using type = __m512d;
  static constexpr int kWidth = 8;
  static type set1(double x) { return _mm512_set1_pd(x); }
  static type load(const double* p) { return _mm512_load_pd(p); }
  static type loadu(const double* p) { return _mm512_loadu_pd(p); }
  static void storeu(double* p, type v) { _mm512_storeu_pd(p, v); }
};

// A semiring's steps on 8 doubles:
//   zero()             the neutral element of (+), where every accumulator starts
//   update(acc, a, b)  acc (+) (a (x) b): once per accumulator and k step
//   fold(c, acc)       c (+) acc: the old C and the new sum (accumulate == true)
// vminpd and vmaxpd return their SECOND operand when either one is NaN. So the
// operand that may be NaN goes first and the one that never is goes second:
// the NaN is skipped (semiring.hpp: NaN reads as the zero). The accumulators
// start at the zero and only ever take numbers, so they are never NaN.
template <class S>
struct Ops;

template <>
struct Ops<PlusTimes> {
  static __m512d zero() { return _mm512_setzero_pd(); }
  static __m512d update(__m512d acc, __m512d a, __m512d b) { return _mm512_fmadd_pd(a, b, acc); }
  static __m512d fold(__m512d c, __m512d acc) { return _mm512_add_pd(c, acc); }
};

template <>
struct Ops<MinPlus> {
  static __m512d zero() { return _mm512_set1_pd(MinPlus::zero()); }
  static __m512d update(__m512d acc, __m512d a, __m512d b) {
    // TODO: two instructions: s = _mm512_add_pd(a, b), then _mm512_min_pd(s, acc) (s first: NaN)
    LAB_TODO("step09 AVX-512 MinPlus update: acc <- min(a + b, acc)");
  }
  static __m512d fold(__m512d c, __m512d acc) { return _mm512_min_pd(c, acc); }
};

template <>
struct Ops<MaxPlus> {
  static __m512d zero() { return _mm512_set1_pd(MaxPlus::zero()); }
  static __m512d update(__m512d acc, __m512d a, __m512d b) {
    // TODO: as MinPlus, with _mm512_max_pd
    LAB_TODO("step09 AVX-512 MaxPlus update: acc <- max(a + b, acc)");
  }
  static __m512d fold(__m512d c, __m512d acc) { return _mm512_max_pd(c, acc); }
};

#include "vector_kernel.hpp"

constexpr int kNr = 14;
static_assert(2 * Zmm::kWidth <= lab::step09::kMaxMr && kNr <= lab::step09::kMaxNr,
              "edge tiles need a buffer of kMaxMr x kMaxNr");

}  // namespace

LAB_ISA_END

namespace lab::step09 {
inline namespace LAB_IMPL_NS {
template <class S>
MicroKernel microkernel_avx512() {
  return {step04::Isa::avx512, 2 * Zmm::kWidth, kNr, &vector_kernel<Zmm, Ops<S>, 2, kNr>};
}
}  // namespace LAB_IMPL_NS
}  // namespace lab::step09

#else

namespace lab::step09 {
inline namespace LAB_IMPL_NS {
template <class S>
MicroKernel microkernel_avx512() {
  return {step04::Isa::avx512, 16, 14, nullptr};
}
}  // namespace LAB_IMPL_NS
}  // namespace lab::step09

#endif

template lab::step09::MicroKernel lab::step09::microkernel_avx512<lab::step09::PlusTimes>();
template lab::step09::MicroKernel lab::step09::microkernel_avx512<lab::step09::MinPlus>();
template lab::step09::MicroKernel lab::step09::microkernel_avx512<lab::step09::MaxPlus>();
