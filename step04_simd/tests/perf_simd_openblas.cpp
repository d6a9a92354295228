// step04 performance against OpenBLAS, timed in this process: one thread, and
// every thread OpenMP gives (OpenBLAS gets the same count).
#include <cblas.h>
#include <gtest/gtest.h>
#include <omp.h>

#include <algorithm>
#include <cmath>

#include "lab/speed_reference.hpp"
#include "simd.hpp"

namespace {

// Read before any test changes it: what OMP_NUM_THREADS (or the machine) gives.
const int kAllThreads = omp_get_max_threads();

// step04 / OpenBLAS in GFLOP/s at n x n x n with `threads` threads.
double ratio_to_openblas(int64_t n, int threads) {
  omp_set_num_threads(threads);
  openblas_set_num_threads(threads);
  const auto openblas = [](double alpha, lab::ConstMatView A, lab::ConstMatView B, double beta,
                           lab::MatView C) {
    cblas_dgemm(CblasColMajor, CblasNoTrans, CblasNoTrans, static_cast<blasint>(C.rows),
                static_cast<blasint>(C.cols), static_cast<blasint>(A.cols), alpha, A.data,
                static_cast<blasint>(A.ld), B.data, static_cast<blasint>(B.ld), beta, C.data,
                static_cast<blasint>(C.ld));
  };
  return lab::speed::speedup(n, "OpenBLAS", openblas, "step04", &lab::step04::dgemm);
}

}  // namespace

// The margins are for shared, noisy machines and for an OpenBLAS that runs a
// faster kernel than step04 picks on some CPU. One thread (n = 1024 and 2048): step04 ran
// 98-112 % of OpenBLAS on the lab's AVX-512 Xeon VM, 90-95 % on a Zen 4 VM, and
// 115 % of OpenBLAS's own kernel choice on a Zen 5 VM (172-184 % of the Haswell
// kernel that OPENBLAS_CORETYPE=Haswell pins there).
TEST(Step04VersusOpenBlas, OneThread) {
  const double ratio = ratio_to_openblas(1024, 1);
  EXPECT_GE(ratio, 0.6) << lab::speed::wrong_product_note(ratio) << "step04 should be close to OpenBLAS";
}

// n = 16, one thread: a call is a fraction of a microsecond for OpenBLAS, so
// any fixed cost per call in step04 (reading the machine, allocating, starting
// threads) shows as a ratio far below 1; it was 0.001 when every call read the
// cache sizes from sysfs.
TEST(Step04VersusOpenBlas, SmallProductOneThread) {
  const double ratio = ratio_to_openblas(16, 1);
  EXPECT_GE(ratio, 0.25) << lab::speed::wrong_product_note(ratio)
                         << "a 16 x 16 x 16 call of step04 costs far more than OpenBLAS's";
}

// Every thread: n grows with the thread count, so that each thread has about
// the work of n = 1536 on two threads (3.6 GFLOP: n = 1536 at 2 threads, 3072
// at 16, 4864 at 64, 6144 at 128); a smaller product on a big node would time
// the start of a team instead. The margin is for a shared machine.
TEST(Step04VersusOpenBlas, AllThreads) {
  const int threads = kAllThreads;
  const int64_t n = std::max<int64_t>(1536, std::llround(1536 * std::cbrt(threads / 2.0) / 256) * 256);
  const double ratio = ratio_to_openblas(n, threads);
  EXPECT_GE(ratio, 0.5) << lab::speed::wrong_product_note(ratio) << "step04 should be close to OpenBLAS with "
                        << threads << " threads (n = " << n << ")";
}
