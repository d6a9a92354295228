// The BLAS early exits on the device: C <- beta * C, never reading C when beta == 0.
#include <algorithm>

#include "lab/cuda.hpp"

namespace lab::cuda {
namespace {

// threadIdx.x runs down a column (contiguous in column-major), so a warp
// touches 32 consecutive doubles; grid-stride loops cover any m and n.
__global__ void scale_kernel(double beta, double* __restrict__ c, int64_t m, int64_t n, int64_t ldc) {
  for (int64_t j = blockIdx.y; j < n; j += gridDim.y) {
    double* col = c + j * ldc;
    for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < m;
         i += int64_t(gridDim.x) * blockDim.x)
      col[i] = beta == 0.0 ? 0.0 : beta * col[i];
  }
}

}  // namespace

void scale_c(double beta, MatView C, cudaStream_t stream) {
  if (C.rows == 0 || C.cols == 0 || beta == 1.0) return;
  constexpr int kThreads = 256;
  const dim3 grid(unsigned(std::min<int64_t>((C.rows + kThreads - 1) / kThreads, 64)),
                  unsigned(std::min<int64_t>(C.cols, 65535)));
  scale_kernel<<<grid, kThreads, 0, stream>>>(beta, C.data, C.rows, C.cols, C.ld);
  LAB_CUDA_CHECK_LAUNCH();
}

bool gemm_quick_return(double alpha, ConstMatView A, ConstMatView, double beta, MatView C,
                       cudaStream_t stream) {
  if (C.rows == 0 || C.cols == 0) return true;
  if (alpha == 0.0 || A.cols == 0) {
    scale_c(beta, C, stream);
    return true;
  }
  return false;
}

}  // namespace lab::cuda
