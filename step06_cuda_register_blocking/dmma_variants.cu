// step06 — given: a faster DMMA kernel beside the teaching one (dmma.cu).
//
// The teaching kernel reaches 0.89-0.91 of cuBLAS from n = 2048 to 8192 on an
// H100. Nsight Compute on both (NOTES.md, "Where the 10 % went") showed
// cuBLAS's tensor pipe busy 96-98 % of the time against the teaching
// kernel's 76-80 %, with the same shared-memory traffic: what cuBLAS does
// not do is wait. Its warps find their operands in registers when an mma
// issues (short scoreboard 0.08 cycles an instruction against 1.8), because
// it multiplies 8-deep steps (m16n8k8) and loads the whole next step while
// the current one multiplies; the teaching kernel's 16-deep steps leave no
// registers for a second set, so it fetches one strip ahead and its loads
// overwrite registers the mma before them has not read yet.
//
//   dmma_k8   multiply_k8 (dmma_candidate.cuh): m16n8k8 steps, the operands
//             of a whole step held twice, one barrier a slice, placed between
//             its two steps; 128 x 128 tiles (8 warps of 64 x 32, one block a
//             multiprocessor, 6 stages) where C has a tile for every
//             multiprocessor, else 64 x 64 (4 warps of 32 x 32, 3 blocks);
//             128 x 64 (cuBLAS's shape: 4 warps, 2 blocks) on request. From
//             6144 rows and columns of C on, an operand with an odd leading
//             dimension is first copied to storage with an even one.
//
// B lies in shared memory without padding (BK doubles per column) and its
// 16-byte pairs are swizzled so that the fragment loads stay free of bank
// conflicts (see BPairSlot), which is what lets six stages fit in the 227
// KiB a block may have on an H100. The variant is checked like every other
// (the contract suite, every tile on ragged shapes) and timed with cuBLAS by
// `common/tools/gpu-check bench`.
#include <cstdint>
#include <limits>
#include <map>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <string>
#include <type_traits>
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
using lab::step06::detail::multiply_k8;
using lab::step06::detail::PairLoader;
using lab::step06::detail::Shape;
using lab::step06::detail::tile_count;
using lab::step06::detail::tile_of_block;
using lab::step06::Tile;

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

// SwizzledLoader for matrices that do not allow 16-byte copies throughout
// (an odd leading dimension or data 8 bytes off): instead of two 8-byte
// copies per pair everywhere, each thread tests once whether its own pairs
// are 16-byte aligned. They are all alike: a thread's columns of A are ap +
// kACols pp and of B bc + kBCols cp, and its slices start at multiples of
// BK, all even offsets, so with an odd leading dimension alignment goes with
// the parity of the column. A warp copies one column of A (kARowPairs >= 32),
// and its four columns of B are chosen of one parity (below), so the test
// never splits a warp: with an odd leading dimension half the warps copy 16
// bytes at a time and half 8, which halves the copies of the unaligned case.
template <class S>
struct MixedLoader : SwizzledLoader<S, false> {
  using Base = typename SwizzledLoader<S, false>::Base;
  static_assert(Base::kARowPairs >= 32 && Base::kBKPairs == 8 && Base::kBCols % 8 == 0,
                "a warp copies one column of A and four of B");
  static_assert(Base::kACols % 2 == 0, "a thread's columns of A keep their parity");
  bool a_vec, b_vec;  // this thread's pairs of A, of B are 16-byte aligned
  __device__ MixedLoader(const double* a, int64_t lda, const double* b, int64_t ldb, int64_t m0, int64_t n0,
                         int64_t m, int64_t n, int64_t k)
      : SwizzledLoader<S, false>(a, lda, b, ldb, m0, n0, m, n, k) {
    // The lanes of a warp take q = 4 w .. 4 w + 3: columns 8 (q / 8) + 2 (q % 4) + w % 2, one parity.
    const int bq = threadIdx.x % Base::kBKPairs, q = threadIdx.x / Base::kBKPairs;
    const int bc = 8 * (q / 8) + 2 * (q % 4) + (q / 4) % 2;
    this->b_dst0 = bc * S::BK + 2 * BPairSlot(bc, bq);
    this->b_ptr = b + 2 * bq + (n0 + bc) * ldb;
    this->cols_left = n - n0 - bc;
    a_vec = reinterpret_cast<uintptr_t>(this->a_ptr) % 16 == 0;
    b_vec = reinterpret_cast<uintptr_t>(this->b_ptr) % 16 == 0;
  }

