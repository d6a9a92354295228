// step04 performance: the packed SIMD kernel against step01's triple loop and
// step03's tiled dot products, one thread, timed in this process.
#include <gtest/gtest.h>
#include <omp.h>

#include <cstdio>

#include "lab/matrix.hpp"
#include "lab/timer.hpp"
#include "naive.hpp"
#include "simd.hpp"
#include "tiling.hpp"

TEST(Step04Speed, FarAheadOfStep01AndStep03) {
  omp_set_num_threads(1);
  const int64_t n = 1024;
  lab::Matrix A(n, n), B(n, n), C(n, n);
  A.fill_random(1);
  B.fill_random(2);
  C.fill_random(3);
  const double t_01 =
      lab::time_host([&] { lab::step01::dgemm(1.0, A.cview(), B.cview(), 0.5, C.view()); }).median_s;
  const double t_03 =
      lab::time_host([&] { lab::step03::dgemm(1.0, A.cview(), B.cview(), 0.5, C.view()); }).median_s;
  const double t_04 =
      lab::time_host([&] { lab::step04::dgemm(1.0, A.cview(), B.cview(), 0.5, C.view()); }).median_s;
  std::printf("n = %lld, 1 thread: step01 %.2f, step03 %.2f, step04 %.2f GFLOP/s\n", (long long)n,
              lab::gflops(n, n, n, t_01), lab::gflops(n, n, n, t_03), lab::gflops(n, n, n, t_04));
  // About 8x and 3x on the lab's machines.
  EXPECT_GE(t_01 / t_04, 5.0) << "step04 should be far ahead of step01";
  EXPECT_GE(t_03 / t_04, 1.5) << "step04 should be well ahead of step03";
}
