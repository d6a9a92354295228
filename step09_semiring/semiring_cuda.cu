// step09_semiring — TODO for the student: the semiring's inner step on the GPU.
//
// What to do: write Step<MinPlus>::update, Step<MaxPlus>::update and
// Step<MinPlusI32>::update below (Step<PlusTimes> is done: one FMA), then
// delete the LAB_TODO in gemm_device at the end of the file. Everything else
// is step06's SIMT kernel, given: its pipeline of shared-memory stages filled
// by cp.async (step06_cuda_register_blocking/pipeline.cuh), its warp layout
// (warp_layout.cuh) and the order of its tiles (tile_order.cuh), included
// from there, unchanged; each thread still keeps an 8 x 8 block of C in
// registers and updates it with the 64 pairs of one k step's 8 values of A
// and 8 of B. Only the update changed, and the epilogue (accumulate instead
// of alpha and beta).
// Test:   ctest --test-dir build/both -L step09 --output-on-failure   (on a machine with a GPU)
// Time:   build/both/bin/step09_semiring --n 8192 --variant minplus_gpu,maxplus_gpu,minplus_i32_dpx
//         build/both/bin/step09_ceiling   (the add+min bound of this GPU, and these kernels against it)
//
// Why min-plus is slower than DGEMM here too: an FMA is one instruction, the
// min-plus update two or more (an add, then a compare and a select; fmin is
// one instruction, DMNMX, but it issues at half the rate on Hopper). Hopper's
// DPX instructions fuse an integer add with a min (__viaddmin_s32): the int32
// update is one instruction again.
#include <algorithm>
#include <cstdint>
#include <type_traits>

#include "lab/cuda.hpp"
#include "lab/gemm_args.hpp"
#include "lab/todo.hpp"
#include "launch.cuh"       // step06: allow_dynamic_smem
#include "loader_i32.cuh"   // step06's SliceLoader for int32
#include "pipeline.cuh"     // step06: SliceLoader, the ring of stages
#include "semiring_cuda.hpp"
#include "tile_order.cuh"   // step06: which tile of C a block computes
#include "warp_layout.cuh"  // step06: which 8 x 8 block of the warp's tile a thread owns

namespace {

using lab::step09::MaxPlus;
using lab::step09::MinPlus;
using lab::step09::MinPlusI32;
using lab::step09::PlusTimes;
using lab::step06::detail::kThreadM;
using lab::step06::detail::kThreadN;
using lab::step06::detail::kWarpM;
using lab::step06::detail::kWarpN;
using lab::step06::detail::ThreadInWarp;

// ---- the inner step ---------------------------------------------------------
// acc (+) (a (x) b) for one of the 64 accumulators of a thread. The
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
    // TODO: s = a + b (DADD), then s < acc ? s : acc (a compare and a select; false for a NaN s)
    return acc;
  }
};

template <>
struct Step<MaxPlus> {
  __device__ __forceinline__ static double update(double acc, double a, double b) {
    // TODO: as MinPlus, keeping the larger
    return acc;
  }
};

template <>
struct Step<MinPlusI32> {
  __device__ __forceinline__ static int32_t update(int32_t acc, int32_t a, int32_t b) {
    // TODO: sm_90 (__CUDA_ARCH__ >= 900): __viaddmin_s32(a, b, acc); elsewhere min(a + b, acc)
    return acc;
  }
};

// ---- given: step06's kernel, templated on S ----------------------------------

