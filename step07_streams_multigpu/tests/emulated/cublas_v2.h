// cublasDgemm_64 and cublasDgeam_64 for the emulation (see cuda_runtime_api.h here): a plain
// loop on the host, queued on the handle's stream and run when forced,
// checking that A, B and C lie inside device allocations, that no other
// stream's work on them is left unordered (the race check), and, as cuBLAS
// does, not reading C when beta == 0.
#pragma once

#include <cstdint>

#include "cuda_runtime_api.h"

enum cublasStatus_t { CUBLAS_STATUS_SUCCESS = 0, CUBLAS_STATUS_EXECUTION_FAILED = 13 };
enum cublasOperation_t { CUBLAS_OP_N = 0 };
struct cublasContext {
  int device = 0;  ///< the device current at cublasCreate: calls need it current
  cudaStream_t stream = nullptr;
};
typedef cublasContext* cublasHandle_t;

inline cublasStatus_t cublasCreate(cublasHandle_t* h) {
  *h = new cublasContext;
  (*h)->device = lab_emulated::current_device();
  return CUBLAS_STATUS_SUCCESS;
}
inline cublasStatus_t cublasDestroy(cublasHandle_t h) {
  delete h;
  return CUBLAS_STATUS_SUCCESS;
}
inline cublasStatus_t cublasSetStream(cublasHandle_t h, cudaStream_t s) {
  {
    auto& st = lab_emulated::state();
    std::lock_guard<std::mutex> lock(st.mu);
    if (lab_emulated::stream_of(st, s).device != h->device)
      lab_emulated::fail("cublasSetStream: a stream of another device than the handle's");
  }
  h->stream = s;
  return CUBLAS_STATUS_SUCCESS;
}

namespace lab_emulated {
// Queues a product on the handle's stream (see enqueue in cuda_runtime_api.h).
inline cublasStatus_t enqueue_blas(cublasHandle_t h, std::function<void()> run, const std::vector<Access>& device) {
  auto& st = state();
  std::lock_guard<std::mutex> lock(st.mu);
  if (current_device() != h->device) fail("a cuBLAS call while another device than its handle's is current");
  for (const Access& a : device) require_device(st, a.lo, size_t(a.hi - a.lo));
  Op op;
  op.run = std::move(run);
  return enqueue(st, h->stream, std::move(op), device) == cudaSuccess ? CUBLAS_STATUS_SUCCESS
                                                                      : CUBLAS_STATUS_EXECUTION_FAILED;
}
inline Access matrix(const double* p, int64_t rows, int64_t cols, int64_t ld, bool write) {
  return span(p, sizeof(double) * size_t(ld), sizeof(double) * size_t(rows), size_t(cols), write);
}
}  // namespace lab_emulated
inline cublasStatus_t cublasDgemm_64(cublasHandle_t h, cublasOperation_t, cublasOperation_t, int64_t m,
                                     int64_t n, int64_t k, const double* alpha, const double* A, int64_t lda,
                                     const double* B, int64_t ldb, const double* beta, double* C,
                                     int64_t ldc) {
  if (m == 0 || n == 0) return CUBLAS_STATUS_SUCCESS;
  std::vector<lab_emulated::Access> device;
  if (k > 0) {
    device.push_back(lab_emulated::matrix(A, m, k, lda, false));
    device.push_back(lab_emulated::matrix(B, k, n, ldb, false));
  }
  device.push_back(lab_emulated::matrix(C, m, n, ldc, true));
  const double a = *alpha, b = *beta;  // host scalars are read when the call is made, as cuBLAS does
  return lab_emulated::enqueue_blas(h, [=] {
    for (int64_t j = 0; j < n; ++j)
      for (int64_t i = 0; i < m; ++i) {
        double s = 0;
        for (int64_t p = 0; p < k; ++p) s += A[i + p * lda] * B[p + j * ldb];
        C[i + j * ldc] = a * s + (b == 0 ? 0.0 : b * C[i + j * ldc]);
      }
  }, device);
}

// C <- alpha A + beta B (no transposes); C may be A (same ld), as cuBLAS allows.
inline cublasStatus_t cublasDgeam_64(cublasHandle_t h, cublasOperation_t, cublasOperation_t, int64_t m,
                                     int64_t n, const double* alpha, const double* A, int64_t lda,
                                     const double* beta, const double* B, int64_t ldb, double* C,
                                     int64_t ldc) {
  if (m == 0 || n == 0) return CUBLAS_STATUS_SUCCESS;
  std::vector<lab_emulated::Access> device{lab_emulated::matrix(A, m, n, lda, false),
                                           lab_emulated::matrix(B, m, n, ldb, false),
                                           lab_emulated::matrix(C, m, n, ldc, true)};
  const double a = *alpha, b = *beta;
  return lab_emulated::enqueue_blas(h, [=] {
    for (int64_t j = 0; j < n; ++j)
      for (int64_t i = 0; i < m; ++i) C[i + j * ldc] = a * A[i + j * lda] + b * B[i + j * ldb];
  }, device);
}
