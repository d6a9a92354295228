// GPU-resident blocks (device.hpp): the context, the transport, cuBLAS products.
#include "device.hpp"

#include <cuda_runtime_api.h>
#include <mpi.h>

#include <algorithm>
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <stdexcept>
#include <string>

#include "comm.hpp"
#include "device_detail.hpp"
#include "lab/cuda.hpp"
#include "lab/gemm_args.hpp"
#include "local_kernel.hpp"

namespace lab::step08 {
using namespace detail;  // NCCL communicators, pinned buffers (device_detail.hpp)
namespace {

// The ranks of `comm` on this node: this rank's index among them and how many.
struct NodeRank {
  int index, count;
};
NodeRank node_rank(MPI_Comm comm) {
  int rank = 0;
  LAB_MPI_CHECK(MPI_Comm_rank(comm, &rank));
  MPI_Comm node_comm = MPI_COMM_NULL;
  LAB_MPI_CHECK(MPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, rank, MPI_INFO_NULL, &node_comm));
  const Comm node(node_comm);
  return {node.rank(), node.size()};
}

// The GPU of rank i of a node: GPU i mod count. Throws (naming cuda) without one.
int pick_device(int node_index) {
  int count = 0;
  if (cudaGetDeviceCount(&count) != cudaSuccess || count == 0) {
    cudaGetLastError();
    throw std::runtime_error("cuda: no CUDA device is visible to this rank");
  }
  const int device = node_index % count;
  LAB_CUDA_CHECK(cudaSetDevice(device));
  return device;
}

int device_count() {
  int count = 0;
  if (cudaGetDeviceCount(&count) != cudaSuccess) {
    cudaGetLastError();
    return 0;
  }
  return count;
}

}  // namespace


#if LAB_STEP08_HAVE_NCCL
const NcclComm& DeviceContext::State::nccl_of(const Comm& fibre, const Cube& c) const {
  if (fibre.get() == c.fibre_a.get()) return *fibre_a;
  if (fibre.get() == c.fibre_b.get()) return *fibre_b;
  if (fibre.get() == c.fibre_c.get()) return *fibre_c;
  throw std::logic_error("DeviceTransport: NCCL moves blocks along the cube's fibres only");
}
#endif

DeviceContext::DeviceContext(const Cube& cube, Transfer how) {
  const MPI_Comm comm = cube.cart.get();
  // (named members, not a structured binding: C++17 lambdas cannot capture one)
  const NodeRank node = node_rank(comm);
  const int on_node = node.count;
  all_or_none(comm, [&] {
    state_ = std::make_unique<State>(pick_device(node.index));
    state_->cube = &cube;
    state_->shared_gpu = on_node > device_count();
    state_->ranks_on_node = on_node;
    cudaDeviceProp prop{};
    LAB_CUDA_CHECK(cudaGetDeviceProperties(&prop, state_->device));
    state_->name = prop.name;
  });
  // NCCL on every rank or on none: each rank says whether it can, all agree.
  int can = LAB_STEP08_HAVE_NCCL && !state_->shared_gpu ? 1 : 0, all_can = 0;
  LAB_MPI_CHECK(MPI_Allreduce(&can, &all_can, 1, MPI_INT, MPI_MIN, comm));
  int p = 1;
  LAB_MPI_CHECK(MPI_Comm_size(comm, &p));
  all_or_none(comm, [&] {
    if (how != Transfer::nccl || all_can) return;
    if (!LAB_STEP08_HAVE_NCCL)
      throw std::invalid_argument("transfer nccl: this build has no NCCL (nccl.h and libnccl not found)");
    throw std::invalid_argument("transfer nccl: NCCL needs one GPU per rank, and " + std::to_string(on_node) +
                                " ranks share " + std::to_string(device_count()) + " GPU(s) on a node");
  });
  state_->nccl = how == Transfer::nccl || (how == Transfer::automatic && all_can && p > 1);
#if LAB_STEP08_HAVE_NCCL
  if (state_->nccl) {
    // Every rank makes its three communicators in the same order: no rank waits on a fibre nobody else joins.
    state_->fibre_a = std::make_unique<NcclComm>(cube.fibre_a);
    state_->fibre_b = std::make_unique<NcclComm>(cube.fibre_b);
    state_->fibre_c = std::make_unique<NcclComm>(cube.fibre_c);
  }
#endif
}

