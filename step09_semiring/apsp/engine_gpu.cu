// The GPU engine: the distance matrix stays in device memory from upload to
// result; the bulk goes through the registered device min-plus GEMM, the rest
// through the small kernels here.
//
// Kernels:
//   fw_diagonal_tile   Floyd-Warshall within one 32 x 32 tile, in shared memory
//   fw_tile_panels     the tiles beside it: one min-plus product with the closed tile
//   fw_tile_rest       all other tiles of the block: a min-plus product of two panel tiles
//                      (the three together are blocked Floyd-Warshall with 32 x 32
//                      tiles: the diagonal-block closure, n b^2 of the n^3 work)
//   differ_kernel      did any entry change (repeated squaring's early stop)
//   negative_diagonal  the first v with D(v, v) < 0 (a negative cycle)
#include <math_constants.h>

#include <climits>
#include <cstdio>
#include <stdexcept>

#include "lab/cuda.hpp"
#include "local_engine.hpp"

namespace lab::step09::apsp {
namespace {

constexpr int kTile = 32;  // 32 x 32 threads, one entry each
constexpr int kThreads = 256;

// Element (i, j) of a b x b block, +inf outside it (so partial tiles need no other care:
// inf + x = inf never wins a min).
__device__ inline double at_or_inf(const double* d, int64_t ld, int64_t b, int64_t i, int64_t j) {
  return i < b && j < b ? d[i + j * ld] : CUDART_INF;
}

__device__ inline double min_of(double a, double b) { return b < a ? b : a; }

// s[c][r] holds element (r, c) of a tile: column-major like the matrix, one
// column of padding so that a warp reading s[c][k] over c hits distinct banks.
__global__ void fw_diagonal_tile(double* d, int64_t ld, int64_t b, int64_t t0) {
  __shared__ double s[kTile][kTile + 1];
  const int r = threadIdx.x, c = threadIdx.y;
  const int64_t len = b - t0 < kTile ? b - t0 : kTile;
  s[c][r] = at_or_inf(d, ld, b, t0 + r, t0 + c);
  __syncthreads();
  for (int k = 0; k < len; ++k) {
    const double via = s[k][r] + s[c][k];
    // Row and column k change only when s[k][k] < 0; reading them all before
    // anyone writes keeps the result the same in every schedule.
    __syncthreads();
    if (via < s[c][r]) s[c][r] = via;
    __syncthreads();
  }
  if (r < len && c < len) d[(t0 + r) + (t0 + c) * ld] = s[c][r];
}

// blockIdx.x: the other tile index o; blockIdx.y: 0 for tile (t, o) in tile-row t,
// 1 for tile (o, t) in tile-column t. With the diagonal tile closed, one product
// with it gives every path through tile t.
__global__ void fw_tile_panels(double* d, int64_t ld, int64_t b, int64_t t0) {
  const int64_t o0 = int64_t(blockIdx.x) * kTile;
  if (o0 == t0) return;  // the whole CTA leaves together, before any barrier
  __shared__ double dk[kTile][kTile + 1], s[kTile][kTile + 1];
  const int r = threadIdx.x, c = threadIdx.y;
  const bool row = blockIdx.y == 0;
  const int64_t r0 = row ? t0 : o0, c0 = row ? o0 : t0;
  dk[c][r] = at_or_inf(d, ld, b, t0 + r, t0 + c);
  s[c][r] = at_or_inf(d, ld, b, r0 + r, c0 + c);
  __syncthreads();
  double best = s[c][r];
  if (row) {
    for (int k = 0; k < kTile; ++k) best = min_of(best, dk[k][r] + s[c][k]);
  } else {
    for (int k = 0; k < kTile; ++k) best = min_of(best, s[k][r] + dk[c][k]);
  }
  if (r0 + r < b && c0 + c < b) d[(r0 + r) + (c0 + c) * ld] = best;
}

// Tile (blockIdx.x, blockIdx.y) outside tile-row and tile-column t: reads only
// tiles of that row and column, which this launch does not write.
__global__ void fw_tile_rest(double* d, int64_t ld, int64_t b, int64_t t0) {
  const int64_t r0 = int64_t(blockIdx.x) * kTile, c0 = int64_t(blockIdx.y) * kTile;
  if (r0 == t0 || c0 == t0) return;
  __shared__ double col[kTile][kTile + 1], row[kTile][kTile + 1];
  const int r = threadIdx.x, c = threadIdx.y;
  col[c][r] = at_or_inf(d, ld, b, r0 + r, t0 + c);
  row[c][r] = at_or_inf(d, ld, b, t0 + r, c0 + c);
  __syncthreads();
  double best = at_or_inf(d, ld, b, r0 + r, c0 + c);
  for (int k = 0; k < kTile; ++k) best = min_of(best, col[k][r] + row[c][k]);
  if (r0 + r < b && c0 + c < b) d[(r0 + r) + (c0 + c) * ld] = best;
}

__global__ void differ_kernel(const double* a, int64_t lda, const double* b, int64_t ldb, int64_t rows,
                              int64_t cols, int* flag) {
  int mine = 0;
  for (int64_t j = blockIdx.y; j < cols; j += gridDim.y)
    for (int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < rows;
         i += int64_t(gridDim.x) * blockDim.x)
      mine |= a[i + j * lda] != b[i + j * ldb];
  // One store per block at most: a store from every differing thread to one
  // address would queue up in L2.
  if (__syncthreads_or(mine) && threadIdx.x == 0) *flag = 1;
}

__global__ void negative_diagonal(const double* d, int64_t ld, int64_t n, unsigned long long* first) {
  for (int64_t v = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; v < n;
       v += int64_t(gridDim.x) * blockDim.x)
    if (!(d[v + v * ld] >= 0)) atomicMin(first, static_cast<unsigned long long>(v));
}

unsigned blocks_for(int64_t count, int64_t per_block, int64_t cap) {
  const int64_t blocks = (count + per_block - 1) / per_block;
  return unsigned(blocks < 1 ? 1 : (blocks > cap ? cap : blocks));
}

class DeviceSpace {
 public:
  using Buffer = cuda::DeviceMatrix;

