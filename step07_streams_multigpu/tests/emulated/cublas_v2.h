// cublasDgemm_64 and cublasDgeam_64 for the emulation (see cuda_runtime_api.h here): a plain
// loop on the host, checking that A, B and C lie inside device allocations
// and, as cuBLAS does, not reading C when beta == 0.
#pragma once

#include <cstdint>

#include "cuda_runtime_api.h"

enum cublasStatus_t { CUBLAS_STATUS_SUCCESS = 0 };
enum cublasOperation_t { CUBLAS_OP_N = 0 };
struct cublasContext {};
typedef cublasContext* cublasHandle_t;

inline cublasStatus_t cublasCreate(cublasHandle_t* h) {
  *h = new cublasContext;
  return CUBLAS_STATUS_SUCCESS;
}
inline cublasStatus_t cublasDestroy(cublasHandle_t h) {
  delete h;
  return CUBLAS_STATUS_SUCCESS;
}
inline cublasStatus_t cublasSetStream(cublasHandle_t, cudaStream_t) { return CUBLAS_STATUS_SUCCESS; }
inline cublasStatus_t cublasDgemm_64(cublasHandle_t, cublasOperation_t, cublasOperation_t, int64_t m,
                                     int64_t n, int64_t k, const double* alpha, const double* A, int64_t lda,
                                     const double* B, int64_t ldb, const double* beta, double* C,
                                     int64_t ldc) {
  if (m == 0 || n == 0) return CUBLAS_STATUS_SUCCESS;
  if (k > 0) {
    lab_emulated::require_device(A, sizeof(double) * size_t(lda * (k - 1) + m));
    lab_emulated::require_device(B, sizeof(double) * size_t(ldb * (n - 1) + k));
  }
  lab_emulated::require_device(C, sizeof(double) * size_t(ldc * (n - 1) + m));
  for (int64_t j = 0; j < n; ++j)
    for (int64_t i = 0; i < m; ++i) {
      double s = 0;
      for (int64_t p = 0; p < k; ++p) s += A[i + p * lda] * B[p + j * ldb];
      C[i + j * ldc] = *alpha * s + (*beta == 0 ? 0.0 : *beta * C[i + j * ldc]);
    }
  return CUBLAS_STATUS_SUCCESS;
}

// C <- alpha A + beta B (no transposes); C may be A (same ld), as cuBLAS allows.
inline cublasStatus_t cublasDgeam_64(cublasHandle_t, cublasOperation_t, cublasOperation_t, int64_t m,
                                     int64_t n, const double* alpha, const double* A, int64_t lda,
                                     const double* beta, const double* B, int64_t ldb, double* C,
                                     int64_t ldc) {
  if (m == 0 || n == 0) return CUBLAS_STATUS_SUCCESS;
  lab_emulated::require_device(A, sizeof(double) * size_t(lda * (n - 1) + m));
  lab_emulated::require_device(B, sizeof(double) * size_t(ldb * (n - 1) + m));
  lab_emulated::require_device(C, sizeof(double) * size_t(ldc * (n - 1) + m));
  for (int64_t j = 0; j < n; ++j)
    for (int64_t i = 0; i < m; ++i) C[i + j * ldc] = *alpha * A[i + j * lda] + *beta * B[i + j * ldb];
  return CUBLAS_STATUS_SUCCESS;
}
