// step09_ceiling — how fast can a semiring's inner step run on this GPU, and
// how close do step09's kernels come?
//
// A min-plus update is no FMA: it takes an add and a min. This program first
// measures the throughput of each form of the update alone, as step06_ceiling
// and the harness's peak probe do for the FMA: independent chains in every
// thread of a full grid, operands in registers, so that issue rate and not
// latency is the limit (each update counts as 2 operations, like 2 mnk):
//   fp64_fma          a = fma(a, x, y)                  (the DGEMM update, for scale)
//   fp64_add_select   a = (t = a + x) < y ? t : y       DADD, DSETP, 2 FSEL: what the kernel does
//   fp64_add_select_max   the same with >               (max-plus)
//   fp64_add_fmin     a = fmin(a + x, y)                DADD, DMNMX
//   i32_dpx           a = __viaddmin_s32(a, x, y)       one DPX instruction on sm_90
//   i32_add_min       a = min(a + x, y)                 IADD3, IMNMX
// Then it times gemm_device for each semiring at n x n x n on device-resident
// random data (each checked first) and reports it against its bound.
//
//   build/.../bin/step09_ceiling [--n N] [--min-time S] [--csv FILE]
//   build/.../bin/step09_ceiling --sweep [--n N]
//
// --sweep times candidate forms of the FP64 min-plus and max-plus kernel
// (other instruction sequences for the update, other tiles of simt_kernel.cuh)
// against the shipped one at n x n x n, each first checked bit for bit against
// the shipped kernel's result on the same data: random doubles at n, and a
// ragged n with +inf, -inf and NaN among them (so NaN sums occur). It prints
// the registers, spills, time and G ops/s of each, against the add+select
// bound measured in the same run.
//
// The CSV starts with the lab's columns (step,variant,impl,m,n,k,threads,
// median_s,gflops), then bound_gops (the bound the row is compared with),
// pct_bound, check, device. Bound rows have m = n = k = 0.
// Exit status: 0 ok, 1 a kernel failed its check, 2 bad usage, 4 error,
// 77 skipped (no usable GPU).
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <fstream>
#include <random>
#include <string>
#include <vector>

#include "lab/bench.hpp"
#include "lab/cuda.hpp"
#include "lab/timer.hpp"
#include "reference.hpp"
#include "semiring_cuda.hpp"
#include "simt_kernel.cuh"
#include "small_tile_kernel.cuh"

