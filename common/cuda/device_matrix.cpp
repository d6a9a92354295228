// lab::cuda::DeviceMatrix: a column-major matrix in device memory.
#include "lab/cuda.hpp"

namespace lab::cuda {

DeviceMatrix::DeviceMatrix(int64_t rows, int64_t cols, int64_t ld)
    : rows_(rows),
      cols_(cols),
      ld_(ld > 0 ? ld : (rows > 1 ? rows : 1)),
      buf_(size_t(matrix_bytes(rows, cols, ld > 0 ? ld : (rows > 1 ? rows : 1), "DeviceMatrix")) /
           sizeof(double)) {}

DeviceMatrix DeviceMatrix::from_host(ConstMatView host, cudaStream_t s) {
  DeviceMatrix d(host.rows, host.cols, host.rows);
  if (host.rows > 0 && host.cols > 0) {
    LAB_CUDA_CHECK(cudaMemcpy2DAsync(d.buf_.data(), sizeof(double) * d.ld_, host.data,
                                     sizeof(double) * host.ld, sizeof(double) * host.rows, host.cols,
                                     cudaMemcpyHostToDevice, s));
    LAB_CUDA_CHECK(cudaStreamSynchronize(s));
  }
  return d;
}

void DeviceMatrix::to_host(MatView host, cudaStream_t s) const {
  if (rows_ > 0 && cols_ > 0) {
    LAB_CUDA_CHECK(cudaMemcpy2DAsync(host.data, sizeof(double) * host.ld, buf_.data(), sizeof(double) * ld_,
                                     sizeof(double) * rows_, cols_, cudaMemcpyDeviceToHost, s));
    LAB_CUDA_CHECK(cudaStreamSynchronize(s));
  }
}

}  // namespace lab::cuda
