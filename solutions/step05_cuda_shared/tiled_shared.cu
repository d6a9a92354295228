// step05 — TODO for the student: the shared-memory tiled kernel.
//
// What to do: write the body of tiled_kernel below so that
//     C <- alpha * A * B + beta * C
// for column-major device matrices, with each block of kTile x kTile threads
// computing one kTile x kTile tile of C, one element per thread, from tiles of
// A and B it first copies into shared memory. Read step05_cuda_shared/README.md
// first: it explains the index mapping (threadIdx.x -> row i) and the barriers.
// Test:   ./lab test step05
// Time:   build/student/bin/step05_cuda_shared --n 4096
#include "lab/cuda.hpp"
#include "lab/gemm_args.hpp"
#include "lab/todo.hpp"
#include "shared.hpp"

namespace {

using lab::step05::kTile;

// One block: threads (tx, ty) = (threadIdx.x, threadIdx.y), both in [0, kTile).
// Thread (tx, ty) owns C(i0 + tx, j0 + ty) where (i0, j0) = kTile * (blockIdx.x, blockIdx.y).
__global__ void tiled_kernel(double alpha, const double* __restrict__ a, int64_t lda,
                             const double* __restrict__ b, int64_t ldb, double beta, double* __restrict__ c,
                             int64_t ldc, int64_t m, int64_t n, int64_t k) {
  // LAB:SOLUTION-BEGIN  for each kTile-wide slice of k: load tiles of A and B, sync, multiply, sync
  // As[p][i] holds A(i0 + i, p0 + p), Bs[j][p] holds B(p0 + p, j0 + j). Each array
  // is filled by thread (tx, ty) from A(i0 + tx, p0 + ty) and B(p0 + tx, j0 + ty):
  // threadIdx.x runs down a column in both, so every warp loads 256 contiguous bytes.
  __shared__ double As[kTile][kTile];
  __shared__ double Bs[kTile][kTile];
  const int tx = threadIdx.x, ty = threadIdx.y;
  const int64_t i = blockIdx.x * int64_t(kTile) + tx;
  const int64_t j = blockIdx.y * int64_t(kTile) + ty;
  double sum = 0.0;
  for (int64_t p0 = 0; p0 < k; p0 += kTile) {
    // Outside the matrices the tiles are padded with zeros, which add nothing:
    // every thread still takes part in the loads and the barriers.
    As[ty][tx] = (i < m && p0 + ty < k) ? a[i + (p0 + ty) * lda] : 0.0;
    Bs[ty][tx] = (p0 + tx < k && j < n) ? b[(p0 + tx) + j * ldb] : 0.0;
    __syncthreads();  // the tiles are complete before anyone reads them
                      // A warp (fixed ty, tx = 0..31) reads As[p][0..31] (consecutive, no bank
                      // conflict) and Bs[ty][p] (one address: a broadcast).
#pragma unroll
    for (int p = 0; p < kTile; ++p) sum += As[p][tx] * Bs[ty][p];
    __syncthreads();  // everyone is done with the tiles before they are overwritten
  }
  if (i < m && j < n) {
    double& cij = c[i + j * ldc];
    cij = alpha * sum + (beta == 0.0 ? 0.0 : beta * cij);
  }
  // LAB:SKELETON
  // LAB:SOLUTION-END
}

}  // namespace

void lab::step05::dgemm(double alpha, ConstMatView A, ConstMatView B, double beta, MatView C,
                        cudaStream_t stream) {
  check_gemm_args(A, B, C);
  if (cuda::gemm_quick_return(alpha, A, B, beta, C, stream)) return;
  // LAB:SOLUTION-BEGIN
  // LAB:SKELETON
  LAB_TODO("step05 dgemm: write the body of tiled_kernel (see the handout), then delete this line");
  // LAB:SOLUTION-END
  // One block of kTile x kTile threads per tile of C; blockIdx.x walks the rows
  // of C, like threadIdx.x inside the block.
  const dim3 grid(unsigned((C.rows + kTile - 1) / kTile), unsigned((C.cols + kTile - 1) / kTile));
  const dim3 block(kTile, kTile);
  tiled_kernel<<<grid, block, 0, stream>>>(alpha, A.data, A.ld, B.data, B.ld, beta, C.data, C.ld, C.rows,
                                           C.cols, A.cols);
  LAB_CUDA_CHECK_LAUNCH();
}
