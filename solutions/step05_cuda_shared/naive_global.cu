// step05 — given, not a TODO: the two global-memory kernels the tiled one is
// measured against. Read them first: they differ only in which index of C
// threadIdx.x walks, and the handout shows what that costs.
#include "lab/cuda.hpp"
#include "lab/gemm_args.hpp"
#include "shared.hpp"

namespace {

constexpr int kSide = 16;  // 16 x 16 = 256 threads per block

// threadIdx.x -> j. Neighbouring threads of a warp read B(p, j), B(p, j+1), ...,
// which lie ldb doubles apart, and write C(i, j), C(i, j+1), ... ldc apart:
// every thread of the warp touches its own cache line.
__global__ void naive_kernel(double alpha, const double* __restrict__ a, int64_t lda,
                             const double* __restrict__ b, int64_t ldb, double beta, double* __restrict__ c,
                             int64_t ldc, int64_t m, int64_t n, int64_t k) {
  const int64_t j = blockIdx.x * int64_t(kSide) + threadIdx.x;
  const int64_t i = blockIdx.y * int64_t(kSide) + threadIdx.y;
  if (i >= m || j >= n) return;
  double sum = 0.0;
  for (int64_t p = 0; p < k; ++p) sum += a[i + p * lda] * b[p + j * ldb];
  double& cij = c[i + j * ldc];
  cij = alpha * sum + (beta == 0.0 ? 0.0 : beta * cij);
}

// threadIdx.x -> i. A warp reads A(i..i+31, p): 256 consecutive bytes, and all
// its threads read the same B(p, j) (one broadcast); C is written 256 bytes at a time.
__global__ void coalesced_kernel(double alpha, const double* __restrict__ a, int64_t lda,
                                 const double* __restrict__ b, int64_t ldb, double beta,
                                 double* __restrict__ c, int64_t ldc, int64_t m, int64_t n, int64_t k) {
  const int64_t i = blockIdx.x * int64_t(kSide) + threadIdx.x;
  const int64_t j = blockIdx.y * int64_t(kSide) + threadIdx.y;
  if (i >= m || j >= n) return;
  double sum = 0.0;
  for (int64_t p = 0; p < k; ++p) sum += a[i + p * lda] * b[p + j * ldb];
  double& cij = c[i + j * ldc];
  cij = alpha * sum + (beta == 0.0 ? 0.0 : beta * cij);
}

unsigned blocks(int64_t extent) { return unsigned((extent + kSide - 1) / kSide); }

}  // namespace

void lab::step05::dgemm_naive(double alpha, ConstMatView A, ConstMatView B, double beta, MatView C,
                              cudaStream_t stream) {
  check_gemm_args(A, B, C);
  if (cuda::gemm_quick_return(alpha, A, B, beta, C, stream)) return;
  const dim3 grid(blocks(C.cols), blocks(C.rows)), block(kSide, kSide);
  naive_kernel<<<grid, block, 0, stream>>>(alpha, A.data, A.ld, B.data, B.ld, beta, C.data, C.ld, C.rows,
                                           C.cols, A.cols);
  LAB_CUDA_CHECK_LAUNCH();
}

void lab::step05::dgemm_naive_coalesced(double alpha, ConstMatView A, ConstMatView B, double beta, MatView C,
                                        cudaStream_t stream) {
  check_gemm_args(A, B, C);
  if (cuda::gemm_quick_return(alpha, A, B, beta, C, stream)) return;
  const dim3 grid(blocks(C.rows), blocks(C.cols)), block(kSide, kSide);
  coalesced_kernel<<<grid, block, 0, stream>>>(alpha, A.data, A.ld, B.data, B.ld, beta, C.data, C.ld, C.rows,
                                               C.cols, A.cols);
  LAB_CUDA_CHECK_LAUNCH();
}
