// step02 performance: the transposed dot product against the textbook i, j, p
// loop it repairs (the harness's fixed copy, lab::speed::naive_ijk), one thread.
#include <gtest/gtest.h>
#include <omp.h>

#include "lab/speed_reference.hpp"
#include "transpose.hpp"

TEST(Step02Speed, BeatsTheStridedDotProduct) {
  omp_set_num_threads(1);
  const double speedup =
      lab::speed::speedup(512, "i-j-p loop", &lab::speed::naive_ijk, "step02", &lab::step02::dgemm);
  // Measured, best of 3 at n = 512: 18.5-19.5x on a 2-core AMD EPYC (Zen 5)
  // VM; 19-23x on the lab's AVX-512 Xeon VM and about 25x on a Zen 4 VM (step02's
  // own figures there, at n = 1024). The strided loop misses cache on every
  // element of A on any CPU, so 3x leaves a wide margin for any x86-64.
  EXPECT_GE(speedup, 3.0) << "step02 should be well ahead of the strided i, j, p loop";
}
