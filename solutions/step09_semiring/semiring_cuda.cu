// step09_semiring — TODO for the student: the semiring's inner step on the GPU.
//
// What to do: write Step<MinPlus>::update, Step<MaxPlus>::update and
// Step<MinPlusI32>::update below (Step<PlusTimes> is done: one FMA), then
// delete the LAB_TODO in gemm_device at the end of the file. Everything else
// is step06's SIMT kernel, given (simt_kernel.cuh, templated on the update and
// the tile): its pipeline of shared-memory stages filled by cp.async
// (step06_cuda_register_blocking/pipeline.cuh), its warp layout
// (warp_layout.cuh) and the order of its tiles (tile_order.cuh), unchanged;
// each thread keeps a block of C in registers and updates it with every pair
// of one k step's values of A and B: 8 x 4 for the FP64 min-plus and max-plus
// (64 x 64 tiles, simt_kernel.cuh's Tile<S>), step06's 8 x 8 for plus-times and
// the int32 min-plus. Only the update changed, and the epilogue (accumulate
// instead of alpha and beta).
// Test:   ./lab test step09
// Time:   build/student/bin/step09_semiring --n 8192 --variant minplus_gpu,maxplus_gpu,minplus_i32_dpx
//         build/student/bin/step09_ceiling   (the add+min bound of this GPU, and these kernels against it)
//
// Why min-plus is slower than DGEMM here too: an FMA is one instruction, the
// min-plus update two or more (an add, then a compare and a select; fmin is
// one instruction, DMNMX, but it issues at half the rate on Hopper). Hopper's
// DPX instructions fuse an integer add with a min (__viaddmin_s32): the int32
// update is one instruction again.
#include <algorithm>
#include <cstdint>

#include "lab/cuda.hpp"
#include "lab/gemm_args.hpp"
#include "lab/todo.hpp"
#include "semiring_cuda.hpp"
#include "simt_kernel.cuh"  // given: step06's kernel, templated on the update and the tile

namespace {

using lab::step09::MaxPlus;
using lab::step09::MinPlus;
using lab::step09::MinPlusI32;
using lab::step09::PlusTimes;

// ---- the inner step ---------------------------------------------------------
// acc (+) (a (x) b) for one of the accumulators of a thread. The
// accumulators start at the zero and only ever take numbers, so they are
// never NaN; the sum a + b may be (+inf + -inf, or a NaN input), and must then
// leave acc as it was (semiring.hpp: a NaN term reads as the zero).
template <class S>
struct Step;

template <>
struct Step<PlusTimes> {
  __device__ __forceinline__ static double update(double acc, double a, double b) { return fma(a, b, acc); }
};

template <>
struct Step<MinPlus> {
  __device__ __forceinline__ static double update(double acc, double a, double b) {
    // LAB:SOLUTION-BEGIN  s = a + b (DADD), then s < acc ? s : acc (a compare and a select; false for a NaN s)
    const double s = a + b;
    return s < acc ? s : acc;
    // LAB:SKELETON
    return acc;
    // LAB:SOLUTION-END
  }
};

template <>
struct Step<MaxPlus> {
  __device__ __forceinline__ static double update(double acc, double a, double b) {
    // LAB:SOLUTION-BEGIN  as MinPlus, keeping the larger
    const double s = a + b;
    return s > acc ? s : acc;
    // LAB:SKELETON
    return acc;
    // LAB:SOLUTION-END
  }
};

template <>
struct Step<MinPlusI32> {
  __device__ __forceinline__ static int32_t update(int32_t acc, int32_t a, int32_t b) {
    // LAB:SOLUTION-BEGIN  sm_90 (__CUDA_ARCH__ >= 900): __viaddmin_s32(a, b, acc); elsewhere min(a + b, acc)
    // In the domain of MinPlusI32 no a + b overflows; the epilogue saturates.
#if __CUDA_ARCH__ >= 900
    return __viaddmin_s32(a, b, acc);  // one DPX instruction: min(a + b, acc)
#else
    return min(a + b, acc);
#endif
    // LAB:SKELETON
    return acc;
    // LAB:SOLUTION-END
  }
};

// k == 0: no terms, so C <- zero, or C (+) zero (a NaN in C becomes the zero).
template <class S>
__global__ void fill_zero(typename S::value_type* c, int64_t ldc, int64_t m, int64_t n, bool accumulate) {
  const int64_t total = m * n;
  for (int64_t e = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; e < total; e += int64_t(gridDim.x) * blockDim.x) {
    typename S::value_type& cij = c[e % m + (e / m) * ldc];
    cij = accumulate ? S::add(cij, S::zero()) : S::zero();
  }
}

// The argument check of the lab (lab/gemm_args.hpp) reads only shapes and
// whether data is null, so any element type passes through a double view.
template <class T>
lab::ConstMatView shape_of(lab::View<T> v) {
  return {reinterpret_cast<const double*>(v.data), v.rows, v.cols, v.ld};
}

}  // namespace

namespace lab::step09 {
inline namespace LAB_IMPL_NS {

template <class S>
void gemm_device(View<const typename S::value_type> A, View<const typename S::value_type> B,
                 View<typename S::value_type> C, bool accumulate, cudaStream_t stream) {
  check_gemm_args(shape_of(A), shape_of(B), shape_of(C));
  const int64_t m = C.rows, n = C.cols, k = A.cols;
  if (m == 0 || n == 0) return;
  if (k == 0) {
    const int64_t blocks = std::min<int64_t>((m * n + 255) / 256, 4096);
    fill_zero<S><<<unsigned(blocks), 256, 0, stream>>>(C.data, C.ld, m, n, accumulate);
    LAB_CUDA_CHECK_LAUNCH();
    return;
  }
  // LAB:SOLUTION-BEGIN
  // LAB:SKELETON
  LAB_TODO("step09 gemm_device: write the three Step<S>::update (see the top of the file), then delete this line");
  // LAB:SOLUTION-END
  detail::launch_semiring<S, detail::Tile<S>, Step<S>>(A.data, A.ld, B.data, B.ld, C.data, C.ld, m, n, k, accumulate,
                                                      stream);
}

template void gemm_device<PlusTimes>(View<const double>, View<const double>, View<double>, bool, cudaStream_t);
template void gemm_device<MinPlus>(View<const double>, View<const double>, View<double>, bool, cudaStream_t);
template void gemm_device<MaxPlus>(View<const double>, View<const double>, View<double>, bool, cudaStream_t);
template void gemm_device<MinPlusI32>(View<const int32_t>, View<const int32_t>, View<int32_t>, bool, cudaStream_t);
}  // namespace LAB_IMPL_NS
}  // namespace lab::step09
