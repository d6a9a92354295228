// device_detail.hpp — what device.cpp and device_root.cpp share: NCCL communicators
// that start without blocking and fail alike on every rank, pinned host buffers,
// and the state of a DeviceContext. Private to step08's device code (only built
// with CUDA); callers use device.hpp.
#pragma once

#include <cuda_runtime_api.h>
#include <mpi.h>

#include <chrono>
#include <cstddef>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <stdexcept>
#include <string>
#include <thread>
#include <utility>

#include "comm.hpp"
#include "device.hpp"
#include "lab/cuda.hpp"

#if LAB_STEP08_HAVE_NCCL
#include <nccl.h>
#endif

namespace lab::step08 {
namespace detail {

using lab::cuda::DeviceBuffer;

// How long NCCL may take to start a communicator or to finish a call that it
// reports in progress: LAB_NCCL_START_S seconds (default 25, under the tests'
// 30-s watchdog, so that the failure names NCCL instead of "no progress").
inline double nccl_limit_s() {
  static const double limit = [] {
    const char* env = std::getenv("LAB_NCCL_START_S");
    const double v = env ? std::strtod(env, nullptr) : 0.0;
    return v > 0.0 ? v : 25.0;
  }();
  return limit;
}

// 25 -> "25", 0.5 -> "0.5": the limit as the user wrote it
inline std::string seconds_text(double s) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g", s);
  return buf;
}

inline int world_rank() {
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  return rank;
}

#if LAB_STEP08_HAVE_NCCL
inline void nccl_check(ncclResult_t r, const char* call, const char* file, int line) {
  if (r != ncclSuccess)
    throw std::runtime_error(std::string(call) + " failed: " + ncclGetErrorString(r) + " (" + file + ":" +
                             std::to_string(line) + ")");
}
#define LAB_NCCL_CHECK(call) ::lab::step08::detail::nccl_check((call), #call, __FILE__, __LINE__)

// Reduction::nccl_op carries these values without nccl.h.
static_assert(ncclSum == 0 && ncclProd == 1 && ncclMax == 2 && ncclMin == 3, "ncclRedOp_t values");

template <class T>
inline ncclDataType_t nccl_type();
template <>
inline ncclDataType_t nccl_type<double>() { return ncclFloat64; }
template <>
inline ncclDataType_t nccl_type<float>() { return ncclFloat32; }
template <>
inline ncclDataType_t nccl_type<int32_t>() { return ncclInt32; }
template <>
inline ncclDataType_t nccl_type<int64_t>() { return ncclInt64; }

// Waits until `comm` has finished what `call` started (a non-blocking communicator
// answers ncclInProgress), within nccl_limit_s(); throws naming NCCL, the rank and
// what to try where it does not.
inline void nccl_finish(ncclComm_t comm, ncclResult_t r, const char* call, const char* fibre) {
  const auto start = std::chrono::steady_clock::now();
  while (r == ncclInProgress) {
    if (std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count() > nccl_limit_s())
      throw std::runtime_error(
          "NCCL: rank " + std::to_string(world_rank()) + " waited " + seconds_text(nccl_limit_s()) + " s in " +
          call + " on " + fibre +
          " without an answer; try one rank per GPU (CUDA_VISIBLE_DEVICES), fewer jobs beside it, "
          "NCCL_DEBUG=WARN to see where it waits, or --transfer mpi (LAB_NCCL_START_S sets the limit)");
    // A call on a started communicator is usually done within microseconds: look
    // again at once for the first millisecond, then every millisecond.
    if (std::chrono::steady_clock::now() - start < std::chrono::milliseconds(1)) std::this_thread::yield();
    else std::this_thread::sleep_for(std::chrono::milliseconds(1));
    if (ncclCommGetAsyncError(comm, &r) != ncclSuccess && r == ncclSuccess) r = ncclInternalError;
  }
  if (r != ncclSuccess)
    throw std::runtime_error("NCCL: rank " + std::to_string(world_rank()) + ": " + call + " on " + fibre +
                             " failed: " + ncclGetErrorString(r));
}

// An NCCL communicator over the ranks of one fibre, destroyed with it. It starts
// non-blocking, so that a start that cannot finish (ranks sharing a GPU, a link
// that never answers, a machine starved of cores) ends in a failure that every
// rank of the fibre agrees on, instead of a wait without end.
class NcclComm {
 public:
  NcclComm() = default;
  explicit NcclComm(const Comm& fibre, const char* label = nullptr)
      : label_(label ? label : fibre.label() ? fibre.label() : "a fibre") {
    // NVLink multicast stays off unless the user asked for it: it can take the
    // GPUs of a shared host out of service.
    setenv("NCCL_NVLS_ENABLE", "0", 0);
    ncclUniqueId id{};
    all_or_none(fibre.get(), [&] {
      if (fibre.rank() == 0) LAB_NCCL_CHECK(ncclGetUniqueId(&id));
    });
    LAB_MPI_CHECK(MPI_Bcast(&id, sizeof id, MPI_BYTE, 0, fibre.get()));
    note_step(("starting NCCL on " + label_).c_str());
    all_or_none(fibre.get(), [&] {
      ncclConfig_t config = NCCL_CONFIG_INITIALIZER;
      config.blocking = 0;
      const ncclResult_t r = ncclCommInitRankConfig(&comm_, fibre.size(), id, fibre.rank(), &config);
      try {
        nccl_finish(comm_, r, "ncclCommInitRank", label_.c_str());
      } catch (...) {
        if (comm_) ncclCommAbort(comm_);
        comm_ = nullptr;
        throw;
      }
    });
  }
  ~NcclComm() {
    if (comm_) ncclCommDestroy(comm_);
  }
  NcclComm(const NcclComm&) = delete;
  NcclComm& operator=(const NcclComm&) = delete;
  ncclComm_t get() const { return comm_; }
  /// Checks the result of a call on this communicator, waiting while it is in progress.
  void finish(ncclResult_t r, const char* call) const { nccl_finish(comm_, r, call, label_.c_str()); }
  /// Ends the communicator at once, whatever is still queued on it (after a failure).
  void abort() {
    if (comm_) ncclCommAbort(comm_);
    comm_ = nullptr;
  }
  const std::string& label() const { return label_; }