// The block tile: 128 x 64 of C, 4 warps (each a 64 x 32 warp tile), k in
// slices of 16 through 4 stages with the operands fetched ahead, two blocks
// per multiprocessor: the fastest of step06's SIMT tiles on an H100.
template <class S>
struct Tile {
  using T = typename S::value_type;
  static constexpr int BM = 128, BN = 64, BK = 16, kStages = 4, kMinBlocks = 2;
  static constexpr int kWarpsM = BM / kWarpM, kThreads = (BM / kWarpM) * (BN / kWarpN) * 32;
  static constexpr bool kDouble = std::is_same_v<T, double>;
  // Row strides of As[p][i] and Bs[p][j], in elements. FP64: step06's
  // (4 mod 16 doubles spreads the B copies over the banks). int32: a pair of
  // rows 2 apart in the banks lets a half-warp write its 16 k rows of B
  // without conflicts, and keeps every int2 load 8-byte aligned.
  static constexpr int kLdA = BM + 4, kLdB = kDouble ? BN + 4 : BN + 2;
  // step06's ring counts shared memory in 8-byte words.
  static constexpr int kPerWord = int(sizeof(double) / sizeof(T));
  static constexpr int kLdAWords = kLdA / kPerWord, kStageWords = BK * (kLdA + kLdB) / kPerWord;
  static constexpr size_t kSmemBytes = sizeof(double) * kStages * kStageWords;
  using Loader = std::conditional_t<kDouble, lab::step06::detail::SliceLoader<BM, BN, BK, kThreads, kLdA, kLdB>,
                                    lab::step09::detail::Int32SliceLoader<BM, BN, BK, kThreads, kLdA, kLdB>>;
  static_assert(BM % kWarpM == 0 && BN % kWarpN == 0, "the block tile must be a whole number of warp tiles");
  static_assert(BK * (kLdA + kLdB) % kPerWord == 0, "a stage must be a whole number of 8-byte words");
};

// One k step's operands of a thread: a[2 q + h] = A(wr + 16 q + h, p) and
// b[2 q + h] = B(p, wc + 8 q + h), q = 0..3, h = 0..1; each pair one load.
template <class T>
struct Fragments {
  T a[kThreadM], b[kThreadN];
};

template <class Cfg, class T>
__device__ __forceinline__ void load_fragments(const double* As_words, const double* Bs_words, int wr, int wc,
                                               int p, Fragments<T>& f) {
  using Pair = std::conditional_t<std::is_same_v<T, double>, double2, int2>;
  const T* const As = reinterpret_cast<const T*>(As_words) + p * Cfg::kLdA + wr;
  const T* const Bs = reinterpret_cast<const T*>(Bs_words) + p * Cfg::kLdB + wc;
#pragma unroll
  for (int q = 0; q < kThreadM / 2; ++q) {
    const Pair v = *reinterpret_cast<const Pair*>(As + 16 * q);
    f.a[2 * q] = v.x;
    f.a[2 * q + 1] = v.y;
  }
#pragma unroll
  for (int q = 0; q < kThreadN / 2; ++q) {
    const Pair v = *reinterpret_cast<const Pair*>(Bs + 8 * q);
    f.b[2 * q] = v.x;
    f.b[2 * q + 1] = v.y;
  }
}

template <class S, class T>
__device__ __forceinline__ void multiply(const Fragments<T>& f, T (&acc)[kThreadM][kThreadN]) {
#pragma unroll
  for (int x = 0; x < kThreadM; ++x)
#pragma unroll
    for (int y = 0; y < kThreadN; ++y) acc[x][y] = Step<S>::update(acc[x][y], f.a[x], f.b[y]);
}

