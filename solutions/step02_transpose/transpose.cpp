// step02_transpose — TODO for the student: transpose A, then take dot products.
//
// What to do: fill in the two marked places below.
//   1. transpose_scaled: At(p, i) = alpha * A(i, p).
//   2. the dot-product loop of dgemm: C(i,j) = At(:,i) . B(:,j) + beta * C(i,j).
// Read the handout (step02_transpose/README.md) first: it shows the access
// pattern before and after the transpose.
// Test:   ./lab test step02
// Time:   build/student/bin/step02_transpose --n 1024 --threads 1 --impl student,baseline
#include "transpose.hpp"

#include <vector>

#include "lab/gemm_args.hpp"
#include "lab/todo.hpp"

void lab::step02::transpose_scaled(double alpha, ConstMatView A, MatView At) {
  // LAB:SOLUTION-BEGIN  At(p, i) = alpha * A(i, p) for every i < A.rows, p < A.cols
  // Reading A down its columns is stride 1; the writes to At jump by At.ld.
  // That costs one cache miss per element, but only m * k of them, against the
  // m * n * k multiply-adds of the product: for n = 1024 about 0.1 % of the work.
  for (int64_t p = 0; p < A.cols; ++p) {
    for (int64_t i = 0; i < A.rows; ++i) At(p, i) = alpha * A(i, p);
  }
  // LAB:SKELETON
  LAB_TODO("step02 transpose_scaled: At(p, i) = alpha * A(i, p)");
  // LAB:SOLUTION-END
}

void lab::step02::dgemm(double alpha, ConstMatView A, ConstMatView B, double beta, MatView C) {
  check_gemm_args(A, B, C);
  if (gemm_quick_return(alpha, A, B, beta, C)) return;
  const int64_t m = C.rows, n = C.cols, k = A.cols;

  // alpha is folded into the transposed copy: m * k multiplications instead of m * n.
  std::vector<double> at_buffer(static_cast<size_t>(k * m));
  const MatView At{at_buffer.data(), k, m, k};
  transpose_scaled(alpha, A, At);

  // LAB:SOLUTION-BEGIN  omp parallel for over j; each i: C(i,j) = At(:,i) . B(:,j) + beta * C(i,j)
  // Threads take whole columns of C, so no two of them ever write the same element.
#pragma omp parallel for schedule(static)
  for (int64_t j = 0; j < n; ++j) {
    const double* b = &B(0, j);
    for (int64_t i = 0; i < m; ++i) {
      const double* a = &At(0, i);
      // Both operands are contiguous, so the loop vectorizes; the reduction
      // clause lets the compiler keep one partial sum per SIMD lane.
      double sum = 0.0;
#pragma omp simd reduction(+ : sum)
      for (int64_t p = 0; p < k; ++p) sum += a[p] * b[p];
      // beta == 0 must not read C: it may hold NaN.
      C(i, j) = beta == 0.0 ? sum : sum + beta * C(i, j);
    }
  }
  // LAB:SKELETON
  (void)m, (void)n, (void)k;
  LAB_TODO("step02 dgemm: C(i,j) = At(:,i) . B(:,j) + beta * C(i,j) for every i, j");
  // LAB:SOLUTION-END
}
