// step06 — bonus TODO: the same product on the FP64 tensor cores (DMMA).
//
// A warp-wide mma.sync multiplies a 16 x 16 piece of A by a 16 x 8 piece of B
// into a 16 x 8 piece of C held in registers across the warp's 32 threads.
// Each warp of the block computes a kWM x kWN tile of C out of kMI x kNI such
// pieces; the block's tiles of A and B arrive in shared memory through a
// kStages-deep ring of asynchronous 16-byte copies (pipeline.cuh), and each
// warp loads the operands of its next pieces into registers while the tensor
// cores multiply the current ones, across the slice boundary too
// (for_each_slice_prefetch).
// What to do: write load_b_fragments and load_a_fragment, which read a warp's
// mma operands out of shared memory in the register layout the instruction
// expects (the pipeline, PairLoader, Dmma and the epilogue are given), then
// delete the LAB_TODO in dgemm_dmma. See the handout's DMMA section.
// Test:   ./lab test step06
// Time:   build/student/bin/step06_cuda_register_blocking --n 4096 --variant dmma
#include <cstdint>
#include <stdexcept>
#include <string>

#include "lab/cuda.hpp"
#include "lab/gemm_args.hpp"
#include "lab/todo.hpp"
#include "launch.cuh"
#include "mma_f64.cuh"
#include "pipeline.cuh"
#include "register_blocking.hpp"
#include "tile_order.cuh"

