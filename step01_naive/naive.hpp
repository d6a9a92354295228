// step01_naive — the triple loop every later step is measured against.
#pragma once

#include "lab/matrix.hpp"
#include "lab/registry.hpp"

namespace lab::step01 {
inline namespace LAB_IMPL_NS {

/// C <- alpha * A * B + beta * C (column-major, BLAS "NN"), three nested loops.
/// The loop order is j, p, i ("jki"): the innermost loop walks down a column of
/// A and of C, which is contiguous in column-major storage.
void dgemm(double alpha, ConstMatView A, ConstMatView B, double beta, MatView C);

/// The textbook i, j, p order ("ijk"): the inner loop strides through A by ld.
/// Kept so the benchmark can show what the loop order costs.
void dgemm_ijk(double alpha, ConstMatView A, ConstMatView B, double beta, MatView C);

}  // namespace LAB_IMPL_NS
}  // namespace lab::step01