namespace {

namespace s9 = lab::step09;

constexpr int kChains = 8;  // independent updates per thread hide the latency

struct Fma {
  __device__ static double step(double a, double x, double y) { return fma(a, x, y); }
};
struct AddSelectMin {
  __device__ static double step(double a, double x, double y) {
    const double t = a + x;
    return t < y ? t : y;
  }
};
struct AddSelectMax {
  __device__ static double step(double a, double x, double y) {
    const double t = a + x;
    return t > y ? t : y;
  }
};
struct AddFmin {
  __device__ static double step(double a, double x, double y) { return fmin(a + x, y); }
};
struct Dpx {
  __device__ static int step(int a, int x, int y) { return __viaddmin_s32(a, x, y); }
};
struct AddMin {
  __device__ static int step(int a, int x, int y) { return min(a + x, y); }
};

template <class Op, class T>
__global__ void probe(T* out, T x, T y, int iters) {
  T a[kChains];
#pragma unroll
  for (int c = 0; c < kChains; ++c) a[c] = T(threadIdx.x % 7 + c);
  for (int it = 0; it < iters; ++it) {
#pragma unroll
    for (int c = 0; c < kChains; ++c) a[c] = Op::step(a[c], x, y);
  }
  T s = 0;
#pragma unroll
  for (int c = 0; c < kChains; ++c) s += a[c];
  if (s == T(-12345)) out[blockIdx.x] = s;  // never true, but the compiler cannot drop the loop
}

struct Row {
  std::string variant;
  int64_t n = 0;
  double median_s = 0, gops = 0, bound = 0;
  std::string check = "-";
};

// The shortest of five timed launches of `launch` (after one that warms up).
template <class Launch>
double best_launch_seconds(cudaStream_t s, Launch&& launch) {
  lab::cuda::Event start, stop;
  double best = 1e30;
  for (int t = 0; t <= 5; ++t) {
    start.record(s);
    launch();
    LAB_CUDA_CHECK_LAUNCH();
    stop.record(s);
    stop.sync();
    if (t > 0) best = std::min(best, stop.seconds_since(start));
  }
  return best;
}

// Operations per second (2 per update) of one probe: the best of a few launches.
template <class Op, class T>
double probe_gops(T x, T y, cudaStream_t s) {
  const lab::cuda::DeviceInfo& dev = lab::cuda::device_info();
  constexpr int kThreads = 512, kIters = 1 << 14;
  const int blocks = dev.sm_count * 4;
  lab::cuda::DeviceBuffer<T> out{size_t(blocks)};
  const double best =
      best_launch_seconds(s, [&] { probe<Op, T><<<blocks, kThreads, 0, s>>>(out.data(), x, y, kIters); });
  return 2.0 * kChains * double(kIters) * kThreads * blocks / best / 1e9;
}

struct Args {
  int64_t n = 8192;
  double min_time_s = 0.5;
  std::string csv;
  bool sweep = false;
};

[[noreturn]] void usage_error(const std::string& what) {
  std::fprintf(stderr, "step09_ceiling: %s (see --help)\n", what.c_str());
  std::exit(2);
}

Args parse(int argc, char** argv) {
  Args a;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc) usage_error(arg + " needs a value");
      return argv[++i];
    };
    if (arg == "--help" || arg == "-h") {
      std::printf(
          "usage: step09_ceiling [--n N] [--min-time S] [--csv FILE]\n"
          "       step09_ceiling --sweep [--n N]\n"
          "  Measures the throughput of the semiring updates alone (FP64 add + compare/select,\n"
          "  add + fmin, int32 DPX add-min, ...) and times step09's kernels at n x n x n\n"
          "  against them.\n"
          "  --n N          size of the timed products (default 8192; 0: the bounds only)\n"
          "  --min-time S   time each kernel for at least S seconds (default 0.5)\n"
          "  --csv FILE     append the rows to FILE\n"
          "  --sweep        time candidate updates and tiles of the FP64 min-plus and max-plus\n"
          "                 kernel against the shipped one (each checked bit for bit against it)\n"
          "exit status: 0 ok, 1 a kernel failed its check, 2 bad usage, 4 error, 77 skipped (no usable GPU)\n");
      std::exit(0);
    }
    if (arg == "--sweep") {
      a.sweep = true;
    } else if (arg == "--n") {
      const std::string v = value();
      char* end = nullptr;
      a.n = std::strtoll(v.c_str(), &end, 10);
      if (v.empty() || *end != '\0' || a.n < 0 || a.n > 65536) usage_error("--n takes a size from 0 to 65536, not '" + v + "'");
    } else if (arg == "--min-time") {
      const std::string v = value();
      char* end = nullptr;
      a.min_time_s = std::strtod(v.c_str(), &end);
      if (v.empty() || *end != '\0' || !(a.min_time_s >= 0.0) || a.min_time_s > 60.0)
        usage_error("--min-time takes seconds from 0 to 60, not '" + v + "'");
    } else if (arg == "--csv") {
      a.csv = value();
      if (a.csv.empty()) usage_error("--csv needs a file name");
      try {  // checked, not created: a later bad argument leaves nothing behind
        lab::require_writable(a.csv, "--csv");
      } catch (const std::exception& e) {
        usage_error(e.what());
      }
    } else {
      usage_error("unknown argument '" + arg + "'");
    }
  }
  return a;
}

// Random operands on the device: doubles in [-1, 1); integers in +-2^20 (as
// the benchmark's fixed point of the same doubles).
template <class T>
lab::cuda::DeviceBuffer<T> random_device(int64_t count, uint64_t seed) {
  std::vector<T> host(static_cast<size_t>(count));
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  for (T& x : host) x = std::is_same_v<T, double> ? T(u(rng)) : T(u(rng) * (1 << 20));
  lab::cuda::DeviceBuffer<T> d{static_cast<size_t>(count)};
  if (count > 0) LAB_CUDA_CHECK(cudaMemcpy(d.data(), host.data(), sizeof(T) * size_t(count), cudaMemcpyHostToDevice));
  return d;
}

template <class T>
std::vector<T> to_host(const lab::cuda::DeviceBuffer<T>& d) {
  std::vector<T> h(d.size());
  if (!h.empty()) LAB_CUDA_CHECK(cudaMemcpy(h.data(), d.data(), sizeof(T) * h.size(), cudaMemcpyDeviceToHost));
  return h;
}

// One semiring's kernel at n x n x n (accumulating, as the benchmark does):
// checked on sampled rows and columns after its first call, then timed.
template <class S>
Row time_kernel(const char* variant, double bound, const Args& args, cudaStream_t s) {
  using T = typename S::value_type;
  const int64_t n = args.n;
  const auto A = random_device<T>(n * n, 1), B = random_device<T>(n * n, 2), C0 = random_device<T>(n * n, 3);
  lab::cuda::DeviceBuffer<T> C{static_cast<size_t>(n * n)};
  // on the kernels' stream: a device-to-device cudaMemcpy returns before it is done and
  // is not ordered with a non-blocking stream
  LAB_CUDA_CHECK(cudaMemcpyAsync(C.data(), C0.data(), sizeof(T) * size_t(n * n), cudaMemcpyDeviceToDevice, s));
  const lab::View<const T> a{A.data(), n, n, n}, b{B.data(), n, n, n};
  const lab::View<T> c{C.data(), n, n, n};
  s9::gemm_device<S>(a, b, c, true, s);
  LAB_CUDA_CHECK(cudaStreamSynchronize(s));
  Row r;
  r.variant = variant;
  r.n = n;
  r.bound = bound;
  {
    const auto ha = to_host(A), hb = to_host(B), hc0 = to_host(C0), hc = to_host(C);
    const lab::View<const T> va{ha.data(), n, n, n}, vb{hb.data(), n, n, n}, vc0{hc0.data(), n, n, n},
        vc{hc.data(), n, n, n};
    const lab::CheckResult chk = s9::check_semiring<S>(va, vb, vc0, vc, true, false);
    r.check = chk.ok ? "pass" : "fail";
    if (!chk.ok) std::fprintf(stderr, "step09_ceiling: %s: WRONG RESULT\n%s", variant, chk.report.c_str());
  }
  lab::TimingOptions opts;
  opts.min_time_s = args.min_time_s;
  const lab::Timing t = lab::cuda::time_device([&] { s9::gemm_device<S>(a, b, c, true, s); }, s, opts);
  r.median_s = t.median_s;
  r.gops = lab::gflops(n, n, n, t.median_s);
  return r;
}

