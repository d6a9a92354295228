// step09 — given: step06's SIMT kernel, templated on the semiring's inner
// step and on its tile. Nothing to do here.
//
// semiring_cuda.cu instantiates it with its Step<S> (the student's update)
// and the tile below (Tile<S>); step09_ceiling --sweep with other updates and
// tiles, to time them against it. The pipeline of shared-memory stages filled
// by cp.async (step06_cuda_register_blocking/pipeline.cuh), the warp layout
// (warp_layout.cuh) and the order of the tiles (tile_order.cuh) are step06's,
// unchanged; each thread keeps an 8 x 8 (or 8 x 4) block of C in registers and
// updates it with the pairs of one k step's 8 values of A and 8 (4) of B. Only
// the update changed, and the epilogue (accumulate instead of alpha and beta).
#pragma once

#include <cstdint>
#include <type_traits>

#include "lab/cuda.hpp"
#include "launch.cuh"       // step06: allow_dynamic_smem
#include "loader_i32.cuh"   // step06's SliceLoader for int32
#include "pipeline.cuh"     // step06: SliceLoader, the ring of stages
#include "semiring.hpp"
#include "tile_order.cuh"   // step06: which tile of C a block computes
#include "warp_layout.cuh"  // step06: which 8 x 8 block of the warp's tile a thread owns

