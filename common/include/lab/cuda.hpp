// lab/cuda.hpp — the CUDA part of the harness: one error check, RAII for every
// device resource, the BLAS early exits on the device, and a host adapter that
// runs a device dgemm on host matrices (for tests).
//
// Every CUDA runtime and cuBLAS call goes through LAB_CUDA_CHECK, which throws
// std::runtime_error naming the call, the file and line, and the library's own
// error name, e.g.
//   cudaMalloc(&p, bytes) failed at tiled.cu:42: cudaErrorMemoryAllocation (out of memory)
#pragma once

#include <cublas_v2.h>
#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "lab/matrix.hpp"
#include "lab/timer.hpp"

namespace lab::cuda {

[[noreturn]] void throw_error(cudaError_t e, const char* call, const char* file, int line);
[[noreturn]] void throw_error(cublasStatus_t s, const char* call, const char* file, int line);

/// True for the errors after which this process's CUDA context is unusable (a
/// kernel's illegal address, trap, failed assert ...): every later CUDA call
/// fails with the same error. throw_error records the first one
/// (lab/lost_context.hpp), so that the tests after it can say why they cannot run.
bool is_sticky(cudaError_t e);

inline void check(cudaError_t e, const char* call, const char* file, int line) {
  if (e != cudaSuccess) throw_error(e, call, file, line);
}
inline void check(cublasStatus_t s, const char* call, const char* file, int line) {
  if (s != CUBLAS_STATUS_SUCCESS) throw_error(s, call, file, line);
}

}  // namespace lab::cuda

/// Wraps a CUDA runtime or cuBLAS call; throws std::runtime_error when it fails.
#define LAB_CUDA_CHECK(call) ::lab::cuda::check((call), #call, __FILE__, __LINE__)
/// After a kernel launch: launch-configuration errors surface here, not at the next sync.
#define LAB_CUDA_CHECK_LAUNCH() LAB_CUDA_CHECK(cudaGetLastError())

namespace lab::cuda {

// ---- the device ----------------------------------------------------------

/// True when a CUDA device is visible and usable; otherwise `why` (if given)
/// says what is missing. Cached after the first call.
bool device_available(std::string* why = nullptr);

/// Properties of the current device that kernels choose their shape from.
struct DeviceInfo {
  std::string name;
  int cc_major = 0, cc_minor = 0;  ///< compute capability
  int sm_count = 0;
  size_t smem_optin = 0;  ///< shared memory one block may opt in to, bytes
};
const DeviceInfo& device_info();  ///< of the current device; throws without one

/// FP64 multiply-add throughput of the CUDA cores (not the tensor cores) in
/// GFLOP/s, measured once by a short probe kernel (about 30 ms) and cached.
double fp64_peak_gflops();
/// Queues that probe on `stream` for about `flops` floating-point operations
/// (the grader's peak reference: the time a product of that many FLOPs would
/// take at the CUDA cores' peak).
void fp64_peak_work(double flops, cudaStream_t stream);

/// Page-locks `bytes` at `p` for every device of the process (cudaHostRegister,
/// portable) until the returned handle goes. nullptr, with nothing to undo, where
/// a page of it was already registered (small matrices can share a page with
/// one pinned before): that memory stays pageable.
std::shared_ptr<void> pin_host(void* p, size_t bytes);

// ---- RAII ----------------------------------------------------------------

/// An owning device allocation of `count` elements of T (cudaMalloc / cudaFree).
template <class T>
class DeviceBuffer {
 public:
  DeviceBuffer() = default;
  explicit DeviceBuffer(size_t count) : count_(count) {
    if (count > 0) LAB_CUDA_CHECK(cudaMalloc(reinterpret_cast<void**>(&ptr_), count * sizeof(T)));
  }
  ~DeviceBuffer() {
    if (ptr_) cudaFree(ptr_);  // never throws from a destructor; a failure here changes nothing
  }
  DeviceBuffer(DeviceBuffer&& o) noexcept
      : ptr_(std::exchange(o.ptr_, nullptr)), count_(std::exchange(o.count_, 0)) {}
  DeviceBuffer& operator=(DeviceBuffer&& o) noexcept {
    std::swap(ptr_, o.ptr_);
    std::swap(count_, o.count_);
    return *this;
  }
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;

