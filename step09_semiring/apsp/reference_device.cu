// The min-plus product on the GPU, one thread per entry of C, tiles of A and B
// through shared memory: the check for the GPU engine, not a fast kernel.
#include <math_constants.h>

#include <stdexcept>

#include "lab/cuda.hpp"
#include "lab/gemm_args.hpp"
#include "reference.hpp"

namespace lab::step09::apsp {
namespace {

constexpr int kT = 16;

// a[q][i] = A(i0 + i, q0 + q), b[j][q] = B(q0 + q, j0 + j): loads run down
// columns (coalesced), and the inner loop reads a[q][*] across the warp and
// b[j][q] as one broadcast. Entries beyond the matrices are +inf, the min-plus zero.
__global__ void minplus_reference(const double* A, int64_t lda, const double* B, int64_t ldb, double* C,
                                  int64_t ldc, int64_t m, int64_t n, int64_t k, bool accumulate) {
  __shared__ double a[kT][kT + 1], b[kT][kT + 1];
  const int tx = threadIdx.x, ty = threadIdx.y;
  const int64_t i = int64_t(blockIdx.x) * kT + tx, j = int64_t(blockIdx.y) * kT + ty;
  double best = CUDART_INF;
  for (int64_t q0 = 0; q0 < k; q0 += kT) {
    a[ty][tx] = i < m && q0 + ty < k ? A[i + (q0 + ty) * lda] : CUDART_INF;
    b[ty][tx] = q0 + tx < k && j < n ? B[(q0 + tx) + j * ldb] : CUDART_INF;
    __syncthreads();
    for (int q = 0; q < kT; ++q) {
      const double via = a[q][tx] + b[ty][q];
      best = via < best ? via : best;
    }
    __syncthreads();
  }
  if (i < m && j < n) {
    double* c = C + i + j * ldc;
    *c = !accumulate || best < *c ? best : *c;
  }
}

}  // namespace

void reference_minplus_gemm_device(ConstMatView A, ConstMatView B, MatView C, bool accumulate,
                                   CUstream_st* stream) {
  check_gemm_args(A, B, C);
  if (C.rows == 0 || C.cols == 0) return;
  const int64_t gx = (C.rows + kT - 1) / kT, gy = (C.cols + kT - 1) / kT;
  if (gy > 65535)
    throw std::invalid_argument("C.cols (" + std::to_string(C.cols) + ") is too large for this kernel");
  minplus_reference<<<dim3(unsigned(gx), unsigned(gy)), dim3(kT, kT), 0, stream>>>(
      A.data, A.ld, B.data, B.ld, C.data, C.ld, C.rows, C.cols, A.cols, accumulate);
  LAB_CUDA_CHECK_LAUNCH();
}

}  // namespace lab::step09::apsp
