// step06 — given: the parts the DMMA kernels beside the teaching one share
// (dmma_variants.cu, ata_dmma.cu): a block shape, B-type operands stored
// column by column with swizzled pairs, and the multiply loops over the
// cp.async ring: multiply (16-deep mma steps, as the teaching kernel) and
// multiply_k8 (8-deep steps, the operands of a whole step held twice).
#pragma once

#include <cstdint>

#include "mma_f64.cuh"
#include "pipeline.cuh"

namespace lab::step06::detail {

constexpr int kStepK = 16;  // the k of one mma.sync m16n8k16

// A kernel's shape: the block tile, its warps (kWarpsM x kWarpsN, each
// computing a kWM x kWN tile of C out of kMI x kNI mma pieces), the ring's
// depth and the blocks per multiprocessor the registers must allow. Both
// multiply loops load a warp's next operands while the tensor cores work on
// the current ones.
template <int BM_, int BN_, int BK_, int kWarpsM_, int kWarpsN_, int kStages_, int kMinBlocks_>
struct Shape {
  static constexpr int BM = BM_, BN = BN_, BK = BK_, kWarpsM = kWarpsM_, kWarpsN = kWarpsN_;
  static constexpr int kStages = kStages_, kMinBlocks = kMinBlocks_;
  static constexpr int kThreads = kWarpsM * kWarpsN * 32;
  static constexpr int kWM = BM / kWarpsM, kWN = BN / kWarpsN, kMI = kWM / 16, kNI = kWN / 8;
  // As[p][i] as in the teaching kernel (row stride BM + 2, see dmma.cu);
  // Bs[j][p] with BK doubles per column and no padding. (A kernel whose A
  // lies otherwise redefines kLdA, kStageA, kStage and kSmemBytes.)
  static constexpr int kLdA = BM + 2;
  static constexpr int kStageA = BK * kLdA, kStage = kStageA + BN * BK;
  static constexpr size_t kSmemBytes = sizeof(double) * kStages * kStage;
  static_assert(kWM % 16 == 0 && kWN % 8 == 0, "a warp tile is a whole number of 16 x 8 mma pieces");
  static_assert(BK % kStepK == 0, "a slice is a whole number of mma k steps");
  static_assert(kSmemBytes <= 227 * 1024, "an H100 block has at most 227 KiB of shared memory");
  // The k offset of fragment slot (t, v) within a k step, as in dmma.cu:
  // b[0], b[1] are the pair at 2 t, b[2], b[3] the pair at 8 + 2 t.
  __host__ __device__ static constexpr int kslot(int t, int v) { return 2 * t + (v & 1) + 8 * (v >> 1); }
};

// Where pair q (k offsets 2 q, 2 q + 1) of column j of a panel stored column
// by column (BK doubles each, no padding) sits in the column. A fragment load
// of 8 lanes (g = 0..1, t = 0..3) reads pair t (or t + 4) of two columns,
// j and j + 1 (B operands) or j and j + 2 (ata_dmma's A operands); without
// padding every column starts on the same bank, and the two lanes with the
// same t would collide. Flipping bit 2 of q where bit 0 of j ^ (j >> 1) is
// set sends one of them to the other half of the 128-byte bank row for
// both pairings (j = 0 mod 4). The flip keeps pairs within their group of
// 8 (one k step), so a k step's offset (8 pairs) adds outside it; copies
// that move by a multiple of 4 columns keep it.
__host__ __device__ constexpr int BPairSlot(int j, int q) { return q ^ (((j ^ (j >> 1)) & 1) << 2); }

// The B operands of one k step: bf[ni][v] = B(kslot(t, v), wn0 + 8 ni + g),
// pairs t and t + 4 of the column, where BPairSlot put them (wn0 + 8 ni is a
// multiple of 8: the swizzle depends on g alone).
template <class S, int kPieces>
__device__ __forceinline__ void fragments_b(const double* Bs, int wn0, int g, int t,
                                            double (&bf)[kPieces][4]) {
  const int lo = 2 * BPairSlot(g, t), hi = 2 * BPairSlot(g, t + 4);
#pragma unroll
  for (int ni = 0; ni < kPieces; ++ni) {
    const double* const col = Bs + (wn0 + 8 * ni + g) * S::BK;
    const double2 first = *reinterpret_cast<const double2*>(col + lo);
    const double2 second = *reinterpret_cast<const double2*>(col + hi);
    bf[ni][0] = first.x;
    bf[ni][1] = first.y;
    bf[ni][2] = second.x;
    bf[ni][3] = second.y;
  }
}

// The warp's share of the block's product over k: the slices through the
// ring, the operands from shared memory, the mma into acc. FragA::load(As,
// kk, r0, g, t, af) reads the A operand of the 16-row piece at row r0 of the
// tile, k step kk of the slice (its layout is the kernel's choice); B is
// stored as fragments_b reads it.
template <class S, class FragA, class Loader>
__device__ __forceinline__ void multiply(const Loader& loader, double* smem, int64_t k, int wm0, int wn0,
                                         int g, int t, double (&acc)[S::kMI][S::kNI][4]) {
  // The teaching kernel's order: the operands of the next strip, k step or
  // slice are loaded before the current strip is multiplied.
  double na[8], nb[S::kNI][4];
  auto fetch = [&](const double* As, const double* Bs, int kk, int mi, bool with_b) {
    if (with_b) fragments_b<S>(Bs + kk * kStepK, wn0, g, t, nb);
    FragA::load(As, kk, wm0 + 16 * mi, g, t, na);
  };
  for_each_slice_prefetch<S::kStages, S::BK, S::kLdA, S::kStage>(
      loader, smem, k, [&](const double* As, const double* Bs) { fetch(As, Bs, 0, 0, true); },
      [&](const double* As, const double* Bs, const double* next_As, const double* next_Bs) {
#pragma unroll
        for (int kk = 0; kk < S::BK / kStepK; ++kk) {
          double bf[S::kNI][4];
#pragma unroll
          for (int ni = 0; ni < S::kNI; ++ni)
#pragma unroll
            for (int v = 0; v < 4; ++v) bf[ni][v] = nb[ni][v];
#pragma unroll
          for (int mi = 0; mi < S::kMI; ++mi) {
            double af[8];
#pragma unroll
            for (int v = 0; v < 8; ++v) af[v] = na[v];
            if (mi + 1 < S::kMI)
              fetch(As, Bs, kk, mi + 1, false);
            else if (kk + 1 < S::BK / kStepK)
              fetch(As, Bs, kk + 1, 0, true);
            else
              fetch(next_As, next_Bs, 0, 0, true);
#pragma unroll
            for (int ni = 0; ni < S::kNI; ++ni) Dmma::mma_16x8x16(acc[mi][ni], af, bf[ni]);
          }
        }
      });
}

// The operands of one 8-deep k step of a warp's tile for mma_16x8x8: a[mi]
// for each 16-row strip, b[ni] for each 8-column piece (24 doubles for the
// 64 x 32 warp tile, half of a 16-deep step's).
template <class S>
struct OperandsK8 {
  double a[S::kMI][4], b[S::kNI][2];
};

// Loads k step kk (k offsets 8 kk .. 8 kk + 7 of the slice) of the operands.
// The labels of the instruction are chosen so that each register pair is one
// 16-byte load: fragment k index t stands for k offset 8 kk + 2 t and t + 4
// for 8 kk + 2 t + 1 (a pair of neighbours in a column of B, BPairSlot's
// pair 4 kk + t), and mma rows g, g + 8 for rows 2 g, 2 g + 1 of the strip
// (neighbours in a row of As, k-major with stride kLdA). Two loads per strip
// of A, one per piece of B; like the teaching kernel's, free of bank
// conflicts (kLdA = 2 mod 16, BPairSlot).
template <class S>
__device__ __forceinline__ void load_a_k8(const double* As, int kk, int r0, int g, int t, double (&a)[4]) {
  const double* const p = As + (8 * kk + 2 * t) * S::kLdA + r0 + 2 * g;
  const double2 first = *reinterpret_cast<const double2*>(p);           // k index t
  const double2 second = *reinterpret_cast<const double2*>(p + S::kLdA);  // k index t + 4
  a[0] = first.x;
  a[1] = first.y;
  a[2] = second.x;
  a[3] = second.y;
}
// (col: the first column of the 8-column piece, a multiple of 8, so that the
// swizzle depends on g alone.)
template <class S>
__device__ __forceinline__ void load_b_k8(const double* Bs, int kk, int col, int g, int t, double (&b)[2]) {
  const double2 pair = *reinterpret_cast<const double2*>(Bs + (col + g) * S::BK + 2 * BPairSlot(g, 4 * kk + t));
  b[0] = pair.x;
  b[1] = pair.y;
}

// The warp's share of the block's product with 8-deep mma steps and the
// operands of a whole step held twice: while the tensor cores multiply step
// j out of one set, the warp loads step j + 1 into the other, and the two
// sets swap every step (a slice of BK = 16 is two steps, so each set keeps
// its registers from one slice to the next and nothing is copied). Step j +
// 1 crosses into the next slice at the end of each slice, so iteration s
// waits for slices s and s + 1, as in for_each_slice_prefetch. Within a step
// the mma go strip by strip (mi), and each load into the other set is placed
// where the registers it overwrites were last read (by the previous step's
// mma) at least a row of mma earlier, and where what it brings is needed at
// least a row of mma later: the A strips of the next step one row of mma
// apart, its B pieces halfway through.
//
// The ring: one __syncthreads per slice, between its two steps. Right
// after it, iteration s refills the stage slice s - 1 used (nobody reads it
// any more) with slice s + kStages - 1, whose copies then have kStages - 2
// slices of time to land. On an H100 the barrier between the steps measured
// 2-4 % faster than one before the first step (NOTES.md).
//
// kEdge: the block's tile sticks out of C, and the warp multiplies only its
// first live_m strips and live_n pieces, the ones that hold elements of C
// (the same in every lane: no lane diverges). A block of one row or column
// of C then does a fraction of the mma of a full one. The tests cost the
// loop its schedule (NOTES.md), so only blocks launched for C's thin edges
// use them (dmma_variants.cu).
template <class S, bool kEdge = false, class Loader>
__device__ __forceinline__ void multiply_k8(const Loader& loader, double* smem, int64_t k, int wm0, int wn0,
                                            int g, int t, double (&acc)[S::kMI][S::kNI][4], int live_m = S::kMI,
                                            int live_n = S::kNI) {
  static_assert(S::BK == 16, "two 8-deep steps per slice: the sets swap back at every slice");
  static_assert(S::kMI >= 2, "the loads are spread over the strips of a step");
  static_assert(S::kStages >= 4, "the copies of slice s + 1 must land while slice s - 1 is multiplied");
  OperandsK8<S> ops[2];
  auto load = [&](const double* As, const double* Bs, int kk, OperandsK8<S>& o, int part) {
    // part p < kMI: A strip p; part kMI: every B piece
    if (part < S::kMI) load_a_k8<S>(As, kk, wm0 + 16 * part, g, t, o.a[part]);
    else
#pragma unroll
      for (int ni = 0; ni < S::kNI; ++ni) load_b_k8<S>(Bs, kk, wn0 + 8 * ni, g, t, o.b[ni]);
  };
  auto step = [&](const OperandsK8<S>& cur, OperandsK8<S>& nxt, const double* As, const double* Bs, int kk) {
    load(As, Bs, kk, nxt, 0);
#pragma unroll
    for (int mi = 0; mi < S::kMI; ++mi) {
#pragma unroll
      for (int ni = 0; ni < S::kNI; ++ni)
        if (!kEdge || (mi < live_m && ni < live_n)) Dmma::mma_16x8x8(acc[mi][ni], cur.a[mi], cur.b[ni]);
      if (mi + 1 < S::kMI) load(As, Bs, kk, nxt, mi + 1);
      if (mi == S::kMI / 2 - 1) load(As, Bs, kk, nxt, S::kMI);
    }
  };
  const int64_t slices = (k + S::BK - 1) / S::BK;
  auto stage = [&](int index) { return smem + index * S::kStage; };
  auto refill = [&](int64_t slice, int index) {
    if (slice < slices) copy_slice<S::BK>(loader, stage(index), stage(index) + S::BK * S::kLdA, slice * S::BK);
    Async::commit();  // one group per slice, even an empty one
  };
#pragma unroll
  for (int s = 0; s < S::kStages - 1; ++s) refill(s, s);
  Async::wait<S::kStages - 2>();  // slice 0
  __syncthreads();
#pragma unroll
  for (int part = 0; part <= S::kMI; ++part) load(smem, smem + S::BK * S::kLdA, 0, ops[0], part);
  int here = 0;  // the stage of slice s (s % kStages, counted rather than divided)
  for (int64_t s = 0; s < slices; ++s) {
    const int after = here + 1 == S::kStages ? 0 : here + 1, before = here == 0 ? S::kStages - 1 : here - 1;
    // The first step reads only slice s, which the last barrier made
    // visible: the barrier goes between the steps, before the first read of
    // slice s + 1, with the first step's mma still in the pipe while the
    // warps wait for each other.
    step(ops[0], ops[1], stage(here), stage(here) + S::BK * S::kLdA, 1);
    Async::wait<S::kStages - 3>();  // this thread's copies of slice s + 1 are done
    __syncthreads();                // everyone's are, and nobody reads slice s - 1 any more
    refill(s + S::kStages - 1, before);
    step(ops[1], ops[0], stage(after), stage(after) + S::BK * S::kLdA, 0);
    here = after;
  }
  Async::wait<0>();
}

}  // namespace lab::step06::detail
