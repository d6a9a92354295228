// step06 — given: the asynchronous copies that feed both kernels of the step.
//
// cp.async (sm_80 and later) copies global memory straight into shared memory
// without passing through registers, and without making the thread wait: a
// thread issues the copies of a later slice of k, goes on computing the current
// one, and waits for the copies only when it needs their data. Copies are
// grouped (commit) and waited for by group (wait<N>: all but the newest N).
#pragma once

#include <cstdint>

namespace lab::step06::detail {

struct Async {
  // 8 bytes global -> shared; with valid == false the destination is zero-filled
  // and nothing is read.
  __device__ __forceinline__ static void copy8(double* dst, const double* src, bool valid) {
#if __CUDA_ARCH__ >= 800
    const unsigned d = unsigned(__cvta_generic_to_shared(dst));
    asm volatile("cp.async.ca.shared.global [%0], [%1], 8, %2;\n" ::"r"(d), "l"(src), "r"(valid ? 8 : 0)
                 : "memory");
#else
    *dst = valid ? *src : 0.0;  // the same effect, synchronously, before sm_80
#endif
  }
  // The same copy where the source is known to be inside the matrix.
  __device__ __forceinline__ static void copy8(double* dst, const double* src) {
#if __CUDA_ARCH__ >= 800
    const unsigned d = unsigned(__cvta_generic_to_shared(dst));
    asm volatile("cp.async.ca.shared.global [%0], [%1], 8;\n" ::"r"(d), "l"(src) : "memory");
#else
    *dst = *src;
#endif
  }
  // 16 bytes global -> shared (two neighbouring doubles), cached in L2 only
  // (.cg: the block reads each element once). Both addresses must be 16-byte
  // aligned.
  __device__ __forceinline__ static void copy16(double* dst, const double* src) {
#if __CUDA_ARCH__ >= 800
    const unsigned d = unsigned(__cvta_generic_to_shared(dst));
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16;\n" ::"r"(d), "l"(src) : "memory");
#else
    dst[0] = src[0];
    dst[1] = src[1];
#endif
  }
  __device__ __forceinline__ static void commit() {
#if __CUDA_ARCH__ >= 800
    asm volatile("cp.async.commit_group;\n" ::: "memory");
#endif
  }
  template <int kPending>
  __device__ __forceinline__ static void wait() {
#if __CUDA_ARCH__ >= 800
    asm volatile("cp.async.wait_group %0;\n" ::"n"(kPending) : "memory");
#endif
  }
};

/// Copies one BK-wide slice of the block's A (BM x BK) and B (BK x BN) into
/// shared memory for the SIMT kernel, 8 bytes at a time. Both go k-major:
/// As[p][i] (row stride kLdA) and Bs[p][j] (row stride kLdB). B is transposed
/// on the way, so that a row of Bs holds what one k step needs of BN columns.
/// Out-of-range elements are zero-filled, which adds nothing to the products:
/// any m, n, k works. Each thread's addresses are one base pointer plus
/// compile-time offsets (or one of a few run-time strides), which keeps them
/// out of the registers the accumulators need.
template <int BM, int BN, int BK, int kThreads, int kLdA, int kLdB>
struct SliceLoader {
  // A: the threads form a 16 (rows) x kThreads / 16 grid. With as many columns
  // as BK or fewer, column ap copies k offsets ap + kAPThreads pp of rows
  // ai + 16 r; with more (many threads, thin slices), the extra columns take
  // the next groups of 16 rows. Half-warps copy 16 consecutive rows: 128
  // contiguous bytes of a column.
  static constexpr int kAPThreads = kThreads / 16;
  static constexpr int kRowGroups = kAPThreads > BK ? kAPThreads / BK : 1;
  static constexpr int kAPasses = kAPThreads > BK ? 1 : BK / kAPThreads;
  static constexpr int kARows = BM / 16 / kRowGroups;  // 16-row chunks per thread
  // B: 4 (k) x kThreads / 4 (columns); a thread copies k offsets bq + 4 pg of
  // columns bc + kBCols cp. Four neighbouring threads copy one 32-byte sector.
  static constexpr int kBCols = kThreads / 4, kBColPasses = BN / kBCols, kBKGroups = BK / 4;
  static_assert(kThreads % 16 == 0 && BM % (16 * kRowGroups) == 0 &&
                    (BK % kAPThreads == 0 || kAPThreads % BK == 0),
                "the A copy grid (16 rows x kThreads / 16) must tile BM x BK");
  static_assert(BK % 4 == 0 && BN % kBCols == 0,
                "the B copy grid (4 k x kThreads / 4 columns) must tile BK x BN");

