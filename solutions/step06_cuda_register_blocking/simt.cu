// step06 — TODO for the student: the register-blocked kernel on the CUDA cores.
//
// What to do: write the body of simt_kernel so that each thread accumulates an
// 8 x 8 block of C in registers. The block's tiles of A and B arrive in shared
// memory one BK-wide slice of k at a time, in a ring of kStages buffers: while
// the block multiplies slice s, the copies of slice s + kStages - 1 are already
// on their way (SliceLoader, given, issues them), so one __syncthreads per slice
// is enough. With kStages = 2 this is the classic double buffer. The epilogue
// (writing C) is given. Read step06_cuda_register_blocking/README.md first.
// Test:   ctest --test-dir build/both -L step06 --output-on-failure
// Time:   build/both/bin/step06_cuda_register_blocking --n 4096 --variant simt
#include <stdexcept>
#include <string>

#include "lab/cuda.hpp"
#include "lab/gemm_args.hpp"
#include "lab/todo.hpp"
#include "pipeline.cuh"
#include "register_blocking.hpp"
#include "tile_order.cuh"

namespace {

using lab::step06::detail::Async;
using lab::step06::detail::SliceLoader;
using lab::step06::detail::tile_of_block;

// A warp computes a 64 x 32 tile of C: its 32 threads form an 8 x 4 grid, each
// thread an 8 x 8 block. Thread (tr, tc) = (lane % 8, lane / 8) owns the rows
//   2 tr + 16 q + {0, 1},  q = 0..3   (four pairs, 16 rows apart)
// and the columns 2 tc + 8 q + {0, 1}. A pair is one 16-byte double2 load from
// shared memory, and for each q the 8 threads tr = 0..7 read 8 neighbouring
// pairs: 128 contiguous bytes, one shared-memory wavefront, no bank conflict.
constexpr int kWarpM = 64, kWarpN = 32, kThreadM = 8, kThreadN = 8;

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
  static_assert(kStages >= 2, "a pipeline needs two stages at least");
  using Loader = SliceLoader<BM, BN, BK, kThreads, kLdA, kLdB, false>;
};

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
template <int BM, int BN, int BK, int kStages, int kMinBlocks>
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
  const int wr = (warp % Cfg::kWarpsM) * kWarpM + 2 * (lane % 8);
  const int wc = (warp / Cfg::kWarpsM) * kWarpN + 2 * (lane / 8);
  const typename Cfg::Loader loader(a, lda, b, ldb, m0, n0, m, n, k);
  double acc[kThreadM][kThreadN] = {};
  // LAB:SOLUTION-BEGIN  prefetch kStages - 1 slices; per slice s: wait, sync, copy slice s + kStages - 1, multiply
  const int64_t slices = (k + BK - 1) / BK;
  // One commit per slice, even an empty one, so that "all but the newest
  // kStages - 2 groups have landed" always means "slice s has landed".
#pragma unroll
  for (int s = 0; s < kStages - 1; ++s) {
    if (s < slices) loader.copy(smem + s * Cfg::kStage, smem + s * Cfg::kStage + BK * Cfg::kLdA, s * BK);
    Async::commit();
  }
  for (int64_t s = 0; s < slices; ++s) {
    Async::wait<kStages - 2>();  // this thread's copies of slice s are done
    __syncthreads();             // everyone's are, and everyone finished slice s - 1
    // Refill the buffer slice s - 1 used: nobody reads it any more.
    const int64_t next = s + kStages - 1;
    double* const fill = smem + (next % kStages) * Cfg::kStage;
    if (next < slices) loader.copy(fill, fill + BK * Cfg::kLdA, next * BK);
    Async::commit();

    const double* as = smem + (s % kStages) * Cfg::kStage + wr;
    const double* bs = smem + (s % kStages) * Cfg::kStage + BK * Cfg::kLdA + wc;
#pragma unroll
    for (int p = 0; p < BK; ++p) {
      // 4 + 4 double2 loads feed 64 FMAs: 8 values of A and 8 of B, each used
      // 8 times straight from registers.
      double av[kThreadM], bv[kThreadN];
#pragma unroll
      for (int q = 0; q < kThreadM / 2; ++q) {
        const double2 v = *reinterpret_cast<const double2*>(as + p * Cfg::kLdA + 16 * q);
        av[2 * q] = v.x;
        av[2 * q + 1] = v.y;
      }
#pragma unroll
      for (int q = 0; q < kThreadN / 2; ++q) {
        const double2 v = *reinterpret_cast<const double2*>(bs + p * Cfg::kLdB + 8 * q);
        bv[2 * q] = v.x;
        bv[2 * q + 1] = v.y;
      }
#pragma unroll
      for (int x = 0; x < kThreadM; ++x)
#pragma unroll
        for (int y = 0; y < kThreadN; ++y) acc[x][y] = fma(av[x], bv[y], acc[x][y]);
    }
  }
  Async::wait<0>();  // leave no copy in flight (the last groups are empty)
  // LAB:SKELETON
  // LAB:SOLUTION-END
  Epilogue::write(acc, alpha, beta, c, ldc, m0 + wr, n0 + wc, m, n);
}

