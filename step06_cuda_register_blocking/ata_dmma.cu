// step06 — given: C <- alpha * A^T * A + beta * C on the FP64 tensor cores,
// from the tiles on and above the diagonal only (step05's AtA bonus, built
// like the DMMA candidates of dmma_variants.cu).
//
// A is k x n and C n x n. S = A^T A is symmetric: a block computes one
// 128 x 128 tile S(I, J) with I <= J (about half the tiles of the full
// product) and writes it twice, to C(I, J) and, transposed, to C(J, I). Both
// operands of the product are column panels of A (column i of A is row i of
// A^T), so both lie in shared memory the same way, column by column with k
// contiguous (dmma_candidate.cuh), and both are copied in 16-byte pairs
// along k. The mirror is written from the same registers as the tile:
// with beta == 0 (or a symmetric C) the lower half is bit-equal to the upper.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <stdexcept>
#include <string>

#include "dmma_candidate.cuh"
#include "lab/cuda.hpp"
#include "launch.cuh"
#include "register_blocking.hpp"

namespace {

using lab::step06::detail::allow_dynamic_smem;
using lab::step06::detail::BPairSlot;
using lab::step06::detail::kStepK;
using lab::step06::detail::multiply;
using lab::step06::detail::PairLoader;
using lab::step06::detail::Shape;

// 128 x 128 tiles, 8 warps of 64 x 32, four stages of BK = 16, fetching
// ahead (the teaching kernel's fastest shape). The "A" panel holds BM columns
// of A stored like B (BK doubles a column, swizzled pairs): no padding.
struct AtaShape : Shape<128, 128, 16, 2, 4, 4, 1> {
  static constexpr int kLdA = BM;  // so that Bs = As + BK * kLdA follows the BM x BK panel
  static constexpr int kStageA = BM * BK, kStage = kStageA + BN * BK;
  static constexpr size_t kSmemBytes = sizeof(double) * kStages * kStage;
  static_assert(BM == BN, "a symmetric product takes square tiles");
};

// The two column panels of a block, A(p0.., i0..i0 + BM) into As and A(p0..,
// j0..j0 + BN) into Bs, as pairs of neighbours along k at BPairSlot. Thread
// (bq, bc) copies pair bq of columns bc + kCols cp; edges are zero-filled.
// The interface copy_slice and the rings expect (copy_as, interior, k).
template <class S, bool kAligned>
struct PanelLoader {
  static constexpr int kPairs = S::BK / 2, kCols = S::kThreads / kPairs, kPasses = S::BM / kCols;
  static_assert(S::kThreads % kPairs == 0 && S::BM % kCols == 0 && kCols % 4 == 0,
                "the copy grid (BK / 2 pairs x kThreads / (BK / 2) columns) must tile a panel in steps of 4 "
                "columns (the swizzle's period)");
  // PairLoader's copy of one pair (16 bytes where allowed, else two 8-byte copies, zero fill at the edges).
  using Pairs = PairLoader<S::BM, S::BN, S::BK, S::kThreads, S::kLdA, S::BK, kAligned>;

  const double* pi;                // A(2 bq, i0 + bc)
  const double* pj;                // A(2 bq, j0 + bc)
  int64_t lda, k, cols_i, cols_j;  // columns of A left from this thread's first one in each panel
  bool interior;
  int dst0, bq2;

  __device__ PanelLoader(const double* a, int64_t lda_, int64_t i0, int64_t j0, int64_t n, int64_t k_)
      : lda(lda_), k(k_) {
    const int bq = threadIdx.x % kPairs, bc = threadIdx.x / kPairs;
    bq2 = 2 * bq;
    dst0 = bc * S::BK + 2 * BPairSlot(bc, bq);
    pi = a + bq2 + (i0 + bc) * lda;
    pj = a + bq2 + (j0 + bc) * lda;
    cols_i = n - i0 - bc;
    cols_j = n - j0 - bc;
    interior = j0 + S::BN <= n;  // i0 <= j0
  }

