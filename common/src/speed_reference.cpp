// The fixed loops of the speed tests (see lab/speed_reference.hpp).
#include "lab/speed_reference.hpp"

#include <algorithm>
#include <cstdio>
#include <limits>

#include "lab/check.hpp"
#include "lab/gemm_args.hpp"
#include "lab/machine.hpp"
#include "lab/timer.hpp"

namespace lab::speed {

void naive_ijk(double alpha, ConstMatView A, ConstMatView B, double beta, MatView C) {
  check_gemm_args(A, B, C);
  if (gemm_quick_return(alpha, A, B, beta, C)) return;
  for (int64_t i = 0; i < C.rows; ++i) {
    for (int64_t j = 0; j < C.cols; ++j) {
      double sum = 0.0;
      for (int64_t p = 0; p < A.cols; ++p) sum += A(i, p) * B(p, j);
      C(i, j) = beta == 0.0 ? alpha * sum : alpha * sum + beta * C(i, j);
    }
  }
}

void transposed_dot(double alpha, ConstMatView A, ConstMatView B, double beta, MatView C) {
  check_gemm_args(A, B, C);
  if (gemm_quick_return(alpha, A, B, beta, C)) return;
  const int64_t m = C.rows, n = C.cols, k = A.cols;
  std::vector<double> at(static_cast<size_t>(m * k));
  for (int64_t p = 0; p < k; ++p)
    for (int64_t i = 0; i < m; ++i) at[static_cast<size_t>(p + i * k)] = alpha * A(i, p);
  for (int64_t j = 0; j < n; ++j) {
    const double* b = &B(0, j);
    for (int64_t i = 0; i < m; ++i) {
      const double* a = &at[static_cast<size_t>(i * k)];
      double sum = 0.0;
#pragma omp simd reduction(+ : sum)
      for (int64_t p = 0; p < k; ++p) sum += a[p] * b[p];
      C(i, j) = beta == 0.0 ? sum : sum + beta * C(i, j);
    }
  }
}

std::vector<double> best_of_alternating(const std::vector<std::function<void()>>& fns, int rounds) {
  std::vector<double> best(fns.size(), std::numeric_limits<double>::infinity());
  for (int r = 0; r < rounds; ++r)
    for (size_t f = 0; f < fns.size(); ++f) best[f] = std::min(best[f], time_host(fns[f]).median_s);
  return best;
}

double speedup(int64_t n, const char* reference_name, const Gemm& reference, const char* test_name,
               const Gemm& test) {
  Matrix A(n, n), B(n, n), C(n, n);
  A.fill_random(1);
  B.fill_random(2);
  C.fill_random(3);
  // beta = 0.5 keeps C bounded however often the product is repeated into it.
  const auto t = best_of_alternating({[&] { reference(1.0, A.cview(), B.cview(), 0.5, C.view()); },
                                      [&] { test(1.0, A.cview(), B.cview(), 0.5, C.view()); }});
  std::printf("n = %lld, %d thread(s): %s %.2f, %s %.2f GFLOP/s (%.2fx)\n", (long long)n, max_threads(),
              reference_name, gflops(n, n, n, t[0]), test_name, gflops(n, n, n, t[1]), t[0] / t[1]);
  // A speed counts only for a right product: one more call, checked (Freivalds,
  // O(n^2)), so that a kernel that skips work or reads out of bounds fails here too.
  Matrix C0 = C.clone();
  test(1.0, A.cview(), B.cview(), 0.5, C.view());
  const CheckResult r = freivalds_check(1.0, A.cview(), B.cview(), 0.5, C0.cview(), C.cview());
  if (!r.ok) {
    std::printf("%s's product is wrong (a randomized check of C failed), so its speed does not count: "
                "fix the correctness tests first\n",
                test_name);
    std::fflush(stdout);
    return 0.0;
  }
  std::fflush(stdout);
  return t[0] / t[1];
}

}  // namespace lab::speed