  template <bool kChecked>
  __device__ __forceinline__ void copy_as(double* As, double* Bs, int64_t p0) const {
    const int64_t k_left = this->k - p0;
#pragma unroll
    for (int pp = 0; pp < Base::kAPasses; ++pp) {
      double* const dst = As + this->a_dst0 + Base::kACols * pp * S::kLdA;
      const double* const src = this->a_ptr + (p0 + Base::kACols * pp) * this->lda;
      const int64_t count = !kChecked ? 2 : this->ap + Base::kACols * pp < k_left ? this->rows_left : 0;
      copy(dst, src, count, this->a_ptr, a_vec);
    }
#pragma unroll
    for (int cp = 0; cp < Base::kBPasses; ++cp) {
      double* const dst = Bs + this->b_dst0 + Base::kBCols * cp * S::BK;
      const double* const src = this->b_ptr + p0 + Base::kBCols * cp * this->ldb;
      const int64_t count = !kChecked ? 2 : Base::kBCols * cp < this->cols_left ? k_left - this->bq2 : 0;
      copy(dst, src, count, this->b_ptr, b_vec);
    }
  }
  // The first min(count, 2) elements of the pair (zeros for the rest), as
  // PairLoader::copy_pair, in one copy where the pair allows it.
  __device__ __forceinline__ static void copy(double* dst, const double* src, int64_t count, const double* safe,
                                              bool vec) {
    if (vec && count >= 2) {
      lab::step06::detail::Async::copy16(dst, src);
    } else {
      lab::step06::detail::Async::copy8(dst, count >= 1 ? src : safe, count >= 1);
      lab::step06::detail::Async::copy8(dst + 1, count >= 2 ? src + 1 : safe, count >= 2);
    }
  }
};

// C <- alpha * acc + beta * C over the warp's pieces; beta == 0 never reads C.
// acc[mi][ni][v0 + 2 v1] is C(row0 + 16 mi + 2 g + v1, col0 + 8 ni + 2 t + v0):
// a thread's two rows are neighbours, one 16-byte access where C allows it.
template <class S>
__device__ __forceinline__ void store_c(const double (&acc)[S::kMI][S::kNI][4], double alpha, double beta,
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
          if (beta != 0.0) {
            const double2 was = *reinterpret_cast<const double2*>(p);
            top += beta * was.x;
            bottom += beta * was.y;
          }
          *reinterpret_cast<double2*>(p) = double2{top, bottom};
        } else {
          p[0] = beta != 0.0 ? top + beta * p[0] : top;
          if (second_row) p[1] = beta != 0.0 ? bottom + beta * p[1] : bottom;
        }
      }
}

// Which tiles of C a launch covers: all of them; only the whole ones; or only
// the partial ones of the last block row and column, with the warps
// multiplying just the strips and pieces that hold elements of C.
enum class Part { kAll, kWhole, kEdges };

// Block b's tile (tm, tn) in the launch's part of C. Whole and all tiles go
// in groups of block rows (tile_of_block); the edge blocks take the last
// block row first (when m is not a multiple of BM), then the last column.
template <class S, Part kPart>
__device__ __forceinline__ void tile_of(int64_t b, int64_t m, int64_t n, int64_t* tm, int64_t* tn) {
  const int64_t whole_m = m / S::BM, whole_n = n / S::BN;
  if constexpr (kPart == Part::kAll) {
    tile_of_block(b, (m + S::BM - 1) / S::BM, (n + S::BN - 1) / S::BN, tm, tn);
  } else if constexpr (kPart == Part::kWhole) {
    tile_of_block(b, whole_m, whole_n, tm, tn);
  } else {
    const int64_t row_tiles = m % S::BM ? (n + S::BN - 1) / S::BN : 0;
    if (b < row_tiles) {
      *tm = whole_m;
      *tn = b;
    } else {
      *tm = b - row_tiles;
      *tn = whole_n;
    }
  }
}

