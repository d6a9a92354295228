// The FP64 peak of this device, measured: independent FMA chains in every
// thread of a full grid, so that issue rate, not latency, is the limit.
#include <algorithm>
#include <mutex>

#include "lab/cuda.hpp"

namespace lab::cuda {
namespace {

constexpr int kChains = 8;  // independent FMAs per thread hide the DFMA latency

__global__ void fma_probe(double* out, double x, double y, int iters) {
  double a[kChains];
#pragma unroll
  for (int c = 0; c < kChains; ++c) a[c] = 1e-9 * threadIdx.x + c;
  for (int it = 0; it < iters; ++it) {
#pragma unroll
    for (int c = 0; c < kChains; ++c) a[c] = fma(a[c], x, y);
  }
  double s = 0;
#pragma unroll
  for (int c = 0; c < kChains; ++c) s += a[c];
  if (s == -1.0) out[blockIdx.x] = s;  // never true, but the compiler cannot drop the loop
}

}  // namespace

double fp64_peak_gflops() {
  static std::once_flag once;
  static double peak = 0;
  std::call_once(once, [] {
    const DeviceInfo& dev = device_info();
    constexpr int kThreads = 512, kIters = 1 << 15, kTrials = 5;
    const int blocks = dev.sm_count * 4;
    DeviceBuffer<double> out{size_t(blocks)};
    Stream s;
    Event start, stop;
    double best = 1e30;
    for (int t = 0; t <= kTrials; ++t) {  // trial 0 warms up (clocks, module load)
      start.record(s.get());
      fma_probe<<<blocks, kThreads, 0, s.get()>>>(out.data(), 0.999999, 1e-7, kIters);
      LAB_CUDA_CHECK_LAUNCH();
      stop.record(s.get());
      stop.sync();
      if (t > 0) best = std::min(best, stop.seconds_since(start));
    }
    peak = 2.0 * kChains * double(kIters) * kThreads * blocks / best / 1e9;
  });
  return peak;
}

}  // namespace lab::cuda