DeviceContext::~DeviceContext() = default;
int DeviceContext::device() const { return state_->device; }
bool DeviceContext::uses_nccl() const { return state_->nccl; }
void* DeviceContext::stream() const { return state_->stream.get(); }
std::string DeviceContext::describe() const {
  return "GPU " + std::to_string(state_->device) + " (" + state_->name + ")" +
         (state_->shared_gpu ? ", shared with other ranks" : "") +
         (state_->nccl ? ", NCCL" : ", MPI through pinned host buffers");
}

bool cuda_usable(std::string* why) { return lab::cuda::device_available(why); }

// ---- the transport ------------------------------------------------------------------

template <class T>
void DeviceTransport<T>::bcast(View<T> blk, int root, const Comm& fibre, Traffic& t) {
  DeviceContext::State& s = dev_.state();
  const cudaStream_t stream = s.stream.get();
  const bool me_root = fibre.rank() == root;
  // One rank on the fibre: it already holds the block (the same for reduce).
  if (blk.rows == 0 || blk.cols == 0 || fibre.size() == 1) return;
  (me_root ? t.sent : t.recv) += mpi::bytes_of(blk);
#if LAB_STEP08_HAVE_NCCL
  if (s.nccl) {
    // NCCL moves contiguous buffers: a strided block is packed first (on the GPU).
    const size_t count = size_t(blk.rows) * size_t(blk.cols);
    T* buf = blk.data;
    if (!mpi::contiguous(blk)) {
      buf = static_cast<T*>(s.get_scratch(s.pack, count * sizeof(T)));
      if (me_root)
        LAB_CUDA_CHECK(cudaMemcpy2DAsync(buf, sizeof(T) * blk.rows, blk.data, sizeof(T) * blk.ld, sizeof(T) * blk.rows,
                                         blk.cols, cudaMemcpyDeviceToDevice, stream));
    }
    const NcclComm& nc = s.nccl_of(fibre, *s.cube);
    nc.finish(ncclBroadcast(buf, buf, count, nccl_type<T>(), root, nc.get(), stream), "ncclBroadcast");
    if (buf != blk.data && !me_root)
      LAB_CUDA_CHECK(cudaMemcpy2DAsync(blk.data, sizeof(T) * blk.ld, buf, sizeof(T) * blk.rows, sizeof(T) * blk.rows,
                                       blk.cols, cudaMemcpyDeviceToDevice, stream));
    return;
  }
#endif
  // MPI through pinned host buffers, a group of whole columns at a time; the copy
  // of a piece to the GPU runs while the next piece is broadcast.
  const size_t col_bytes = sizeof(T) * size_t(blk.rows);
  const int64_t step = std::max<int64_t>(1, int64_t(DeviceContext::State::kStageBytes / col_bytes));
  if (col_bytes > DeviceContext::State::kStageBytes)
    throw std::invalid_argument("DeviceTransport: a column of " + std::to_string(blk.rows) +
                                " elements does not fit the staging buffer");
  int i = 0;
  for (int64_t j = 0; j < blk.cols; j += step, i ^= 1) {
    const int64_t cols = std::min(step, blk.cols - j);
    T* host = static_cast<T*>(s.stage_buffer(i));
    T* dev = blk.data + j * blk.ld;
    if (me_root) {
      LAB_CUDA_CHECK(cudaMemcpy2DAsync(host, col_bytes, dev, sizeof(T) * blk.ld, col_bytes, cols,
                                       cudaMemcpyDeviceToHost, stream));
      LAB_CUDA_CHECK(cudaStreamSynchronize(stream));
    }
    LAB_MPI_CHECK(MPI_Bcast(host, static_cast<int>(blk.rows * cols), mpi::mpi_type<T>(), root, fibre.get()));
    if (!me_root) {
      LAB_CUDA_CHECK(cudaMemcpy2DAsync(dev, sizeof(T) * blk.ld, host, col_bytes, col_bytes, cols,
                                       cudaMemcpyHostToDevice, stream));
      s.staged[i].record(stream);
      s.pending[i] = true;
    }
  }
}

