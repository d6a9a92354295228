// device.hpp — blocks that live on the GPUs for the whole multiply.
//
// Each rank uses one GPU, chosen by its index among the ranks of its node (rank i
// of a node takes GPU i mod count, so several ranks may share one). The blocks it
// holds and the blocks it receives stay in that GPU's memory; the local product is
// cuBLAS (or the caller's device kernel) on the context's stream; the broadcasts
// and the reduction move device buffers
//   - with NCCL (ncclBroadcast, ncclReduce with the Reduction's ncclRedOp_t) where
//     the build found NCCL and every rank of a node has a GPU of its own (NCCL
//     does not put two ranks of one communicator on one GPU);
//   - with MPI otherwise, through pinned host buffers, a few MiB at a time, so
//     that the copies to and from the GPU overlap the messages.
// Only in builds with the CUDA Toolkit (LAB_STEP08_HAVE_CUDA).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "lab/cuda.hpp"
#include "mpi3d.hpp"
#include "transport.hpp"

namespace lab::step08 {

/// How device blocks travel: NCCL where it can, NCCL or nothing, MPI through host buffers.
enum class Transfer { automatic, nccl, mpi };

/// How the rank-0 entry moves rank 0's host matrices to and from the ranks' GPUs:
///   direct: rank 0 copies every rank's block straight into that rank's GPU (CUDA
///     IPC), each GPU through its own host link, all at once: needs every rank on
///     rank 0's node and rank 0 able to reach each GPU;
///   relay: through rank 0's GPU and NCCL (or pinned pieces with MPI), one link;
///   automatic: direct where it can, else relay.
enum class RootCopy { automatic, direct, relay };

/// This rank's GPU for the multiply: the device, a stream, a cuBLAS handle, the
/// NCCL communicators along the three fibres (when NCCL is used), scratch blocks
/// and pinned staging buffers. Collective over the cube's ranks. With
/// Transfer::nccl every fibre gets an NCCL communicator, even one of a single
/// rank (what a one-GPU machine can check); it throws, on every rank alike, when
/// the build has no NCCL or ranks share a GPU.
class DeviceContext {
 public:
  explicit DeviceContext(const Cube& cube, Transfer how = Transfer::automatic);
  ~DeviceContext();
  DeviceContext(const DeviceContext&) = delete;
  DeviceContext& operator=(const DeviceContext&) = delete;

  int device() const;
  bool uses_nccl() const;
  void* stream() const;         ///< the cudaStream_t everything of this context runs on
  std::string describe() const;  ///< e.g. "GPU 0 (NVIDIA H100 80GB HBM3), NCCL"
  /// The rank-0 entry's path from the next call on (default automatic), and the
  /// most bytes one piece of a block carries (0: 64 MiB; a piece is at least one
  /// column). Small pieces make many: the tests run the pinned rings and the
  /// links' balance on small matrices with them.
  void set_root_copy(RootCopy how, size_t piece_bytes = 0);
  /// The path the last rank-0 call took, in words ("" before the first call).
  std::string root_route() const;

  struct State;  // device.cpp
  State& state() const { return *state_; }

 private:
  std::unique_ptr<State> state_;
};

/// Blocks of T in device memory, moved with NCCL or with MPI through host buffers.
template <class T>
class DeviceTransport final : public Transport<T> {
 public:
  DeviceTransport(DeviceContext& dev, Reduction op) : dev_(dev), op_(op) {}
  void bcast(View<T> blk, int root, const Comm& fibre, Traffic& t) override;
  void reduce(View<T> blk, int root, const Comm& fibre, Traffic& t) override;
  View<T> scratch(int slot, int64_t rows, int64_t cols) override;
  void copy(View<const T> from, View<T> to) override;
  void finish() override;
  void* stream() const override { return dev_.stream(); }