// ---- --sweep: candidate FP64 min-plus / max-plus kernels ---------------------
// Each candidate is simt_kernel.cuh's kernel with another update or tile. The
// updates must stay exact: the min (max) of correctly rounded sums, a NaN sum
// leaving acc as it was, so that every candidate's C equals the shipped one's
// bit for bit.
namespace sweep {

using s9::detail::TileConfig;

// What the shipped kernel does: DADD, DSETP, two FSEL (a double is two words).
struct SelectMin {
  __device__ __forceinline__ static double update(double acc, double a, double b) {
    const double s = a + b;
    return s < acc ? s : acc;
  }
};
struct SelectMax {
  __device__ __forceinline__ static double update(double acc, double a, double b) {
    const double s = a + b;
    return s > acc ? s : acc;
  }
};
// A predicated move instead of a select: the compiler may move the two words
// with IMAD.MOV on the FMA pipe, off the integer pipe the FSELs share.
struct PredMovMin {
  __device__ __forceinline__ static double update(double acc, double a, double b) {
    const double s = a + b;
    asm("{\n\t.reg .pred p;\n\tsetp.lt.f64 p, %1, %0;\n\t@p mov.f64 %0, %1;\n\t}" : "+d"(acc) : "d"(s));
    return acc;
  }
};
struct PredMovMax {
  __device__ __forceinline__ static double update(double acc, double a, double b) {
    const double s = a + b;
    asm("{\n\t.reg .pred p;\n\tsetp.gt.f64 p, %1, %0;\n\t@p mov.f64 %0, %1;\n\t}" : "+d"(acc) : "d"(s));
    return acc;
  }
};
// fmin / fmax skip a NaN operand: DADD and DMNMX, two instructions, but DMNMX
// issues at a lower rate (the fp64_add_fmin bound).
struct FminMin {
  __device__ __forceinline__ static double update(double acc, double a, double b) { return fmin(a + b, acc); }
};

// Tiles: (BM, BN, BK, stages, blocks per SM[, 8 x 4 a thread]). The first
// is step06's 128 x 64 x 16, 4 stages, 2 blocks: 8 warps a multiprocessor (the
// 8 x 8 accumulators of a thread take ~250 registers); it shipped first, and is
// what the others are measured against (the shipped one is 64 x 64 x 16, 8 x 4).
using T128x64k16 = TileConfig<double, 128, 64, 16, 4, 2>;
using T128x64k8 = TileConfig<double, 128, 64, 8, 4, 2>;
using T128x64k8s6 = TileConfig<double, 128, 64, 8, 6, 2>;
using T128x128k16b1 = TileConfig<double, 128, 128, 16, 4, 1>;  // 8 warps, one block: fewer loads per update
// 8 x 4 a thread: half the accumulators, so 12 or 16 warps a multiprocessor
// instead of 8 (16: 128 registers, which spills a little).
using T128x64k16n4 = TileConfig<double, 128, 64, 16, 4, 2, 4>;  // 8 warps a block
using T128x32k8n4b4 = TileConfig<double, 128, 32, 8, 4, 4, 4>;  // 4 warps a block
using T128x32k8n4b3 = TileConfig<double, 128, 32, 8, 4, 3, 4>;  // 12 warps: ~170 registers, no spill
using T128x32k16n4b3 = TileConfig<double, 128, 32, 16, 4, 3, 4>;  // 128 x 32, BK = 16
using T64x64k8b4 = TileConfig<double, 64, 64, 8, 4, 4>;         // 2 warps a block: barriers of fewer warps
using T64x128k16 = TileConfig<double, 64, 128, 16, 4, 2>;       // the warps side by side in n
using T64x64k16n4b3 = TileConfig<double, 64, 64, 16, 4, 3, 4>;  // 12 warps of 8 x 4: the shipped tile
using T64x32k16n4b6 = TileConfig<double, 64, 32, 16, 4, 6, 4>;  // 2 warps a block, 6 blocks
// Without the operand prefetch (kPrefetch false): 24 fewer registers a thread,
// so 16 warps of 8 x 4 fit 128 registers (at most 227 KiB of stages a multiprocessor).
using T64x64k16n4b3np = TileConfig<double, 64, 64, 16, 4, 3, 4, false>;  // the shipped tile, no prefetch
using T64x64k8n4b4np = TileConfig<double, 64, 64, 8, 4, 4, 4, false>;    // 16 warps
using T128x64k16n4b2np = TileConfig<double, 128, 64, 16, 4, 2, 4, false>;  // 16 warps, 8 a block
using T128x32k8n4b4np = TileConfig<double, 128, 32, 8, 4, 4, 4, false>;  // 16 warps, 4 a block
using T64x32k8n4b8np = TileConfig<double, 64, 32, 8, 4, 8, 4, false>;    // 16 warps, 2 a block

// The kernel's register tile alone: what the update reaches with the kernel's
// own operand pattern and occupancy, nothing else. Each thread keeps kM x kN
// accumulators and, per k step, kM values of A and kN of B in registers (12 or
// 16 distinct operands for the kernel's tiles, where the bound's chains share
// two), and updates every pair; no loads, no barriers. kBlocks blocks of 128
// threads a multiprocessor (the register budget __launch_bounds__ gives the
// compiler), one full wave.
// The empty asm tells the compiler that the operands change every step, so it
// can hoist no sum out of the loop, at the cost of no instruction.
template <int kM, int kN, int kBlocks>
__global__ void __launch_bounds__(128, kBlocks) tile_probe(double* out, double seed, int iters) {
  double acc[kM][kN], a[kM], b[kN];
#pragma unroll
  for (int x = 0; x < kM; ++x) a[x] = seed * (threadIdx.x % 5 + x);
#pragma unroll
  for (int y = 0; y < kN; ++y) b[y] = seed * (y + 1);
#pragma unroll
  for (int x = 0; x < kM; ++x)
#pragma unroll
    for (int y = 0; y < kN; ++y) acc[x][y] = 1.0 + x + y;
  for (int it = 0; it < iters; ++it) {
#pragma unroll
    for (int x = 0; x < kM; ++x)
#pragma unroll
      for (int y = 0; y < kN; ++y) acc[x][y] = SelectMin::update(acc[x][y], a[x], b[y]);
#pragma unroll
    for (int x = 0; x < kM; ++x) asm volatile("" : "+d"(a[x]));
#pragma unroll
    for (int y = 0; y < kN; ++y) asm volatile("" : "+d"(b[y]));
  }
  // Never true, but the compiler cannot drop an update.
#pragma unroll
  for (int x = 0; x < kM; ++x)
#pragma unroll
    for (int y = 0; y < kN; ++y)
      if (acc[x][y] == -12345.0) out[blockIdx.x] = acc[x][y];
}

struct TileProbe {
  const char* what;
  int warps_per_sm;  // as launched: 4 a block, kBlocks blocks, or fewer if the occupancy calculator says so
  double gops;
  int regs;
};

// G ops/s (2 per update) of tile_probe<kM, kN, kBlocks>: the best of a few launches.
template <int kM, int kN, int kBlocks>
TileProbe time_tile_probe(const char* what, cudaStream_t s) {
  const lab::cuda::DeviceInfo& dev = lab::cuda::device_info();
  constexpr int kThreads = 128, kIters = 1 << 15;
  int fit = 0;
  const auto kernel = tile_probe<kM, kN, kBlocks>;
  LAB_CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&fit, kernel, kThreads, 0));
  const int per_sm = std::min(fit, kBlocks), blocks = dev.sm_count * per_sm;
  lab::cuda::DeviceBuffer<double> out{size_t(blocks)};
  const double best =
      best_launch_seconds(s, [&] { kernel<<<blocks, kThreads, 0, s>>>(out.data(), 1e-7, kIters); });
  cudaFuncAttributes fa{};
  LAB_CUDA_CHECK(cudaFuncGetAttributes(&fa, kernel));
  const double gops = 2.0 * kM * kN * double(kIters) * kThreads * blocks / best / 1e9;
  return {what, per_sm * kThreads / 32, gops, fa.numRegs};
}

