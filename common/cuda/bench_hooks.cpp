// What a GPU build adds to the shared benchmark (lab/bench.hpp): device
// buffers, one validated call, then warm-up and event-timed repeats (lab::cuda::time_device).
#include <memory>
#include <string>
#include <utility>

#include "lab/bench.hpp"
#include "lab/cuda.hpp"

namespace lab::cuda {
namespace {

Timing run_variant(const Variant& v, double alpha, ConstMatView A, ConstMatView B, double beta,
                   ConstMatView C0, MatView C_out, const Params& params, const TimingOptions& opts) {
  Stream s;
  const DeviceMatrix dA = DeviceMatrix::from_host(A, s.get());
  const DeviceMatrix dB = DeviceMatrix::from_host(B, s.get());
  DeviceMatrix dC = DeviceMatrix::from_host(C0, s.get());
  auto call = [&] {
    v.run(GemmCall{alpha, dA.view(), dB.view(), beta, dC.view(), &params, s.get()});
    LAB_CUDA_CHECK_LAUNCH();
  };
  // The first call is the one the caller checks.
  call();
  s.sync();
  dC.to_host(C_out, s.get());
  return time_device(call, s.get(), opts);
}

[[maybe_unused]] const bool hooks_installed = [] {
  GpuHooks h;
  h.available = [](std::string* why) { return device_available(why); };
  h.run = run_variant;
  h.peak_gflops = [] { return fp64_peak_gflops(); };
  h.device_name = [] { return device_info().name; };
  // Portable: pinned for every device, so a multi-GPU variant copies straight from
  // it too; where a page was pinned before, the rest stays pageable (step07 stages it).
  h.pin_host = pin_host;
  set_gpu_hooks(std::move(h));
  return true;
}();

}  // namespace
}  // namespace lab::cuda
