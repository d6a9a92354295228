// lab/gemm_args.hpp — the argument rules every dgemm in the lab keeps.
#pragma once

#include "lab/matrix.hpp"

namespace lab {

/// Throws std::invalid_argument, naming the argument, unless A is m x k, B is
/// k x n and C is m x n with non-negative sizes, ld >= max(1, rows) and a
/// non-null pointer wherever a matrix has elements. Reads no matrix element.
void check_gemm_args(ConstMatView A, ConstMatView B, ConstMatView C);

/// The early exits of BLAS: when m == 0 or n == 0 nothing is done; when
/// alpha == 0 or k == 0, C <- beta * C (beta == 0 writes zeros without
/// reading C) and A, B are not read. Returns true when the caller is done.
/// Host memory only; GPU steps have lab::cuda::gemm_quick_return.
bool gemm_quick_return(double alpha, ConstMatView A, ConstMatView B, double beta, MatView C);

/// C <- beta * C over the m x n region (beta == 0: C is overwritten, never read).
void scale_c(double beta, MatView C);

}  // namespace lab
