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
  // TODO: scale C by beta (beta == 0: overwrite), then C(:,j) += alpha * A(:,p) * B(p,j)
  LAB_TODO("step01 dgemm: the j, p, i triple loop (see the handout)");
}

void lab::step01::dgemm_ijk(double alpha, ConstMatView A, ConstMatView B, double beta, MatView C) {
  check_gemm_args(A, B, C);
  if (gemm_quick_return(alpha, A, B, beta, C)) return;
  // TODO: one dot product per C(i,j): sum over p of A(i,p) * B(p,j)
  LAB_TODO("step01 dgemm_ijk: the i, j, p triple loop with a dot product inside");
}
