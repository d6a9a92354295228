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

// LAB:SOLUTION-BEGIN  a device function that maps block number t to its tile (bi, bj), bi <= bj
// Block t covers tile (bi, bj) with bi <= bj, numbered column by column:
// t = bj (bj + 1) / 2 + bi.
__device__ void upper_tile(int64_t t, int64_t* bi, int64_t* bj) {
  int64_t j = int64_t((sqrt(8.0 * double(t) + 1.0) - 1.0) / 2.0);
  while (j * (j + 1) / 2 > t) --j;  // the square root may round either way
  while ((j + 1) * (j + 2) / 2 <= t) ++j;
  *bj = j;
  *bi = t - j * (j + 1) / 2;
}
// LAB:SKELETON
// LAB:SOLUTION-END

__global__ void ata_kernel(double alpha, const double* __restrict__ a, int64_t lda, double beta,
                           double* __restrict__ c, int64_t ldc, int64_t n, int64_t k) {
  // LAB:SOLUTION-BEGIN  find the tile (bi <= bj), compute it like tiled_kernel, write it and its mirror
  int64_t bi, bj;
  upper_tile(blockIdx.x, &bi, &bj);
  const int64_t i0 = bi * kTile, j0 = bj * kTile;
  // Ai[r][p] = A(p0 + p, i0 + r): column i0 + r of A is row i0 + r of A^T. The
  // + 1 pads each row so that Ai[tx][p] (a warp reading down a column of the
  // array) falls in 32 different banks.
  __shared__ double Ai[kTile][kTile + 1];
  __shared__ double Aj[kTile][kTile + 1];
  const int tx = threadIdx.x, ty = threadIdx.y;
  double sum = 0.0;
  for (int64_t p0 = 0; p0 < k; p0 += kTile) {
    // threadIdx.x runs down a column of A (along p): coalesced.
    const bool in_k = p0 + tx < k;
    Ai[ty][tx] = (in_k && i0 + ty < n) ? a[(p0 + tx) + (i0 + ty) * lda] : 0.0;
    Aj[ty][tx] = (in_k && j0 + ty < n) ? a[(p0 + tx) + (j0 + ty) * lda] : 0.0;
    __syncthreads();
#pragma unroll
    for (int p = 0; p < kTile; ++p) sum += Ai[tx][p] * Aj[ty][p];
    __syncthreads();
  }
  // Thread (tx, ty) holds S(i0 + tx, j0 + ty) of S = A^T A.
  const int64_t i = i0 + tx, j = j0 + ty;
  if (i < n && j < n) {
    double& cij = c[i + j * ldc];
    cij = alpha * sum + (beta == 0.0 ? 0.0 : beta * cij);
  }
  if (bi == bj) return;  // a diagonal tile is complete on its own
  // The mirror C(j, i) <- alpha S(i, j) + beta C(j, i). Written straight from
  // registers, a warp would store 32 doubles ldc apart; going through shared
  // memory lets threadIdx.x run down a column of C again.
  Ai[ty][tx] = sum;  // safe: the loop ended with a barrier after the last read of Ai
  __syncthreads();
  const int64_t mi = j0 + tx, mj = i0 + ty;  // the mirror element this thread writes
  if (mi < n && mj < n) {
    double& cm = c[mi + mj * ldc];
    cm = alpha * Ai[tx][ty] + (beta == 0.0 ? 0.0 : beta * cm);
  }
  // LAB:SKELETON
  // LAB:SOLUTION-END
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
  // LAB:SOLUTION-BEGIN
  // LAB:SKELETON
  LAB_TODO("step05 ata: write the body of ata_kernel (see the handout), then delete this line");
  // LAB:SOLUTION-END
  // One block of kTile x kTile threads per tile on or above the diagonal.
  const int64_t tiles = (n + kTile - 1) / kTile;
  const dim3 block(kTile, kTile);
  ata_kernel<<<unsigned(tiles * (tiles + 1) / 2), block, 0, stream>>>(alpha, A.data, A.ld, beta, C.data, C.ld,
                                                                      n, k);
  LAB_CUDA_CHECK_LAUNCH();
}
