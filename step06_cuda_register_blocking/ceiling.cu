// step06_ceiling — how fast can the SIMT kernel's inner step run on this GPU?
//
// The SIMT kernel (simt.cu) spends nearly all its time in one k step: each
// thread loads 8 values of A and 8 of B from shared memory (four double2
// each) and does the 64 multiply-adds of their outer product, with two warps
// per scheduler (its 8 x 8 block of C takes 128 registers). This program
// times that step alone, without the kernel's global-memory copies, address
// arithmetic, edge tests and epilogue, in three versions:
//   registers  the 64 DFMA of an 8 x 8 outer product, operands already in registers
//   loads      the same, each step's operands loaded from shared memory one
//              step ahead, in simt.cu's pattern (rows 2 tr + 16 q, columns 2 tc + 8 q)
//   barrier    and a __syncthreads() every 16 steps, as at the end of a slice
// against the harness's FP64 peak probe. What the step alone cannot reach, no
// kernel built on it can: the handout's "What limits them" reads the numbers.
//
//   build/gpu/bin/step06_ceiling [--min-time S]
//
// Exit status: 0 ok, 2 bad usage, 4 error, 77 skipped (no usable GPU).
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <string>

#include "lab/cuda.hpp"
#include "warp_layout.cuh"

namespace {

using lab::step06::detail::kThreadM;
using lab::step06::detail::kThreadN;
using lab::step06::detail::kWarpM;
using lab::step06::detail::kWarpN;
using lab::step06::detail::ThreadInWarp;

constexpr int kThreads = 128;    // 4 warps, as in simt.cu's default block
constexpr int kStepsPerIter = 16;  // one slice of BK = 16
constexpr int kBM = 128, kBN = 64;  // the block's tile: A rows and B columns in shared memory
static_assert(kThreads == (kBM / kWarpM) * (kBN / kWarpN) * 32, "one warp per 64 x 32 warp tile");

enum class Version { registers, loads, barrier };

// Two blocks per multiprocessor, as the kernel runs: 8 warps, 2 per scheduler.
template <Version V>
__global__ void __launch_bounds__(kThreads, 2) inner_step(double* out, int iters) {
  extern __shared__ __align__(16) double smem[];  // As[16][kBM], then Bs[16][kBN]
  double* const As = smem;
  double* const Bs = smem + kStepsPerIter * kBM;
  for (int i = threadIdx.x; i < kStepsPerIter * (kBM + kBN); i += kThreads) smem[i] = 1.0 - 1e-4 * i;
  __syncthreads();
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  // this thread's rows wr + 16 q + {0,1} and columns wc + 8 q + {0,1}, as in simt.cu
  constexpr int kWarpsM = kBM / kWarpM;
  const ThreadInWarp me(lane);
  const int wr = (warp % kWarpsM) * kWarpM + 2 * me.tr, wc = (warp / kWarpsM) * kWarpN + 2 * me.tc;
  double acc[kThreadM][kThreadN];
#pragma unroll
  for (int i = 0; i < kThreadM; ++i)
#pragma unroll
    for (int j = 0; j < kThreadN; ++j) acc[i][j] = 0.0;
  // next_*: the operands of the coming step (loaded a step ahead, as in simt.cu)
  double next_a[kThreadM], next_b[kThreadN];
  auto load = [&](int p) {
#pragma unroll
    for (int q = 0; q < 4; ++q) {
      const double2 x = *reinterpret_cast<const double2*>(As + p * kBM + wr + 16 * q);
      const double2 y = *reinterpret_cast<const double2*>(Bs + p * kBN + wc + 8 * q);
      next_a[2 * q] = x.x;
      next_a[2 * q + 1] = x.y;
      next_b[2 * q] = y.x;
      next_b[2 * q + 1] = y.y;
    }
  };
  load(0);
  for (int it = 0; it < iters; ++it) {
#pragma unroll
    for (int p = 0; p < kStepsPerIter; ++p) {
      double a[kThreadM], b[kThreadN];
#pragma unroll
      for (int i = 0; i < kThreadM; ++i) {
        a[i] = next_a[i];
        b[i] = next_b[i];
      }
      if constexpr (V != Version::registers) load((p + 1) % kStepsPerIter);
#pragma unroll
      for (int i = 0; i < kThreadM; ++i)
#pragma unroll
        for (int j = 0; j < kThreadN; ++j) acc[i][j] = fma(a[i], b[j], acc[i][j]);
    }
    if constexpr (V == Version::barrier) {
      __syncthreads();
    } else {
      // Not a barrier, only a fence for the compiler: without it, it would
      // hoist the (unchanging) loads of later iterations and run out of registers.
      asm volatile("" ::: "memory");
    }
  }
  double s = 0.0;
#pragma unroll
  for (int i = 0; i < kThreadM; ++i)
#pragma unroll
    for (int j = 0; j < kThreadN; ++j) s += acc[i][j];
  if (s == -1.0) out[blockIdx.x] = s;  // never true, but the compiler cannot drop the loop
}

struct Args {
  double min_time_s = 0.3;
};

[[noreturn]] void usage_error(const std::string& what) {
  std::fprintf(stderr, "step06_ceiling: %s (see --help)\n", what.c_str());
  std::exit(2);
}

Args parse(int argc, char** argv) {
  Args a;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--help" || arg == "-h") {
      std::printf(
          "usage: step06_ceiling [--min-time S]\n"
          "  Times the SIMT kernel's inner k step alone (8 x 8 outer product per thread,\n"
          "  2 warps per scheduler): operands in registers, loaded from shared memory,\n"
          "  and with a barrier per 16 steps; each against the measured FP64 peak.\n"
          "  --min-time S   time each version for at least S seconds (default 0.3)\n"
          "exit status: 0 ok, 2 bad usage, 4 error, 77 skipped (no usable GPU)\n");
      std::exit(0);
    }
    if (arg == "--min-time") {
      if (i + 1 >= argc) usage_error("--min-time needs a number of seconds");
      char* end = nullptr;
      const std::string v = argv[++i];
      a.min_time_s = std::strtod(v.c_str(), &end);
      if (v.empty() || *end != '\0' || !(a.min_time_s >= 0.0) || a.min_time_s > 60.0)
        usage_error("--min-time takes seconds from 0 to 60, not '" + v + "'");
      continue;
    }
    usage_error("unknown argument '" + arg + "'");
  }
  return a;
}

