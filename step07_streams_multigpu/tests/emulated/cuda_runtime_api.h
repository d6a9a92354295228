// An emulation of the CUDA runtime calls step07 makes, for a machine without
// a GPU: every call runs at once on the host (so events and stream waits are
// trivially met), "device" memory is host memory the emulation tracks, and an
// asynchronous copy from memory that is not pinned, or a copy or product
// outside a device allocation, aborts with a message. The GPU tests run
// through it in CI (harness.step07_emulated): the tiles, panels, blocks of C,
// the staging of pageable matrices and the work split, but not the
// concurrency, which only a GPU run checks.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>

enum cudaError_t { cudaSuccess = 0, cudaErrorInvalidValue = 1, cudaErrorHostMemoryAlreadyRegistered = 712 };
enum cudaMemcpyKind { cudaMemcpyHostToDevice = 1, cudaMemcpyDeviceToHost = 2 };
enum cudaMemoryType { cudaMemoryTypeUnregistered = 0, cudaMemoryTypeHost = 1, cudaMemoryTypeDevice = 2 };
struct cudaPointerAttributes {
  cudaMemoryType type;
  int device;
  void* devicePointer;
  void* hostPointer;
};
struct CUstream_st {};
struct CUevent_st {
  double t = 0;
};
typedef CUstream_st* cudaStream_t;
typedef CUevent_st* cudaEvent_t;
#define cudaStreamNonBlocking 1u
#define cudaHostAllocPortable 1u
#define cudaHostRegisterPortable 1u

namespace lab_emulated {

// Start -> end of every pinned and every device range.
struct Ranges {
  std::mutex mu;
  std::map<const char*, const char*> pinned, device;
};
inline Ranges& ranges() {
  static Ranges r;
  return r;
}
inline bool inside(const std::map<const char*, const char*>& m, const void* p, size_t bytes) {
  const char* c = static_cast<const char*>(p);
  auto it = m.upper_bound(c);
  if (it == m.begin()) return false;
  --it;
  return c >= it->first && c + bytes <= it->second;
}
[[noreturn]] inline void fail(const char* what) {
  std::fprintf(stderr, "emulated CUDA: %s\n", what);
  std::abort();
}
inline void require_device(const void* p, size_t bytes) {
  std::lock_guard<std::mutex> lock(ranges().mu);
  if (!inside(ranges().device, p, bytes)) fail("a copy or product reaches outside a device allocation");
}
inline void require_pinned(const void* p, size_t bytes) {
  std::lock_guard<std::mutex> lock(ranges().mu);
  if (!inside(ranges().pinned, p, bytes)) fail("an asynchronous copy from host memory that is not pinned");
}
inline void add(std::map<const char*, const char*>& m, void* p, size_t bytes) {
  std::lock_guard<std::mutex> lock(ranges().mu);
  m[static_cast<const char*>(p)] = static_cast<const char*>(p) + bytes;
}
inline void remove(std::map<const char*, const char*>& m, void* p) {
  std::lock_guard<std::mutex> lock(ranges().mu);
  m.erase(static_cast<const char*>(p));
}
inline int& current_device() {
  static thread_local int d = 0;
  return d;
}

}  // namespace lab_emulated