// One block per bm x bn tile of C (of the launch's part); kAligned: A and B
// allow 16-byte copies throughout.
template <class S, bool kAligned, Part kPart>
__global__ void __launch_bounds__(S::kThreads, S::kMinBlocks)
    candidate_kernel(double alpha, const double* __restrict__ a, int64_t lda, const double* __restrict__ b,
                     int64_t ldb, double beta, double* __restrict__ c, int64_t ldc, int64_t m, int64_t n,
                     int64_t k) {
  extern __shared__ __align__(16) double smem[];  // kStages x (As[BK][kLdA], Bs[BN][BK] swizzled)
  int64_t tm, tn;
  tile_of<S, kPart>(blockIdx.x, m, n, &tm, &tn);
  const int64_t m0 = tm * S::BM, n0 = tn * S::BN;
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32, g = lane / 4, t = lane % 4;
  const int wm0 = (warp % S::kWarpsM) * S::kWM, wn0 = (warp / S::kWarpsM) * S::kWN;
  using Loader = std::conditional_t<kAligned, SwizzledLoader<S, true>, MixedLoader<S>>;
  const Loader loader(a, lda, b, ldb, m0, n0, m, n, k);
  double acc[S::kMI][S::kNI][4] = {};
  if constexpr (kPart == Part::kEdges) {
    const int64_t rows = m - m0 - wm0, cols = n - n0 - wn0;
    const int live_m = rows <= 0 ? 0 : rows >= S::kWM ? S::kMI : int((rows + 15) / 16);
    const int live_n = cols <= 0 ? 0 : cols >= S::kWN ? S::kNI : int((cols + 7) / 8);
    multiply_k8<S, true>(loader, smem, k, wm0, wn0, g, t, acc, live_m, live_n);
  } else {
    multiply_k8<S>(loader, smem, k, wm0, wn0, g, t, acc);
  }
  store_c<S>(acc, alpha, beta, c, ldc, m0 + wm0, n0 + wn0, m, n, g, t);
}

bool aligned_pairs(lab::ConstMatView v) {
  return reinterpret_cast<uintptr_t>(v.data) % 16 == 0 && v.ld % 2 == 0;
}

template <class S, Part kPart>
void launch_part(unsigned blocks, double alpha, lab::ConstMatView A, lab::ConstMatView B, double beta,
                 lab::MatView C, cudaStream_t stream) {
  if (blocks == 0) return;
  auto kernel = aligned_pairs(A) && aligned_pairs(B) ? candidate_kernel<S, true, kPart>
                                                     : candidate_kernel<S, false, kPart>;
  allow_dynamic_smem(reinterpret_cast<const void*>(kernel), S::kSmemBytes);
  kernel<<<blocks, S::kThreads, S::kSmemBytes, stream>>>(alpha, A.data, A.ld, B.data, B.ld, beta, C.data, C.ld,
                                                         C.rows, C.cols, A.cols);
  LAB_CUDA_CHECK_LAUNCH();
}

// Where C's partial tiles are thin (a quarter of a tile or less: n = 8193
// leaves 129 tiles of one row or column, and a 33rd wave of 132 blocks for
// the last of them), the whole tiles go first and the partial ones after, in
// a second launch whose blocks multiply only what C holds; otherwise one
// launch covers all.
template <class S>
void launch(double alpha, lab::ConstMatView A, lab::ConstMatView B, double beta, lab::MatView C,
            cudaStream_t stream) {
  const int64_t rest_m = C.rows % S::BM, rest_n = C.cols % S::BN;
  const bool thin = (rest_m || rest_n) && rest_m <= S::BM / 4 && rest_n <= S::BN / 4;
  if (!thin) return launch_part<S, Part::kAll>(tile_count(C, S::BM, S::BN), alpha, A, B, beta, C, stream);
  const int64_t whole = (C.rows / S::BM) * (C.cols / S::BN);
  launch_part<S, Part::kWhole>(unsigned(whole), alpha, A, B, beta, C, stream);
  launch_part<S, Part::kEdges>(tile_count(C, S::BM, S::BN) - unsigned(whole), alpha, A, B, beta, C, stream);
}