struct Candidate {
  const char* semiring;  // "minplus" or "maxplus"
  const char* form;
  const char* tile;
  const void* kernel;  // for its register count
  void (*run)(const double* a, const double* b, double* c, int64_t n, int64_t k, cudaStream_t s);
};

template <class S, class Cfg, class U>
Candidate make(const char* form, const char* tile) {
  return {S::name, form, tile, reinterpret_cast<const void*>(s9::detail::semiring_kernel<S, Cfg, U>),
          [](const double* a, const double* b, double* c, int64_t n, int64_t k, cudaStream_t s) {
            s9::detail::launch_semiring<S, Cfg, U>(a, n, b, k, c, n, n, n, k, true, s);
          }};
}

// Small register tiles with many warps (small_tile_kernel.cuh), where the
// register-tile probe points: SmallTile<TM, TN (a thread), warps a block in
// M and N, BK, stages, blocks a multiprocessor>. Two stages: the refill goes
// before the compute (a double buffer, so slices can be longer in the same
// shared memory); three or more: after it, as in the shipped kernel.
using s9::detail::SmallTile;
using S2x2k32s3 = SmallTile<2, 2, 4, 8, 32, 3, 2>;  // 64 x 64 x 32, 2 blocks of 32 warps: 64 warps, 32 registers
using S2x2k48s2 = SmallTile<2, 2, 4, 8, 48, 2, 2>;  // 64 x 64 x 48, the same 64 warps, a third fewer slices
using S4x2k32s2 = SmallTile<4, 2, 2, 8, 32, 2, 3>;  // 64 x 64 x 32, 3 blocks of 16 warps: 48 warps, 40 registers
using S4x4k32s2 = SmallTile<4, 4, 4, 4, 32, 2, 2>;  // 128 x 64 x 32, 2 blocks of 16 warps: 32 warps, 64 registers