  const double* a_ptr;  // A(m0 + a_row, a_p)
  const double* b_ptr;  // B(bq, n0 + bc)
  int64_t lda, ldb, rows_left, cols_left, k;
  bool interior;  // the block's whole BM x BN tile of C lies inside C
  int a_dst0, a_p, bq;  // a_dst0: where this thread's first element of A goes in As
  int b_dst0;           // and of B in Bs

  __device__ SliceLoader(const double* a, int64_t lda_, const double* b, int64_t ldb_, int64_t m0, int64_t n0,
                         int64_t m, int64_t n, int64_t k_)
      : lda(lda_), ldb(ldb_), k(k_) {
    const int ai = threadIdx.x % 16, ap = threadIdx.x / 16;
    const int a_row = ai + 16 * (ap / BK);  // ap / BK > 0 only when kRowGroups > 1
    a_p = ap % BK;
    a_dst0 = a_p * kLdA + a_row;
    bq = threadIdx.x % 4;
    const int bc = threadIdx.x / 4;
    b_dst0 = bq * kLdB + bc;
    a_ptr = a + (m0 + a_row) + a_p * lda;
    b_ptr = b + bq + (n0 + bc) * ldb;
    rows_left = m - m0 - a_row;
    cols_left = n - n0 - bc;
    interior = m0 + BM <= m && n0 + BN <= n;
  }

  /// Issues the copies of the slice that starts at k offset p0 into As, Bs
  /// (copy_slice below skips the bounds tests where it can).
  __device__ __forceinline__ void copy(double* As, double* Bs, int64_t p0) const { copy_as<true>(As, Bs, p0); }