// The shapes of multiply_k8:  BM   BN  BK warps  stages blocks/SM
using K8Big = Shape<128, 128, 16, 2, 4, 6, 1>;  // 8 warps of 64 x 32, 1 block/SM
using K8Pair = Shape<128, 64, 16, 2, 2, 4, 2>;  // 4 warps of 64 x 32, 2 blocks/SM
using K8Small = Shape<64, 64, 16, 2, 2, 4, 3>;  // 4 warps of 32 x 32, 3 blocks/SM

constexpr KernelChoice kK8[] = {
    {K8Big::BM, K8Big::BN, K8Big::BK, launch<K8Big>},
    {K8Pair::BM, K8Pair::BN, K8Pair::BK, launch<K8Pair>},
    {K8Small::BM, K8Small::BN, K8Small::BK, launch<K8Small>},
};

// dmma_k8's tile for C of m x n: 128 x 128 where there are enough such tiles
// to give every multiprocessor one, else 64 x 64 (measured on an H100:
// NOTES.md).
Tile pick_k8(int64_t m, int64_t n) {
  const int64_t sms = lab::cuda::device_info().sm_count;
  return ((m + 127) / 128) * ((n + 127) / 128) >= sms ? Tile{128, 128, 16} : Tile{64, 64, 16};
}

// Odd leading dimensions. With lda odd, every other column of A starts 8
// bytes off a 16-byte boundary and its pairs go 8 bytes at a time
// (MixedLoader), and B's likewise: at n = 8191 and 8193 that makes the
// kernel 7-8 % slower on an H100 (NOTES.md). Where C is large, copying such
// an operand first into storage whose columns start on 128-byte lines costs
// less: the copy of A and B at n = 8193 takes 0.76 ms (2.8 TB/s) and saves
// the kernel 1.4 ms of its 20. The copies move 16 (m + n) k bytes against
// the product's 2 m n k flops, so they pay only from some size on: measured,
// a little at 6145, not at 4097.
constexpr int64_t kPadFrom = 6144;

// The device memory the copies take comes from a pool of the current device
// that keeps what it has between calls (no release threshold), so that only
// the first call of a size pays for the allocation, as a library's workspace.
cudaMemPool_t pad_pool() {
  static std::mutex mu;
  static std::map<int, cudaMemPool_t> pools;
  int device = 0;
  LAB_CUDA_CHECK(cudaGetDevice(&device));
  const std::lock_guard<std::mutex> lock(mu);
  if (const auto it = pools.find(device); it != pools.end()) return it->second;
  cudaMemPoolProps props = {};
  props.allocType = cudaMemAllocationTypePinned;
  props.location.type = cudaMemLocationTypeDevice;
  props.location.id = device;
  cudaMemPool_t pool = nullptr;
  LAB_CUDA_CHECK(cudaMemPoolCreate(&pool, &props));
  uint64_t keep = std::numeric_limits<uint64_t>::max();
  LAB_CUDA_CHECK(cudaMemPoolSetAttribute(pool, cudaMemPoolAttrReleaseThreshold, &keep));
  return pools[device] = pool;
}

// dst <- src, rows x cols, each with its own leading dimension: a thread an
// element, a block 256 neighbours of a column, so that every warp reads and
// writes 256 contiguous bytes.
__global__ void copy_columns(const double* __restrict__ src, int64_t lds, double* __restrict__ dst, int64_t ldd,
                             int64_t rows, int64_t cols) {
  const int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i >= rows) return;
  for (int64_t j = blockIdx.y; j < cols; j += gridDim.y) dst[i + j * ldd] = src[i + j * lds];
}

