// step02_transpose — every C(i,j) as a contiguous dot product.
#pragma once

#include "lab/matrix.hpp"
#include "lab/registry.hpp"

namespace lab::step02 {
inline namespace LAB_IMPL_NS {

/// At <- alpha * A^T. At must be A.cols x A.rows (column i of At is row i of A,
/// scaled), so that a row of A, strided by ld in memory, becomes contiguous.
void transpose_scaled(double alpha, ConstMatView A, MatView At);

/// C <- alpha * A * B + beta * C (column-major, BLAS "NN"). Transposes alpha * A
/// into a buffer, then computes each C(i,j) as the dot product of column i of
/// that buffer with column j of B: both walk memory with stride 1. OpenMP threads
/// split the columns of C.
void dgemm(double alpha, ConstMatView A, ConstMatView B, double beta, MatView C);

}  // namespace LAB_IMPL_NS
}  // namespace lab::step02
