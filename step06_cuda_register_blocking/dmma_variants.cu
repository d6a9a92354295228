// step06 — given: candidate DMMA kernels beside the teaching one (dmma.cu).
//
// The teaching kernel reaches 0.89-0.91 of cuBLAS from n = 2048 to 8192 on an
// H100 (NOTES.md). Each candidate here changes one or two things about it, so
// that one run of the benchmark (common/tools/gpu-check bench tune) measures
// them all against cuBLAS, each checked like every variant:
//   dmma_bk32     slices of BK = 32 in three stages (198 KiB): half as many
//                 block-wide barriers and pipeline turns per flop
//   dmma_stages6  the teaching shape with six stages of BK = 16 (198 KiB):
//                 copies issued five slices ahead instead of three
//   dmma_warps16  16 warps of 32 x 32 (four per scheduler, at most 128
//                 registers), operands loaded when needed: more warps to
//                 hide the latencies, a third more shared-memory loads
//   dmma_splitk   the teaching shape, and where C has fewer tiles than half
//                 the multiprocessors, k split over 2-4 blocks per tile
//                 that add their parts into C one after the other
// Common to all: B lies in shared memory without padding (BK doubles per
// column) and its 16-byte pairs are swizzled so that the fragment loads stay
// free of bank conflicts (see BPairSlot), which is what lets the deeper rings
// fit in the 227 KiB a block may have on an H100.
#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include "dmma_candidate.cuh"
#include "lab/cuda.hpp"
#include "lab/gemm_args.hpp"
#include "launch.cuh"
#include "register_blocking.hpp"
#include "tile_order.cuh"

