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
  // TODO: for each kTile-wide slice of k: load tiles of A and B, sync, multiply, sync
}

}  // namespace

void lab::step05::dgemm(double alpha, ConstMatView A, ConstMatView B, double beta, MatView C,
                        cudaStream_t stream) {
  check_gemm_args(A, B, C);
  if (cuda::gemm_quick_return(alpha, A, B, beta, C, stream)) return;
  LAB_TODO("step05 dgemm: write the body of tiled_kernel (see the handout), then delete this line");
  // One block of kTile x kTile threads per tile of C; blockIdx.x walks the rows
  // of C, like threadIdx.x inside the block.
  const dim3 grid(unsigned((C.rows + kTile - 1) / kTile), unsigned((C.cols + kTile - 1) / kTile));
  const dim3 block(kTile, kTile);
  tiled_kernel<<<grid, block, 0, stream>>>(alpha, A.data, A.ld, B.data, B.ld, beta, C.data, C.ld, C.rows,
                                           C.cols, A.cols);
  LAB_CUDA_CHECK_LAUNCH();
}