template <class T>
void DeviceTransport<T>::reduce(View<T> blk, int root, const Comm& fibre, Traffic& t) {
  DeviceContext::State& s = dev_.state();
  const cudaStream_t stream = s.stream.get();
  const bool me_root = fibre.rank() == root;
  const size_t count = size_t(blk.rows) * size_t(blk.cols);
  if (count == 0 || fibre.size() == 1) return;
  if (!mpi::contiguous(blk)) throw std::logic_error("DeviceTransport::reduce: the block must be contiguous");
  (me_root ? t.recv : t.sent) += mpi::bytes_of(blk);
#if LAB_STEP08_HAVE_NCCL
  if (s.nccl) {
    const NcclComm& nc = s.nccl_of(fibre, *s.cube);
    nc.finish(ncclReduce(blk.data, blk.data, count, nccl_type<T>(), static_cast<ncclRedOp_t>(op_.nccl_op), root,
                         nc.get(), stream),
              "ncclReduce");
    return;
  }
#endif
  const size_t step = DeviceContext::State::kStageBytes / sizeof(T);
  int i = 0;
  for (size_t at = 0; at < count; at += step, i ^= 1) {
    const size_t n = std::min(step, count - at);
    T* host = static_cast<T*>(s.stage_buffer(i));
    LAB_CUDA_CHECK(cudaMemcpyAsync(host, blk.data + at, n * sizeof(T), cudaMemcpyDeviceToHost, stream));
    LAB_CUDA_CHECK(cudaStreamSynchronize(stream));
    if (me_root) {
      LAB_MPI_CHECK(MPI_Reduce(MPI_IN_PLACE, host, static_cast<int>(n), mpi::mpi_type<T>(), op_.mpi, root,
                               fibre.get()));
      LAB_CUDA_CHECK(cudaMemcpyAsync(blk.data + at, host, n * sizeof(T), cudaMemcpyHostToDevice, stream));
      s.staged[i].record(stream);
      s.pending[i] = true;
    } else {
      LAB_MPI_CHECK(
          MPI_Reduce(host, nullptr, static_cast<int>(n), mpi::mpi_type<T>(), op_.mpi, root, fibre.get()));
    }
  }
}

template <class T>
View<T> DeviceTransport<T>::scratch(int slot, int64_t rows, int64_t cols) {
  DeviceContext::State& s = dev_.state();
  const size_t bytes = size_t(std::max<int64_t>(1, rows * cols)) * sizeof(T);
  return {static_cast<T*>(s.get_scratch(s.scratch[slot], bytes)), rows, cols, std::max<int64_t>(1, rows)};
}

template <class T>
void DeviceTransport<T>::copy(View<const T> from, View<T> to) {
  if (from.rows == 0 || from.cols == 0) return;
  LAB_CUDA_CHECK(cudaMemcpy2DAsync(to.data, sizeof(T) * to.ld, from.data, sizeof(T) * from.ld, sizeof(T) * from.rows,
                                   from.cols, cudaMemcpyDeviceToDevice, dev_.state().stream.get()));
}

template <class T>
void DeviceTransport<T>::finish() {
  dev_.state().stream.sync();
}

template class DeviceTransport<double>;
template class DeviceTransport<float>;
template class DeviceTransport<int32_t>;
template class DeviceTransport<int64_t>;

DeviceBlock::DeviceBlock(const Block& b, int64_t pad) {
  if (!b.held) return;
  const int64_t ld = std::max<int64_t>(1, b.rows + pad);
  buf = DeviceBuffer<double>(size_t(std::max<int64_t>(1, ld * b.cols)));
  view = {buf.data(), b.rows, b.cols, ld};
}

Matrix DeviceBlock::to_host() const {
  Matrix h(view.rows, view.cols);
  if (view.rows > 0 && view.cols > 0)
    LAB_CUDA_CHECK(cudaMemcpy2D(h.data(), sizeof(double) * h.ld(), view.data, sizeof(double) * view.ld,
                                sizeof(double) * view.rows, view.cols, cudaMemcpyDeviceToHost));
  return h;
}

// ---- products -----------------------------------------------------------------------