namespace {

using lab::step06::detail::allow_dynamic_smem;
using lab::step06::detail::BPairSlot;
using lab::step06::detail::KernelChoice;
using lab::step06::detail::kStepK;
using lab::step06::detail::multiply;
using lab::step06::detail::PairLoader;
using lab::step06::detail::Shape;
using lab::step06::detail::tile_count;
using lab::step06::detail::tile_of_block;

// The teaching kernel's PairLoader, with B's pairs written where BPairSlot
// puts them (column stride BK). Every pass of the B copies moves by a
// multiple of 4 columns, so one swizzled start serves them all.
template <class S, bool kAligned>
struct SwizzledLoader : PairLoader<S::BM, S::BN, S::BK, S::kThreads, S::kLdA, S::BK, kAligned> {
  using Base = PairLoader<S::BM, S::BN, S::BK, S::kThreads, S::kLdA, S::BK, kAligned>;
  static_assert(Base::kBCols % 4 == 0,
                "the swizzle needs every B copy pass to move by a multiple of 4 columns");
  __device__ SwizzledLoader(const double* a, int64_t lda, const double* b, int64_t ldb, int64_t m0,
                            int64_t n0, int64_t m, int64_t n, int64_t k)
      : Base(a, lda, b, ldb, m0, n0, m, n, k) {
    const int bq = threadIdx.x % Base::kBKPairs, bc = threadIdx.x / Base::kBKPairs;
    this->b_dst0 = bc * S::BK + 2 * BPairSlot(bc, bq);
  }
};

// The A operand of the 16-row piece at row r0, k step kk, stored as in the
// teaching kernel: af[v0 + 2 v1] = A(r0 + 2 g + v0, kslot(t, v1)); the two
// rows of a thread are neighbours, one 16-byte load.
template <class S>
struct RowPairsA {
  __device__ __forceinline__ static void load(const double* As, int kk, int r0, int g, int t,
                                              double (&af)[8]) {
#pragma unroll
    for (int v1 = 0; v1 < 4; ++v1) {
      const double2 rows =
          *reinterpret_cast<const double2*>(As + (kk * kStepK + S::kslot(t, v1)) * S::kLdA + r0 + 2 * g);
      af[2 * v1] = rows.x;
      af[2 * v1 + 1] = rows.y;
    }
  }
};

// C <- alpha * acc + keep * C over the warp's pieces; keep == 0 never reads C
// (beta == 0), keep == 1 adds to what an earlier split wrote. acc[mi][ni][v0 +
// 2 v1] is C(row0 + 16 mi + 2 g + v1, col0 + 8 ni + 2 t + v0). Reads go
// through L2 (ld.global.cg): another block may have written C a moment ago.
template <class S>
__device__ __forceinline__ void store_c(const double (&acc)[S::kMI][S::kNI][4], double alpha, double keep,
                                        double* c, int64_t ldc, int64_t row0, int64_t col0, int64_t m,
                                        int64_t n, int g, int t) {
  const bool vector = reinterpret_cast<uintptr_t>(c) % 16 == 0 && ldc % 2 == 0;
#pragma unroll
  for (int mi = 0; mi < S::kMI; ++mi)
#pragma unroll
    for (int ni = 0; ni < S::kNI; ++ni)
#pragma unroll
      for (int v0 = 0; v0 < 2; ++v0) {
        const int64_t i = row0 + 16 * mi + 2 * g, j = col0 + 8 * ni + 2 * t + v0;
        if (i >= m || j >= n) continue;
        double* const p = c + i + j * ldc;
        const bool second_row = i + 1 < m;
        double top = alpha * acc[mi][ni][v0], bottom = alpha * acc[mi][ni][v0 + 2];
        if (vector && second_row) {
          if (keep != 0.0) {
            const double2 was = __ldcg(reinterpret_cast<const double2*>(p));
            top += keep * was.x;
            bottom += keep * was.y;
          }
          *reinterpret_cast<double2*>(p) = double2{top, bottom};
        } else {
          p[0] = keep != 0.0 ? top + keep * __ldcg(p) : top;
          if (second_row) p[1] = keep != 0.0 ? bottom + keep * __ldcg(p + 1) : bottom;
        }
      }
}

// Serial split-K: the splits of a tile take turns at C through flags[tile],
// which holds the split whose turn it is (0 when none has begun) and goes
// back to 0 after the last one. Release and acquire at GPU scope order a
// split's stores to C before the next split's loads.
__device__ __forceinline__ void wait_turn(const unsigned* flag, int split) {
  if (threadIdx.x == 0) {
    unsigned now;
    do {
      asm volatile("ld.global.acquire.gpu.b32 %0, [%1];\n" : "=r"(now) : "l"(flag) : "memory");
      if (now != unsigned(split)) __nanosleep(64);
    } while (now != unsigned(split));
  }
  __syncthreads();
}
__device__ __forceinline__ void pass_turn(unsigned* flag, unsigned next) {
  __syncthreads();  // every thread's stores to C come before thread 0's release
  if (threadIdx.x == 0)
    asm volatile("st.global.release.gpu.b32 [%0], %1;\n" ::"l"(flag), "r"(next) : "memory");
}

// Block b computes tile b % tiles over the k range of split b / tiles
// (k_chunk wide, the last one shorter); without kSplitK there is one split
// and flags is null. The splits of a tile are launched in split order and
// all fit on the GPU at once (the launcher makes sure), so a split never
// waits for one that cannot run.
template <class S, bool kAligned, bool kSplitK>
__global__ void __launch_bounds__(S::kThreads, S::kMinBlocks)
    candidate_kernel(double alpha, const double* __restrict__ a, int64_t lda, const double* __restrict__ b,
                     int64_t ldb, double beta, double* c, int64_t ldc, int64_t m, int64_t n, int64_t k,
                     int64_t k_chunk, unsigned* flags) {
  extern __shared__ __align__(16) double smem[];  // kStages x (As[BK][kLdA], Bs[BN][BK] swizzled)
  const int64_t tiles_m = (m + S::BM - 1) / S::BM, tiles_n = (n + S::BN - 1) / S::BN,
                tiles = tiles_m * tiles_n;
  const int64_t tile = kSplitK ? blockIdx.x % tiles : blockIdx.x;
  const int split = kSplitK ? int(blockIdx.x / tiles) : 0, splits = kSplitK ? int(gridDim.x / tiles) : 1;
  int64_t tm, tn;
  tile_of_block(tile, tiles_m, tiles_n, &tm, &tn);
  const int64_t m0 = tm * S::BM, n0 = tn * S::BN, k0 = split * k_chunk;
  const int64_t k_len = k - k0 < k_chunk ? k - k0 : k_chunk;
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32, g = lane / 4, t = lane % 4;
  const int wm0 = (warp % S::kWarpsM) * S::kWM, wn0 = (warp / S::kWarpsM) * S::kWN;
  // k0 is a multiple of BK (even): the shifted panels keep their alignment.
  const SwizzledLoader<S, kAligned> loader(a + k0 * lda, lda, b + k0, ldb, m0, n0, m, n, k_len);
  double acc[S::kMI][S::kNI][4] = {};
  multiply<S, RowPairsA<S>>(loader, smem, k_len, wm0, wn0, g, t, acc);
  if (splits == 1) {
    store_c<S>(acc, alpha, beta, c, ldc, m0 + wm0, n0 + wn0, m, n, g, t);
    return;
  }
  if (split > 0) wait_turn(flags + tile, split);
  store_c<S>(acc, alpha, split == 0 ? beta : 1.0, c, ldc, m0 + wm0, n0 + wn0, m, n, g, t);
  pass_turn(flags + tile, split + 1 == splits ? 0u : unsigned(split + 1));
}

bool aligned_pairs(lab::ConstMatView v) {
  return reinterpret_cast<uintptr_t>(v.data) % 16 == 0 && v.ld % 2 == 0;
}

// How many blocks share the k of each tile: one, unless C has fewer tiles than
// half the multiprocessors; then up to 4, as many as fill the GPU once (so
// that every split is resident together), each at least 8 slices deep.
int split_count(int64_t tiles, int64_t k, int bk) {
  const int64_t sms = lab::cuda::device_info().sm_count;
  if (2 * tiles > sms) return 1;
  int64_t splits = sms / tiles;
  if (splits > 4) splits = 4;
  const int64_t deep = (k + bk - 1) / bk / 8;
  if (splits > deep) splits = deep;
  return splits < 1 ? 1 : int(splits);
}

template <class S, bool kSplitK>
void launch(double alpha, lab::ConstMatView A, lab::ConstMatView B, double beta, lab::MatView C,
            cudaStream_t stream) {
  auto kernel = aligned_pairs(A) && aligned_pairs(B) ? candidate_kernel<S, true, kSplitK>
                                                     : candidate_kernel<S, false, kSplitK>;
  allow_dynamic_smem(reinterpret_cast<const void*>(kernel), S::kSmemBytes);
  const int64_t tiles = tile_count(C, S::BM, S::BN), k = A.cols;
  int64_t k_chunk = k, splits = 1;
  if constexpr (kSplitK) {
    const int64_t want = split_count(tiles, k, S::BK);
    // whole slices per split; the rounding may leave fewer splits than asked for
    k_chunk = ((k + want - 1) / want + S::BK - 1) / S::BK * S::BK;
    splits = (k + k_chunk - 1) / k_chunk;
  }
  unsigned* flags = nullptr;
  if (splits > 1) {
    LAB_CUDA_CHECK(cudaMallocAsync(reinterpret_cast<void**>(&flags), sizeof(unsigned) * tiles, stream));
    LAB_CUDA_CHECK(cudaMemsetAsync(flags, 0, sizeof(unsigned) * tiles, stream));
  }
  kernel<<<unsigned(tiles * splits), S::kThreads, S::kSmemBytes, stream>>>(
      alpha, A.data, A.ld, B.data, B.ld, beta, C.data, C.ld, C.rows, C.cols, k, k_chunk, flags);
  LAB_CUDA_CHECK_LAUNCH();
  if (flags) LAB_CUDA_CHECK(cudaFreeAsync(flags, stream));
}

//                    BM   BN  BK  warps  stages blocks/SM fetch ahead
using Bk32 = Shape<128, 128, 32, 2, 4, 3, 1, true>;      // 8 warps of 64 x 32
using Stages6 = Shape<128, 128, 16, 2, 4, 6, 1, true>;   // 8 warps of 64 x 32
using Warps16 = Shape<128, 128, 16, 4, 4, 4, 1, false>;  // 16 warps of 32 x 32
using SplitK = Shape<128, 128, 16, 2, 4, 4, 1, true>;    // 8 warps of 64 x 32

struct Candidate {
  const char* name;
  const char* about;
  KernelChoice kernel[1];  // one block tile each (a table of one, as run_tile takes)
};

const Candidate kCandidates[] = {
    {"dmma_bk32",
     "DMMA candidate: slices of BK = 32 in 3 stages, half the barriers per flop (8 warps of 64 x 32)",
     {{Bk32::BM, Bk32::BN, Bk32::BK, launch<Bk32, false>}}},
    {"dmma_stages6",
     "DMMA candidate: 6 stages of BK = 16, copies issued 5 slices ahead (8 warps of 64 x 32)",
     {{Stages6::BM, Stages6::BN, Stages6::BK, launch<Stages6, false>}}},
    {"dmma_warps16",
     "DMMA candidate: 16 warps of 32 x 32 (4 per scheduler, <= 128 registers), operands loaded when needed",
     {{Warps16::BM, Warps16::BN, Warps16::BK, launch<Warps16, false>}}},
    {"dmma_splitk",
     "DMMA candidate: k split over 2-4 blocks per tile where C has fewer tiles than half the SMs (8 warps of "
     "64 x 32)",
     {{SplitK::BM, SplitK::BN, SplitK::BK, launch<SplitK, true>}}},
};

}  // namespace

