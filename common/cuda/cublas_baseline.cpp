// The vendor baseline every GPU step is measured against: cublasDgemm on the
// same device buffers (FP64 tensor cores where the GPU has them).
#include "lab/cuda.hpp"
#include "lab/registry.hpp"

namespace {

const lab::cuda::CublasHandle& handle() {
  static const lab::cuda::CublasHandle h;  // created on first use, where a device is known to exist
  return h;
}

void cublas_dgemm(const lab::GemmCall& c) {
  const cublasHandle_t h = handle().on(static_cast<cudaStream_t>(c.stream));
  LAB_CUDA_CHECK(cublasDgemm_64(h, CUBLAS_OP_N, CUBLAS_OP_N, c.C.rows, c.C.cols, c.A.cols, &c.alpha, c.A.data,
                                c.A.ld, c.B.data, c.B.ld, &c.beta, c.C.data, c.C.ld));
}

LAB_REGISTER_VARIANT({"vendor", "cublas", "baseline", lab::Backend::gpu, cublas_dgemm,
                      "cublasDgemm (vendor library; FP64 tensor cores where the GPU has them)"});

}  // namespace
