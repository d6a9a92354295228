// What a GPU build adds to the shared benchmark (lab/bench.hpp): device
// buffers, one validated call, then warm-up and event-timed repeats (lab::cuda::time_device).
#include <algorithm>
#include <memory>
#include <string>
#include <utility>

#include "lab/bench.hpp"
#include "lab/cuda.hpp"
#include "lab/refill.hpp"

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

// The grader's call: the buffers whole, at the caller's ld, so that the
// variant's writes outside the m x n block come back to be seen; `repeat`
// calls on them, one after the other on one stream, B (and A where refill_a)
// refilled on the device before each call but the first (lab/grade_wire.hpp).
void serve_variant(const Variant& v, const GemmCall& c, int64_t repeat, uint64_t refill_seed, bool refill_a) {
  Stream s;
  auto up = [&](const double* p, int64_t ld, int64_t cols) {
    const size_t count = size_t(std::max<int64_t>(ld, 1) * std::max<int64_t>(cols, 0));
    DeviceBuffer<double> d(count);
    if (count > 0) LAB_CUDA_CHECK(cudaMemcpyAsync(d.data(), p, count * sizeof(double), cudaMemcpyHostToDevice, s.get()));
    return d;
  };
  DeviceBuffer<double> dA = up(c.A.data, c.A.ld, c.A.cols), dB = up(c.B.data, c.B.ld, c.B.cols),
                       dC = up(c.C.data, c.C.ld, c.C.cols);
  for (int64_t r = 0; r < std::max<int64_t>(repeat, 1); ++r) {
    if (r > 0) {  // (nothing to create first: 1 call and 1 + K alike)
      refill_device(dB.data(), dB.size(), wire::refill_key(refill_seed, r, 1), s.get());
      if (refill_a) refill_device(dA.data(), dA.size(), wire::refill_key(refill_seed, r, 0), s.get());
    }
    v.run(GemmCall{c.alpha, {dA.data(), c.A.rows, c.A.cols, c.A.ld}, {dB.data(), c.B.rows, c.B.cols, c.B.ld},
                   c.beta, {dC.data(), c.C.rows, c.C.cols, c.C.ld}, c.params, s.get()});
    LAB_CUDA_CHECK_LAUNCH();
  }
  s.sync();
  if (dC.size() > 0)
    LAB_CUDA_CHECK(cudaMemcpy(c.C.data, dC.data(), dC.size() * sizeof(double), cudaMemcpyDeviceToHost));
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
  h.serve = serve_variant;
  h.warm_up = [] { LAB_CUDA_CHECK(cudaFree(nullptr)); };
  set_gpu_hooks(std::move(h));
  return true;
}();

}  // namespace
}  // namespace lab::cuda