 private:
  DeviceContext& dev_;
  Reduction op_;
};
extern template class DeviceTransport<double>;
extern template class DeviceTransport<float>;
extern template class DeviceTransport<int32_t>;
extern template class DeviceTransport<int64_t>;

/// A rank's block in its GPU's memory, ld = rows + pad (nothing when it holds none).
struct DeviceBlock {
  lab::cuda::DeviceBuffer<double> buf;
  MatView view{nullptr, 0, 0, 1};
  DeviceBlock(const Block& b, int64_t pad);
  /// A host copy of the block (ld = rows).
  Matrix to_host() const;
};

/// The DGEMM's device product: cublasDgemm on the context's stream (beta on the
/// z = 0 layer only; beta == 0 does not read C).
Product<double> cublas_product(DeviceContext& dev, double alpha, double beta);

/// Fills a device block with generated(seed, row0 + i, col0 + j) (generate.hpp),
/// on `stream` (a cudaStream_t).
void fill_device(MatView blk, uint64_t seed, int64_t row0, int64_t col0, void* stream);

/// Host blocks through the GPU (LocalKernel::cuda): picks this rank's GPU once
/// (collective over the cube), then cuda_host_gemm copies, multiplies, copies back.
void cuda_host_setup(const Cube& cube);

// ---- the rank-0 entry on GPUs (device_root.cpp; dgemm_device_root below) ----------
// `blocks[r]` is rank r's block of a matrix M that rank 0 holds whole in host
// memory (any ld); `mine` is this rank's device block from root_block. All are
// collective over the context's cube and throw alike on every rank only through
// the caller's all_or_none.

/// Staging buffers and streams, the path (RootCopy: whether rank 0 reaches every
/// rank's GPU, tried once) and, when the path is relay with NCCL and p > 1, an NCCL
/// communicator over every rank of the cube; made on the first call and kept.
void root_prepare(DeviceContext& dev);
/// After a failed call, on every rank: ends that communicator and drops the staging.
void root_abandon(DeviceContext& dev);
/// This rank's device block of matrix `slot` (0 A, 1 B, 2 C), ld = rows, kept between calls.
MatView root_block(DeviceContext& dev, int slot, const Block& b);
/// Rank 0 copies every rank's block out of M into `mine` (the owner's block of
/// `slot`), a piece (<= 64 MiB of whole columns) at a time. Direct: into each
/// rank's GPU through that GPU's link, straight from M when it is pinned, else
/// through pinned buffers. Relay: through pinned buffers to rank 0's GPU and with
/// NCCL into the owner's block; without NCCL the pinned pieces travel with MPI
/// and the owner copies them to its GPU.
void root_scatter(DeviceContext& dev, int slot, const std::vector<Block>& blocks, ConstMatView M, MatView mine,
                  int threads, Traffic& t);
/// The mirror: every rank's block comes to rank 0 and is copied into its place in M.
void root_gather(DeviceContext& dev, int slot, const std::vector<Block>& blocks, ConstMatView mine, MatView M,
                 int threads, Traffic& t);

inline namespace LAB_IMPL_NS {

/// C <- alpha A B + beta C on device blocks that live on their ranks' GPUs (the
/// DGEMM of multiply_blocks with the device transport and cuBLAS).
void multiply_device(const Plan& plan, DeviceContext& dev, double alpha, ConstMatView A, ConstMatView B,
                     double beta, MatView C, Breakdown* breakdown = nullptr);

/// The rank-0 entry on GPUs: A, B, C whole in rank 0's host memory (any ld; the
/// other ranks' views are ignored; pinned or not), the same contract as
/// dgemm(comm, ...), with every block moved between rank 0's host memory and its
/// rank's GPU (root_scatter, root_gather: the context's RootCopy) and multiplied
/// with multiply_device. `plan` is made for C's m x n and A's k, `dev` on its cube;
/// both are kept between calls (NCCL communicators and pinned memory are slow to
/// make). opts: threads (rank 0's host copies; 0: OpenMP's default) and
/// breakdown; opts.local and opts.grid do not apply (the plan has the grid).
/// Bad arguments on rank 0 throw the same std::invalid_argument on every rank.
void dgemm_device_root(const Plan& plan, DeviceContext& dev, double alpha, ConstMatView A, ConstMatView B,
                       double beta, MatView C, const Options& opts = {});
/// The same in one call, as dgemm(comm, ...): rank 0 shares the sizes, the Plan
/// (opts.grid) and a DeviceContext (NCCL where it can) are made and dropped.
void dgemm_device_root(MPI_Comm comm, double alpha, ConstMatView A, ConstMatView B, double beta, MatView C,
                       const Options& opts = {});

}  // namespace LAB_IMPL_NS
}  // namespace lab::step08
