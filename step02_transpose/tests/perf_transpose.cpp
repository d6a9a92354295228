// step02 performance: the student's transposed dot products against the lab's
// own (lab::speed::transposed_dot, the harness's fixed copy of what this step
// teaches, compiled with the same flags), one thread. Against the same loop
// the ratio does not depend on the CPU: what it shows is whether the dot
// product vectorized.
#include <gtest/gtest.h>
#include <omp.h>

#include "lab/speed_reference.hpp"
#include "transpose.hpp"

TEST(Step02Speed, KeepsPaceWithTheVectorizedDotProduct) {
  omp_set_num_threads(1);
  const double speedup =
      lab::speed::speedup(512, "transposed dot", &lab::speed::transposed_dot, "step02", &lab::step02::dgemm);
  // Measured, best of 3 at n = 512, on a 2-core AMD EPYC VM: the solution
  // 0.99-1.00x (19.4 GFLOP/s); the same loop without `#pragma omp simd
  // reduction`, with pointers or as At(p, i) * B(p, j), 0.23x (4.4 GFLOP/s:
  // scalar, each FMA waits for the last). A vector of 4 or 8 lanes makes that
  // gap on any x86-64; the i, j, p loop step02 repairs ran 1.0 GFLOP/s there.
  EXPECT_GE(speedup, 0.5) << lab::speed::wrong_product_note(speedup) << "step02 should run at least half as fast as the lab's own transposed dot "
                             "product: is the dot product vectorized (#pragma omp simd reduction(+ : sum), "
                             "the two columns taken as pointers)?";
}
