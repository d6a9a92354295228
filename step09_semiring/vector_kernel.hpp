// step09 — given: the loop of the SIMD micro-kernels, written once for any
// vector width. Nothing to do here.
//
// kernel_avx512.cpp and kernel_avx2.cpp include this file between
// `LAB_ISA_BEGIN_...` and `LAB_ISA_END` (lab/isa_target.hpp), so that the
// template compiles for their instruction set (and only their kernels do).
// It is step04's kernel with the FMA replaced by the semiring's step:
//   V   the vector: type, kWidth doubles, set1, load (64-byte aligned), loadu, storeu
//   Op  the semiring's steps on V: zero(), update(acc, a, b), fold(c, acc)
// The tile is 2 kWidth x kNr: each column of it is two vectors (lo and hi),
// so a k step loads two vectors of A and broadcasts kNr values of B into
// 2 kNr updates. The contract: semiring_kernel.hpp.
#ifndef LAB_STEP09_VECTOR_KERNEL_HPP
#define LAB_STEP09_VECTOR_KERNEL_HPP

template <class V, class Op, int kNr>
void vector_kernel(int64_t kc, const double* a, const double* b, bool accumulate, double* c, int64_t ldc) {
  constexpr int kW = V::kWidth, kMr = 2 * kW;
  // The tile of C is needed only at the end, but it is likely far away: ask
  // for its cache lines now, so that they arrive while the k steps run.
  for (const double* cj = c; cj != c + kNr * ldc; cj += ldc) {
    _mm_prefetch(reinterpret_cast<const char*>(cj), _MM_HINT_T0);
    _mm_prefetch(reinterpret_cast<const char*>(cj + kMr - 1), _MM_HINT_T0);
  }
  typename V::type lo[kNr], hi[kNr];  // rows 0..kW-1 and kW..2kW-1 of each column of the tile
#pragma GCC unroll 16
  for (int j = 0; j < kNr; ++j) lo[j] = hi[j] = Op::zero();
#pragma GCC unroll 4
  for (int64_t p = 0; p < kc; ++p, a += kMr, b += kNr) {
    const typename V::type a_lo = V::load(a), a_hi = V::load(a + kW);
#pragma GCC unroll 16
    for (int j = 0; j < kNr; ++j) {
      const typename V::type bj = V::set1(b[j]);
      lo[j] = Op::update(lo[j], a_lo, bj);
      hi[j] = Op::update(hi[j], a_hi, bj);
    }
  }
  if (!accumulate) {  // C is not read: it may hold NaN
#pragma GCC unroll 16
    for (int j = 0; j < kNr; ++j, c += ldc) {
      V::storeu(c, lo[j]);
      V::storeu(c + kW, hi[j]);
    }
  } else {
#pragma GCC unroll 16
    for (int j = 0; j < kNr; ++j, c += ldc) {
      V::storeu(c, Op::fold(V::loadu(c), lo[j]));
      V::storeu(c + kW, Op::fold(V::loadu(c + kW), hi[j]));
    }
  }
}

#endif
