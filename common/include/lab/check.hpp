// lab/check.hpp — the reference product and the checks every step is held to.
//
// The error bound. For C = alpha*A*B + beta*C0 computed in any order of
// floating-point additions, the standard inner-product error analysis (Higham,
// "Accuracy and Stability of Numerical Algorithms", section 3.1) gives
//     |fl(C) - C| <= gamma_{k+2} * (|alpha| (|A||B|) + |beta| |C0|),
//     gamma_n = n u / (1 - n u),  u = 2^-53,
// elementwise: k products and k-1 additions for the dot product, one
// multiplication by alpha, one by beta and one final addition. Both the
// result under test and the reference carry such an error, so their
// difference is bounded by twice that; we use
//     |C - C_ref| <= c * (k + 2) * eps * (|alpha| (|A||B|)_ij + |beta| |C0_ij|)
// with eps = 2^-52 = 2u and c = kBoundConstant (= 2, leaving room for the
// 1/(1 - n u) factor and for FMA-contracted kernels). The bound is computed
// from |A| and |B| themselves, so it is tight even when entries cancel.
// A NaN or Inf in C where the reference is finite always fails.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "lab/matrix.hpp"

namespace lab {

constexpr double kBoundConstant = 2.0;

/// Plain triple-loop product, OpenMP-parallel over columns of C; obeys every
/// rule of the kernel contract (beta == 0 never reads C, alpha == 0 never reads A, B).
void reference_gemm(double alpha, ConstMatView A, ConstMatView B, double beta, MatView C);

struct CheckResult {
  bool ok = true;
  int64_t checked = 0;      ///< elements compared
  int64_t mismatches = 0;   ///< elements outside the bound (or NaN where a number was due)
  double worst_ratio = 0;   ///< max |C - C_ref| / bound over all elements (<= 1 passes)
  std::string report;       ///< empty when ok; else first mismatches and a block map
};

/// Elementwise check of C (computed from C0) against C_ref with the bound above.
/// A, B, C0 are the inputs the product was computed from.
CheckResult check_gemm(double alpha, ConstMatView A, ConstMatView B, double beta, ConstMatView C0,
                       ConstMatView C, ConstMatView C_ref);

/// Runs reference_gemm on a copy of C0 and checks C against it.
CheckResult check_against_reference(double alpha, ConstMatView A, ConstMatView B, double beta,
                                    ConstMatView C0, ConstMatView C);

/// Randomized check for sizes too big for the reference (Freivalds): for
/// `trials` random vectors x, compares C x with alpha A (B x) + beta C0 x under
/// the same kind of bound (computed with |A| (|B| |x|)). O((m+n) k) work per trial.
CheckResult freivalds_check(double alpha, ConstMatView A, ConstMatView B, double beta, ConstMatView C0,
                            ConstMatView C, int trials = 3, uint64_t seed = 12345);

/// The comparison step of freivalds_check, for callers that computed the vectors
/// themselves (a check of a matrix distributed over MPI ranks). Row i of trial t
/// sits at [t * m + i] in each array: C x and |C| |x|, A (B x) and |A| (|B| |x|),
/// C0 x and |C0| |x| (the last two are not read when beta == 0).
CheckResult freivalds_verdict(int64_t m, int64_t n, int64_t k, int trials, double alpha, double beta,
                              const double* cx, const double* acx, const double* abx, const double* aabx,
                              const double* c0x, const double* ac0x);

/// A coarse picture of which parts of an m x n result are wrong, at most 16 x 16
/// characters: `bad` holds one flag a element, column-major (0 right, 'X' wrong,
/// 'N' NaN or Inf where a number was due).
std::string block_map(int64_t m, int64_t n, const std::vector<char>& bad);

/// True when every element of `full` outside the block of shape m x n at
/// (i0, j0) still has exactly the bits of `guard` (so a NaN guard works).
/// `where` receives a description of the first changed element.
bool guards_intact(const Matrix& full, int64_t i0, int64_t j0, int64_t m, int64_t n, double guard,
                   std::string* where = nullptr);

}  // namespace lab
