// generate.hpp — matrices born on their ranks, and checked without gathering them.
//
// Element (i, j) of a generated matrix is a function of the seed and its global
// index only (a counter-based hash, the same on the host and the GPU), so every
// rank can fill its own blocks, in any layout, and the matrix made whole is always
// the same: a test can build it on one rank and compare. The distributed check is
// Freivalds' (lab/check.hpp) with every rank contributing the rows of its blocks:
// no rank ever holds more than its blocks and a few vectors of length m, n and k.
#pragma once

#include <mpi.h>

#include <cstdint>
#include <string>
#include <vector>

#include "lab/check.hpp"
#include "lab/matrix.hpp"
#include "lab/random.hpp"

#ifdef __CUDACC__
#define LAB_STEP08_HD __host__ __device__
#else
#define LAB_STEP08_HD
#endif

namespace lab::step08 {

/// splitmix64's finalizer (the harness's, lab/random.hpp).
using lab::mix64;

/// Element (i, j) of the matrix with this seed: uniform in [-1, 1), 53 random
/// bits; the same element as Matrix::fill_random(seed) makes.
LAB_STEP08_HD inline double generated(uint64_t seed, int64_t i, int64_t j) {
  return 2.0 * lab::random_unit(seed, i, j) - 1.0;  // [0, 2) - 1, exact
}

/// The seeds of one problem: A, B, the C the multiply starts from, and the
/// check's random vectors.
struct Seeds {
  uint64_t a = 1, b = 2, c = 3, x = 4;
  static Seeds from(uint64_t seed) { return {mix64(seed + 1), mix64(seed + 2), mix64(seed + 3), mix64(seed + 4)}; }
};

/// A rank's part of a distributed matrix: a local column-major array and the
/// global index of each of its rows and columns (a 3D block: consecutive
/// indices; a block-cyclic ScaLAPACK array: tiles of nb). An empty piece holds nothing.
struct Piece {
  ConstMatView local{nullptr, 0, 0, 1};
  std::vector<int64_t> row_of, col_of;

  /// A block of consecutive rows and columns starting at (row0, col0).
  static Piece block(ConstMatView v, int64_t row0, int64_t col0);
};

/// Fills the rows x cols region of `blk` with generated(seed, row_of[i], col_of[j]),
/// OpenMP threads over columns.
void fill_piece(MatView blk, uint64_t seed, const std::vector<int64_t>& row_of, const std::vector<int64_t>& col_of);
/// The same for a block of consecutive rows and columns starting at (row0, col0).
void fill_block(MatView blk, uint64_t seed, int64_t row0, int64_t col0);

/// Freivalds' check of C = alpha A B + beta C0 for an m x k times k x n product
/// distributed over the ranks of `comm` in any layout (each global element in
/// exactly one rank's piece), C0 being the matrix generated with seeds.c.
/// Collective; every rank gets the same result (rank 0's verdict and report).
/// OpenMP threads over the local rows.
CheckResult check_distributed(MPI_Comm comm, int64_t m, int64_t n, int64_t k, double alpha, double beta,
                              const Seeds& seeds, const Piece& A, const Piece& B, const Piece& C, int trials = 3);

}  // namespace lab::step08
