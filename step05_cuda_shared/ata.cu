// step05 — bonus TODO: C = alpha * A^T * A + beta * C from the upper triangle only.
//
// A^T A is symmetric, so the tiles below the diagonal are the transposes of
// those above it. Launch one block per tile on or above the diagonal (about half
// the blocks of the full product), and let each off-diagonal block also write its
// tile, transposed, to the mirror position. Read the handout's AtA section first.
// Test:   ./lab test step05
#include <cmath>
#include <stdexcept>
#include <string>

#include "lab/cuda.hpp"
#include "lab/todo.hpp"
#include "shared.hpp"

namespace {

using lab::step05::kTile;

void check_ata_args(lab::ConstMatView A, lab::ConstMatView C) {
  auto fail = [](const std::string& what) { throw std::invalid_argument(what); };
  if (A.rows < 0) fail("A.rows is negative (" + std::to_string(A.rows) + ")");
  if (A.cols < 0) fail("A.cols is negative (" + std::to_string(A.cols) + ")");
  if (A.ld < (A.rows > 1 ? A.rows : 1)) fail("A.ld (" + std::to_string(A.ld) + ") must be >= max(1, A.rows)");
  if (C.rows != A.cols || C.cols != A.cols)
    fail("C must be n x n with n = A.cols = " + std::to_string(A.cols) + " (C is " + std::to_string(C.rows) +
         " x " + std::to_string(C.cols) + ")");
  if (C.ld < (C.rows > 1 ? C.rows : 1)) fail("C.ld (" + std::to_string(C.ld) + ") must be >= max(1, C.rows)");
  if (A.rows > 0 && A.cols > 0 && A.data == nullptr) fail("A.data is null");
  if (C.rows > 0 && C.data == nullptr) fail("C.data is null");
}

// TODO: a device function that maps block number t to its tile (bi, bj), bi <= bj

__global__ void ata_kernel(double alpha, const double* __restrict__ a, int64_t lda, double beta,
                           double* __restrict__ c, int64_t ldc, int64_t n, int64_t k) {
  // TODO: find the tile (bi <= bj), compute it like tiled_kernel, write it and its mirror
}

}  // namespace

void lab::step05::ata(double alpha, ConstMatView A, double beta, MatView C, cudaStream_t stream) {
  check_ata_args(A, C);
  const int64_t n = A.cols, k = A.rows;
  if (n == 0) return;
  if (alpha == 0.0 || k == 0) {
    cuda::scale_c(beta, C, stream);
    return;
  }
  LAB_TODO("step05 ata: write the body of ata_kernel (see the handout), then delete this line");
  // One block of kTile x kTile threads per tile on or above the diagonal.
  const int64_t tiles = (n + kTile - 1) / kTile;
  const dim3 block(kTile, kTile);
  ata_kernel<<<unsigned(tiles * (tiles + 1) / 2), block, 0, stream>>>(alpha, A.data, A.ld, beta, C.data, C.ld,
                                                                      n, k);
  LAB_CUDA_CHECK_LAUNCH();
}