// A copy of v whose columns start on 128-byte lines, made on `stream` and
// given back to the pool on it when the object goes: the kernel launched
// on the same stream in between reads it. Where the pool cannot have the
// memory (the device is nearly full), view() is v itself.
class LineAlignedCopy {
 public:
  LineAlignedCopy(lab::ConstMatView v, cudaStream_t stream) : view_(v), stream_(stream) {
    const int64_t ld = (v.rows + 15) / 16 * 16;
    void* p = nullptr;
    const cudaError_t got = cudaMallocFromPoolAsync(&p, sizeof(double) * size_t(ld * v.cols), pad_pool(), stream);
    if (got == cudaErrorMemoryAllocation) {
      cudaGetLastError();  // not sticky: the mixed copies run instead
      return;
    }
    LAB_CUDA_CHECK(got);
    data_ = static_cast<double*>(p);
    copy_columns<<<dim3(unsigned((v.rows + 255) / 256), unsigned(v.cols < 65535 ? v.cols : 65535)), 256, 0,
                   stream>>>(v.data, v.ld, data_, ld, v.rows, v.cols);
    if (const cudaError_t launched = cudaGetLastError(); launched != cudaSuccess) {
      cudaFreeAsync(data_, stream);  // (the destructor does not run when the constructor throws)
      LAB_CUDA_CHECK(launched);
    }
    view_ = {data_, v.rows, v.cols, ld};
  }
  ~LineAlignedCopy() {
    if (data_) cudaFreeAsync(data_, stream_);
  }
  LineAlignedCopy(const LineAlignedCopy&) = delete;
  LineAlignedCopy& operator=(const LineAlignedCopy&) = delete;
  lab::ConstMatView view() const { return view_; }

 private:
  double* data_ = nullptr;
  lab::ConstMatView view_;
  cudaStream_t stream_;
};

// Runs `run` on A and B, or on line-aligned copies of those that do not
// allow 16-byte copies throughout where C is large enough for it to pay.
template <class Run>
void with_aligned_operands(lab::ConstMatView A, lab::ConstMatView B, lab::MatView C, cudaStream_t stream,
                           Run run) {
  const bool large = C.rows >= kPadFrom && C.cols >= kPadFrom;
  if (!large || (aligned_pairs(A) && aligned_pairs(B))) return run(A, B);
  std::optional<LineAlignedCopy> a, b;
  if (!aligned_pairs(A)) A = a.emplace(A, stream).view();
  if (!aligned_pairs(B)) B = b.emplace(B, stream).view();
  run(A, B);
}

struct Candidate {
  const char* name;
  const char* about;
  const KernelChoice* kernels;  // the block tiles it is built with
  size_t count;
  Tile (*pick)(int64_t m, int64_t n);  // the tile when none is asked for (nullptr: the first)
};

const Candidate kCandidates[] = {
    {"dmma_k8",
     "DMMA, cuBLAS's way: 8-deep mma steps, the next step's operands loaded while this one multiplies "
     "(warps of 64 x 32 or 32 x 32)",
     kK8, 3, pick_k8},
};

}  // namespace

const std::vector<lab::step06::DmmaCandidate>& lab::step06::dmma_candidates() {
  static const std::vector<DmmaCandidate> list = [] {
    std::vector<DmmaCandidate> out;
    for (const Candidate& c : kCandidates) out.push_back({c.name, c.about, detail::tiles_of(c.kernels, c.count)});
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
  if (tile.bm == 0) {
    const KernelChoice& first = found->kernels[0];
    tile = found->pick ? found->pick(C.rows, C.cols) : Tile{first.bm, first.bn, first.bk};
  }
  if (tile.bk == 0) tile.bk = found->kernels[0].bk;
  with_aligned_operands(A, B, C, stream, [&](ConstMatView a, ConstMatView b) {
    detail::run_tile(("step06 " + name).c_str(), found->kernels, found->count, tile, alpha, a, b, beta, C, stream);
  });
}