  T* data() const { return ptr_; }
  size_t size() const { return count_; }

 private:
  T* ptr_ = nullptr;
  size_t count_ = 0;
};

/// The caller's current device, made current again when this goes out of scope;
/// KeepDevice(d) also makes d current meanwhile.
class KeepDevice {
 public:
  KeepDevice() { LAB_CUDA_CHECK(cudaGetDevice(&device_)); }
  explicit KeepDevice(int device) : KeepDevice() {
    if (device != device_) LAB_CUDA_CHECK(cudaSetDevice(device));
  }
  ~KeepDevice() { cudaSetDevice(device_); }
  KeepDevice(const KeepDevice&) = delete;
  KeepDevice& operator=(const KeepDevice&) = delete;

 private:
  int device_ = 0;
};

// The four below are inline, so that step07's emulated tests build them against
// their own CUDA calls.

/// Whether `p` is page-locked host memory (cudaHostAlloc or cudaHostRegister).
inline bool pinned_memory(const void* p) {
  cudaPointerAttributes a{};
  if (cudaPointerGetAttributes(&a, p) != cudaSuccess) {
    cudaGetLastError();  // not an error worth keeping: the memory is simply not known to CUDA
    return false;
  }
  return a.type == cudaMemoryTypeHost;
}

/// Whether the whole span of v is page-locked (an empty view has nothing to copy).
inline bool pinned_view(ConstMatView v) {
  if (v.rows == 0 || v.cols == 0) return true;
  return pinned_memory(v.data) && pinned_memory(v.data + (v.cols - 1) * v.ld + v.rows - 1);
}

/// "" when every pair of these distinct devices can reach each other's memory
/// (cudaDeviceCanAccessPeer), else what cannot, in one line.
inline std::string unreachable(const std::vector<int>& devices) {
  for (int d : devices)
    for (int q : devices) {
      if (d == q) continue;
      int can = 0;
      LAB_CUDA_CHECK(cudaDeviceCanAccessPeer(&can, d, q));
      if (!can)
        return "GPU " + std::to_string(d) + " cannot reach the memory of GPU " + std::to_string(q) +
               " (cudaDeviceCanAccessPeer)";
    }
  return "";
}

/// Peer access from every device to every other, both ways, kept for the life
/// of the process: the pairs enabled here are remembered and not asked again
/// (enabling twice is an error CUDA names, which compute-sanitizer reports on
/// every call); one enabled elsewhere gets that error, which means there is
/// nothing to do. The current device stays as it was.
inline void enable_peers(const std::vector<int>& devices) {
  static std::mutex mu;
  static std::set<std::pair<int, int>> enabled;
  const std::lock_guard<std::mutex> lock(mu);
  const KeepDevice keep;
  for (int d : devices) {
    for (int q : devices) {
      if (q == d || enabled.count({d, q})) continue;
      LAB_CUDA_CHECK(cudaSetDevice(d));
      const cudaError_t e = cudaDeviceEnablePeerAccess(q, 0);
      if (e == cudaErrorPeerAccessAlreadyEnabled)
        cudaGetLastError();  // (clears it)
      else
        check(e, "cudaDeviceEnablePeerAccess(q, 0)", __FILE__, __LINE__);
      enabled.insert({d, q});
    }
  }
}

/// A non-blocking stream (does not synchronize with the legacy default stream).
class Stream {
 public:
  Stream() { LAB_CUDA_CHECK(cudaStreamCreateWithFlags(&s_, cudaStreamNonBlocking)); }
  ~Stream() { cudaStreamDestroy(s_); }
  Stream(const Stream&) = delete;
  Stream& operator=(const Stream&) = delete;
  cudaStream_t get() const { return s_; }
  void sync() const { LAB_CUDA_CHECK(cudaStreamSynchronize(s_)); }

