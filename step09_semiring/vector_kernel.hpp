// step09 — given: the loop of the SIMD micro-kernels, written once for any
// vector width. Nothing to do here.
//
// kernel_avx512.cpp, kernel_avx2.cpp and kernel_neon.cpp include this file
// (the x86 ones between `LAB_ISA_BEGIN_...` and `LAB_ISA_END`,
// lab/isa_target.hpp, so that the template compiles for their instruction set
// and only their kernels do). It is step04's kernel with the FMA replaced by
// the semiring's step:
//   V   the vector: type, kWidth doubles, set1, load (64-byte aligned), loadu, storeu
//   Op  the semiring's steps on V: zero(), update(acc, a, b), fold(c, acc)
// The tile is kV kWidth x kNr: each column of it is kV vectors (two of 8
// doubles with AVX-512, two of 4 with AVX2, four of 2 with NEON), so a k step
// loads kV vectors of A and broadcasts kNr values of B into kV kNr updates.
// The contract: semiring_kernel.hpp.
#ifndef LAB_STEP09_VECTOR_KERNEL_HPP
#define LAB_STEP09_VECTOR_KERNEL_HPP

template <class V, class Op, int kV, int kNr>
void vector_kernel(int64_t kc, const double* a, const double* b, bool accumulate, double* c, int64_t ldc) {
  constexpr int kW = V::kWidth, kMr = kV * kW;
  // The tile of C is needed only at the end, but it is likely far away: ask
  // for its cache lines now, so that they arrive while the k steps run.
  for (const double* cj = c; cj != c + kNr * ldc; cj += ldc) {
    __builtin_prefetch(cj);
    __builtin_prefetch(cj + kMr - 1);
  }
  typename V::type acc[kNr][kV];  // acc[j][v]: rows v kW .. (v + 1) kW - 1 of column j of the tile
#pragma GCC unroll 16
  for (int j = 0; j < kNr; ++j)
#pragma GCC unroll 4
    for (int v = 0; v < kV; ++v) acc[j][v] = Op::zero();
#pragma GCC unroll 4
  for (int64_t p = 0; p < kc; ++p, a += kMr, b += kNr) {
    typename V::type av[kV];
#pragma GCC unroll 4
    for (int v = 0; v < kV; ++v) av[v] = V::load(a + v * kW);
#pragma GCC unroll 16
    for (int j = 0; j < kNr; ++j) {
      const typename V::type bj = V::set1(b[j]);
#pragma GCC unroll 4
      for (int v = 0; v < kV; ++v) acc[j][v] = Op::update(acc[j][v], av[v], bj);
    }
  }
  if (!accumulate) {  // C is not read: it may hold NaN
#pragma GCC unroll 16
    for (int j = 0; j < kNr; ++j, c += ldc)
#pragma GCC unroll 4
      for (int v = 0; v < kV; ++v) V::storeu(c + v * kW, acc[j][v]);
  } else {
#pragma GCC unroll 16
    for (int j = 0; j < kNr; ++j, c += ldc)
#pragma GCC unroll 4
      for (int v = 0; v < kV; ++v) V::storeu(c + v * kW, Op::fold(V::loadu(c + v * kW), acc[j][v]));
  }
}

#endif