template <class S, class Cfg, class U>
Candidate make_small(const char* form, const char* tile) {
  return {S::name, form, tile, reinterpret_cast<const void*>(s9::detail::small_tile_kernel<S, Cfg, U>),
          [](const double* a, const double* b, double* c, int64_t n, int64_t k, cudaStream_t s) {
            s9::detail::launch_small_tile<S, Cfg, U>(a, n, b, k, c, n, n, n, k, true, s);
          }};
}

std::vector<Candidate> candidates() {
  using s9::MaxPlus;
  using s9::MinPlus;
  return {
      make<MinPlus, T128x64k16, SelectMin>("select", "128x64x16 s4 b2"),
      make<MinPlus, T128x64k16, PredMovMin>("predmov", "128x64x16 s4 b2"),
      make<MinPlus, T128x64k16, FminMin>("fmin", "128x64x16 s4 b2"),
      make<MinPlus, T128x64k8, SelectMin>("select", "128x64x8 s4 b2"),
      make<MinPlus, T128x64k8s6, SelectMin>("select", "128x64x8 s6 b2"),
      make<MinPlus, T128x128k16b1, SelectMin>("select", "128x128x16 s4 b1"),
      make<MinPlus, T128x64k16n4, SelectMin>("select", "128x64x16 s4 b2 8x4"),
      make<MinPlus, T128x32k8n4b4, SelectMin>("select", "128x32x8 s4 b4 8x4"),
      make<MinPlus, T128x32k8n4b3, SelectMin>("select", "128x32x8 s4 b3 8x4"),
      make<MinPlus, T128x32k8n4b3, PredMovMin>("predmov", "128x32x8 s4 b3 8x4"),
      make<MinPlus, T128x32k16n4b3, SelectMin>("select", "128x32x16 s4 b3 8x4"),
      make<MaxPlus, T128x32k8n4b3, SelectMax>("select", "128x32x8 s4 b3 8x4"),
      make<MinPlus, T64x64k8b4, SelectMin>("select", "64x64x8 s4 b4"),
      make<MinPlus, T64x128k16, SelectMin>("select", "64x128x16 s4 b2"),
      make<MinPlus, T64x64k16n4b3, SelectMin>("select", "64x64x16 s4 b3 8x4"),
      make<MinPlus, T64x32k16n4b6, SelectMin>("select", "64x32x16 s4 b6 8x4"),
      make<MaxPlus, T64x64k16n4b3, SelectMax>("select", "64x64x16 s4 b3 8x4"),
      make<MinPlus, T64x64k16n4b3np, SelectMin>("select", "64x64x16 s4 b3 8x4 nopf"),
      make<MinPlus, T64x64k8n4b4np, SelectMin>("select", "64x64x8 s4 b4 8x4 nopf"),
      make<MinPlus, T128x64k16n4b2np, SelectMin>("select", "128x64x16 s4 b2 8x4 nopf"),
      make<MinPlus, T128x32k8n4b4np, SelectMin>("select", "128x32x8 s4 b4 8x4 nopf"),
      make<MinPlus, T64x32k8n4b8np, SelectMin>("select", "64x32x8 s4 b8 8x4 nopf"),
      make<MaxPlus, T128x64k16n4b2np, SelectMax>("select", "128x64x16 s4 b2 8x4 nopf"),
      make<MaxPlus, T128x64k16, SelectMax>("select", "128x64x16 s4 b2"),
      make<MaxPlus, T128x64k16, PredMovMax>("predmov", "128x64x16 s4 b2"),
      make_small<MinPlus, S2x2k32s3, SelectMin>("select", "64x64x32 s3 b2 2x2 64w"),
      make_small<MinPlus, S2x2k48s2, SelectMin>("select", "64x64x48 s2 b2 2x2 64w"),
      make_small<MinPlus, S4x2k32s2, SelectMin>("select", "64x64x32 s2 b3 4x2 48w"),
      make_small<MinPlus, S4x4k32s2, SelectMin>("select", "128x64x32 s2 b2 4x4 32w"),
  };
}

