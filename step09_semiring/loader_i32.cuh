// step09 — given: step06's slice copies for 4-byte elements (the int32
// min-plus kernel). Nothing to do here.
//
// step06's SliceLoader (pipeline.cuh) copies doubles, 8 bytes at a time;
// int32 matrices with any leading dimension need 4-byte copies. Same layout
// as there: As[p][i] (row stride kLdA ints) and Bs[p][j] (row stride kLdB, B
// transposed on the way), elements past the matrix zero-filled, the bounds
// tests skipped where the block's tile and slice lie inside (copy_slice).
// step06's ring (for_each_slice_prefetch) counts shared memory in 8-byte
// words, so copy_as takes the stage's addresses as double* and reads them as
// int32 (a stage of BK x kLdA ints is BK x kLdA / 2 words: kLdA is even).
#pragma once

#include <cstdint>

namespace lab::step09::detail {

template <int BM, int BN, int BK, int kThreads, int kLdA, int kLdB>
struct Int32SliceLoader {
  // A: warps copy 32 consecutive rows of one column (128 contiguous bytes);
  // thread (ai, ap) copies rows ai + 32 r of k offsets ap + kACols pp.
  static constexpr int kACols = kThreads / 32, kARows = BM / 32, kAPasses = BK / kACols;
  // B: half-warps copy the BK = 16 consecutive k of one column (64 bytes);
  // thread (bq, bc) copies k offset bq of columns bc + kBCols cp.
  static constexpr int kBCols = kThreads / BK, kBPasses = BN / kBCols;
  static_assert(kThreads % 32 == 0 && BM % 32 == 0 && BK % kACols == 0,
                "the A copy grid (32 rows x kThreads / 32) must tile BM x BK");
  static_assert(kThreads % BK == 0 && BN % kBCols == 0, "the B copy grid (BK x kThreads / BK) must tile BK x BN");
  static_assert(kLdA % 2 == 0 && kLdB % 2 == 0, "a stage must be a whole number of 8-byte words");

  const int32_t* a_ptr;  // A(m0 + ai, ap)
  const int32_t* b_ptr;  // B(bq, n0 + bc)
  int64_t lda, ldb, rows_left, cols_left, k;
  bool interior;  // the block's whole BM x BN tile of C lies inside C
  int ai, ap, bq, bc;

  __device__ Int32SliceLoader(const int32_t* a, int64_t lda_, const int32_t* b, int64_t ldb_, int64_t m0,
                              int64_t n0, int64_t m, int64_t n, int64_t k_)
      : lda(lda_), ldb(ldb_), k(k_) {
    ai = threadIdx.x % 32;
    ap = threadIdx.x / 32;
    bq = threadIdx.x % BK;
    bc = threadIdx.x / BK;
    a_ptr = a + (m0 + ai) + ap * lda;
    b_ptr = b + bq + (n0 + bc) * ldb;
    rows_left = m - m0 - ai;
    cols_left = n - n0 - bc;
    interior = m0 + BM <= m && n0 + BN <= n;
  }

  // 4 bytes global -> shared; with valid == false the destination is
  // zero-filled and nothing is read (src-size 0).
  __device__ __forceinline__ static void copy4(int32_t* dst, const int32_t* src, bool valid) {
#if __CUDA_ARCH__ >= 800
    const unsigned d = unsigned(__cvta_generic_to_shared(dst));
    asm volatile("cp.async.ca.shared.global [%0], [%1], 4, %2;\n" ::"r"(d), "l"(src), "r"(valid ? 4 : 0)
                 : "memory");
#else
    *dst = valid ? *src : 0;
#endif
  }

  template <bool kChecked>
  __device__ __forceinline__ void copy_as(double* As_words, double* Bs_words, int64_t p0) const {
    int32_t* const As = reinterpret_cast<int32_t*>(As_words);
    int32_t* const Bs = reinterpret_cast<int32_t*>(Bs_words);
    const int64_t k_left = k - p0;
#pragma unroll
    for (int pp = 0; pp < kAPasses; ++pp) {
      const int p = ap + kACols * pp;
#pragma unroll
      for (int r = 0; r < kARows; ++r) {
        int32_t* const dst = As + p * kLdA + ai + 32 * r;
        const int32_t* const src = a_ptr + (p0 + kACols * pp) * lda + 32 * r;
        const bool ok = !kChecked || (32 * r < rows_left && p < k_left);
        copy4(dst, ok ? src : a_ptr, ok);
      }
    }
#pragma unroll
    for (int cp = 0; cp < kBPasses; ++cp) {
      int32_t* const dst = Bs + bq * kLdB + bc + kBCols * cp;
      const int32_t* const src = b_ptr + p0 + kBCols * cp * ldb;
      const bool ok = !kChecked || (kBCols * cp < cols_left && bq < k_left);
      copy4(dst, ok ? src : b_ptr, ok);
    }
  }
};

}  // namespace lab::step09::detail