 private:
  ncclComm_t comm_ = nullptr;
  std::string label_;
};
#endif

// A pinned host buffer (cudaHostAlloc), for copies that overlap other work.
class PinnedBuffer {
 public:
  PinnedBuffer() = default;
  explicit PinnedBuffer(size_t bytes) : bytes_(bytes) { LAB_CUDA_CHECK(cudaHostAlloc(&p_, bytes, cudaHostAllocDefault)); }
  ~PinnedBuffer() {
    if (p_) cudaFreeHost(p_);
  }
  PinnedBuffer(PinnedBuffer&& o) noexcept : p_(std::exchange(o.p_, nullptr)), bytes_(std::exchange(o.bytes_, 0)) {}
  PinnedBuffer& operator=(PinnedBuffer&& o) noexcept {
    std::swap(p_, o.p_);
    std::swap(bytes_, o.bytes_);
    return *this;
  }
  void* get() const { return p_; }
  size_t bytes() const { return bytes_; }

 private:
  void* p_ = nullptr;
  size_t bytes_ = 0;
};


// The rank-0 entry's staging buffers and streams (device_root.cpp), made on its
// first call and kept: pinning host memory is slow.
#if LAB_STEP08_HAVE_NCCL
using NcclCommPtr = std::unique_ptr<NcclComm>;
#else
using NcclCommPtr = std::nullptr_t;  // no NCCL: nothing to ask for errors
#endif

struct RootStaging;
struct RootStagingFree {
  void operator()(RootStaging* r) const;
};

}  // namespace detail

struct DeviceContext::State {
  int device = 0;
  std::string name;
  bool nccl = false;
  bool shared_gpu = false;
  int ranks_on_node = 1;  // the cube's ranks on this rank's node (MPI_COMM_TYPE_SHARED)
  lab::cuda::Stream stream;
  lab::cuda::CublasHandle blas;
  detail::DeviceBuffer<std::byte> scratch[3];  // A, B, C blocks a rank receives or computes
  detail::DeviceBuffer<std::byte> pack;        // a strided block packed for NCCL
  // MPI through host memory: two pinned buffers, so that the copy of one piece to
  // or from the GPU runs while the next piece travels.
  static constexpr size_t kStageBytes = size_t(32) << 20;
  detail::PinnedBuffer stage[2];
  lab::cuda::Event staged[2];  // the last copy out of stage[i] to the GPU
  bool pending[2] = {false, false};
#if LAB_STEP08_HAVE_NCCL
  std::unique_ptr<detail::NcclComm> fibre_a, fibre_b, fibre_c;
  const detail::NcclComm& nccl_of(const Comm& fibre, const Cube& cube) const;
  std::unique_ptr<detail::NcclComm> all;  // every rank of the cube: the rank-0 entry's sends (made on first use)
#endif
  std::unique_ptr<detail::RootStaging, detail::RootStagingFree> root;  // the rank-0 entry's staging
  RootCopy root_copy = RootCopy::automatic;  // asked for (set_root_copy)
  size_t root_piece_bytes = 0;               // 0: RootStaging::kChunkBytes
  const Cube* cube = nullptr;

  explicit State(int dev) : device(dev) {}
  // New scratch holds poison (bytes 0xFF: NaN), as the host's (workspace.hpp
  // says why): fresh device memory is often zeros, which would hide a layer
  // z > 0 that adds beta C anyway until a Plan is reused.
  void* get_scratch(detail::DeviceBuffer<std::byte>& buf, size_t bytes) {
    if (buf.size() < bytes) {
      buf = detail::DeviceBuffer<std::byte>(bytes);
      LAB_CUDA_CHECK(cudaMemsetAsync(buf.data(), HostWorkspace::kPoisonByte, bytes, stream.get()));
      stream.sync();  // (once per growth: whatever stream reads it next, the poison is there first)
    }
    return buf.data();
  }
  void* stage_buffer(int i) {
    if (!stage[i].get()) stage[i] = detail::PinnedBuffer(kStageBytes);
    if (pending[i]) {  // the GPU may still be reading it
      staged[i].sync();
      pending[i] = false;
    }
    return stage[i].get();
  }
};

}  // namespace lab::step08
