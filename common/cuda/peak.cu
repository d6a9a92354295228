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

constexpr int kThreads = 512;
int probe_blocks() { return device_info().sm_count * 4; }

// Queues the probe on a full grid; returns the FLOPs it does.
double launch_probe(double* out, int iters, cudaStream_t stream) {
  const int blocks = probe_blocks();
  fma_probe<<<blocks, kThreads, 0, stream>>>(out, 0.999999, 1e-7, iters);
  LAB_CUDA_CHECK_LAUNCH();
  return 2.0 * kChains * double(iters) * kThreads * blocks;
}

}  // namespace

double fp64_peak_gflops() {
  static std::once_flag once;
  static double peak = 0;
  std::call_once(once, [] {
    constexpr int kIters = 1 << 15, kTrials = 5;
    DeviceBuffer<double> out{size_t(probe_blocks())};
    Stream s;
    Event start, stop;
    double best = 1e30, flops = 0;
    for (int t = 0; t <= kTrials; ++t) {  // trial 0 warms up (clocks, module load)
      start.record(s.get());
      flops = launch_probe(out.data(), kIters, s.get());
      stop.record(s.get());
      stop.sync();
      if (t > 0) best = std::min(best, stop.seconds_since(start));
    }
    peak = flops / best / 1e9;
  });
  return peak;
}

void fp64_peak_work(double flops, cudaStream_t stream) {
  const double per_iter = 2.0 * kChains * kThreads * probe_blocks();
  const int iters = int(std::clamp(flops / per_iter, 1.0, 2e9));
  launch_probe(nullptr, iters, stream);  // (the probe never writes: out may be null)
}

}  // namespace lab::cuda
