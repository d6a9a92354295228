// step04_simd — TODO for the student: packing A and B into micro-panels.
//
// What to do: fill in the two marked places below (the layouts are in
// step04_simd/microkernel.hpp and drawn in the handout).
// Test:   ./lab test step04
//
// Why pack: the micro-kernel then reads A and B strictly in order, at unit
// stride, from a few contiguous pages, whatever the leading dimensions are, and
// the zeros past the edge of the matrix let it run full tiles everywhere.
#include <algorithm>

#include "lab/todo.hpp"
#include "microkernel.hpp"

void lab::step04::pack_a(double alpha, ConstMatView A, int mr, double* dst) {
  // LAB:SOLUTION-BEGIN  for each panel and p: the mr values alpha * A(i0.., p), zeros past A.rows
  // One panel at a time (panel q starts at dst + q * mr * kb), written in
  // order: each column of A gives it mr values, and the next panel's are the
  // next lines of the same columns, still in cache. Dealing each column out to
  // all panels at once writes mb / mr streams a panel apart instead, and took
  // about 40 % longer on a Zen 4 (NOTES.md).
  // alpha is folded in here: mb * kb multiplications per packed block, none in the kernel.
  for (int64_t i0 = 0; i0 < A.rows; i0 += mr, dst += mr * A.cols) {
    const int64_t rows = std::min<int64_t>(mr, A.rows - i0);
    for (int64_t p = 0; p < A.cols; ++p) {
      const double* src = &A(i0, p);
      double* d = dst + p * mr;
      for (int64_t i = 0; i < rows; ++i) d[i] = alpha * src[i];
      for (int64_t i = rows; i < mr; ++i) d[i] = 0.0;
    }
  }
  // LAB:SKELETON
  LAB_TODO("step04 pack_a: mr x kb panels of alpha * A, zero-padded");
  // LAB:SOLUTION-END
}

void lab::step04::pack_b(ConstMatView B, int nr, double* dst) {
  // LAB:SOLUTION-BEGIN  for each panel and p: the nr values B(p, j0..), zeros past B.cols
  for (int64_t j0 = 0; j0 < B.cols; j0 += nr) {
    const int64_t cols = std::min<int64_t>(nr, B.cols - j0);
    for (int64_t p = 0; p < B.rows; ++p, dst += nr) {
      for (int64_t j = 0; j < cols; ++j) dst[j] = B(p, j0 + j);
      for (int64_t j = cols; j < nr; ++j) dst[j] = 0.0;
    }
  }
  // LAB:SKELETON
  LAB_TODO("step04 pack_b: kb x nr panels of B, zero-padded");
  // LAB:SOLUTION-END
}
