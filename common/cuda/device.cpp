// Which device is there, and what it offers.
#include <mutex>
#include <stdexcept>
#include <string>

#include "lab/cuda.hpp"

namespace lab::cuda {

bool device_available(std::string* why) {
  static std::once_flag once;
  static bool ok = false;
  static std::string reason;
  std::call_once(once, [] {
    int count = 0;
    const cudaError_t e = cudaGetDeviceCount(&count);
    if (e != cudaSuccess) {
      reason = std::string("no CUDA device visible (cudaGetDeviceCount: ") + cudaGetErrorName(e) +
               (e == cudaErrorInsufficientDriver ? ": no NVIDIA driver here, or one older than this CUDA" : "") + ")";
      cudaGetLastError();  // clear it: nothing else in this process should see it
    } else if (count == 0) {
      reason = "no CUDA device visible";
    } else {
      ok = true;
    }
  });
  if (!ok && why) *why = reason;
  return ok;
}

const DeviceInfo& device_info() {
  static std::once_flag once;
  static DeviceInfo info;
  std::call_once(once, [] {
    std::string why;
    if (!device_available(&why)) throw std::runtime_error(why);
    int dev = 0;
    LAB_CUDA_CHECK(cudaGetDevice(&dev));
    cudaDeviceProp p{};
    LAB_CUDA_CHECK(cudaGetDeviceProperties(&p, dev));
    info.name = p.name;
    info.cc_major = p.major;
    info.cc_minor = p.minor;
    info.sm_count = p.multiProcessorCount;
    info.smem_optin = p.sharedMemPerBlockOptin;
  });
  return info;
}

std::shared_ptr<void> pin_host(void* p, size_t bytes) {
  const cudaError_t e = cudaHostRegister(p, bytes, cudaHostRegisterPortable);
  if (e == cudaErrorHostMemoryAlreadyRegistered) {
    cudaGetLastError();
    return nullptr;
  }
  LAB_CUDA_CHECK(e);
  return std::shared_ptr<void>(p, [](void* q) { cudaHostUnregister(q); });
}

}  // namespace lab::cuda
