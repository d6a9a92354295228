// step05 — given, not a TODO: the two global-memory kernels the tiled one is
// measured against. Read them first: they differ only in which index of C
// threadIdx.x walks, and the handout shows what that costs.
#include "lab/cuda.hpp"
#include "lab/gemm_args.hpp"
#include "shared.hpp"

namespace {

constexpr int kSide = 16;  // 16 x 16 = 256 threads per block

// One thread per C(i, j), reading A and B straight from global memory. The
// two variants differ only in which index threadIdx.x walks:
//   kRowsOnX == false: threadIdx.x -> j. Neighbouring threads of a warp read
//     B(p, j), B(p, j+1), ..., which lie ldb doubles apart, and write C(i, j),
//     C(i, j+1), ... ldc apart: every thread of the warp touches its own cache line.
//   kRowsOnX == true: threadIdx.x -> i. A warp reads A(i..i+15, p), 128
//     consecutive bytes, all its threads read the same B(p, j) (a broadcast),
//     and C is written 128 bytes at a time.
template <bool kRowsOnX>
__global__ void global_kernel(double alpha, const double* __restrict__ a, int64_t lda,
                              const double* __restrict__ b, int64_t ldb, double beta, double* __restrict__ c,
                              int64_t ldc, int64_t m, int64_t n, int64_t k) {
  const int64_t x = blockIdx.x * int64_t(kSide) + threadIdx.x, y = blockIdx.y * int64_t(kSide) + threadIdx.y;
  const int64_t i = kRowsOnX ? x : y, j = kRowsOnX ? y : x;
  if (i >= m || j >= n) return;
  double sum = 0.0;
  for (int64_t p = 0; p < k; ++p) sum += a[i + p * lda] * b[p + j * ldb];
  double& cij = c[i + j * ldc];
  cij = alpha * sum + (beta == 0.0 ? 0.0 : beta * cij);
}

unsigned blocks(int64_t extent) { return unsigned((extent + kSide - 1) / kSide); }

template <bool kRowsOnX>
void launch(double alpha, lab::ConstMatView A, lab::ConstMatView B, double beta, lab::MatView C,
            cudaStream_t stream) {
  lab::check_gemm_args(A, B, C);
  if (lab::cuda::gemm_quick_return(alpha, A, B, beta, C, stream)) return;
  const dim3 grid = kRowsOnX ? dim3(blocks(C.rows), blocks(C.cols)) : dim3(blocks(C.cols), blocks(C.rows));
  global_kernel<kRowsOnX><<<grid, dim3(kSide, kSide), 0, stream>>>(alpha, A.data, A.ld, B.data, B.ld, beta,
                                                                   C.data, C.ld, C.rows, C.cols, A.cols);
  LAB_CUDA_CHECK_LAUNCH();
}

}  // namespace

void lab::step05::dgemm_naive(double alpha, ConstMatView A, ConstMatView B, double beta, MatView C,
                              cudaStream_t stream) {
  launch<false>(alpha, A, B, beta, C, stream);
}

void lab::step05::dgemm_naive_coalesced(double alpha, ConstMatView A, ConstMatView B, double beta, MatView C,
                                        cudaStream_t stream) {
  launch<true>(alpha, A, B, beta, C, stream);
}
