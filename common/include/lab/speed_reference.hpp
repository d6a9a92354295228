// lab/speed_reference.hpp — fixed loops for the speed tests to measure against.
//
// A speed test of step NN compares the student's code with one of these loops,
// never with the student's own earlier step: a slower step02 must not make step03
// easier to pass, and a step02 that happens to vectorize well on one CPU must not
// make it harder. They are given code, compiled once in the harness with the
// lab's flags, and always run on the calling thread alone.
#pragma once

#include <functional>
#include <vector>

#include "lab/matrix.hpp"

namespace lab::speed {

/// The textbook i, j, p triple loop (dot products along rows of A, stride ld):
/// the loop step02 repairs, as step01's naive_ijk variant writes it.
void naive_ijk(double alpha, ConstMatView A, ConstMatView B, double beta, MatView C);

/// alpha * A transposed once, then one contiguous, vectorized dot product per
/// element of C: what step02 teaches, on one thread.
void transposed_dot(double alpha, ConstMatView A, ConstMatView B, double beta, MatView C);

/// Times each function with lab::time_host, round after round, alternating, and
/// returns each one's best median over the rounds. A burst of load on a shared
/// machine then hits every side alike, and the best round shows each side's own
/// speed.
std::vector<double> best_of_alternating(const std::vector<std::function<void()>>& fns, int rounds = 3);

using Gemm = std::function<void(double alpha, ConstMatView A, ConstMatView B, double beta, MatView C)>;

/// How many times faster `test` runs than `reference` on the same random n x n
/// matrices (best_of_alternating), printing both rates on one line, e.g.
/// "n = 1024, 1 thread: transposed dot 18.65, step03 35.55 GFLOP/s (1.91x)".
/// Runs on the threads OpenMP gives (speed tests set one).
/// The product it timed is checked once more (Freivalds): where it is wrong,
/// the line says so and the speedup is 0.
double speedup(int64_t n, const char* reference_name, const Gemm& reference, const char* test_name,
               const Gemm& test);

/// For a speed test's message: what a speedup of 0 means (a wrong product), else "".
inline const char* wrong_product_note(double speedup) {
  return speedup == 0.0 ? "the timed product is wrong (a randomized check of C failed), so its speed does not "
                          "count: fix the correctness tests first. "
                        : "";
}

}  // namespace lab::speed