namespace lab::step09::detail {

using lab::step06::detail::kThreadM;
using lab::step06::detail::kWarpM;
using lab::step06::detail::ThreadInWarp;

// The block tile: BM x BN of C in warp tiles of 64 x 32, k in slices of BK
// through kStages stages with the operands fetched ahead (so 4 stages at
// least), kMinBlocks blocks per multiprocessor (the register budget the
// compiler gets). T is the element type. kThreadN: step06's 8 columns a
// thread, or 4 (warp tiles of 64 x 16: half the accumulators, so twice the
// warps fit in the registers, for 1.5 times the shared-memory loads an update).
// kPrefetch: a thread loads the next k step's operands from shared memory while
// it updates with this step's (step06's way: twice the operand registers), or,
// false, loads each step's just before its updates (fewer registers, so more
// warps fit; the other warps hide the loads' latency).
template <class T, int BM_, int BN_, int BK_, int kStages_, int kMinBlocks_, int kThreadN_ = 8,
          bool kPrefetch_ = true>
struct TileConfig {
  static constexpr int BM = BM_, BN = BN_, BK = BK_, kStages = kStages_, kMinBlocks = kMinBlocks_;
  static constexpr bool kPrefetch = kPrefetch_;
  static constexpr int kThreadN = kThreadN_, kWarpN = 4 * kThreadN;  // 4 thread columns (tc) a warp
  static_assert(kThreadN == 8 || kThreadN == 4, "a thread owns 8 or 4 columns (pairs 8 apart)");
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
                                    Int32SliceLoader<BM, BN, BK, kThreads, kLdA, kLdB>>;
  static_assert(BM % kWarpM == 0 && BN % kWarpN == 0, "the block tile must be a whole number of warp tiles");
  static_assert(BK * (kLdA + kLdB) % kPerWord == 0, "a stage must be a whole number of 8-byte words");
};

// The shipped tiles. FP64 min-plus and max-plus: 64 x 64 of C, 4 warps of
// 64 x 16 (8 x 4 a thread), k in slices of 16 through 4 stages, three blocks per
// multiprocessor: 12 warps where 8 x 8 a thread fits only 8, so more of the
// compare-and-select chains are in flight (step09_ceiling --sweep: 67 % of the
// add+select bound on an H100, against 56 % for the tile below). Every other
// semiring: 128 x 64 of C, 4 warps (each a 64 x 32 warp tile), k in slices of
// 16 through 4 stages, two blocks per multiprocessor: the fastest of step06's
// SIMT tiles on an H100.
template <class S>
using Tile = std::conditional_t<std::is_same_v<S, MinPlus> || std::is_same_v<S, MaxPlus>,
                                TileConfig<double, 64, 64, 16, 4, 3, 4>,
                                TileConfig<typename S::value_type, 128, 64, 16, 4, 2>>;

// One k step's operands of a thread: a[2 q + h] = A(wr + 16 q + h, p) and
// b[2 q + h] = B(p, wc + 8 q + h), q = 0..3, h = 0..1; each pair one load.
template <class T, int kThreadN>
struct Fragments {
  T a[kThreadM], b[kThreadN];
};

template <class Cfg, class T>
__device__ __forceinline__ void load_fragments(const double* As_words, const double* Bs_words, int wr, int wc,
                                               int p, Fragments<T, Cfg::kThreadN>& f) {
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
  for (int q = 0; q < Cfg::kThreadN / 2; ++q) {
    const Pair v = *reinterpret_cast<const Pair*>(Bs + 8 * q);
    f.b[2 * q] = v.x;
    f.b[2 * q + 1] = v.y;
  }
}

// acc (+)= a (x) b for the 64 accumulators of a thread: Update::update(acc, a, b).
template <class Update, class T, int kThreadN>
__device__ __forceinline__ void multiply(const Fragments<T, kThreadN>& f, T (&acc)[kThreadM][kThreadN]) {
#pragma unroll
  for (int x = 0; x < kThreadM; ++x)
#pragma unroll
    for (int y = 0; y < kThreadN; ++y) acc[x][y] = Update::update(acc[x][y], f.a[x], f.b[y]);
}

// One block computes a BM x BN tile of C. The loaders zero-fill what lies
// past the matrices; a zero is not the semiring's zero, so the k steps past
// the end of k are never computed (the last slice counts its steps), and
// rows and columns past C are computed but never stored.
template <class S, class Cfg, class Update>
__global__ void __launch_bounds__(Cfg::kThreads, Cfg::kMinBlocks)
    semiring_kernel(const typename S::value_type* __restrict__ a, int64_t lda,
                    const typename S::value_type* __restrict__ b, int64_t ldb, typename S::value_type* __restrict__ c,
                    int64_t ldc, int64_t m, int64_t n, int64_t k, bool accumulate) {
  using T = typename S::value_type;
  constexpr int BK = Cfg::BK;
  extern __shared__ __align__(16) double smem[];  // kStages x (As[BK][kLdA], Bs[BK][kLdB])
  int64_t tm, tn;
  lab::step06::detail::tile_of_block(blockIdx.x, (m + Cfg::BM - 1) / Cfg::BM, (n + Cfg::BN - 1) / Cfg::BN, &tm, &tn);
  const int64_t m0 = tm * Cfg::BM, n0 = tn * Cfg::BN;
  const int warp = threadIdx.x / 32;
  const ThreadInWarp me(threadIdx.x % 32);
  const int wr = (warp % Cfg::kWarpsM) * kWarpM + 2 * me.tr;
  const int wc = (warp / Cfg::kWarpsM) * Cfg::kWarpN + 2 * me.tc;
  const typename Cfg::Loader loader(a, lda, b, ldb, m0, n0, m, n, k);
  T acc[kThreadM][Cfg::kThreadN];
#pragma unroll
  for (int x = 0; x < kThreadM; ++x)
#pragma unroll
    for (int y = 0; y < Cfg::kThreadN; ++y) acc[x][y] = S::zero();
  const int64_t slices = (k + BK - 1) / BK;
  const int last_steps = int(k - (slices - 1) * BK);  // k steps in the last slice, 1..BK
  int64_t slice = 0;
  Fragments<T, Cfg::kThreadN> next;  // the operands of the next k step (kPrefetch)
  lab::step06::detail::for_each_slice_prefetch<Cfg::kStages, BK, Cfg::kLdAWords, Cfg::kStageWords>(
      loader, smem, k,
      [&](const double* As, const double* Bs) {
        if constexpr (Cfg::kPrefetch) load_fragments<Cfg>(As, Bs, wr, wc, 0, next);
      },
      [&](const double* As, const double* Bs, [[maybe_unused]] const double* next_As,
          [[maybe_unused]] const double* next_Bs) {
        // Every slice but (perhaps) the last runs all BK steps with no test;
        // the same choice for the whole block, so no warp diverges.
        const int steps = ++slice == slices ? last_steps : BK;
        auto run = [&](auto full) {
#pragma unroll
          for (int p = 0; p < BK; ++p) {
            if constexpr (Cfg::kPrefetch) {
              const Fragments<T, Cfg::kThreadN> cur = next;
              if (p + 1 < BK) load_fragments<Cfg>(As, Bs, wr, wc, p + 1, next);
              else load_fragments<Cfg>(next_As, next_Bs, wr, wc, 0, next);  // the next slice's first step
              if (decltype(full)::value || p < steps) multiply<Update>(cur, acc);
            } else if (decltype(full)::value || p < steps) {
              Fragments<T, Cfg::kThreadN> cur;
              load_fragments<Cfg>(As, Bs, wr, wc, p, cur);
              multiply<Update>(cur, acc);
            }
          }
        };
        if (steps == BK) run(std::true_type{});
        else run(std::false_type{});
      });
  // C <- acc, or C (+) acc, for this thread's 8 x kThreadN block (rows wr + 16 q +
  // {0,1}, columns wc + 8 q + {0,1}), skipping what lies outside C.
#pragma unroll
  for (int x = 0; x < kThreadM; ++x) {
    const int64_t i = m0 + wr + 16 * (x / 2) + x % 2;
    if (i >= m) continue;
#pragma unroll
    for (int y = 0; y < Cfg::kThreadN; ++y) {
      const int64_t j = n0 + wc + 8 * (y / 2) + y % 2;
      if (j >= n) continue;
      T& cij = c[i + j * ldc];
      T v = accumulate ? S::add(cij, acc[x][y]) : acc[x][y];
      if constexpr (std::is_same_v<S, MinPlusI32>) v = S::saturate(v);
      cij = v;
    }
  }
}

/// Queues semiring_kernel<S, Cfg, Update> for C (m x n, m, n > 0) and k > 0 on
/// `stream`; the arguments are checked by the caller.
template <class S, class Cfg, class Update>
void launch_semiring(const typename S::value_type* a, int64_t lda, const typename S::value_type* b, int64_t ldb,
                     typename S::value_type* c, int64_t ldc, int64_t m, int64_t n, int64_t k, bool accumulate,
                     cudaStream_t stream) {
  auto kernel = semiring_kernel<S, Cfg, Update>;
  lab::step06::detail::allow_dynamic_smem(reinterpret_cast<const void*>(kernel), Cfg::kSmemBytes);
  const int64_t tiles = ((m + Cfg::BM - 1) / Cfg::BM) * ((n + Cfg::BN - 1) / Cfg::BN);
  kernel<<<unsigned(tiles), Cfg::kThreads, Cfg::kSmemBytes, stream>>>(a, lda, b, ldb, c, ldc, m, n, k, accumulate);
  LAB_CUDA_CHECK_LAUNCH();
}

}  // namespace lab::step09::detail
