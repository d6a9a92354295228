// The int32 min-plus variant of the benchmark: conversions around gemm_device
// (what and why: i32_bench.hpp).
#include "i32_bench.hpp"
#include "lab/gemm_args.hpp"
#include "semiring_cuda.hpp"

namespace {

template <class From, class To, class F>
__global__ void convert(const From* src, int64_t ld_src, To* dst, int64_t ld_dst, int64_t rows, int64_t cols, F f) {
  const int64_t total = rows * cols;
  for (int64_t e = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; e < total; e += int64_t(gridDim.x) * blockDim.x) {
    const int64_t i = e % rows, j = e / rows;
    dst[i + j * ld_dst] = f(src[i + j * ld_src]);
  }
}

template <class From, class To, class F>
void launch_convert(lab::View<const From> src, lab::View<To> dst, F f, cudaStream_t stream) {
  const int64_t total = src.rows * src.cols;
  if (total == 0) return;
  const unsigned blocks = unsigned(std::min<int64_t>((total + 255) / 256, 132 * 16));
  convert<<<blocks, 256, 0, stream>>>(src.data, src.ld, dst.data, dst.ld, src.rows, src.cols, f);
  LAB_CUDA_CHECK_LAUNCH();
}

struct ToI32 {
  __device__ int32_t operator()(double x) const { return lab::step09::to_i32(x); }
};
struct FromI32 {
  __device__ double operator()(int32_t v) const { return lab::step09::from_i32(v); }
};

// A dense (ld = rows) int32 copy's view over `buf`, grown to fit.
lab::View<int32_t> dense(lab::cuda::DeviceBuffer<int32_t>& buf, int64_t rows, int64_t cols) {
  const size_t need = size_t(rows * cols);
  if (buf.size() < need) buf = lab::cuda::DeviceBuffer<int32_t>(need);
  return {buf.data(), rows, cols, rows > 0 ? rows : 1};
}

}  // namespace

void lab::step09::minplus_i32_on_doubles(ConstMatView A, ConstMatView B, MatView C, bool accumulate,
                                         I32Scratch& scratch, cudaStream_t stream) {
  check_gemm_args(A, B, C);
  const View<int32_t> a = dense(scratch.a, A.rows, A.cols), b = dense(scratch.b, B.rows, B.cols),
                      c = dense(scratch.c, C.rows, C.cols);
  launch_convert<double, int32_t>(A, a, ToI32{}, stream);
  launch_convert<double, int32_t>(B, b, ToI32{}, stream);
  if (accumulate) launch_convert<double, int32_t>(ConstMatView(C), c, ToI32{}, stream);
  gemm_device<MinPlusI32>(a, b, c, accumulate, stream);
  launch_convert<int32_t, double>(View<const int32_t>(c), C, FromI32{}, stream);
}