namespace {
int as_int(int64_t v, const char* what) {
  if (v > INT_MAX)
    throw std::invalid_argument(std::string(what) + ": " + std::to_string(v) + " is too large for cuBLAS");
  return static_cast<int>(v);
}

void cublas_gemm(cublasHandle_t h, cudaStream_t stream, double alpha, ConstMatView A, ConstMatView B, double beta,
                 MatView C) {
  check_gemm_args(A, B, C);
  if (lab::cuda::gemm_quick_return(alpha, A, B, beta, C, stream)) return;
  LAB_CUDA_CHECK(cublasSetStream(h, stream));
  LAB_CUDA_CHECK(cublasDgemm(h, CUBLAS_OP_N, CUBLAS_OP_N, as_int(C.rows, "m"), as_int(C.cols, "n"),
                             as_int(A.cols, "k"), &alpha, A.data, as_int(A.ld, "lda"), B.data, as_int(B.ld, "ldb"),
                             &beta, C.data, as_int(C.ld, "ldc")));
}
}  // namespace

Product<double> cublas_product(DeviceContext& dev, double alpha, double beta) {
  Product<double> p;
  DeviceContext::State* s = &dev.state();
  p.run = [s, alpha, beta](ConstMatView A, ConstMatView B, MatView C, bool into_c, void* stream) {
    cublas_gemm(s->blas.get(), static_cast<cudaStream_t>(stream), alpha, A, B, into_c ? beta : 0.0, C);
  };
  p.reads_c = beta != 0.0;
  return p;
}

// ---- host blocks through the GPU (LocalKernel::cuda) ----------------------------------

namespace {
struct HostKernelGpu {
  explicit HostKernelGpu(int dev) : device(dev) {}
  int device;
  lab::cuda::Stream stream;
  lab::cuda::CublasHandle blas;  // made after cudaSetDevice, so it lives on `device`
  DeviceBuffer<double> a, b, c;
};
std::unique_ptr<HostKernelGpu>& host_kernel_gpu() {
  static std::unique_ptr<HostKernelGpu> gpu;
  return gpu;
}
void reserve(DeviceBuffer<double>& buf, int64_t count) {
  if (buf.size() < size_t(count)) buf = DeviceBuffer<double>(size_t(count));
}
}  // namespace

void cuda_host_setup(const Cube& cube) {
  if (host_kernel_gpu()) return;  // every rank makes the same calls, so every rank returns here alike
  host_kernel_gpu() = std::make_unique<HostKernelGpu>(pick_device(node_rank(cube.cart.get()).index));
}

void cuda_host_gemm(double alpha, ConstMatView A, ConstMatView B, double beta, MatView C) {
  check_gemm_args(A, B, C);
  if (gemm_quick_return(alpha, A, B, beta, C)) return;
  if (!host_kernel_gpu()) throw std::logic_error("the cuda kernel ran before cuda_host_setup");
  HostKernelGpu& g = *host_kernel_gpu();
  const cudaStream_t s = g.stream.get();
  reserve(g.a, C.rows * A.cols);
  reserve(g.b, A.cols * C.cols);
  reserve(g.c, C.rows * C.cols);
  auto up = [&](ConstMatView h, double* d) {
    LAB_CUDA_CHECK(cudaMemcpy2DAsync(d, sizeof(double) * h.rows, h.data, sizeof(double) * h.ld,
                                     sizeof(double) * h.rows, h.cols, cudaMemcpyHostToDevice, s));
  };
  up(A, g.a.data());
  up(B, g.b.data());
  if (beta != 0.0) up(C, g.c.data());  // beta == 0: cuBLAS does not read C
  cublas_gemm(g.blas.get(), s, alpha, {g.a.data(), A.rows, A.cols, A.rows}, {g.b.data(), B.rows, B.cols, B.rows},
              beta, {g.c.data(), C.rows, C.cols, C.rows});
  LAB_CUDA_CHECK(cudaMemcpy2DAsync(C.data, sizeof(double) * C.ld, g.c.data(), sizeof(double) * C.rows,
                                   sizeof(double) * C.rows, C.cols, cudaMemcpyDeviceToHost, s));
  g.stream.sync();
}

}  // namespace lab::step08
