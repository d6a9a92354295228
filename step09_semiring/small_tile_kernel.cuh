// step09 — a candidate for step09_ceiling --sweep: the FP64 min-plus (max-plus)
// product with small register tiles a thread and many warps a multiprocessor.
//
// Why: the sweep's register-tile probe (NOTES.md) found the update alone, in
// registers, at 65 % of the add + select bound with the shipped tile's 8 x 4
// accumulators a thread at 12 warps a multiprocessor, 70 % with 4 x 4 at 32
// warps and 85 % with 2 x 2 at 64 warps. simt_kernel.cuh cannot go there: its
// warp layout (step06's) gives every thread 8 rows. This kernel has its own.
//
// The layout. A thread owns TM x TN elements of C (TM, TN = 2 or 4), in pairs
// of neighbouring rows and of neighbouring columns. A warp's 32 lanes form
// step06's 8 x 4 grid (ThreadInWarp: tr from lane bits 1-3, tc from bits 0
// and 4), so a warp tile is 16 (TM / 2) rows x 8 (TN / 2) columns, and thread
// (tr, tc) of the warp whose tile starts at (wr0, wc0) owns
//   rows    wr0 + 2 tr + 16 q + {0, 1},  q < TM / 2
//   columns wc0 + 2 tc +  8 q + {0, 1},  q < TN / 2.
// For 2 x 2 that is one pair of rows and one of columns: the warp tile is
// 16 x 8, and a 64 x 64 block tile takes 32 warps (1024 threads); two such
// blocks fill a multiprocessor's 64 warps, which leaves 32 registers a thread
// (8 of them accumulators, 8 the k step's operands). 4 x 2 (warp tile 32 x 8)
// fits 48 warps in 40 registers, 4 x 4 (32 x 16) 32 warps in 64.
//
// How the operands reach a thread. Each k step, from the stage of shared
// memory that holds the block's slice (As[p][i] and Bs[p][j], both k-major,
// filled by 8-byte cp.async copies through a ring of kStages stages, as in
// step06), one 16-byte load per pair: TM / 2 of A and TN / 2 of B, so 2 x 2
// takes 2 loads for its 4 updates. Shuffles would not do better: a shuffle
// moves 4 bytes a lane where a shared-memory load moves 16, and both use the
// same return path of 128 bytes a cycle to the registers. That path is the
// other limit of a small tile: a 16-byte load costs the multiprocessor 4 of
// its cycles, or 2 when the lanes that share an address come in pairs (lanes
// i and i ^ 1 for A, i and i ^ 2 for B: what the 8 x 4 grid gives). 2 x 2 at
// the bound's rate (one update a lane every 4 issue slots, 4 schedulers) asks
// for 2 such loads a warp every 16 slots of each scheduler: the shared memory
// would be busy 100 % of the time at the bound; 4 x 2 asks for 75 %, 4 x 4
// for 50 % (the shipped 8 x 4, 37.5 %).
//
// Instructions an update, from the code: the update itself is DADD, DSETP and
// two FSEL (4); the loads add (TM + TN) / 2 per TM TN updates: 2 x 2 = 4.5,
// 4 x 2 = 4.375, 4 x 4 = 4.25 (so 2 x 2 issues at most 89 % of the bound's
// updates); a slice adds its barrier, its copies, their addresses and the
// ring's bookkeeping once per BK steps: 60 to 100 instructions a thread in
// the PTX of the loop, 0.5 an update more for 2 x 2 with BK = 32, 0.36 with
// BK = 48, 0.29 for 4 x 2 and 0.2 for 4 x 4 with BK = 32 (about 5.0, 4.9,
// 4.7 and 4.45 in all, against the shipped 8 x 4's 4.45 in SASS;
// sass_mix.py counts the SASS of these too).
//
// Exactness: every accumulator takes its k steps in order from 0, as the
// shipped kernel's do, with the same update, so the two agree bit for bit
// (the first of two equal sums, +0 or -0, stays in both). Where k ends inside
// the last slice, its steps past k take step k - 1 again, which changes
// nothing (see small_tile_kernel); rows and columns past C are computed on
// copies of the last row and column and never stored.
#pragma once

#include <cstddef>
#include <cstdint>