namespace {

using lab::step06::detail::allow_dynamic_smem;
using lab::step06::detail::Dmma;  // the instruction (mma_f64.cuh): mma.sync f64, sm_80 or later
using lab::step06::detail::for_each_slice_prefetch;
using lab::step06::detail::KernelChoice;
using lab::step06::detail::PairLoader;
using lab::step06::detail::tile_count;
using lab::step06::detail::tile_of_block;

constexpr int kMmaK = 16;  // the k of one mma step

// Which rows and which k the registers of Dmma (mma_f64.cuh) stand for is
// this kernel's choice: any relabelling works as long as A and B agree on k and the
// epilogue knows the rows. It picks the one that lets shared memory hold
// both tiles exactly as global memory does (PairLoader):
//  - mma row g is row 2 g of the piece and mma row g + 8 is row 2 g + 1, so
//    a thread's (a[2 v1], a[2 v1 + 1]) are neighbours in a column of A;
//  - fragment k index t + 4 v is k offset kslot(t, v) = 2 t + (v & 1) + 8 (v >> 1)
//    of the step, so a thread's b[0], b[1] (k = 2t, 2t + 1) and b[2], b[3]
//    (8 + 2t, 9 + 2t) are two pairs of neighbours in a column of B.
// Each pair is one 16-byte load from shared memory (DmmaConfig::kslot).

template <int BM, int BN, int BK, int kWarpsM, int kWarpsN, int kStages>
struct DmmaConfig {
  static constexpr int kThreads = kWarpsM * kWarpsN * 32;
  static constexpr int kWM = BM / kWarpsM, kWN = BN / kWarpsN;  // one warp's tile of C
  static constexpr int kMI = kWM / 16, kNI = kWN / 8;           // its mma pieces
  // As[p][i]: row stride kLdA = BM + 2 doubles. An A load of 8 threads
  // (g = 0..1, t = 0..3) reads rows kslot(t, v1), two apart for neighbouring
  // t: with BM + 2 = 2 (mod 8), such rows start 32 bytes apart (mod 128) and
  // the 16-byte loads hit different banks. Bs[j][p]: column stride kLdB =
  // BK + 8 = 8 (mod 16) doubles, so columns g and g + 1 start 64 bytes apart
  // (mod 128), clear of the 4 x 16 bytes of t = 0..3 in each.
  static constexpr int kLdA = BM + 2, kLdB = BK + 8;
  static constexpr int kStage = BK * kLdA + BN * kLdB;  // doubles per stage
  static constexpr size_t kSmemBytes = sizeof(double) * kStages * kStage;
  static_assert(kWM % 16 == 0 && kWN % 8 == 0, "a warp tile is a whole number of 16 x 8 mma pieces");
  static_assert(BM % 8 == 0 && BK % kMmaK == 0, "a slice is a whole number of mma k steps");
  template <bool kAligned>
  using Loader = PairLoader<BM, BN, BK, kThreads, kLdA, kLdB, kAligned>;
  // The k offset of fragment slot (t, v) within a k step (see above).
  __host__ __device__ static constexpr int kslot(int t, int v) { return 2 * t + (v & 1) + 8 * (v >> 1); }
};

// The warp's B fragments of one k step (16 rows of the slice):
// bf[ni][v] = B(kslot(t, v), wn0 + 8 ni + g), which is
// Bs[(wn0 + 8 ni + g) * kLdB + kslot(t, v)]: v = 0, 1 at 2 t and 2 t + 1,
// v = 2, 3 eight further on. Two double2 loads per piece.
template <class Cfg>
__device__ __forceinline__ void load_b_fragments(const double* Bs, int wn0, int g, int t,
                                                 double (&bf)[Cfg::kNI][4]) {
  // LAB:SOLUTION-BEGIN  for each ni: double2 at Bs + (wn0 + 8 ni + g) * Cfg::kLdB + 2 t, and 8 doubles further on
#pragma unroll
  for (int ni = 0; ni < Cfg::kNI; ++ni) {
    const double* const col = Bs + (wn0 + 8 * ni + g) * Cfg::kLdB + 2 * t;
    const double2 lo = *reinterpret_cast<const double2*>(col);      // v = 0, 1
    const double2 hi = *reinterpret_cast<const double2*>(col + 8);  // v = 2, 3
    bf[ni][0] = lo.x;
    bf[ni][1] = lo.y;
    bf[ni][2] = hi.x;
    bf[ni][3] = hi.y;
  }
  // LAB:SKELETON
  for (auto& piece : bf)
    for (double& x : piece) x = 0.0;
  // LAB:SOLUTION-END
}

// The A fragment of the 16-row piece starting at row r0 of the tile:
// af[v0 + 2 v1] = A(r0 + 2 g + v0, kslot(t, v1)) of the k step, which is
// As[kslot(t, v1) * kLdA + r0 + 2 g + v0]: one double2 load per v1.
template <class Cfg>
__device__ __forceinline__ void load_a_fragment(const double* As, int r0, int g, int t, double (&af)[8]) {
  // LAB:SOLUTION-BEGIN  for v1 = 0..3: one double2 at As + Cfg::kslot(t, v1) * Cfg::kLdA + r0 + 2 g
#pragma unroll
  for (int v1 = 0; v1 < 4; ++v1) {
    const double2 pair = *reinterpret_cast<const double2*>(As + Cfg::kslot(t, v1) * Cfg::kLdA + r0 + 2 * g);
    af[2 * v1] = pair.x;      // mma row g
    af[2 * v1 + 1] = pair.y;  // mma row g + 8
  }
  // LAB:SKELETON
  for (double& x : af) x = 0.0;
  // LAB:SOLUTION-END
}

// The operands of one k step of a 16-row strip: the warp's A fragment of the
// strip and its B fragments (the same for every strip of the step).
template <class Cfg>
struct Operands {
  double a[8], b[Cfg::kNI][4];
};

// Given: C <- alpha * acc + beta * C for the warp's pieces. acc[mi][ni][v0 + 2 v1]
// is C(row0 + 16 mi + 2 g + v1, col0 + 8 ni + 2 t + v0): the two rows of a
// thread are neighbours, one 16-byte access where C allows it (`pairs`).
// Never reads C when beta == 0, writes nothing outside C.
template <class Cfg>
__device__ __forceinline__ void write_c(const double (&acc)[Cfg::kMI][Cfg::kNI][4], double alpha, double beta,
                                        double* c, int64_t ldc, int64_t row0, int64_t col0, int64_t m, int64_t n,
                                        int g, int t) {
  const bool pairs = reinterpret_cast<uintptr_t>(c) % 16 == 0 && ldc % 2 == 0;
#pragma unroll
  for (int mi = 0; mi < Cfg::kMI; ++mi)
#pragma unroll
    for (int ni = 0; ni < Cfg::kNI; ++ni)
#pragma unroll
      for (int v0 = 0; v0 < 2; ++v0) {
        const int64_t i = row0 + 16 * mi + 2 * g, j = col0 + 8 * ni + 2 * t + v0;
        if (j >= n || i >= m) continue;
        double* const cij = c + i + j * ldc;
        const double x0 = alpha * acc[mi][ni][v0], x1 = alpha * acc[mi][ni][v0 + 2];
        if (pairs && i + 1 < m) {
          double2 out{x0, x1};
          if (beta != 0.0) {
            const double2 old = *reinterpret_cast<const double2*>(cij);
            out.x += beta * old.x;
            out.y += beta * old.y;
          }
          *reinterpret_cast<double2*>(cij) = out;
        } else {
          cij[0] = x0 + (beta == 0.0 ? 0.0 : beta * cij[0]);
          if (i + 1 < m) cij[1] = x1 + (beta == 0.0 ? 0.0 : beta * cij[1]);
        }
      }
}

// kMinBlocks: blocks per multiprocessor the registers must allow. kAligned:
// A and B allow 16-byte copies (PairLoader).
//
// Each warp walks its pieces strip by strip (mi), k step by k step, and loads
// the operands of the next strip (or the next k step, or the next slice's
// first step) before it multiplies the current one, so that the loads are in
// flight while the tensor cores work. Within a strip consecutive mma
// instructions write different accumulators (ni).
template <int BM, int BN, int BK, int kWarpsM, int kWarpsN, int kStages, int kMinBlocks, bool kAligned>
__global__ void __launch_bounds__(DmmaConfig<BM, BN, BK, kWarpsM, kWarpsN, kStages>::kThreads, kMinBlocks)
    dmma_kernel(double alpha, const double* __restrict__ a, int64_t lda, const double* __restrict__ b,
                int64_t ldb, double beta, double* __restrict__ c, int64_t ldc, int64_t m, int64_t n,
                int64_t k) {
  using Cfg = DmmaConfig<BM, BN, BK, kWarpsM, kWarpsN, kStages>;
  extern __shared__ __align__(16) double smem[];  // kStages x (As[BK][kLdA], Bs[BN][kLdB])
  int64_t tm, tn;
  tile_of_block(blockIdx.x, (m + BM - 1) / BM, (n + BN - 1) / BN, &tm, &tn);
  const int64_t m0 = tm * BM, n0 = tn * BN;
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32, g = lane / 4, t = lane % 4;
  const int wm0 = (warp % kWarpsM) * Cfg::kWM, wn0 = (warp / kWarpsM) * Cfg::kWN;
  const typename Cfg::template Loader<kAligned> loader(a, lda, b, ldb, m0, n0, m, n, k);
  double acc[Cfg::kMI][Cfg::kNI][4] = {};
  Operands<Cfg> next;  // the operands the warp multiplies next
  // k step kk of a stage: rows kk * kMmaK.. of As, and k offsets kk * kMmaK.. of each column of Bs.
  auto fetch_a = [&](const double* As, int kk, int mi) {
    load_a_fragment<Cfg>(As + kk * kMmaK * Cfg::kLdA, wm0 + 16 * mi, g, t, next.a);
  };
  auto fetch_b = [&](const double* Bs, int kk) { load_b_fragments<Cfg>(Bs + kk * kMmaK, wn0, g, t, next.b); };
  for_each_slice_prefetch<kStages, BK, Cfg::kLdA, Cfg::kStage>(
      loader, smem, k,
      [&](const double* As, const double* Bs) {
        fetch_b(Bs, 0);
        fetch_a(As, 0, 0);
      },
      [&](const double* As, const double* Bs, const double* next_As, const double* next_Bs) {
#pragma unroll
        for (int kk = 0; kk < BK / kMmaK; ++kk) {
          double bf[Cfg::kNI][4];
#pragma unroll
          for (int ni = 0; ni < Cfg::kNI; ++ni)
#pragma unroll
            for (int v = 0; v < 4; ++v) bf[ni][v] = next.b[ni][v];
#pragma unroll
          for (int mi = 0; mi < Cfg::kMI; ++mi) {
            double af[8];
#pragma unroll
            for (int v = 0; v < 8; ++v) af[v] = next.a[v];
            if (mi + 1 < Cfg::kMI) {
              fetch_a(As, kk, mi + 1);
            } else if (kk + 1 < BK / kMmaK) {
              fetch_b(Bs, kk + 1);
              fetch_a(As, kk + 1, 0);
            } else {
              fetch_b(next_Bs, 0);
              fetch_a(next_As, 0, 0);
            }
#pragma unroll
            for (int ni = 0; ni < Cfg::kNI; ++ni) Dmma::mma_16x8x16(acc[mi][ni], af, bf[ni]);
          }
        }
      });
  write_c<Cfg>(acc, alpha, beta, c, ldc, m0 + wm0, n0 + wn0, m, n, g, t);
}

bool aligned_pairs(lab::ConstMatView v) { return reinterpret_cast<uintptr_t>(v.data) % 16 == 0 && v.ld % 2 == 0; }

template <int BM, int BN, int BK, int kWarpsM, int kWarpsN, int kStages, int kMinBlocks>
void launch(double alpha, lab::ConstMatView A, lab::ConstMatView B, double beta, lab::MatView C,
            cudaStream_t stream) {
  using Cfg = DmmaConfig<BM, BN, BK, kWarpsM, kWarpsN, kStages>;
  auto kernel = aligned_pairs(A) && aligned_pairs(B)
                    ? dmma_kernel<BM, BN, BK, kWarpsM, kWarpsN, kStages, kMinBlocks, true>
                    : dmma_kernel<BM, BN, BK, kWarpsM, kWarpsN, kStages, kMinBlocks, false>;
  allow_dynamic_smem(reinterpret_cast<const void*>(kernel), Cfg::kSmemBytes);
  kernel<<<tile_count(C, BM, BN), Cfg::kThreads, Cfg::kSmemBytes, stream>>>(
      alpha, A.data, A.ld, B.data, B.ld, beta, C.data, C.ld, C.rows, C.cols, A.cols);
  LAB_CUDA_CHECK_LAUNCH();
}

// The block tiles this file is built with (bm, bn, bk): warps, pipeline depth
// and blocks per multiprocessor. Measured on an H100 (see the handout): one
// 8-warp block of 128 x 128 per multiprocessor was the fastest from n = 2048
// to 8192; 64 x 64 tiles give small matrices more blocks (the fastest at
// n = 1024); 128 x 64, two blocks per multiprocessor, is kept to compare.
constexpr KernelChoice kKernels[] = {
    {128, 128, 16, launch<128, 128, 16, 2, 4, 4, 1>},  // 8 warps of 64 x 32
    {128, 64, 16, launch<128, 64, 16, 2, 2, 4, 2>},    // 4 warps of 64 x 32, 2 blocks/SM
    {64, 64, 16, launch<64, 64, 16, 2, 2, 4, 2>},      // 4 warps of 32 x 32, 2 blocks/SM
};

// 128 x 128 tiles where there are enough to give every multiprocessor one,
// else 64 x 64 (at n = 1024 on an H100: 64 tiles of 128 x 128 for 132 SMs).
lab::step06::Tile pick(int64_t m, int64_t n) {
  const int64_t sms = lab::cuda::device_info().sm_count;
  const int64_t tiles = ((m + 127) / 128) * ((n + 127) / 128);
  return tiles >= sms ? lab::step06::Tile{128, 128, 16} : lab::step06::Tile{64, 64, 16};
}

}  // namespace

