// step04 performance against OpenBLAS, timed in this process: one thread, and
// every thread OpenMP gives (OpenBLAS gets the same count).
#include <cblas.h>
#include <gtest/gtest.h>
#include <omp.h>

#include <algorithm>
#include <cstdio>

#include "lab/matrix.hpp"
#include "lab/timer.hpp"
#include "simd.hpp"

namespace {

// Read before any test changes it: what OMP_NUM_THREADS (or the machine) gives.
const int kAllThreads = omp_get_max_threads();

// step04 / OpenBLAS in GFLOP/s at n x n x n with `threads` threads.
double ratio_to_openblas(int64_t n, int threads) {
  omp_set_num_threads(threads);
  openblas_set_num_threads(threads);
  lab::Matrix A(n, n), B(n, n), C(n, n);
  A.fill_random(1);
  B.fill_random(2);
  C.fill_random(3);
  const auto blas = [&] {
    cblas_dgemm(CblasColMajor, CblasNoTrans, CblasNoTrans, static_cast<blasint>(n), static_cast<blasint>(n),
                static_cast<blasint>(n), 1.0, A.data(), static_cast<blasint>(n), B.data(),
                static_cast<blasint>(n), 0.5, C.data(), static_cast<blasint>(n));
  };
  const auto ours = [&] { lab::step04::dgemm(1.0, A.cview(), B.cview(), 0.5, C.view()); };
  // Alternate the two, so that a burst of load on a shared machine hits both.
  double t_blas = 1e30, t_ours = 1e30;
  for (int round = 0; round < 3; ++round) {
    t_blas = std::min(t_blas, lab::time_host(blas).median_s);
    t_ours = std::min(t_ours, lab::time_host(ours).median_s);
  }
  std::printf("n = %lld, %d thread(s): step04 %.2f, OpenBLAS %.2f GFLOP/s (%.0f %%)\n", (long long)n, threads,
              lab::gflops(n, n, n, t_ours), lab::gflops(n, n, n, t_blas), 100.0 * t_blas / t_ours);
  return t_blas / t_ours;
}

}  // namespace

TEST(Step04VersusOpenBlas, OneThread) {
  // About 90-100 % on the lab's machines; the margin is for noisy shared ones.
  EXPECT_GE(ratio_to_openblas(1024, 1), 0.6) << "step04 should be close to OpenBLAS";
}

TEST(Step04VersusOpenBlas, AllThreads) {
  const int threads = kAllThreads;
  EXPECT_GE(ratio_to_openblas(1536, threads), 0.5)
      << "step04 should be close to OpenBLAS with " << threads << " threads";
}
