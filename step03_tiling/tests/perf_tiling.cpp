// step03 performance: cache tiles and 2 x 2 register reuse against step02's
// plain dot products, one thread, timed in this process.
#include <gtest/gtest.h>
#include <omp.h>

#include <cstdio>

#include "lab/matrix.hpp"
#include "lab/timer.hpp"
#include "tiling.hpp"
#include "transpose.hpp"

TEST(Step03Speed, FasterThanStep02) {
  omp_set_num_threads(1);
  const int64_t n = 1024;  // the ladder's size: A is 8 MiB, far beyond L2
  lab::Matrix A(n, n), B(n, n), C(n, n);
  A.fill_random(1);
  B.fill_random(2);
  C.fill_random(3);
  const double t_02 =
      lab::time_host([&] { lab::step02::dgemm(1.0, A.cview(), B.cview(), 0.5, C.view()); }).median_s;
  const double t_03 =
      lab::time_host([&] { lab::step03::dgemm(1.0, A.cview(), B.cview(), 0.5, C.view()); }).median_s;
  std::printf("n = %lld, 1 thread: step02 %.2f, step03 %.2f GFLOP/s\n", (long long)n,
              lab::gflops(n, n, n, t_02), lab::gflops(n, n, n, t_03));
  // About 3x on the lab's machines.
  EXPECT_GE(t_02 / t_03, 1.5) << "step03 should be well ahead of step02";
}
