// step04_simd — TODO for the student: the AVX-512 micro-kernel.
//
// What to do: fill in the marked place below (the contract is in
// step04_simd/microkernel.hpp, the register budget in the handout).
// Test:   ./lab test step04
//
// The tile is 16 x 14: a column of 16 doubles is two zmm registers, so the
// tile of C takes 2 * 14 = 28 of the 32 zmm registers; of the other four, two
// hold A and one a broadcast value of B. Each step of p loads 2 vectors of A
// and 14 values of B for 28 multiply-adds, which take 14 cycles on two FMA
// units: 16 loads in 14 cycles is within what the core can issue, and 28
// independent accumulators hide the 4-cycle FMA latency.
#include "lab/todo.hpp"
#include "microkernel.hpp"

#if defined(__x86_64__) || defined(_M_X64)
#include <immintrin.h>

namespace {

constexpr int kMr = 16, kNr = 14;
static_assert(kMr <= lab::step04::kMaxMr && kNr <= lab::step04::kMaxNr,
              "edge tiles need a buffer of kMaxMr x kMaxNr");

// The target attribute lets the compiler use AVX-512 here whatever the flags of
// the rest of the build; dispatch.cpp calls this only on a CPU that has it.
__attribute__((target("avx512f"))) void kernel(int64_t kc, const double* a, const double* b, double beta,
                                               double* c, int64_t ldc) {
  // LAB:SOLUTION-BEGIN  28 zmm accumulators; per p: 2 loads of A, 14 broadcasts of B, 28 FMAs
  __m512d lo[kNr], hi[kNr];  // rows 0..7 and 8..15 of each column of the tile
#pragma GCC unroll 14
  for (int j = 0; j < kNr; ++j) lo[j] = hi[j] = _mm512_setzero_pd();
  // One step of p. A lambda is a function of its own: without the target
  // attribute, a build for a CPU without AVX-512 refuses the intrinsics in it.
  const auto step = [&]() __attribute__((target("avx512f"), always_inline)) {
    const __m512d a_lo = _mm512_load_pd(a), a_hi = _mm512_load_pd(a + 8);
#pragma GCC unroll 14
    for (int j = 0; j < kNr; ++j) {
      const __m512d bj = _mm512_set1_pd(b[j]);
      lo[j] = _mm512_fmadd_pd(a_lo, bj, lo[j]);
      hi[j] = _mm512_fmadd_pd(a_hi, bj, hi[j]);
    }
    a += kMr;
    b += kNr;
  };
  // The tile of C is needed only at the end, and it is likely far away (each
  // kc slice reads all of C again). Asked for before a long loop, its lines
  // have left L1 by the end (each step streams 240 bytes of A and B through
  // it). So a loop long enough asks for them one at a time over its last kAsk
  // steps, one every kSpread steps: 2-3 % faster on a Zen 4, in this form of
  // the loop (other forms of the same schedule were not; step04's NOTES). A
  // shorter loop asks for all of them before it starts.
  constexpr int kSpread = 8;
  constexpr int64_t kAsk = 2 * kNr * kSpread;
  const auto ask = [](const double* line) { _mm_prefetch(reinterpret_cast<const char*>(line), _MM_HINT_T0); };
  if (kc >= kAsk) {
#pragma GCC unroll 4
    for (int64_t p = kAsk; p < kc; ++p) step();
    const double* cj = c;
    for (int64_t t = 0; t < kAsk; ++t) {
      if (t % (2 * kSpread) == 0) ask(cj);
      if (t % (2 * kSpread) == kSpread) {
        ask(cj + kMr - 1);
        cj += ldc;
      }
      step();
    }
  } else {
    for (const double* cj = c; cj != c + kNr * ldc; cj += ldc) {
      ask(cj);
      ask(cj + kMr - 1);
    }
#pragma GCC unroll 4
    for (int64_t p = 0; p < kc; ++p) step();
  }
  if (beta == 0.0) {  // C is not read: it may hold NaN
#pragma GCC unroll 14
    for (int j = 0; j < kNr; ++j, c += ldc) {
      _mm512_storeu_pd(c, lo[j]);
      _mm512_storeu_pd(c + 8, hi[j]);
    }
  } else {
    const __m512d vbeta = _mm512_set1_pd(beta);
#pragma GCC unroll 14
    for (int j = 0; j < kNr; ++j, c += ldc) {
      _mm512_storeu_pd(c, _mm512_fmadd_pd(vbeta, _mm512_loadu_pd(c), lo[j]));
      _mm512_storeu_pd(c + 8, _mm512_fmadd_pd(vbeta, _mm512_loadu_pd(c + 8), hi[j]));
    }
  }
  // LAB:SKELETON
  LAB_TODO("step04 AVX-512 micro-kernel: 16 x 14 tile in 28 zmm registers");
  // LAB:SOLUTION-END
}

}  // namespace

lab::step04::MicroKernel lab::step04::microkernel_avx512() { return {Isa::avx512, kMr, kNr, &kernel}; }

#else

lab::step04::MicroKernel lab::step04::microkernel_avx512() { return {Isa::avx512, 16, 14, nullptr}; }

#endif