#include "lab/cuda.hpp"
#include "launch.cuh"       // step06: allow_dynamic_smem
#include "pipeline.cuh"     // step06: Async (cp.async)
#include "semiring.hpp"
#include "tile_order.cuh"   // step06: which tile of C a block computes
#include "warp_layout.cuh"  // step06: ThreadInWarp, the 8 x 4 lane grid

namespace lab::step09::detail {

// TM x TN accumulators a thread, kWarpsM x kWarpsN warps a block, k in slices
// of BK through kStages stages of shared memory, kMinBlocks blocks a
// multiprocessor (the register budget: 65536 / (kThreads kMinBlocks) a thread).
template <int TM_, int TN_, int kWarpsM_, int kWarpsN_, int BK_, int kStages_, int kMinBlocks_>
struct SmallTile {
  static constexpr int TM = TM_, TN = TN_, BK = BK_, kStages = kStages_, kMinBlocks = kMinBlocks_;
  static constexpr int kWarpsM = kWarpsM_, kWarpsN = kWarpsN_, kWarps = kWarpsM * kWarpsN;
  static constexpr int kThreads = 32 * kWarps;
  static constexpr int kWarpRows = 16 * (TM / 2), kWarpCols = 8 * (TN / 2);  // 8 x 4 lanes, pairs
  static constexpr int BM = kWarpsM * kWarpRows, BN = kWarpsN * kWarpCols;
  // Row strides (doubles) of As[p][i] and Bs[p][j]. A is copied along the
  // rows of As by consecutive lanes: no padding needed. B is copied down its
  // columns (kBPStep = 8 or 16 k offsets of 32 / kBPStep columns a warp):
  // with BN + 2 = 2 (mod 16) those 32 lanes fall on the 16 8-byte bank pairs
  // two by two, the fewest a 256-byte write can take; even, so that pairs
  // stay 16-byte aligned.
  static constexpr int kLdA = BM, kLdB = BN + 2;
  static constexpr int kStageWords = BK * (kLdA + kLdB);
  static constexpr size_t kSmemBytes = sizeof(double) * kStages * kStageWords;
  // The copies: A(i, p) by thread i + BM (p mod kAPStep), kACopies k offsets
  // kAPStep apart; B(p, j) by thread (p mod kBPStep) + kBPStep j, kBCopies k
  // offsets kBPStep apart. Each thread keeps one row of A and one column of B.
  static constexpr int kAPStep = kThreads / BM, kACopies = BK / kAPStep;
  static constexpr int kBPStep = kThreads / BN, kBCopies = BK / kBPStep;
  // Whether a thread keeps its copies' source pointers from slice to slice
  // (the kernel's sources()): yes up to 4 x 2, where ptxas fits them without a
  // spill; 4 x 4 at 64 registers has no room.
  static constexpr bool kCarry = TM * TN <= 8;
  static_assert(TM % 2 == 0 && TN % 2 == 0 && TM <= 4 && TN <= 4, "pairs of rows and columns, up to 4 x 4");
  static_assert(kThreads <= 1024 && kThreads % BM == 0 && BK % kAPStep == 0,
                "the A copy grid must tile BM x BK");
  static_assert(kThreads % BN == 0 && BK % kBPStep == 0 && kBPStep >= 8,
                "the B copy grid must tile BK x BN, with 64 contiguous bytes of a column at least");
  static_assert(kStages >= 2, "a ring of two stages at least");
  // kMinBlocks blocks must also fit the shared memory of an H100 (228 KiB a
  // multiprocessor, 1 KiB of it reserved per block), or the occupancy the
  // tile is named for is not what runs.
  static_assert(kMinBlocks * (kSmemBytes + 1024) <= 228 * 1024,
                "kMinBlocks blocks of stages must fit 228 KiB");
};

// Where a thread's work lies, from its index t in the block. The kernel asks
// again each slice (fresh_tid): at 32 registers a thread for 2 x 2 (64 for
// 4 x 4, with 32 accumulators), what a few instructions work out from
// threadIdx is not worth a register across the loop.
template <class Cfg>
struct SmallTileThread {
  // (Unsigned: t / 32 and t % BM are then a shift and a mask.)
  // Its C block starts at row wr, column wc of the block's tile (8 x 4 lanes, step06's order).
  __device__ __forceinline__ static int wr(unsigned t) {
    return int(t / 32 % Cfg::kWarpsM) * Cfg::kWarpRows +
           2 * lab::step06::detail::ThreadInWarp(int(t % 32)).tr;
  }
  __device__ __forceinline__ static int wc(unsigned t) {
    return int(t / 32 / Cfg::kWarpsM) * Cfg::kWarpCols +
           2 * lab::step06::detail::ThreadInWarp(int(t % 32)).tc;
  }
  // Its copies: A(ai, ap + kAPStep r) and B(bp + kBPStep r, bj) of the block's
  // tile and slice, into As[ap + kAPStep r][ai] and Bs[bp + kBPStep r][bj]. A
  // warp copies 32 neighbouring rows of a column of A, and kBPStep
  // neighbouring k offsets of 32 / kBPStep columns of B.
  __device__ __forceinline__ static int ai(unsigned t) { return int(t % Cfg::BM); }
  __device__ __forceinline__ static int ap(unsigned t) { return int(t / Cfg::BM); }
  __device__ __forceinline__ static int bp(unsigned t) { return int(t % Cfg::kBPStep); }
  __device__ __forceinline__ static int bj(unsigned t) { return int(t / Cfg::kBPStep); }
  __device__ __forceinline__ static int a_dst(unsigned t) { return ap(t) * Cfg::kLdA + ai(t); }
  __device__ __forceinline__ static int b_dst(unsigned t) {
    return Cfg::BK * Cfg::kLdA + bp(t) * Cfg::kLdB + bj(t);
  }
};

// threadIdx.x and blockIdx.x read afresh: a volatile asm is neither hoisted
// out of a loop nor merged with another read, so nothing computed from it
// stays live in a register across the k loop.
__device__ __forceinline__ unsigned fresh_tid() {
  unsigned t;
  asm volatile("mov.u32 %0, %%tid.x;" : "=r"(t));
  return t;
}
__device__ __forceinline__ unsigned fresh_ctaid() {
  unsigned b;
  asm volatile("mov.u32 %0, %%ctaid.x;" : "=r"(b));
  return b;
}

// step06's tile_of_block (tile_order.cuh), the same order, in 32-bit
// arithmetic: its 64-bit divisions are subroutines in SASS, and with them
// (run again for the epilogue, every accumulator live) the 4 x 4 tile
// spilled. The grid is 1-D: fewer than 2^32 tiles.
__device__ __forceinline__ void tile_of_block32(unsigned id, unsigned tiles_m, unsigned tiles_n, unsigned* tm,
                                                unsigned* tn) {
  constexpr unsigned kGroup = lab::step06::detail::kGroupRows;
  const unsigned per_group = kGroup * tiles_n;
  const unsigned first = id / per_group * kGroup;
  const unsigned rows = tiles_m - first < kGroup ? tiles_m - first : kGroup;
  const unsigned in_group = id % per_group;
  *tm = first + in_group % rows;
  *tn = in_group / rows;
}

// One block computes a BM x BN tile of C: C <- acc, or C (+) acc with
// `accumulate`, as semiring_kernel does.
//
// The edges take no test a copy and no zero fill: a copy whose row of A or
// column of B lies past the matrix reads the last one instead (what it
// computes there is never stored), and one past k reads step k - 1 again.
// Taking the same term twice changes nothing, bit for bit: after
// acc = s < acc ? s : acc, s < acc is false (acc <= s, or s is NaN; max-plus
// the same with >). So every copy reads a valid address, and only the last
// slice, where k ends inside it, works its k offsets out with a min.
template <class S, class Cfg, class Update>
__global__ void __launch_bounds__(Cfg::kThreads, Cfg::kMinBlocks)
    small_tile_kernel(const double* __restrict__ a, int64_t lda, const double* __restrict__ b, int64_t ldb,
                      double* __restrict__ c, int64_t ldc, int64_t m, int64_t n, int64_t k, bool accumulate) {
  using lab::step06::detail::Async;
  using Me = SmallTileThread<Cfg>;
  constexpr int TM = Cfg::TM, TN = Cfg::TN, BK = Cfg::BK, kStages = Cfg::kStages;
  extern __shared__ __align__(16) double smem[];  // kStages x (As[BK][kLdA], Bs[BK][kLdB])
  const unsigned tiles_m = unsigned((m + Cfg::BM - 1) / Cfg::BM),
                 tiles_n = unsigned((n + Cfg::BN - 1) / Cfg::BN);
  unsigned tm, tn;
  tile_of_block32(fresh_ctaid(), tiles_m, tiles_n, &tm, &tn);

  const int slices = int((k + BK - 1) / BK), whole_slices = int(k / BK);

  // Where this thread's copies of slice `slice` start: A(row, p0 + ap) and
  // B(p0 + bp, col), where a row of A or a column of B past the matrix is
  // read from the last one. With kCarry the two pointers go from one slice to
  // the next in registers (4 a thread); without, they are worked out again
  // each slice from the block's tile (tm, tn: the same for the whole block)
  // and fresh_tid, a dozen instructions more a slice.
  auto sources = [&](int64_t p0, unsigned t, const double** as, const double** bs) {
    const int64_t row = int64_t(tm) * Cfg::BM + Me::ai(t), col = int64_t(tn) * Cfg::BN + Me::bj(t);
    *as = a + (row < m ? row : m - 1) + (p0 + Me::ap(t)) * lda;
    *bs = b + (p0 + Me::bp(t)) + (col < n ? col : n - 1) * ldb;
  };
  const double *a_next = nullptr, *b_next = nullptr;
  if constexpr (Cfg::kCarry) sources(0, threadIdx.x, &a_next, &b_next);

  // Issues the copies of slice `slice` (the slices go in order) into stage `stage`.
  auto refill = [&](int slice, int stage) {
    if (slice < slices) {
      const unsigned t = fresh_tid();
      const int64_t p0 = int64_t(slice) * BK;
      const double *as = a_next, *bs = b_next;
      if constexpr (Cfg::kCarry) {
        a_next += BK * lda;
        b_next += BK;
      } else {
        sources(p0, t, &as, &bs);
      }
      double* const As = smem + stage * Cfg::kStageWords + Me::a_dst(t);
      double* const Bs = smem + stage * Cfg::kStageWords + Me::b_dst(t);
      if (slice < whole_slices) {
#pragma unroll
        for (int r = 0; r < Cfg::kACopies; ++r)
          Async::copy8(As + r * Cfg::kAPStep * Cfg::kLdA, as + r * Cfg::kAPStep * lda);
#pragma unroll
        for (int r = 0; r < Cfg::kBCopies; ++r)
          Async::copy8(Bs + r * Cfg::kBPStep * Cfg::kLdB, bs + r * Cfg::kBPStep);
      } else {
        // k ends in this slice: offsets past it read its last step
        const int last = int(k - p0) - 1;  // 0..BK-2
#pragma unroll
        for (int r = 0; r < Cfg::kACopies; ++r) {
          const int p = Me::ap(t) + r * Cfg::kAPStep;
          Async::copy8(As + r * Cfg::kAPStep * Cfg::kLdA,
                       as + int64_t((p < last ? p : last) - Me::ap(t)) * lda);
        }
#pragma unroll
        for (int r = 0; r < Cfg::kBCopies; ++r) {
          const int p = Me::bp(t) + r * Cfg::kBPStep;
          Async::copy8(Bs + r * Cfg::kBPStep * Cfg::kLdB, bs + ((p < last ? p : last) - Me::bp(t)));
        }
      }
    }
    Async::commit();  // one group a slice, even an empty one: wait<kStages - 2> then means slice s
  };

  double acc[TM][TN];
#pragma unroll
  for (int x = 0; x < TM; ++x)
#pragma unroll
    for (int y = 0; y < TN; ++y) acc[x][y] = S::zero();

  // The ring: slice s lives in stage s mod kStages. Iteration s waits for
  // slice s, synchronizes the block, computes it and refills the stage slice
  // s - 1 used (everyone is past it) with slice s + kStages - 1: after the
  // compute, so that every warp starts on its arithmetic right after the
  // barrier, or, with two stages, before it (the copies then have the whole
  // slice's compute to land, as in step06's double buffer).
#pragma unroll
  for (int s = 0; s < kStages - 1; ++s) refill(s, s);
  int read = 0;  // the stage of slice s
  for (int s = 0; s < slices; ++s) {
    Async::wait<kStages - 2>();  // this thread's copies of slice s have landed
    __syncthreads();             // everyone's have, and everyone is done with slice s - 1
    if constexpr (kStages == 2) refill(s + 1, read ^ 1);
    const unsigned t = fresh_tid();
    const double* const As = smem + read * Cfg::kStageWords + Me::wr(t);
    const double* const Bs = smem + read * Cfg::kStageWords + BK * Cfg::kLdA + Me::wc(t);
#pragma unroll
    for (int p = 0; p < BK; ++p) {
      double av[TM], bv[TN];
#pragma unroll
      for (int q = 0; q < TM / 2; ++q) {
        const double2 v = *reinterpret_cast<const double2*>(As + p * Cfg::kLdA + 16 * q);
        av[2 * q] = v.x;
        av[2 * q + 1] = v.y;
      }
#pragma unroll
      for (int q = 0; q < TN / 2; ++q) {
        const double2 v = *reinterpret_cast<const double2*>(Bs + p * Cfg::kLdB + 8 * q);
        bv[2 * q] = v.x;
        bv[2 * q + 1] = v.y;
      }
#pragma unroll
      for (int x = 0; x < TM; ++x)
#pragma unroll
        for (int y = 0; y < TN; ++y) acc[x][y] = Update::update(acc[x][y], av[x], bv[y]);
    }
    if constexpr (kStages > 2) refill(s + kStages - 1, read == 0 ? kStages - 1 : read - 1);
    read = read == kStages - 1 ? 0 : read + 1;
  }
  Async::wait<0>();

  // C <- acc, or C (+) acc, for rows wr + 16 q + {0, 1} and columns wc + 8 q +
  // {0, 1} of the tile (where it was is worked out again, see fresh_tid).
  const unsigned t = fresh_tid();
  tile_of_block32(fresh_ctaid(), tiles_m, tiles_n, &tm, &tn);
  const int64_t i0 = int64_t(tm) * Cfg::BM + Me::wr(t), j0 = int64_t(tn) * Cfg::BN + Me::wc(t);
#pragma unroll
  for (int x = 0; x < TM; ++x) {
    const int64_t i = i0 + 16 * (x / 2) + x % 2;
    if (i >= m) continue;
#pragma unroll
    for (int y = 0; y < TN; ++y) {
      const int64_t j = j0 + 8 * (y / 2) + y % 2;
      if (j >= n) continue;
      double& cij = c[i + j * ldc];
      cij = accumulate ? S::add(cij, acc[x][y]) : acc[x][y];
    }
  }
}

/// Queues small_tile_kernel<S, Cfg, Update> for C (m x n, m, n > 0) and k > 0 on `stream`.
template <class S, class Cfg, class Update>
void launch_small_tile(const double* a, int64_t lda, const double* b, int64_t ldb, double* c, int64_t ldc,
                       int64_t m, int64_t n, int64_t k, bool accumulate, cudaStream_t stream) {
  auto kernel = small_tile_kernel<S, Cfg, Update>;
  lab::step06::detail::allow_dynamic_smem(reinterpret_cast<const void*>(kernel), Cfg::kSmemBytes);
  // All of the L1 / shared memory as shared memory (a hint, once): the
  // tile's occupancy needs kMinBlocks x 65 to 100 KiB of it.
  static const bool carveout = [&] {
    LAB_CUDA_CHECK(cudaFuncSetAttribute(reinterpret_cast<const void*>(kernel),
                                        cudaFuncAttributePreferredSharedMemoryCarveout,
                                        int(cudaSharedmemCarveoutMaxShared)));
    return true;
  }();
  (void)carveout;
  const int64_t tiles = ((m + Cfg::BM - 1) / Cfg::BM) * ((n + Cfg::BN - 1) / Cfg::BN);
  kernel<<<unsigned(tiles), Cfg::kThreads, Cfg::kSmemBytes, stream>>>(a, lda, b, ldb, c, ldc, m, n, k,
                                                                      accumulate);
  LAB_CUDA_CHECK_LAUNCH();
}

}  // namespace lab::step09::detail