template <class S>
void shipped_run(const double* a, const double* b, double* c, int64_t n, int64_t k, cudaStream_t s) {
  s9::gemm_device<S>({a, n, k, n}, {b, k, n, k}, {c, n, n, n}, true, s);
}

// Doubles in [-1, 1); with `specials`, about 2 % +inf, 1 % -inf and 1 % NaN
// (in C0 only +inf: an accumulator that is NaN is not what the kernel gets).
std::vector<double> random_host(int64_t count, std::mt19937_64& rng, bool specials, bool nan_ok) {
  std::vector<double> h(static_cast<size_t>(count));
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  std::uniform_int_distribution<int> pick(0, 99);
  for (double& x : h) {
    x = u(rng);
    if (!specials) continue;
    const int r = pick(rng);
    if (r < 2) x = __builtin_huge_val();
    else if (r == 2) x = -__builtin_huge_val();
    else if (r == 3 && nan_ok) x = __builtin_nan("");
  }
  return h;
}

lab::cuda::DeviceBuffer<double> upload(const std::vector<double>& h) {
  lab::cuda::DeviceBuffer<double> d{h.size()};
  LAB_CUDA_CHECK(cudaMemcpy(d.data(), h.data(), sizeof(double) * h.size(), cudaMemcpyHostToDevice));
  return d;
}

// One problem (m = n, k) on the device: A, B, C0, and the shipped kernel's
// result of C0 (+) A (x) B for each semiring.
struct Problem {
  int64_t n, k;
  lab::cuda::DeviceBuffer<double> A, B, C0, C;
  std::vector<double> shipped_min, shipped_max, out;
};

Problem make_problem(int64_t n, int64_t k, bool specials, std::mt19937_64& rng, cudaStream_t s) {
  Problem p{n, k, upload(random_host(n * k, rng, specials, true)), upload(random_host(k * n, rng, specials, true)),
            upload(random_host(n * n, rng, specials, false)), lab::cuda::DeviceBuffer<double>{size_t(n * n)}, {}, {}, {}};
  const lab::View<const double> a{p.A.data(), n, k, n}, b{p.B.data(), k, n, k};
  const lab::View<double> c{p.C.data(), n, n, n};
  for (int which = 0; which < 2; ++which) {
    LAB_CUDA_CHECK(
        cudaMemcpyAsync(p.C.data(), p.C0.data(), sizeof(double) * size_t(n * n), cudaMemcpyDeviceToDevice, s));
    if (which == 0) s9::gemm_device<s9::MinPlus>(a, b, c, true, s);
    else s9::gemm_device<s9::MaxPlus>(a, b, c, true, s);
    LAB_CUDA_CHECK(cudaStreamSynchronize(s));
    (which == 0 ? p.shipped_min : p.shipped_max) = to_host(p.C);
  }
  p.out.resize(size_t(n * n));
  return p;
}

// Runs the candidate on C = C0 and compares C with the shipped result bit for bit.
// On a difference it says where, and which of the two a plain loop on the host
// agrees with there (so that a wrong candidate and a wrong shipped kernel differ).
bool same_as_shipped(const Candidate& c, Problem& p, cudaStream_t s) {
  // (on s: a device-to-device cudaMemcpy is not ordered with the non-blocking stream s)
  LAB_CUDA_CHECK(
      cudaMemcpyAsync(p.C.data(), p.C0.data(), sizeof(double) * size_t(p.n * p.n), cudaMemcpyDeviceToDevice, s));
  c.run(p.A.data(), p.B.data(), p.C.data(), p.n, p.k, s);
  LAB_CUDA_CHECK(cudaStreamSynchronize(s));
  LAB_CUDA_CHECK(cudaMemcpy(p.out.data(), p.C.data(), sizeof(double) * p.out.size(), cudaMemcpyDeviceToHost));
  const bool min = std::string(c.semiring) == "minplus";
  const std::vector<double>& ref = min ? p.shipped_min : p.shipped_max;
  if (std::memcmp(p.out.data(), ref.data(), sizeof(double) * ref.size()) == 0) return true;
  int64_t bad = 0, first = -1;
  for (size_t i = 0; i < ref.size(); ++i)
    if (std::memcmp(&p.out[i], &ref[i], sizeof(double)) != 0 && bad++ == 0) first = int64_t(i);
  const auto ha = to_host(p.A), hb = to_host(p.B), hc0 = to_host(p.C0);
  const int64_t n = p.n, k = p.k, i = first % n, j = first / n;
  double r = hc0[size_t(first)];
  for (int64_t q = 0; q < k; ++q) {
    const double t = ha[size_t(i + q * n)] + hb[size_t(q + j * k)];
    if (min ? t < r : t > r) r = t;
  }
  std::printf("#   %s %s %s, n %lld: %lld of %lld elements differ; first C(%lld, %lld) (tile row %lld): "
              "candidate %.17g, shipped %.17g, host loop %.17g\n",
              c.semiring, c.form, c.tile, (long long)n, (long long)bad, (long long)ref.size(), (long long)i,
              (long long)j, (long long)(i / 64), p.out[size_t(first)], ref[size_t(first)], r);
  return false;
}