  template <bool kChecked>
  __device__ __forceinline__ void copy_as(double* As, double* Bs, int64_t p0) const {
    const int64_t k_left = k - p0 - bq2;
#pragma unroll
    for (int cp = 0; cp < kPasses; ++cp) {
      double* const di = As + dst0 + kCols * cp * S::BK;
      double* const dj = Bs + dst0 + kCols * cp * S::BK;
      const double* const si = pi + p0 + kCols * cp * lda;
      const double* const sj = pj + p0 + kCols * cp * lda;
      if constexpr (kChecked) {
        Pairs::copy_pair(di, si, kCols * cp < cols_i ? k_left : 0, pi);
        Pairs::copy_pair(dj, sj, kCols * cp < cols_j ? k_left : 0, pj);
      } else {
        Pairs::copy_pair(di, si);
        Pairs::copy_pair(dj, sj);
      }
    }
  }
};

// The A operand (rows of A^T = columns of the i panel), k step kk. mma row g
// is tile row r0 + 2 g and mma row g + 8 is r0 + 2 g + 1, so that a thread's
// two rows of C are neighbours in a column (one 16-byte store, as in the
// teaching kernel), and in the mirror its two columns too. af[v0 + 2 v1] =
// S-row r0 + 2 g + v0 at k offset kslot(t, v1): pairs t and t + 4 of the
// column. (Columns r0 + 2 g for g = 0, 1 differ in bit 1: BPairSlot keeps
// them apart.)
template <class S>
struct ColumnA {
  __device__ __forceinline__ static void load(const double* As, int kk, int r0, int g, int t,
                                              double (&af)[8]) {
#pragma unroll
    for (int v0 = 0; v0 < 2; ++v0) {
      const int col = r0 + 2 * g + v0;
      const double* const base = As + col * S::BK + kk * kStepK;
      const double2 lo = *reinterpret_cast<const double2*>(base + 2 * BPairSlot(col, t));
      const double2 hi = *reinterpret_cast<const double2*>(base + 2 * BPairSlot(col, t + 4));
      af[v0] = lo.x;      // v1 = 0: k = 2 t
      af[v0 + 2] = lo.y;  // v1 = 1: k = 2 t + 1
      af[v0 + 4] = hi.x;  // v1 = 2: k = 8 + 2 t
      af[v0 + 6] = hi.y;  // v1 = 3: k = 9 + 2 t
    }
  }
};

// alpha * s + beta * old, the same operations wherever it is written, so that
// a value and its mirror agree to the bit when their old values do.
__device__ __forceinline__ double scaled(double x, double beta, const double* old) {
  return beta == 0.0 ? x : fma(beta, *old, x);
}

// Writes the warp's pieces of the tile and of its mirror. acc[mi][ni][v0 + 2
// v1] is S(row0 + 16 mi + 2 g + v1, col0 + 8 ni + 2 t + v0). Off the
// diagonal: S(i, j) to C(i, j) (rows i, i + 1 of column j together) and to
// C(j, i) (rows j, j + 1 of column i together). On a diagonal tile the upper
// part (i <= j) goes straight, the strictly lower part only as a mirror, so
// that no element is written twice and the lower half is the upper's copy.
template <class S>
__device__ __forceinline__ void store_tile_and_mirror(const double (&acc)[S::kMI][S::kNI][4], double alpha,
                                                      double beta, double* c, int64_t ldc, int64_t row0,
                                                      int64_t col0, int64_t n, bool diagonal, int g, int t) {
  const bool vector = !diagonal && reinterpret_cast<uintptr_t>(c) % 16 == 0 && ldc % 2 == 0;
#pragma unroll
  for (int mi = 0; mi < S::kMI; ++mi)
#pragma unroll
    for (int ni = 0; ni < S::kNI; ++ni) {
      const int64_t i = row0 + 16 * mi + 2 * g, j = col0 + 8 * ni + 2 * t;
      double x[2][2];  // x[v1][v0] = alpha * S(i + v1, j + v0)
#pragma unroll
      for (int v = 0; v < 4; ++v) x[v >> 1][v & 1] = alpha * acc[mi][ni][v];
      if (vector && i + 1 < n && j + 1 < n) {
#pragma unroll
        for (int v = 0; v < 2; ++v) {
          double* const direct = c + i + (j + v) * ldc;  // C(i.., j + v)
          double* const mirror = c + j + (i + v) * ldc;  // C(j.., i + v)
          const double2 d{scaled(x[0][v], beta, direct), scaled(x[1][v], beta, direct + 1)};
          const double2 m{scaled(x[v][0], beta, mirror), scaled(x[v][1], beta, mirror + 1)};
          *reinterpret_cast<double2*>(direct) = d;
          *reinterpret_cast<double2*>(mirror) = m;
        }
        continue;
      }
#pragma unroll
      for (int v1 = 0; v1 < 2; ++v1)
#pragma unroll
        for (int v0 = 0; v0 < 2; ++v0) {
          const int64_t r = i + v1, s = j + v0;
          if (r >= n || s >= n) continue;
          if (!diagonal || r <= s) {
            double* const p = c + r + s * ldc;
            *p = scaled(x[v1][v0], beta, p);
          }
          if (!diagonal || r < s) {
            double* const p = c + s + r * ldc;
            *p = scaled(x[v1][v0], beta, p);
          }
        }
    }
}

// Block b computes tile (bi, bj), bi <= bj, numbered column by column:
// b = bj (bj + 1) / 2 + bi. Consecutive blocks share the j panel of A.
__device__ __forceinline__ void upper_tile_of(int64_t b, int64_t* bi, int64_t* bj) {
  int64_t j = int64_t((sqrt(8.0 * double(b) + 1.0) - 1.0) / 2.0);
  while (j * (j + 1) / 2 > b) --j;  // the square root may round either way
  while ((j + 1) * (j + 2) / 2 <= b) ++j;
  *bj = j;
  *bi = b - j * (j + 1) / 2;
}

template <class S, bool kAligned>
__global__ void __launch_bounds__(S::kThreads, S::kMinBlocks)
    ata_dmma_kernel(double alpha, const double* __restrict__ a, int64_t lda, double beta, double* c,
                    int64_t ldc, int64_t n, int64_t k) {
  extern __shared__ __align__(16) double smem[];  // kStages x (i panel [BM][BK], j panel [BN][BK])
  int64_t bi, bj;
  upper_tile_of(blockIdx.x, &bi, &bj);
  const int64_t i0 = bi * S::BM, j0 = bj * S::BN;
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32, g = lane / 4, t = lane % 4;
  const int wm0 = (warp % S::kWarpsM) * S::kWM, wn0 = (warp / S::kWarpsM) * S::kWN;
  const PanelLoader<S, kAligned> loader(a, lda, i0, j0, n, k);
  double acc[S::kMI][S::kNI][4] = {};
  multiply<S, ColumnA<S>>(loader, smem, k, wm0, wn0, g, t, acc);
  store_tile_and_mirror<S>(acc, alpha, beta, c, ldc, i0 + wm0, j0 + wn0, n, bi == bj, g, t);
}

void check_args(lab::ConstMatView A, lab::ConstMatView C) {
  auto fail = [](const std::string& what) { throw std::invalid_argument("step06 ata_dmma: " + what); };
  if (A.rows < 0 || A.cols < 0)
    fail("A has a negative size (" + std::to_string(A.rows) + " x " + std::to_string(A.cols) + ")");
  if (A.ld < std::max<int64_t>(1, A.rows))
    fail("A.ld (" + std::to_string(A.ld) + ") must be >= max(1, A.rows)");
  if (C.rows != A.cols || C.cols != A.cols)
    fail("C must be n x n with n = A.cols = " + std::to_string(A.cols) + " (C is " + std::to_string(C.rows) +
         " x " + std::to_string(C.cols) + ")");
  if (C.ld < std::max<int64_t>(1, C.rows))
    fail("C.ld (" + std::to_string(C.ld) + ") must be >= max(1, C.rows)");
  if (A.rows > 0 && A.cols > 0 && A.data == nullptr) fail("A.data is null");
  if (C.rows > 0 && C.data == nullptr) fail("C.data is null");
}

}  // namespace

void lab::step06::ata_dmma(double alpha, ConstMatView A, double beta, MatView C, cudaStream_t stream) {
  using S = AtaShape;
  check_args(A, C);
  const int64_t n = A.cols, k = A.rows;
  if (n == 0) return;
  if (alpha == 0.0 || k == 0) {
    cuda::scale_c(beta, C, stream);
    return;
  }
  std::string why;
  if (!dmma_supported(&why)) throw std::runtime_error("step06 ata_dmma: " + why);
  const bool aligned = reinterpret_cast<uintptr_t>(A.data) % 16 == 0 && A.ld % 2 == 0;
  auto kernel = aligned ? ata_dmma_kernel<S, true> : ata_dmma_kernel<S, false>;
  allow_dynamic_smem(reinterpret_cast<const void*>(kernel), S::kSmemBytes);
  const int64_t tiles = (n + S::BM - 1) / S::BM;
  kernel<<<unsigned(tiles * (tiles + 1) / 2), S::kThreads, S::kSmemBytes, stream>>>(alpha, A.data, A.ld, beta,
                                                                                    C.data, C.ld, n, k);
  LAB_CUDA_CHECK_LAUNCH();
}
