// step01_naive — TODO for the student: write the triple loop.
//
// What to do: fill in the two functions below so that
//     C <- alpha * A * B + beta * C
// for column-major A (m x k), B (k x n), C (m x n). Read the handout
// (step01_naive/README.md) first: it explains why the loop order matters.
// Test:   ./lab test step01
// Time:   build/student/bin/step01_naive --n 1024 --threads 1 --impl student,baseline
#include "naive.hpp"

#include "lab/gemm_args.hpp"
#include "lab/todo.hpp"

// The checks and the early exits (alpha == 0, k == 0, beta == 0) are the same
// in every step, so the harness provides them: lab::check_gemm_args throws
// std::invalid_argument for bad shapes, and lab::gemm_quick_return handles the
// cases where A and B must not be read at all.

void lab::step01::dgemm(double alpha, ConstMatView A, ConstMatView B, double beta, MatView C) {
  check_gemm_args(A, B, C);
  if (gemm_quick_return(alpha, A, B, beta, C)) return;
  // LAB:SOLUTION-BEGIN  scale C by beta (beta == 0: overwrite), then C(:,j) += alpha * A(:,p) * B(p,j)
  const int64_t m = C.rows, n = C.cols, k = A.cols;
  // Column j of C is built from the columns of A: C(:,j) += A(:,p) * B(p,j).
  // The inner loop runs down a column, so A and C are read with stride 1.
  scale_c(beta, C);
  for (int64_t j = 0; j < n; ++j) {
    for (int64_t p = 0; p < k; ++p) {
      const double b = alpha * B(p, j);
      for (int64_t i = 0; i < m; ++i) C(i, j) += A(i, p) * b;
    }
  }
  // LAB:SKELETON
  LAB_TODO("step01 dgemm: the j, p, i triple loop (see the handout)");
  // LAB:SOLUTION-END
}

void lab::step01::dgemm_ijk(double alpha, ConstMatView A, ConstMatView B, double beta, MatView C) {
  check_gemm_args(A, B, C);
  if (gemm_quick_return(alpha, A, B, beta, C)) return;
  // LAB:SOLUTION-BEGIN  one dot product per C(i,j): sum over p of A(i,p) * B(p,j)
  const int64_t m = C.rows, n = C.cols, k = A.cols;
  // The dot product walks along a row of A: a stride of ld doubles per step,
  // a new cache line for every multiply-add once ld * 8 bytes exceeds a line.
  for (int64_t i = 0; i < m; ++i) {
    for (int64_t j = 0; j < n; ++j) {
      double sum = 0.0;
      for (int64_t p = 0; p < k; ++p) sum += A(i, p) * B(p, j);
      C(i, j) = alpha * sum + (beta == 0.0 ? 0.0 : beta * C(i, j));
    }
  }
  // LAB:SKELETON
  LAB_TODO("step01 dgemm_ijk: the i, j, p triple loop with a dot product inside");
  // LAB:SOLUTION-END
}
