// Device blocks born on the GPU: the generator of generate.hpp, run there.
#include <cuda_runtime.h>

#include "device.hpp"
#include "generate.hpp"
#include "lab/cuda.hpp"

namespace lab::step08 {
namespace {

__global__ void fill_kernel(double* data, int64_t rows, int64_t cols, int64_t ld, uint64_t seed, int64_t row0,
                            int64_t col0) {
  const int64_t total = rows * cols;
  for (int64_t e = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; e < total; e += int64_t(gridDim.x) * blockDim.x) {
    const int64_t i = e % rows, j = e / rows;
    data[i + j * ld] = generated(seed, row0 + i, col0 + j);
  }
}

}  // namespace

void fill_device(MatView blk, uint64_t seed, int64_t row0, int64_t col0, void* stream) {
  if (blk.rows == 0 || blk.cols == 0) return;
  const int64_t total = blk.rows * blk.cols;
  const int threads = 256;
  const int64_t blocks = std::min<int64_t>((total + threads - 1) / threads, 65535 * 16);
  fill_kernel<<<static_cast<unsigned>(blocks), threads, 0, static_cast<cudaStream_t>(stream)>>>(
      blk.data, blk.rows, blk.cols, blk.ld, seed, row0, col0);
  LAB_CUDA_CHECK_LAUNCH();
}

}  // namespace lab::step08