  template <bool kChecked>
  __device__ __forceinline__ void copy_as(double* As, double* Bs, int64_t p0) const {
    const int64_t k_left = k - p0;
    const double* a_slice = a_ptr + p0 * lda;
#pragma unroll
    for (int pp = 0; pp < kAPasses; ++pp) {
      const int p = a_p + kAPThreads * pp;
#pragma unroll
      for (int r = 0; r < kARows; ++r) {
        const int row = 16 * kRowGroups * r;  // offset from this thread's first row
        double* const dst = As + a_dst0 + kAPThreads * pp * kLdA + row;
        const double* const src = a_slice + kAPThreads * pp * lda + row;
        if constexpr (kChecked) {
          const bool ok = row < rows_left && p < k_left;
          Async::copy8(dst, ok ? src : a_ptr, ok);
        } else {
          Async::copy8(dst, src);
        }
      }
    }
#pragma unroll
    for (int cp = 0; cp < kBColPasses; ++cp) {
#pragma unroll
      for (int pg = 0; pg < kBKGroups; ++pg) {
        const int p = bq + 4 * pg;
        double* const dst = Bs + b_dst0 + 4 * pg * kLdB + kBCols * cp;
        const double* const src = b_ptr + p0 + 4 * pg + kBCols * cp * ldb;
        if constexpr (kChecked) {
          const bool ok = kBCols * cp < cols_left && p < k_left;
          Async::copy8(dst, ok ? src : b_ptr, ok);
        } else {
          Async::copy8(dst, src);
        }
      }
    }
  }
};

/// Copies one BK-wide slice for the DMMA kernel, in pairs of neighbours
/// within a column, and without transposing anything: A(i, p) and A(i + 1, p)
/// go to As[p][i] and As[p][i + 1] (k-major, row stride kLdA: a column of A
/// is a row of As, as above), B(p, j) and B(p + 1, j) to Bs[j][p] and
/// Bs[j][p + 1] (column by column, stride kLdB per column). Both halves of a
/// pair are neighbours in global memory and in shared memory, so where the
/// matrices allow it (kAligned: 16-byte aligned data and even leading
/// dimensions) a pair is one 16-byte copy, and half as many copies keep the
/// same bytes in flight; otherwise it is two 8-byte ones. The copies skip L1
/// (.cg): a block reads each element once. Out-of-range elements are
/// zero-filled, as in SliceLoader.
template <int BM, int BN, int BK, int kThreads, int kLdA, int kLdB, bool kAligned>
struct PairLoader {
  // A: BM / 2 (row pairs) x kThreads / (BM / 2) (k offsets); thread (ai, ap)
  // copies rows 2 ai, 2 ai + 1 at k offsets ap + kACols pp. A warp copies 512
  // contiguous bytes of a column.
  static constexpr int kARowPairs = BM / 2, kACols = kThreads / kARowPairs, kAPasses = BK / kACols;
  // B: BK / 2 (k pairs) x kThreads / (BK / 2) (columns); thread (bq, bc) copies
  // k offsets 2 bq, 2 bq + 1 of columns bc + kBCols cp. Eight threads copy the
  // 128 bytes of a column's slice when BK = 16.
  static constexpr int kBKPairs = BK / 2, kBCols = kThreads / kBKPairs, kBPasses = BN / kBCols;
  static_assert(kThreads % kARowPairs == 0 && BK % kACols == 0,
                "the A copy grid (BM / 2 row pairs x kThreads / (BM / 2)) must tile BM x BK");
  static_assert(kThreads % kBKPairs == 0 && BN % kBCols == 0,
                "the B copy grid (BK / 2 k pairs x kThreads / (BK / 2) columns) must tile BK x BN");
  static_assert(kLdA % 2 == 0 && kLdB % 2 == 0, "16-byte pairs need even strides in shared memory");

  const double* a_ptr;  // A(m0 + 2 ai, ap)
  const double* b_ptr;  // B(2 bq, n0 + bc)
  int64_t lda, ldb, rows_left, cols_left, k;
  bool interior;  // the block's whole BM x BN tile of C lies inside C
  int a_dst0, b_dst0, ap, bq2;

  __device__ PairLoader(const double* a, int64_t lda_, const double* b, int64_t ldb_, int64_t m0, int64_t n0,
                        int64_t m, int64_t n, int64_t k_)
      : lda(lda_), ldb(ldb_), k(k_) {
    const int ai = threadIdx.x % kARowPairs, bq = threadIdx.x % kBKPairs, bc = threadIdx.x / kBKPairs;
    ap = threadIdx.x / kARowPairs;
    bq2 = 2 * bq;
    a_dst0 = ap * kLdA + 2 * ai;
    b_dst0 = bc * kLdB + 2 * bq;
    a_ptr = a + (m0 + 2 * ai) + ap * lda;
    b_ptr = b + 2 * bq + (n0 + bc) * ldb;
    rows_left = m - m0 - 2 * ai;
    cols_left = n - n0 - bc;
    interior = m0 + BM <= m && n0 + BN <= n;
  }