// Median of 5 timed launches (after one untimed), CUDA events around each.
double median_seconds(const Candidate& c, Problem& p, cudaStream_t s) {
  lab::cuda::Event start, stop;
  std::vector<double> t;
  for (int i = 0; i <= 5; ++i) {
    start.record(s);
    c.run(p.A.data(), p.B.data(), p.C.data(), p.n, p.k, s);
    stop.record(s);
    stop.sync();
    if (i > 0) t.push_back(stop.seconds_since(start));
  }
  std::sort(t.begin(), t.end());
  return t[t.size() / 2];
}

int run_sweep(const Args& args, cudaStream_t s) {
  const lab::cuda::DeviceInfo& dev = lab::cuda::device_info();
  const uint64_t seed = std::random_device{}();
  std::mt19937_64 rng(seed);
  const double min_b = probe_gops<AddSelectMin, double>(1e-7, 0.5, s);
  const double max_b = probe_gops<AddSelectMax, double>(-1e-7, 0.5, s);
  std::printf("# step09_ceiling --sweep on %s (%d SMs), seed %llu; G ops/s count 2 per update\n", dev.name.c_str(),
              dev.sm_count, (unsigned long long)seed);
  std::printf("# bounds: fp64_add_select %.0f, fp64_add_select_max %.0f G ops/s\n", min_b, max_b);
  // The ceiling of the kernel's register tile: the update with its operands in
  // registers at each tile's occupancy (no loads, no barriers).
  // Smaller tiles a thread let more warps in, but leave more to load: 2 x 2
  // takes a double from shared memory for every update, 8 x 4 three for eight.
  const TileProbe tiles[] = {time_tile_probe<8, 4, 3>("8x4 a thread, 3 blocks of 4 warps (the shipped tile's)", s),
                             time_tile_probe<8, 4, 4>("8x4 a thread, 4 blocks of 4 warps", s),
                             time_tile_probe<8, 4, 2>("8x4 a thread, 2 blocks of 4 warps", s),
                             time_tile_probe<8, 8, 2>("8x8 a thread, 2 blocks of 4 warps (step06's tile's)", s),
                             time_tile_probe<4, 4, 8>("4x4 a thread, 8 blocks of 4 warps", s),
                             time_tile_probe<2, 2, 16>("2x2 a thread, 16 blocks of 4 warps", s)};
  for (const TileProbe& t : tiles)
    std::printf("# register tile alone, %s: %d warps/SM, %d registers, %.0f G ops/s = %.1f%% of the bound\n",
                t.what, t.warps_per_sm, t.regs, t.gops, 100.0 * t.gops / min_b);
  // The shipped kernel against the plain reference first: the candidates are
  // compared with it. Ragged sizes, so edge tiles and a short last slice run.
  Problem small = make_problem(1000, 999, true, rng, s);
  bool all_ok = true;
  {
    const auto ha = to_host(small.A), hb = to_host(small.B), hc0 = to_host(small.C0);
    const int64_t n = small.n, k = small.k;
    const lab::View<const double> va{ha.data(), n, k, n}, vb{hb.data(), k, n, k}, vc0{hc0.data(), n, n, n};
    for (int which = 0; which < 2; ++which) {
      const std::vector<double>& got = which == 0 ? small.shipped_min : small.shipped_max;
      const lab::View<const double> vc{got.data(), n, n, n};
      const lab::CheckResult chk = which == 0 ? s9::check_semiring<s9::MinPlus>(va, vb, vc0, vc, true, true)
                                              : s9::check_semiring<s9::MaxPlus>(va, vb, vc0, vc, true, true);
      std::printf("# shipped %s against the reference (n 1000, k 999, with inf and NaN): %s\n",
                  which == 0 ? "minplus" : "maxplus", chk.ok ? "pass" : "FAIL");
      if (!chk.ok) std::fprintf(stderr, "%s", chk.report.c_str());
      all_ok = all_ok && chk.ok;
    }
  }
  const int64_t n = args.n > 0 ? args.n : 8192;
  Problem big = make_problem(n, n, false, rng, s);
  std::printf("%-8s %-8s %-25s %5s %6s %9s %9s %8s  %s\n", "semiring", "form", "tile", "regs", "spill", "ms", "Gops/s",
              "%bound", "exact (ragged+inf/NaN, n)");
  auto row = [&](const char* semiring, const char* form, const char* tile, const void* kernel, double sec,
                 const char* exact) {
    cudaFuncAttributes fa{};  // the shipped kernel lives in the library: no pointer here
    if (kernel != nullptr) LAB_CUDA_CHECK(cudaFuncGetAttributes(&fa, kernel));
    const double gops = lab::gflops(n, n, n, sec);
    const double bound = std::string(semiring) == "minplus" ? min_b : max_b;
    std::printf("%-8s %-8s %-25s %5d %6zu %9.2f %9.0f %7.1f%%  %s\n", semiring, form, tile, fa.numRegs,
                size_t(fa.localSizeBytes), 1e3 * sec, gops, 100.0 * gops / bound, exact);
    std::fflush(stdout);
  };
  // The shipped kernel itself, through gemm_device as its users call it.
  const Candidate shipped[] = {{"minplus", "shipped", "gemm_device", nullptr, shipped_run<s9::MinPlus>},
                               {"maxplus", "shipped", "gemm_device", nullptr, shipped_run<s9::MaxPlus>}};
  for (const Candidate& c : shipped) row(c.semiring, c.form, c.tile, c.kernel, median_seconds(c, big, s), "(itself)");
  for (const Candidate& c : candidates()) {
    const bool ok = same_as_shipped(c, small, s) && same_as_shipped(c, big, s);
    all_ok = all_ok && ok;
    row(c.semiring, c.form, c.tile, c.kernel, median_seconds(c, big, s), ok ? "yes" : "NO: differs from shipped");
  }
  return all_ok ? 0 : 1;
}

}  // namespace sweep