template <Version V>
double gflops(const Args& args, int blocks, size_t smem_bytes, double* out, cudaStream_t s) {
  constexpr int kIters = 5000;  // about 15 ms a launch on an H100
  LAB_CUDA_CHECK(cudaFuncSetAttribute(inner_step<V>, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                      static_cast<int>(smem_bytes)));
  auto launch = [&] {
    inner_step<V><<<blocks, kThreads, smem_bytes, s>>>(out, kIters);
    LAB_CUDA_CHECK_LAUNCH();
  };
  lab::TimingOptions o;
  o.min_time_s = args.min_time_s;
  const double t = lab::cuda::time_device(launch, s, o).median_s;
  const double fmas = double(blocks) * kThreads * kIters * kStepsPerIter * 64;
  return 2.0 * fmas / t / 1e9;
}

}  // namespace

int main(int argc, char** argv) {
  const Args args = parse(argc, argv);
  try {
    std::string why;
    if (!lab::cuda::device_available(&why)) {
      std::printf("step06_ceiling: skipped: %s\n", why.c_str());
      return 77;
    }
    const lab::cuda::DeviceInfo& dev = lab::cuda::device_info();
    int smem_per_sm = 0;
    LAB_CUDA_CHECK(cudaDeviceGetAttribute(&smem_per_sm, cudaDevAttrMaxSharedMemoryPerMultiprocessor, 0));
    // Each block asks for a little over a third of the multiprocessor's shared
    // memory, so that exactly two fit, whatever registers a version needs.
    const size_t tiles = sizeof(double) * kStepsPerIter * (kBM + kBN);
    size_t smem_bytes = std::max(tiles, size_t(smem_per_sm) / 3 + 1024);
    if (smem_bytes > dev.smem_optin) smem_bytes = tiles;
    const int blocks = 2 * dev.sm_count;
    lab::cuda::DeviceBuffer<double> out(blocks);
    lab::cuda::Stream s;
    const double peak = lab::cuda::fp64_peak_gflops();
    std::printf("# step06 ceiling on %s: FP64 peak %.1f GFLOP/s measured; 2 blocks of %d threads per SM\n",
                dev.name.c_str(), peak, kThreads);
    std::printf("%-52s %10s %10s\n", "inner step of the SIMT kernel (8 x 8 per thread)", "GFLOP/s", "% peak");
    auto row = [&](const char* name, double g) { std::printf("%-52s %10.1f %9.1f%%\n", name, g, 100.0 * g / peak); };
    row("operands in registers", gflops<Version::registers>(args, blocks, smem_bytes, out.data(), s.get()));
    row("+ shared-memory loads, one step ahead", gflops<Version::loads>(args, blocks, smem_bytes, out.data(), s.get()));
    row("+ a barrier every 16 steps", gflops<Version::barrier>(args, blocks, smem_bytes, out.data(), s.get()));
    return 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "step06_ceiling: %s\n", e.what());
    return 4;
  }
}