template <int BM, int BN, int BK, int kStages, int kMinBlocks>
void launch(double alpha, lab::ConstMatView A, lab::ConstMatView B, double beta, lab::MatView C,
            cudaStream_t stream) {
  using Cfg = SimtConfig<BM, BN, BK, kStages>;
  auto kernel = simt_kernel<BM, BN, BK, kStages, kMinBlocks>;
  // Above 48 KiB a block must opt in to its dynamic shared memory (once per kernel).
  static const bool opted_in = [&] {
    LAB_CUDA_CHECK(
        cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, int(Cfg::kSmemBytes)));
    return true;
  }();
  (void)opted_in;
  const int64_t tiles = ((C.rows + BM - 1) / BM) * ((C.cols + BN - 1) / BN);
  kernel<<<unsigned(tiles), Cfg::kThreads, Cfg::kSmemBytes, stream>>>(alpha, A.data, A.ld, B.data, B.ld, beta,
                                                                      C.data, C.ld, C.rows, C.cols, A.cols);
  LAB_CUDA_CHECK_LAUNCH();
}

// The block tiles this file is built with (bm, bn, bk) and their pipeline depth.
using Launcher = void (*)(double, lab::ConstMatView, lab::ConstMatView, double, lab::MatView, cudaStream_t);
struct KernelChoice {
  int bm, bn, bk;
  Launcher run;
};
// Measured on an H100 (see the handout): 128 x 128 tiles with k slices of 32
// and a plain double buffer were fastest once every multiprocessor gets a
// block; on smaller C, 128 x 64 tiles (two blocks per multiprocessor).
constexpr KernelChoice kKernels[] = {
    {128, 128, 16, launch<128, 128, 16, 3, 1>},  // 8 warps, three stages
    {128, 128, 32, launch<128, 128, 32, 2, 1>},  // 8 warps, a plain double buffer
    {128, 64, 16, launch<128, 64, 16, 3, 2>},    // 4 warps, two blocks per multiprocessor
    {64, 64, 16, launch<64, 64, 16, 3, 4>},      // 2 warps, four blocks per multiprocessor
};

// The largest tile that still gives every multiprocessor a block.
lab::step06::Tile pick(int64_t m, int64_t n) {
  const int64_t sms = lab::cuda::device_info().sm_count;
  const int64_t big_tiles = ((m + 127) / 128) * ((n + 127) / 128);
  return big_tiles >= sms ? lab::step06::Tile{128, 128, 32} : lab::step06::Tile{128, 64, 16};
}

}  // namespace

void lab::step06::dgemm(double alpha, ConstMatView A, ConstMatView B, double beta, MatView C,
                        cudaStream_t stream, Tile tile) {
  check_gemm_args(A, B, C);
  if (cuda::gemm_quick_return(alpha, A, B, beta, C, stream)) return;
  // LAB:SOLUTION-BEGIN
  // LAB:SKELETON
  LAB_TODO("step06 dgemm: write the body of simt_kernel (see the handout), then delete this line");
  // LAB:SOLUTION-END
  if (tile.bm == 0) tile = pick(C.rows, C.cols);
  if (tile.bk == 0) tile.bk = 16;
  std::string known;
  for (const KernelChoice& v : kKernels) {
    if (v.bm == tile.bm && v.bn == tile.bn && v.bk == tile.bk) return v.run(alpha, A, B, beta, C, stream);
    known += " " + std::to_string(v.bm) + "," + std::to_string(v.bn) + "," + std::to_string(v.bk);
  }
  throw std::invalid_argument("step06 dgemm: no kernel for tile " + std::to_string(tile.bm) + "," +
                              std::to_string(tile.bn) + "," + std::to_string(tile.bk) + " (built:" + known +
                              ")");
}