const std::vector<lab::step06::DmmaCandidate>& lab::step06::dmma_candidates() {
  static const std::vector<DmmaCandidate> list = [] {
    std::vector<DmmaCandidate> out;
    for (const Candidate& c : kCandidates) out.push_back({c.name, c.about, detail::tiles_of(c.kernel)});
    return out;
  }();
  return list;
}

void lab::step06::dgemm_dmma_candidate(const std::string& name, double alpha, ConstMatView A, ConstMatView B,
                                       double beta, MatView C, cudaStream_t stream, Tile tile) {
  const Candidate* found = nullptr;
  for (const Candidate& c : kCandidates)
    if (name == c.name) found = &c;
  if (!found) throw std::invalid_argument("step06 dgemm_dmma_candidate: no candidate named '" + name + "'");
  check_gemm_args(A, B, C);
  if (cuda::gemm_quick_return(alpha, A, B, beta, C, stream)) return;
  std::string why;
  if (!dmma_supported(&why)) throw std::runtime_error("step06 " + name + ": " + why);
  const KernelChoice& only = found->kernel[0];
  if (tile.bm == 0) tile = {only.bm, only.bn, only.bk};
  if (tile.bk == 0) tile.bk = only.bk;
  detail::run_tile(("step06 " + name).c_str(), found->kernel, tile, alpha, A, B, beta, C, stream);
}