// One block computes a BM x BN tile of C. The loaders zero-fill what lies
// past the matrices; a zero is not the semiring's zero, so the k steps past
// the end of k are never computed (the last slice counts its steps), and
// rows and columns past C are computed but never stored.
template <class S>
__global__ void __launch_bounds__(Tile<S>::kThreads, Tile<S>::kMinBlocks)
    semiring_kernel(const typename S::value_type* __restrict__ a, int64_t lda,
                    const typename S::value_type* __restrict__ b, int64_t ldb, typename S::value_type* __restrict__ c,
                    int64_t ldc, int64_t m, int64_t n, int64_t k, bool accumulate) {
  using Cfg = Tile<S>;
  using T = typename S::value_type;
  constexpr int BK = Cfg::BK;
  extern __shared__ __align__(16) double smem[];  // kStages x (As[BK][kLdA], Bs[BK][kLdB])
  int64_t tm, tn;
  lab::step06::detail::tile_of_block(blockIdx.x, (m + Cfg::BM - 1) / Cfg::BM, (n + Cfg::BN - 1) / Cfg::BN, &tm, &tn);
  const int64_t m0 = tm * Cfg::BM, n0 = tn * Cfg::BN;
  const int warp = threadIdx.x / 32;
  const ThreadInWarp me(threadIdx.x % 32);
  const int wr = (warp % Cfg::kWarpsM) * kWarpM + 2 * me.tr;
  const int wc = (warp / Cfg::kWarpsM) * kWarpN + 2 * me.tc;
  const typename Cfg::Loader loader(a, lda, b, ldb, m0, n0, m, n, k);
  T acc[kThreadM][kThreadN];
#pragma unroll
  for (int x = 0; x < kThreadM; ++x)
#pragma unroll
    for (int y = 0; y < kThreadN; ++y) acc[x][y] = S::zero();
  const int64_t slices = (k + BK - 1) / BK;
  const int last_steps = int(k - (slices - 1) * BK);  // k steps in the last slice, 1..BK
  int64_t slice = 0;
  Fragments<T> next;  // the operands of the next k step
  lab::step06::detail::for_each_slice_prefetch<Cfg::kStages, BK, Cfg::kLdAWords, Cfg::kStageWords>(
      loader, smem, k,
      [&](const double* As, const double* Bs) { load_fragments<Cfg>(As, Bs, wr, wc, 0, next); },
      [&](const double* As, const double* Bs, const double* next_As, const double* next_Bs) {
        // Every slice but (perhaps) the last runs all BK steps with no test;
        // the same choice for the whole block, so no warp diverges.
        const int steps = ++slice == slices ? last_steps : BK;
        auto run = [&](auto full) {
#pragma unroll
          for (int p = 0; p < BK; ++p) {
            const Fragments<T> cur = next;
            if (p + 1 < BK) load_fragments<Cfg>(As, Bs, wr, wc, p + 1, next);
            else load_fragments<Cfg>(next_As, next_Bs, wr, wc, 0, next);  // the next slice's first step
            if (decltype(full)::value || p < steps) multiply<S>(cur, acc);
          }
        };
        if (steps == BK) run(std::true_type{});
        else run(std::false_type{});
      });
  // C <- acc, or C (+) acc, for this thread's 8 x 8 block (rows wr + 16 q +
  // {0,1}, columns wc + 8 q + {0,1}), skipping what lies outside C.
#pragma unroll
  for (int x = 0; x < kThreadM; ++x) {
    const int64_t i = m0 + wr + 16 * (x / 2) + x % 2;
    if (i >= m) continue;
#pragma unroll
    for (int y = 0; y < kThreadN; ++y) {
      const int64_t j = n0 + wc + 8 * (y / 2) + y % 2;
      if (j >= n) continue;
      T& cij = c[i + j * ldc];
      T v = accumulate ? S::add(cij, acc[x][y]) : acc[x][y];
      if constexpr (std::is_same_v<S, MinPlusI32>) v = S::saturate(v);
      cij = v;
    }
  }
}

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
  LAB_TODO("step09 gemm_device: write the three Step<S>::update (see the top of the file), then delete this line");
  using Cfg = Tile<S>;
  auto kernel = semiring_kernel<S>;
  step06::detail::allow_dynamic_smem(reinterpret_cast<const void*>(kernel), Cfg::kSmemBytes);
  const int64_t tiles = ((m + Cfg::BM - 1) / Cfg::BM) * ((n + Cfg::BN - 1) / Cfg::BN);
  kernel<<<unsigned(tiles), Cfg::kThreads, Cfg::kSmemBytes, stream>>>(A.data, A.ld, B.data, B.ld, C.data, C.ld, m,
                                                                      n, k, accumulate);
  LAB_CUDA_CHECK_LAUNCH();
}

template void gemm_device<PlusTimes>(View<const double>, View<const double>, View<double>, bool, cudaStream_t);
template void gemm_device<MinPlus>(View<const double>, View<const double>, View<double>, bool, cudaStream_t);
template void gemm_device<MaxPlus>(View<const double>, View<const double>, View<double>, bool, cudaStream_t);
template void gemm_device<MinPlusI32>(View<const int32_t>, View<const int32_t>, View<int32_t>, bool, cudaStream_t);
}  // namespace LAB_IMPL_NS
}  // namespace lab::step09
