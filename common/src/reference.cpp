// The reference product: the plainest loops that keep every rule of the
// contract, parallel over columns of C so that checks stay quick.
#include "lab/check.hpp"
#include "lab/gemm_args.hpp"

namespace lab {

void reference_gemm(double alpha, ConstMatView A, ConstMatView B, double beta, MatView C) {
  check_gemm_args(A, B, C);
  if (gemm_quick_return(alpha, A, B, beta, C)) return;
  const int64_t m = C.rows, n = C.cols, k = A.cols;
#pragma omp parallel for schedule(static)
  for (int64_t j = 0; j < n; ++j) {
    double* c = C.data + j * C.ld;
    for (int64_t i = 0; i < m; ++i) c[i] = beta == 0.0 ? 0.0 : beta * c[i];
    for (int64_t p = 0; p < k; ++p) {
      const double b = alpha * B(p, j);
      const double* a = A.data + p * A.ld;
      for (int64_t i = 0; i < m; ++i) c[i] += a[i] * b;
    }
  }
}

}  // namespace lab
