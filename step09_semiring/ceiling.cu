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
//
// The CSV starts with the lab's columns (step,variant,impl,m,n,k,threads,
// median_s,gflops), then bound_gops (the bound the row is compared with),
// pct_bound, check, device. Bound rows have m = n = k = 0.
// Exit status: 0 ok, 1 a kernel failed its check, 2 bad usage, 4 error,
// 77 skipped (no usable GPU).
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <fstream>
#include <random>
#include <string>
#include <vector>

#include "lab/cuda.hpp"
#include "lab/timer.hpp"
#include "reference.hpp"
#include "semiring_cuda.hpp"

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

// Operations per second (2 per update) of one probe: the best of a few launches.
template <class Op, class T>
double probe_gops(T x, T y, cudaStream_t s) {
  const lab::cuda::DeviceInfo& dev = lab::cuda::device_info();
  constexpr int kThreads = 512, kIters = 1 << 14;
  const int blocks = dev.sm_count * 4;
  lab::cuda::DeviceBuffer<T> out{size_t(blocks)};
  lab::cuda::Event start, stop;
  double best = 1e30;
  for (int t = 0; t <= 5; ++t) {  // launch 0 warms up
    start.record(s);
    probe<Op, T><<<blocks, kThreads, 0, s>>>(out.data(), x, y, kIters);
    LAB_CUDA_CHECK_LAUNCH();
    stop.record(s);
    stop.sync();
    if (t > 0) best = std::min(best, stop.seconds_since(start));
  }
  return 2.0 * kChains * double(kIters) * kThreads * blocks / best / 1e9;
}

struct Args {
  int64_t n = 8192;
  double min_time_s = 0.5;
  std::string csv;
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
          "  Measures the throughput of the semiring updates alone (FP64 add + compare/select,\n"
          "  add + fmin, int32 DPX add-min, ...) and times step09's kernels at n x n x n\n"
          "  against them.\n"
          "  --n N          size of the timed products (default 8192; 0: the bounds only)\n"
          "  --min-time S   time each kernel for at least S seconds (default 0.5)\n"
          "  --csv FILE     append the rows to FILE\n"
          "exit status: 0 ok, 1 a kernel failed its check, 2 bad usage, 4 error, 77 skipped (no usable GPU)\n");
      std::exit(0);
    }
    if (arg == "--n") {
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
      std::ofstream probe_file(a.csv, std::ios::app);
      if (!probe_file) usage_error("cannot write '" + a.csv + "'");
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
  LAB_CUDA_CHECK(cudaMemcpy(C.data(), C0.data(), sizeof(T) * size_t(n * n), cudaMemcpyDeviceToDevice));
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

int run(const Args& args) {
  std::string why;
  if (!lab::cuda::device_available(&why)) {
    std::printf("step09_ceiling: skipped: %s\n", why.c_str());
    return 77;
  }
  const lab::cuda::DeviceInfo& dev = lab::cuda::device_info();
  lab::cuda::Stream stream;
  const cudaStream_t s = stream.get();
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
