// step06 — TODO for the student: the register-blocked kernel on the CUDA cores.
//
// What to do: write the two pieces of the multiply, so that each thread
// accumulates an 8 x 8 block of C in registers: load_fragments, which reads
// the 8 values of A and the 8 of B that one k step needs out of shared
// memory, and multiply, their 64 products. The block's tiles of A and B
// arrive in shared memory one BK-wide slice of k at a time, through a ring of
// kStages buffers that the pipeline (pipeline.cuh, given) keeps filled: while
// the block multiplies slice s, the copies of later slices are already on
// their way, and each thread loads the operands of its next k step while it
// multiplies the current one (simt_kernel, given). The epilogue (writing C)
// is given too, and dgemm's LAB_TODO goes once both pieces are written. Read
// step06_cuda_register_blocking/README.md first.
// Test:   ./lab test step06
// Time:   build/student/bin/step06_cuda_register_blocking --n 4096 --variant simt
#include <stdexcept>
#include <string>

#include "lab/cuda.hpp"
#include "lab/gemm_args.hpp"
#include "lab/todo.hpp"
#include "launch.cuh"
#include "pipeline.cuh"
#include "register_blocking.hpp"
#include "tile_order.cuh"
#include "warp_layout.cuh"

namespace {

using lab::step06::detail::allow_dynamic_smem;
using lab::step06::detail::for_each_slice;
using lab::step06::detail::for_each_slice_prefetch;
using lab::step06::detail::KernelChoice;
using lab::step06::detail::kThreadM;
using lab::step06::detail::kThreadN;
using lab::step06::detail::kWarpM;
using lab::step06::detail::kWarpN;
using lab::step06::detail::SliceLoader;
using lab::step06::detail::ThreadInWarp;
using lab::step06::detail::tile_count;
using lab::step06::detail::tile_of_block;

// A warp computes a 64 x 32 tile of C, each thread an 8 x 8 block of it;
// which thread owns which rows and columns: warp_layout.cuh.

template <int BM, int BN, int BK, int kStages>
struct SimtConfig {
  static constexpr int kWarpsM = BM / kWarpM, kWarpsN = BN / kWarpN;
  static constexpr int kThreads = kWarpsM * kWarpsN * 32;
  // k-major tiles As[p][i], Bs[p][j]. A row stride of 4 (mod 16) doubles spreads
  // the four k rows that the copies of 8 neighbouring columns of B write over
  // different banks.
  static constexpr int kLdA = BM + 4, kLdB = BN + 4;
  static constexpr int kStage = BK * (kLdA + kLdB);  // doubles per stage
  static constexpr size_t kSmemBytes = sizeof(double) * kStages * kStage;
  static_assert(BM % kWarpM == 0 && BN % kWarpN == 0,
                "the block tile must be a whole number of 64 x 32 warp tiles");
  using Loader = SliceLoader<BM, BN, BK, kThreads, kLdA, kLdB>;
};

// One k step's operands of a thread: a[2 q + h] = A(wr + 16 q + h, p) and
// b[2 q + h] = B(p, wc + 8 q + h) of the slice, q = 0..3, h = 0..1.
struct Fragments {
  double a[kThreadM], b[kThreadN];
};

// Reads k step p's fragments out of the stage (As[p][i], Bs[p][j], row strides
// Cfg::kLdA and Cfg::kLdB): each pair is one double2 load, 4 for A and 4 for B.
template <class Cfg>
__device__ __forceinline__ void load_fragments(const double* As, const double* Bs, int wr, int wc, int p,
                                               Fragments& f) {
  // LAB:SOLUTION-BEGIN  q = 0..3: double2 at As + p * Cfg::kLdA + wr + 16 q, and at Bs + p * Cfg::kLdB + wc + 8 q
#pragma unroll
  for (int q = 0; q < kThreadM / 2; ++q) {
    const double2 v = *reinterpret_cast<const double2*>(As + p * Cfg::kLdA + wr + 16 * q);
    f.a[2 * q] = v.x;
    f.a[2 * q + 1] = v.y;
  }
#pragma unroll
  for (int q = 0; q < kThreadN / 2; ++q) {
    const double2 v = *reinterpret_cast<const double2*>(Bs + p * Cfg::kLdB + wc + 8 * q);
    f.b[2 * q] = v.x;
    f.b[2 * q + 1] = v.y;
  }
  // LAB:SKELETON
  for (double& x : f.a) x = 0.0;
  for (double& x : f.b) x = 0.0;
  // LAB:SOLUTION-END
}

// The outer product of one k step: 8 values of A and 8 of B, each used 8
// times straight from registers, feed 64 FMAs.
__device__ __forceinline__ void multiply(const Fragments& f, double (&acc)[kThreadM][kThreadN]) {
  // LAB:SOLUTION-BEGIN  acc[x][y] = fma(a[x], b[y], acc[x][y]) for the 64 pairs
#pragma unroll
  for (int x = 0; x < kThreadM; ++x)
#pragma unroll
    for (int y = 0; y < kThreadN; ++y) acc[x][y] = fma(f.a[x], f.b[y], acc[x][y]);
  // LAB:SKELETON
  // LAB:SOLUTION-END
}

// How a kernel walks the pipeline (pipeline.cuh): the refill before the
// multiply (the classic double buffer), after it, or after it with each k
// step's operands loaded during the step before, across the barrier too.
enum class Order { kRefillFirst, kRefillAfter, kFetchAhead };

// Given: C(i, j) <- alpha * acc + beta * C(i, j) for this thread's 8 x 8 block
// (rows row0 + 16 q + {0,1}, columns col0 + 8 q + {0,1}), skipping what lies
// outside C and never reading C when beta == 0.
struct Epilogue {
  __device__ __forceinline__ static void write(const double (&acc)[kThreadM][kThreadN], double alpha,
                                               double beta, double* c, int64_t ldc, int64_t row0,
                                               int64_t col0, int64_t m, int64_t n) {
#pragma unroll
    for (int x = 0; x < kThreadM; ++x) {
      const int64_t i = row0 + 16 * (x / 2) + x % 2;
      if (i >= m) continue;
#pragma unroll
      for (int y = 0; y < kThreadN; ++y) {
        const int64_t j = col0 + 8 * (y / 2) + y % 2;
        if (j >= n) continue;
        double& cij = c[i + j * ldc];
        cij = alpha * acc[x][y] + (beta == 0.0 ? 0.0 : beta * cij);
      }
    }
  }
};

// One block computes a BM x BN tile of C (which one: tile_of_block).
template <int BM, int BN, int BK, int kStages, int kMinBlocks, Order kOrder>
__global__ void __launch_bounds__(SimtConfig<BM, BN, BK, kStages>::kThreads, kMinBlocks)
    simt_kernel(double alpha, const double* __restrict__ a, int64_t lda, const double* __restrict__ b,
                int64_t ldb, double beta, double* __restrict__ c, int64_t ldc, int64_t m, int64_t n,
                int64_t k) {
  using Cfg = SimtConfig<BM, BN, BK, kStages>;
  extern __shared__ __align__(16) double smem[];  // kStages x (As[BK][kLdA], Bs[BK][kLdB])
  int64_t tm, tn;
  tile_of_block(blockIdx.x, (m + BM - 1) / BM, (n + BN - 1) / BN, &tm, &tn);
  const int64_t m0 = tm * BM, n0 = tn * BN;
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  // This thread's 8 x 8 block, relative to the block tile: rows wr + 16 q + {0,1}, columns wc + 8 q + {0,1}.
  const ThreadInWarp me(lane);
  const int wr = (warp % Cfg::kWarpsM) * kWarpM + 2 * me.tr;
  const int wc = (warp / Cfg::kWarpsM) * kWarpN + 2 * me.tc;
  const typename Cfg::Loader loader(a, lda, b, ldb, m0, n0, m, n, k);
  double acc[kThreadM][kThreadN] = {};
  if constexpr (kOrder == Order::kFetchAhead) {
    Fragments next;  // the operands of the next k step
    for_each_slice_prefetch<kStages, BK, Cfg::kLdA, Cfg::kStage>(
        loader, smem, k, [&](const double* As, const double* Bs) { load_fragments<Cfg>(As, Bs, wr, wc, 0, next); },
        [&](const double* As, const double* Bs, const double* next_As, const double* next_Bs) {
#pragma unroll
          for (int p = 0; p < BK; ++p) {
            const Fragments cur = next;
            if (p + 1 < BK) load_fragments<Cfg>(As, Bs, wr, wc, p + 1, next);
            else load_fragments<Cfg>(next_As, next_Bs, wr, wc, 0, next);  // the next slice's first step
            multiply(cur, acc);
          }
        });
  } else {
    for_each_slice<kStages, BK, Cfg::kLdA, Cfg::kStage, kOrder == Order::kRefillAfter>(
        loader, smem, k, [&](const double* As, const double* Bs) {
#pragma unroll
          for (int p = 0; p < BK; ++p) {
            Fragments f;
            load_fragments<Cfg>(As, Bs, wr, wc, p, f);
            multiply(f, acc);
          }
        });
  }
  Epilogue::write(acc, alpha, beta, c, ldc, m0 + wr, n0 + wc, m, n);
}

template <int BM, int BN, int BK, int kStages, int kMinBlocks, Order kOrder>
void launch(double alpha, lab::ConstMatView A, lab::ConstMatView B, double beta, lab::MatView C,
            cudaStream_t stream) {
  using Cfg = SimtConfig<BM, BN, BK, kStages>;
  auto kernel = simt_kernel<BM, BN, BK, kStages, kMinBlocks, kOrder>;
  allow_dynamic_smem(reinterpret_cast<const void*>(kernel), Cfg::kSmemBytes);
  kernel<<<tile_count(C, BM, BN), Cfg::kThreads, Cfg::kSmemBytes, stream>>>(
      alpha, A.data, A.ld, B.data, B.ld, beta, C.data, C.ld, C.rows, C.cols, A.cols);
  LAB_CUDA_CHECK_LAUNCH();
}

// The block tiles this file is built with (bm, bn, bk): pipeline depth, blocks
// per multiprocessor, and the order of the pipeline (Order). Measured on an
// H100 (see the handout): 128 x 64 tiles, two blocks per multiprocessor, four
// stages with the operands fetched ahead were the fastest or level with the
// fastest from n = 1024 to 8192; 128 x 128 x 32 is the classic double buffer
// (refill first), kept to compare.
constexpr KernelChoice kKernels[] = {
    {128, 64, 16, launch<128, 64, 16, 4, 2, Order::kFetchAhead>},     // 4 warps, two blocks per SM
    {128, 128, 16, launch<128, 128, 16, 3, 1, Order::kRefillAfter>},  // 8 warps
    {128, 128, 32, launch<128, 128, 32, 2, 1, Order::kRefillFirst>},  // 8 warps, the classic double buffer
    {64, 64, 16, launch<64, 64, 16, 3, 4, Order::kRefillAfter>},      // 2 warps, four blocks per SM
};

// 128 x 64 tiles, unless there are fewer of them than half the
// multiprocessors (at n = 1024 on an H100, 128 such tiles for 132 SMs, they
// still beat 64 x 64 tiles).
lab::step06::Tile pick(int64_t m, int64_t n) {
  const int64_t sms = lab::cuda::device_info().sm_count;
  const int64_t tiles = ((m + 127) / 128) * ((n + 63) / 64);
  return tiles >= sms / 2 ? lab::step06::Tile{128, 64, 16} : lab::step06::Tile{64, 64, 16};
}

}  // namespace

std::vector<lab::step06::Tile> lab::step06::simt_tiles() { return detail::tiles_of(kKernels); }

void lab::step06::dgemm(double alpha, ConstMatView A, ConstMatView B, double beta, MatView C,
                        cudaStream_t stream, Tile tile) {
  check_gemm_args(A, B, C);
  if (cuda::gemm_quick_return(alpha, A, B, beta, C, stream)) return;
  // LAB:SOLUTION-BEGIN
  // LAB:SKELETON
  LAB_TODO("step06 dgemm: write load_fragments and multiply (see the handout), then delete this line");
  // LAB:SOLUTION-END
  if (tile.bm == 0) tile = pick(C.rows, C.cols);
  if (tile.bk == 0) tile.bk = 16;
  detail::run_tile("step06 dgemm", kKernels, tile, alpha, A, B, beta, C, stream);
}