  template <bool kChecked>
  __device__ __forceinline__ void copy_as(double* As, double* Bs, int64_t p0) const {
    const int64_t k_left = k - p0;
#pragma unroll
    for (int pp = 0; pp < kAPasses; ++pp) {
      double* const dst = As + a_dst0 + kACols * pp * kLdA;
      const double* const src = a_ptr + (p0 + kACols * pp) * lda;
      if constexpr (kChecked) {
        const int64_t count = ap + kACols * pp < k_left ? rows_left : 0;
        copy_pair(dst, src, count, a_ptr);
      } else {
        copy_pair(dst, src);
      }
    }
#pragma unroll
    for (int cp = 0; cp < kBPasses; ++cp) {
      double* const dst = Bs + b_dst0 + kBCols * cp * kLdB;
      const double* const src = b_ptr + p0 + kBCols * cp * ldb;
      if constexpr (kChecked) {
        const int64_t count = kBCols * cp < cols_left ? k_left - bq2 : 0;
        copy_pair(dst, src, count, b_ptr);
      } else {
        copy_pair(dst, src);
      }
    }
  }

  // The first min(count, 2) elements of the pair at src (count may be <= 0),
  // zeros for the rest. A pair cut by the edge of the matrix goes as two
  // 8-byte copies, so that no 16-byte access reaches past the matrix; `safe`
  // stands in for src where a copy reads nothing.
  __device__ __forceinline__ static void copy_pair(double* dst, const double* src, int64_t count,
                                                   const double* safe) {
    if (kAligned && count >= 2) {
      Async::copy16(dst, src);
    } else {
      Async::copy8(dst, count >= 1 ? src : safe, count >= 1);
      Async::copy8(dst + 1, count >= 2 ? src + 1 : safe, count >= 2);
    }
  }
  __device__ __forceinline__ static void copy_pair(double* dst, const double* src) {
    if constexpr (kAligned) {
      Async::copy16(dst, src);
    } else {
      Async::copy8(dst, src);
      Async::copy8(dst + 1, src + 1);
    }
  }
};

/// Issues the copies of the slice of k that starts at p0, with either loader:
/// unchecked ones (no bounds tests, no zero fill) where the block's tile and
/// the slice lie wholly inside the matrices, most blocks and most slices;
/// checked ones elsewhere. The choice is the same for every thread of the
/// block, so no warp diverges.
template <int BK, class Loader>
__device__ __forceinline__ void copy_slice(const Loader& loader, double* As, double* Bs, int64_t p0) {
  if (loader.interior && p0 + BK <= loader.k) loader.template copy_as<false>(As, Bs, p0);
  else loader.template copy_as<true>(As, Bs, p0);
}

/// The ring of kStages shared-memory stages (kStage doubles each: As, then Bs
/// at BK * kLdA), one BK-wide slice of k per stage. Iteration s waits for
/// slice s, synchronizes the block once, multiplies slice s and refills the
/// stage that slice s - 1 used (nobody reads it any more: everyone passed the
/// barrier after finishing it) with slice s + kStages - 1, so that the loads
/// of later slices are in flight while the block computes. Calls compute(As,
/// Bs) for every slice in order; zero-filled rows and columns make any k work.
///
/// kComputeFirst says where the refill goes in the iteration:
///  - false: before the multiply. The copies of slice s + kStages - 1 leave a
///    whole slice earlier, and kStages = 2 is the classic double buffer.
///  - true: after it. Right after the barrier every warp goes straight to its
///    shared-memory loads and arithmetic instead of spending a few hundred
///    cycles issuing copies (and, on the edges, testing bounds) while the
///    arithmetic units wait; the copies then have kStages - 2 slices to land,
///    so this order needs three stages at least. Interior slices use the
///    unchecked copies (copy_slice). On an H100 this order was the faster one
///    for both kernels of the step (see the handout).
template <int kStages, int BK, int kLdA, int kStage, bool kComputeFirst, class Loader, class Compute>
__device__ __forceinline__ void for_each_slice(const Loader& loader, double* smem, int64_t k,
                                               Compute&& compute) {
  static_assert(kStages >= (kComputeFirst ? 3 : 2),
                "a pipeline needs two stages at least, three when the refill follows the compute");
  const int64_t slices = (k + BK - 1) / BK;
  auto refill = [&](int64_t slice) {
    double* const fill = smem + (slice % kStages) * kStage;
    if (slice >= slices) return;
    if constexpr (kComputeFirst) copy_slice<BK>(loader, fill, fill + BK * kLdA, slice * BK);
    else loader.copy(fill, fill + BK * kLdA, slice * BK);
  };
  // One commit per slice, even an empty one, so that "all but the newest
  // kStages - 2 groups have landed" always means "slice s has landed".
#pragma unroll
  for (int s = 0; s < kStages - 1; ++s) {
    refill(s);
    Async::commit();
  }
  for (int64_t s = 0; s < slices; ++s) {
    Async::wait<kStages - 2>();  // this thread's copies of slice s are done
    __syncthreads();             // everyone's are, and everyone finished slice s - 1
    const double* const stage = smem + (s % kStages) * kStage;
    if constexpr (kComputeFirst) compute(stage, stage + BK * kLdA);
    refill(s + kStages - 1);  // into the stage slice s - 1 used
    Async::commit();
    if constexpr (!kComputeFirst) compute(stage, stage + BK * kLdA);
  }
  Async::wait<0>();  // leave no copy in flight (the last groups are empty)
}

/// The same ring, with the operands of the next slice fetched across the
/// barrier: for_each_slice leaves every warp, right after each __syncthreads,
/// waiting for its first shared-memory loads of the slice before it can
/// multiply. Here iteration s waits for slice s + 1 as well, so that
/// compute(As, Bs, next_As, next_Bs) can load the first operands of slice
/// s + 1 into registers while it multiplies slice s, and the next iteration
/// starts straight with arithmetic. first(As, Bs) loads those of slice 0.
/// The refill follows the compute, as with kComputeFirst; because the copies
/// of a slice must land one slice earlier, this needs four stages for the
/// slack three give for_each_slice. With three stages (wide slices, BK = 32:
/// dmma_variants.cu) the refill goes before the compute instead: after it,
/// the copies of slice s + 2 would have no time at all to land before
/// iteration s + 1 waits for them; before it, they have slice s's. (At the
/// last slice, next_* point at a stage nobody writes any more; what compute
/// loads from it is not used.)
template <int kStages, int BK, int kLdA, int kStage, class Loader, class First, class Compute>
__device__ __forceinline__ void for_each_slice_prefetch(const Loader& loader, double* smem, int64_t k,
                                                        First&& first, Compute&& compute) {
  static_assert(kStages >= 3, "fetching across the barrier needs three stages at least");
  const int64_t slices = (k + BK - 1) / BK;
  auto stage = [&](int64_t slice) { return smem + (slice % kStages) * kStage; };
#pragma unroll
  for (int s = 0; s < kStages - 1; ++s) {
    if (s < slices) copy_slice<BK>(loader, stage(s), stage(s) + BK * kLdA, s * BK);
    Async::commit();
  }
  Async::wait<kStages - 2>();  // slice 0
  __syncthreads();
  first(smem, smem + BK * kLdA);
  for (int64_t s = 0; s < slices; ++s) {
    Async::wait<kStages - 3>();  // this thread's copies of slices s and s + 1 are done
    __syncthreads();             // everyone's are, and everyone finished slice s - 1
    const double* const cur = stage(s);
    const double* const next = stage(s + 1);
    // Into the stage slice s - 1 used: compute reads only the stages of s and s + 1.
    const int64_t fill = s + kStages - 1;
    auto refill = [&] {
      if (fill < slices) copy_slice<BK>(loader, stage(fill), stage(fill) + BK * kLdA, fill * BK);
      Async::commit();
    };
    if constexpr (kStages == 3) refill();
    compute(cur, cur + BK * kLdA, next, next + BK * kLdA);
    if constexpr (kStages > 3) refill();
  }
  Async::wait<0>();
}

}  // namespace lab::step06::detail