 private:
  cudaStream_t s_ = nullptr;
};

class Event {
 public:
  Event() { LAB_CUDA_CHECK(cudaEventCreate(&e_)); }
  ~Event() { cudaEventDestroy(e_); }
  Event(const Event&) = delete;
  Event& operator=(const Event&) = delete;
  cudaEvent_t get() const { return e_; }
  void record(cudaStream_t s) { LAB_CUDA_CHECK(cudaEventRecord(e_, s)); }
  void sync() const { LAB_CUDA_CHECK(cudaEventSynchronize(e_)); }
  /// Seconds from `start` to this event (both recorded, this one completed).
  double seconds_since(const Event& start) const {
    float ms = 0;
    LAB_CUDA_CHECK(cudaEventElapsedTime(&ms, start.e_, e_));
    return 1e-3 * double(ms);
  }

 private:
  cudaEvent_t e_ = nullptr;
};

class CublasHandle {
 public:
  CublasHandle() { LAB_CUDA_CHECK(cublasCreate(&h_)); }
  ~CublasHandle() { cublasDestroy(h_); }
  CublasHandle(const CublasHandle&) = delete;
  CublasHandle& operator=(const CublasHandle&) = delete;
  cublasHandle_t get() const { return h_; }
  /// Binds the handle to `s` (cuBLAS launches its kernels there).
  cublasHandle_t on(cudaStream_t s) const {
    LAB_CUDA_CHECK(cublasSetStream(h_, s));
    return h_;
  }

 private:
  cublasHandle_t h_ = nullptr;
};

/// A column-major matrix in device memory (ld * cols doubles).
class DeviceMatrix {
 public:
  DeviceMatrix() = default;
  DeviceMatrix(int64_t rows, int64_t cols, int64_t ld = 0);
  /// Uploads the rows x cols region of `host` (ld may differ).
  static DeviceMatrix from_host(ConstMatView host, cudaStream_t s = nullptr);
  /// Copies the rows x cols region back into `host` (same shape).
  void to_host(MatView host, cudaStream_t s = nullptr) const;

  MatView view() { return {buf_.data(), rows_, cols_, ld_}; }
  ConstMatView view() const { return {buf_.data(), rows_, cols_, ld_}; }
  int64_t rows() const { return rows_; }
  int64_t cols() const { return cols_; }
  int64_t ld() const { return ld_; }

 private:
  int64_t rows_ = 0, cols_ = 0, ld_ = 1;
  DeviceBuffer<double> buf_;
};

// ---- timing ----------------------------------------------------------------

/// Times `queue_work` (which queues GPU work on `stream` and returns) with
/// device events: opts.warmup untimed calls, then calls timed one at a time
/// until opts.min_reps and opts.min_time_s are both reached (or opts.max_reps).
Timing time_device(const std::function<void()>& queue_work, cudaStream_t stream,
                   const TimingOptions& opts = {});

// ---- the kernel contract on the device -----------------------------------

/// The early exits of lab/gemm_args.hpp on device views: m == 0 or n == 0:
/// nothing; alpha == 0 or k == 0: C <- beta * C on `stream` (beta == 0 writes
/// zeros without reading C), A and B untouched. Returns true when the caller
/// is done. Call lab::check_gemm_args first.
bool gemm_quick_return(double alpha, ConstMatView A, ConstMatView B, double beta, MatView C,
                       cudaStream_t stream);

/// C <- beta * C over the m x n region of a device view (beta == 0: zeros, C not read).
void scale_c(double beta, MatView C, cudaStream_t stream);

/// x[0, count) <- the grader's refill with that key (lab/refill.hpp), on `stream`:
/// the same bits as lab::wire::refill on the host.
void refill_device(double* x, size_t count, uint64_t key, cudaStream_t stream);

// ---- running a device dgemm on host matrices (tests) ---------------------

/// The signature of every GPU step's dgemm: device views, work queued on `stream`.
using DeviceGemm = std::function<void(double alpha, ConstMatView A, ConstMatView B, double beta, MatView C,
                                      cudaStream_t stream)>;

/// Copies the whole strided span of A, B and C (guard cells between columns
/// included, so they round-trip) to the device, runs `gemm` on a fresh stream,
/// waits, and copies C's span back. A view that is not valid on its own
/// (negative size, ld < rows, null data) is passed on with its shape and a null
/// pointer, so that the dgemm's own argument check is what throws.
void run_on_host_views(const DeviceGemm& gemm, double alpha, ConstMatView A, ConstMatView B, double beta,
                       MatView C);

}  // namespace lab::cuda
