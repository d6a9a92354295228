// The plain kernels: the min-plus triple loop and Floyd-Warshall.
#include "reference.hpp"

#include <algorithm>
#include <limits>
#include <stdexcept>
#include <string>

#include "lab/gemm_args.hpp"

namespace lab::step09::apsp {

void relax(double* __restrict c, const double* __restrict a, double b, int64_t n) {
  // `via < c ? via : c` is exactly what vminpd computes, so this vectorizes
  // without -ffast-math and stays bit-exact.
  for (int64_t i = 0; i < n; ++i) {
    const double via = a[i] + b;
    c[i] = via < c[i] ? via : c[i];
  }
}

void reference_minplus_gemm(ConstMatView A, ConstMatView B, MatView C, bool accumulate) {
  check_gemm_args(A, B, C);
  const int64_t m = C.rows, n = C.cols, k = A.cols;
  constexpr double inf = std::numeric_limits<double>::infinity();
  if (!accumulate) {
#pragma omp parallel for schedule(static)
    for (int64_t j = 0; j < n; ++j) std::fill_n(C.data + j * C.ld, m, inf);
  }
  // The j-q-i order walks A and C down their columns (unit stride); taking q
  // in slices of kSlice keeps the slice of A in cache while every column of C
  // passes it, instead of streaming all of A from memory once per column.
  constexpr int64_t kSlice = 256;
  for (int64_t q0 = 0; q0 < k; q0 += kSlice) {
    const int64_t q1 = std::min(k, q0 + kSlice);
#pragma omp parallel for schedule(static)
    for (int64_t j = 0; j < n; ++j)
      for (int64_t q = q0; q < q1; ++q) relax(C.data + j * C.ld, A.data + q * A.ld, B.data[q + j * B.ld], m);
  }
}

void plain_floyd_warshall(MatView D) {
  if (D.rows != D.cols)
    throw std::invalid_argument("plain_floyd_warshall: D is " + std::to_string(D.rows) + " x " +
                                std::to_string(D.cols) + ", not square");
  const int64_t n = D.rows;
  constexpr double inf = std::numeric_limits<double>::infinity();
  for (int64_t k = 0; k < n; ++k) {
    double* dk = D.data + k * D.ld;
    // Column k through vertex k itself changes only when D(k, k) < 0; doing it
    // first keeps the other columns' loop free of overlap with column k.
    const double dkk = D(k, k);
    if (dkk < 0)
      for (int64_t i = 0; i < n; ++i) dk[i] = dk[i] + dkk < dk[i] ? dk[i] + dkk : dk[i];
    for (int64_t j = 0; j < n; ++j) {
      const double dkj = D(k, j);
      // No path reaches j through k: the column cannot change (the classic
      // shortcut; it makes the sparse early rounds cheap and changes no result).
      if (j == k || dkj == inf) continue;
      relax(D.data + j * D.ld, dk, dkj, n);
    }
  }
}

}  // namespace lab::step09::apsp
