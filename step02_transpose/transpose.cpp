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
  // TODO: At(p, i) = alpha * A(i, p) for every i < A.rows, p < A.cols
  LAB_TODO("step02 transpose_scaled: At(p, i) = alpha * A(i, p)");
}

void lab::step02::dgemm(double alpha, ConstMatView A, ConstMatView B, double beta, MatView C) {
  check_gemm_args(A, B, C);
  if (gemm_quick_return(alpha, A, B, beta, C)) return;
  const int64_t m = C.rows, n = C.cols, k = A.cols;

  // alpha is folded into the transposed copy: m * k multiplications instead of m * n.
  std::vector<double> at_buffer(static_cast<size_t>(k * m));
  const MatView At{at_buffer.data(), k, m, k};
  transpose_scaled(alpha, A, At);

  // TODO: omp parallel for over j; each i: C(i,j) = At(:,i) . B(:,j) + beta * C(i,j)
  (void)m, (void)n, (void)k;
  LAB_TODO("step02 dgemm: C(i,j) = At(:,i) . B(:,j) + beta * C(i,j) for every i, j");
}
