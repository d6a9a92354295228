// step04_simd — TODO for the student: the AVX2 + FMA micro-kernel.
//
// What to do: fill in the marked place below (the contract is in
// step04_simd/microkernel.hpp). Its test runs on any CPU with AVX2 and FMA.
// Test:   ./lab test step04
//
// The tile is 8 x 6: a column of 8 doubles is two ymm registers, so the tile
// of C takes 2 * 6 = 12 of the 16 ymm registers, two more hold A and one a
// broadcast value of B. Per p: 2 loads and 6 broadcasts feed 12 FMAs, and 12
// independent accumulators cover the FMA latency (2 units x 4 cycles = 8).
#include "lab/todo.hpp"
#include "microkernel.hpp"

#if defined(__x86_64__) || defined(_M_X64)
#include <immintrin.h>

namespace {

constexpr int kMr = 8, kNr = 6;
static_assert(kMr <= lab::step04::kMaxMr && kNr <= lab::step04::kMaxNr,
              "edge tiles need a buffer of kMaxMr x kMaxNr");

__attribute__((target("avx2,fma"))) void kernel(int64_t kc, const double* a, const double* b, double beta,
                                                double* c, int64_t ldc) {
  // LAB:SOLUTION-BEGIN  12 ymm accumulators; per p: 2 loads of A, 6 broadcasts of B, 12 FMAs
  // Ask for the tile of C now, so that it arrives while the multiply-adds run.
  for (const double* cj = c; cj != c + kNr * ldc; cj += ldc) {
    _mm_prefetch(reinterpret_cast<const char*>(cj), _MM_HINT_T0);
    _mm_prefetch(reinterpret_cast<const char*>(cj + kMr - 1), _MM_HINT_T0);
  }
  __m256d lo[kNr], hi[kNr];  // rows 0..3 and 4..7 of each column of the tile
#pragma GCC unroll 6
  for (int j = 0; j < kNr; ++j) lo[j] = hi[j] = _mm256_setzero_pd();
  for (int64_t p = 0; p < kc; ++p, a += kMr, b += kNr) {
    const __m256d a_lo = _mm256_load_pd(a), a_hi = _mm256_load_pd(a + 4);
#pragma GCC unroll 6
    for (int j = 0; j < kNr; ++j) {
      const __m256d bj = _mm256_broadcast_sd(b + j);
      lo[j] = _mm256_fmadd_pd(a_lo, bj, lo[j]);
      hi[j] = _mm256_fmadd_pd(a_hi, bj, hi[j]);
    }
  }
  if (beta == 0.0) {  // C is not read: it may hold NaN
#pragma GCC unroll 6
    for (int j = 0; j < kNr; ++j, c += ldc) {
      _mm256_storeu_pd(c, lo[j]);
      _mm256_storeu_pd(c + 4, hi[j]);
    }
  } else {
    const __m256d vbeta = _mm256_set1_pd(beta);
#pragma GCC unroll 6
    for (int j = 0; j < kNr; ++j, c += ldc) {
      _mm256_storeu_pd(c, _mm256_fmadd_pd(vbeta, _mm256_loadu_pd(c), lo[j]));
      _mm256_storeu_pd(c + 4, _mm256_fmadd_pd(vbeta, _mm256_loadu_pd(c + 4), hi[j]));
    }
  }
  // LAB:SKELETON
  LAB_TODO("step04 AVX2 micro-kernel: 8 x 6 tile in 12 ymm registers");
  // LAB:SOLUTION-END
}

}  // namespace

lab::step04::MicroKernel lab::step04::microkernel_avx2() { return {Isa::avx2, kMr, kNr, &kernel}; }

#else

lab::step04::MicroKernel lab::step04::microkernel_avx2() { return {Isa::avx2, 8, 6, nullptr}; }

#endif
