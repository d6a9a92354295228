// step09_semiring — TODO for the student: the semiring step of the AVX2 micro-kernel.
//
// What to do: write `update` for MinPlus and for MaxPlus below, as in
// kernel_avx512.cpp but on 4 doubles (ymm registers). The kernel around them
// is step04's 8 x 6 AVX2 kernel (vector_kernel.hpp). Its test runs on any
// CPU with AVX2.
// Test:   ./lab test step09
#include <cstdint>

#include "lab/todo.hpp"
#include "semiring_kernel.hpp"

#if defined(__x86_64__) || defined(_M_X64)
#include <immintrin.h>

#include "lab/isa_target.hpp"

LAB_ISA_BEGIN_AVX2

namespace {

using lab::step09::MaxPlus;
using lab::step09::MinPlus;
using lab::step09::PlusTimes;

struct Ymm {
  using type = __m256d;
  static constexpr int kWidth = 4;
  static type set1(double x) { return _mm256_set1_pd(x); }
  static type load(const double* p) { return _mm256_load_pd(p); }
  static type loadu(const double* p) { return _mm256_loadu_pd(p); }
  static void storeu(double* p, type v) { _mm256_storeu_pd(p, v); }
};

// A semiring's steps on 4 doubles (what each does, and why the operand that
// may be NaN goes first into vminpd / vmaxpd: kernel_avx512.cpp).
template <class S>
struct Ops;

template <>
struct Ops<PlusTimes> {
  static __m256d zero() { return _mm256_setzero_pd(); }
  static __m256d update(__m256d acc, __m256d a, __m256d b) { return _mm256_fmadd_pd(a, b, acc); }
  static __m256d fold(__m256d c, __m256d acc) { return _mm256_add_pd(c, acc); }
};

template <>
struct Ops<MinPlus> {
  static __m256d zero() { return _mm256_set1_pd(MinPlus::zero()); }
  static __m256d update(__m256d acc, __m256d a, __m256d b) {
    // LAB:SOLUTION-BEGIN  _mm256_add_pd, then _mm256_min_pd(sum, acc)
    return _mm256_min_pd(_mm256_add_pd(a, b), acc);
    // LAB:SKELETON
    LAB_TODO("step09 AVX2 MinPlus update: acc <- min(a + b, acc)");
    // LAB:SOLUTION-END
  }
  static __m256d fold(__m256d c, __m256d acc) { return _mm256_min_pd(c, acc); }
};

template <>
struct Ops<MaxPlus> {
  static __m256d zero() { return _mm256_set1_pd(MaxPlus::zero()); }
  static __m256d update(__m256d acc, __m256d a, __m256d b) {
    // LAB:SOLUTION-BEGIN  _mm256_add_pd, then _mm256_max_pd(sum, acc)
    return _mm256_max_pd(_mm256_add_pd(a, b), acc);
    // LAB:SKELETON
    LAB_TODO("step09 AVX2 MaxPlus update: acc <- max(a + b, acc)");
    // LAB:SOLUTION-END
  }
  static __m256d fold(__m256d c, __m256d acc) { return _mm256_max_pd(c, acc); }
};

#include "vector_kernel.hpp"

constexpr int kNr = 6;
static_assert(2 * Ymm::kWidth <= lab::step09::kMaxMr && kNr <= lab::step09::kMaxNr,
              "edge tiles need a buffer of kMaxMr x kMaxNr");

}  // namespace

LAB_ISA_END

namespace lab::step09 {
inline namespace LAB_IMPL_NS {
template <class S>
MicroKernel microkernel_avx2() {
  return {step04::Isa::avx2, 2 * Ymm::kWidth, kNr, &vector_kernel<Ymm, Ops<S>, 2, kNr>};
}
}  // namespace LAB_IMPL_NS
}  // namespace lab::step09

#else

namespace lab::step09 {
inline namespace LAB_IMPL_NS {
template <class S>
MicroKernel microkernel_avx2() {
  return {step04::Isa::avx2, 8, 6, nullptr};
}
}  // namespace LAB_IMPL_NS
}  // namespace lab::step09

#endif

template lab::step09::MicroKernel lab::step09::microkernel_avx2<lab::step09::PlusTimes>();
template lab::step09::MicroKernel lab::step09::microkernel_avx2<lab::step09::MinPlus>();
template lab::step09::MicroKernel lab::step09::microkernel_avx2<lab::step09::MaxPlus>();