int run(const Args& args) {
  std::string why;
  if (!lab::cuda::device_available(&why)) {
    std::printf("step09_ceiling: skipped: %s\n", why.c_str());
    return 77;
  }
  const lab::cuda::DeviceInfo& dev = lab::cuda::device_info();
  lab::cuda::Stream stream;
  const cudaStream_t s = stream.get();
  if (args.sweep) return sweep::run_sweep(args, s);
  std::vector<Row> rows;
  auto bound = [&](const char* name, double gops) {
    Row r;
    r.variant = name;
    r.gops = gops;
    rows.push_back(r);
    return gops;
  };
  const double fma_b = bound("fp64_fma", probe_gops<Fma, double>(0.999999, 1e-7, s));
  const double min_b = bound("fp64_add_select", probe_gops<AddSelectMin, double>(1e-7, 0.5, s));
  const double max_b = bound("fp64_add_select_max", probe_gops<AddSelectMax, double>(-1e-7, 0.5, s));
  bound("fp64_add_fmin", probe_gops<AddFmin, double>(1e-7, 0.5, s));
  const double dpx_b = bound("i32_dpx", probe_gops<Dpx, int>(3, 1 << 20, s));
  bound("i32_add_min", probe_gops<AddMin, int>(3, 1 << 20, s));
  bool all_pass = true;
  if (args.n > 0) {
    rows.push_back(time_kernel<s9::MinPlus>("minplus_gpu", min_b, args, s));
    rows.push_back(time_kernel<s9::MaxPlus>("maxplus_gpu", max_b, args, s));
    rows.push_back(time_kernel<s9::PlusTimes>("plustimes_gpu", fma_b, args, s));
    rows.push_back(time_kernel<s9::MinPlusI32>("minplus_i32_dpx", dpx_b, args, s));
    for (const Row& r : rows) all_pass = all_pass && r.check != "fail";
  }
  std::printf("# step09_ceiling on %s (compute capability %d.%d, %d SMs); G ops/s count 2 per update (2 mnk)\n",
              dev.name.c_str(), dev.cc_major, dev.cc_minor, dev.sm_count);
  std::printf("%-20s %6s %10s %10s %10s %8s  %s\n", "what", "n", "ms", "Gops/s", "bound", "%bound", "check");
  for (const Row& r : rows) {
    if (r.n == 0)
      std::printf("%-20s %6s %10s %10.0f %10s %8s  (bound)\n", r.variant.c_str(), "-", "-", r.gops, "-", "-");
    else
      std::printf("%-20s %6lld %10.3f %10.0f %10.0f %7.1f%%  %s\n", r.variant.c_str(), (long long)r.n,
                  1e3 * r.median_s, r.gops, r.bound, 100.0 * r.gops / r.bound, r.check.c_str());
  }
  if (!args.csv.empty()) {
    std::ifstream exists(args.csv);
    const bool header = !exists.good() || exists.peek() == std::ifstream::traits_type::eof();
    exists.close();
    std::ofstream f(args.csv, std::ios::app);
    if (header) f << "step,variant,impl,m,n,k,threads,median_s,gflops,bound_gops,pct_bound,check,device\n";
    for (const Row& r : rows)
      f << "step09," << r.variant << ",solution," << r.n << "," << r.n << "," << r.n << ",1," << r.median_s << ","
        << r.gops << "," << r.bound << "," << (r.bound > 0 ? 100.0 * r.gops / r.bound : 0.0) << "," << r.check
        << ",\"" << dev.name << "\"\n";
    if (!f) throw std::runtime_error("could not write " + args.csv);
  }
  return all_pass ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  const Args args = parse(argc, argv);
  try {
    return run(args);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "step09_ceiling: error: %s\n", e.what());
    return 4;
  }
}