inline cudaError_t cudaMalloc(void** p, size_t bytes) {
  *p = std::malloc(bytes);
  lab_emulated::add(lab_emulated::ranges().device, *p, bytes);
  return cudaSuccess;
}
inline cudaError_t cudaFree(void* p) {
  lab_emulated::remove(lab_emulated::ranges().device, p);
  std::free(p);
  return cudaSuccess;
}
inline cudaError_t cudaHostAlloc(void** p, size_t bytes, unsigned) {
  *p = std::malloc(bytes);
  lab_emulated::add(lab_emulated::ranges().pinned, *p, bytes);
  return cudaSuccess;
}
inline cudaError_t cudaMallocHost(void** p, size_t bytes) { return cudaHostAlloc(p, bytes, 0); }
inline cudaError_t cudaFreeHost(void* p) {
  lab_emulated::remove(lab_emulated::ranges().pinned, p);
  std::free(p);
  return cudaSuccess;
}
inline cudaError_t cudaHostRegister(void* p, size_t bytes, unsigned) {
  lab_emulated::add(lab_emulated::ranges().pinned, p, bytes);
  return cudaSuccess;
}
inline cudaError_t cudaHostUnregister(void* p) {
  lab_emulated::remove(lab_emulated::ranges().pinned, p);
  return cudaSuccess;
}
inline cudaError_t cudaPointerGetAttributes(cudaPointerAttributes* a, const void* p) {
  std::lock_guard<std::mutex> lock(lab_emulated::ranges().mu);
  *a = cudaPointerAttributes{};
  a->type = lab_emulated::inside(lab_emulated::ranges().pinned, p, 1) ? cudaMemoryTypeHost
                                                                      : cudaMemoryTypeUnregistered;
  return cudaSuccess;
}
inline cudaError_t cudaStreamCreateWithFlags(cudaStream_t* s, unsigned) {
  *s = new CUstream_st;
  return cudaSuccess;
}
inline cudaError_t cudaStreamDestroy(cudaStream_t s) {
  delete s;
  return cudaSuccess;
}
inline cudaError_t cudaStreamSynchronize(cudaStream_t) { return cudaSuccess; }
inline cudaError_t cudaDeviceSynchronize() { return cudaSuccess; }
inline cudaError_t cudaEventCreate(cudaEvent_t* e) {
  *e = new CUevent_st;
  return cudaSuccess;
}
inline cudaError_t cudaEventDestroy(cudaEvent_t e) {
  delete e;
  return cudaSuccess;
}
inline cudaError_t cudaEventRecord(cudaEvent_t e, cudaStream_t) {
  e->t = std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
  return cudaSuccess;
}
inline cudaError_t cudaEventSynchronize(cudaEvent_t) { return cudaSuccess; }
inline cudaError_t cudaEventElapsedTime(float* ms, cudaEvent_t a, cudaEvent_t b) {
  *ms = float(1e3 * (b->t - a->t));
  return cudaSuccess;
}
inline cudaError_t cudaStreamWaitEvent(cudaStream_t, cudaEvent_t, unsigned = 0) { return cudaSuccess; }
inline cudaError_t cudaMemcpy2DAsync(void* dst, size_t dpitch, const void* src, size_t spitch, size_t width,
                                     size_t height, cudaMemcpyKind kind, cudaStream_t) {
  if (dpitch < width || spitch < width) lab_emulated::fail("cudaMemcpy2DAsync: a pitch below the width");
  if (height == 0 || width == 0) return cudaSuccess;
  const bool in = kind == cudaMemcpyHostToDevice;
  const size_t dspan = dpitch * (height - 1) + width, sspan = spitch * (height - 1) + width;
  lab_emulated::require_pinned(in ? src : dst, in ? sspan : dspan);
  lab_emulated::require_device(in ? dst : src, in ? dspan : sspan);
  for (size_t r = 0; r < height; ++r)
    std::memcpy(static_cast<char*>(dst) + r * dpitch, static_cast<const char*>(src) + r * spitch, width);
  return cudaSuccess;
}
inline cudaError_t cudaGetDeviceCount(int* count) {
  *count = 2;  // two emulated GPUs: ids 0 and 1 exist, 2 does not
  return cudaSuccess;
}
inline cudaError_t cudaSetDevice(int d) {
  lab_emulated::current_device() = d;
  return cudaSuccess;
}
inline cudaError_t cudaGetDevice(int* d) {
  *d = lab_emulated::current_device();
  return cudaSuccess;
}
inline cudaError_t cudaMemGetInfo(size_t* free_bytes, size_t* total_bytes) {
  *free_bytes = *total_bytes = size_t(1) << 30;
  return cudaSuccess;
}
inline cudaError_t cudaGetLastError() { return cudaSuccess; }
inline const char* cudaGetErrorString(cudaError_t) { return "emulated error"; }
inline const char* cudaGetErrorName(cudaError_t) { return "cudaErrorEmulated"; }