  explicit DeviceSpace(DeviceMinPlusGemm gemm) : gemm_(std::move(gemm)), flag_(1), vertex_(1) {}

  Buffer upload(Matrix&& host) { return cuda::DeviceMatrix::from_host(host.cview(), stream_.get()); }
  Buffer allocate(int64_t rows, int64_t cols) { return cuda::DeviceMatrix(rows, cols); }
  void gemm(ConstMatView A, ConstMatView B, MatView C, bool accumulate) {
    gemm_(A, B, C, accumulate, stream_.get());
  }

  void copy(ConstMatView from, MatView to) {
    if (from.rows == 0 || from.cols == 0) return;
    LAB_CUDA_CHECK(cudaMemcpy2DAsync(to.data, sizeof(double) * to.ld, from.data, sizeof(double) * from.ld,
                                     sizeof(double) * from.rows, from.cols, cudaMemcpyDeviceToDevice,
                                     stream_.get()));
  }

  void close(MatView block) {
    const int64_t b = block.rows, tiles = (b + kTile - 1) / kTile;
    const dim3 threads(kTile, kTile);
    for (int64_t t = 0; t < tiles; ++t) {
      fw_diagonal_tile<<<1, threads, 0, stream_.get()>>>(block.data, block.ld, b, t * kTile);
      LAB_CUDA_CHECK_LAUNCH();
      if (tiles == 1) continue;
      fw_tile_panels<<<dim3(unsigned(tiles), 2), threads, 0, stream_.get()>>>(block.data, block.ld, b,
                                                                              t * kTile);
      LAB_CUDA_CHECK_LAUNCH();
      fw_tile_rest<<<dim3(unsigned(tiles), unsigned(tiles)), threads, 0, stream_.get()>>>(
          block.data, block.ld, b, t * kTile);
      LAB_CUDA_CHECK_LAUNCH();
    }
  }

  bool differ(ConstMatView a, ConstMatView b) {
    LAB_CUDA_CHECK(cudaMemsetAsync(flag_.data(), 0, sizeof(int), stream_.get()));
    const dim3 grid(blocks_for(a.rows, kThreads, 64), blocks_for(a.cols, 1, 1024));
    differ_kernel<<<grid, kThreads, 0, stream_.get()>>>(a.data, a.ld, b.data, b.ld, a.rows, a.cols,
                                                        flag_.data());
    LAB_CUDA_CHECK_LAUNCH();
    int host = 0;
    LAB_CUDA_CHECK(cudaMemcpyAsync(&host, flag_.data(), sizeof host, cudaMemcpyDeviceToHost, stream_.get()));
    stream_.sync();
    return host != 0;
  }

  int64_t first_negative_diagonal(ConstMatView d) {
    LAB_CUDA_CHECK(cudaMemsetAsync(vertex_.data(), 0xff, sizeof(unsigned long long), stream_.get()));
    negative_diagonal<<<blocks_for(d.rows, kThreads, 1024), kThreads, 0, stream_.get()>>>(
        d.data, d.ld, d.rows, vertex_.data());
    LAB_CUDA_CHECK_LAUNCH();
    unsigned long long host = 0;
    LAB_CUDA_CHECK(
        cudaMemcpyAsync(&host, vertex_.data(), sizeof host, cudaMemcpyDeviceToHost, stream_.get()));
    stream_.sync();
    return host == ULLONG_MAX ? -1 : int64_t(host);
  }

  void finish() { stream_.sync(); }

  Matrix download(Buffer&& d) {
    Matrix host(d.rows(), d.cols());
    d.to_host(host.view(), stream_.get());
    return host;
  }

  std::string device() const { return cuda::device_info().name; }

 private:
  cuda::Stream stream_;
  DeviceMinPlusGemm gemm_;
  cuda::DeviceBuffer<int> flag_;
  cuda::DeviceBuffer<unsigned long long> vertex_;
};

}  // namespace

bool gpu_engine_available(std::string* why) { return cuda::device_available(why); }

std::unique_ptr<Engine> make_gpu_engine(Matrix D0, DeviceMinPlusGemm gemm, const std::string& gemm_name) {
  size_t free_bytes = 0, total_bytes = 0;
  LAB_CUDA_CHECK(cudaMemGetInfo(&free_bytes, &total_bytes));
  const double need = 8.0 * double(D0.rows()) * double(D0.cols());
  if (need > double(free_bytes)) {
    char msg[256];
    std::snprintf(msg, sizeof msg,
                  "the distance matrix needs %.2f GiB of device memory; %.2f GiB are free on ",
                  need / 1073741824.0, double(free_bytes) / 1073741824.0);
    throw std::runtime_error(msg + cuda::device_info().name);
  }
  return std::make_unique<LocalEngine<DeviceSpace>>(std::move(D0), gemm_name, std::move(gemm));
}

}  // namespace lab::step09::apsp