std::vector<lab::step06::Tile> lab::step06::dmma_tiles() { return detail::tiles_of(kKernels); }

bool lab::step06::dmma_supported(std::string* why) {
  std::string no_device;
  if (!cuda::device_available(&no_device)) {
    if (why) *why = no_device;
    return false;
  }
  const cuda::DeviceInfo& d = cuda::device_info();
  if (d.cc_major >= 8) return true;
  if (why)
    *why = "FP64 tensor cores need compute capability 8.0 or later; " + d.name + " has " +
           std::to_string(d.cc_major) + "." + std::to_string(d.cc_minor);
  return false;
}

void lab::step06::dgemm_dmma(double alpha, ConstMatView A, ConstMatView B, double beta, MatView C,
                             cudaStream_t stream, Tile tile) {
  check_gemm_args(A, B, C);
  if (cuda::gemm_quick_return(alpha, A, B, beta, C, stream)) return;
  std::string why;
  if (!dmma_supported(&why)) throw std::runtime_error("step06 dgemm_dmma: " + why);
  // LAB:SOLUTION-BEGIN
  // LAB:SKELETON
  LAB_TODO("step06 dgemm_dmma: write the two fragment loaders (see the handout), then delete this line");
  // LAB:SOLUTION-END
  if (tile.bm == 0) tile = pick(C.rows, C.cols);
  if (tile.bk == 0) tile.bk = 16;
  detail::run_tile("step06 dgemm_dmma", kKernels, tile, alpha, A, B, beta, C, stream);
}
