// What the harness reads off the machine: cache sizes, SIMD level, FMA peak.
#include "lab/machine.hpp"

#include <algorithm>
#include <chrono>
#include <fstream>
#include <map>
#include <mutex>
#include <string>

#ifdef _OPENMP
#include <omp.h>
#endif
#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#define LAB_X86 1
#elif defined(__aarch64__)
#include <arm_neon.h>
#define LAB_ARM64 1
#endif

namespace lab {
namespace {

int64_t parse_size(const std::string& s) {
  if (s.empty()) return 0;
  int64_t v = 0;
  size_t i = 0;
  while (i < s.size() && s[i] >= '0' && s[i] <= '9') v = v * 10 + (s[i++] - '0');
  if (i < s.size() && (s[i] == 'K' || s[i] == 'k')) v <<= 10;
  else if (i < s.size() && (s[i] == 'M' || s[i] == 'm')) v <<= 20;
  return v;
}

std::string read_line(const std::string& path) {
  std::ifstream f(path);
  std::string s;
  std::getline(f, s);
  return s;
}

// The probe: many independent FMA chains (16 vector chains with AVX-512, 12
// with AVX2: more than the FMA latency, 4 to 5 cycles, times the 2 FMA ports of
// the lab's x86 CPUs; 24 with NEON, for Arm cores of up to 4 vector pipes), so
// the loop runs at the FMA throughput of the core. Each x86 function is
// compiled for its instruction set and picked at run time.

double fma_generic(long iters) {
  double a[16], x = 1.0000001, y = 0.9999999;
  for (int i = 0; i < 16; ++i) a[i] = i;
  for (long it = 0; it < iters; ++it)
    for (int i = 0; i < 16; ++i) a[i] = a[i] * x + y;
  double s = 0;
  for (double v : a) s += v;
  return s;
}

#ifdef LAB_X86
__attribute__((target("avx2,fma"))) double fma_avx2(long iters) {
  __m256d acc[12];
  for (int i = 0; i < 12; ++i) acc[i] = _mm256_set1_pd(i);
  const __m256d x = _mm256_set1_pd(1.0000001), y = _mm256_set1_pd(0.9999999);
  for (long it = 0; it < iters; ++it)
    for (int i = 0; i < 12; ++i) acc[i] = _mm256_fmadd_pd(acc[i], x, y);
  double out[4], s = 0;
  for (int i = 0; i < 12; ++i) {
    _mm256_storeu_pd(out, acc[i]);
    s += out[0] + out[1] + out[2] + out[3];
  }
  return s;
}

__attribute__((target("avx512f"))) double fma_avx512(long iters) {
  __m512d acc[16];
  for (int i = 0; i < 16; ++i) acc[i] = _mm512_set1_pd(i);
  const __m512d x = _mm512_set1_pd(1.0000001), y = _mm512_set1_pd(0.9999999);
  for (long it = 0; it < iters; ++it)
    for (int i = 0; i < 16; ++i) acc[i] = _mm512_fmadd_pd(acc[i], x, y);
  double out[8], s = 0;
  for (int i = 0; i < 16; ++i) {
    _mm512_storeu_pd(out, acc[i]);
    for (double v : out) s += v;
  }
  return s;
}
#endif

#ifdef LAB_ARM64
double fma_neon(long iters) {
  float64x2_t acc[24];
  for (int i = 0; i < 24; ++i) acc[i] = vdupq_n_f64(i);
  const float64x2_t x = vdupq_n_f64(1.0000001), y = vdupq_n_f64(0.9999999);
  for (long it = 0; it < iters; ++it)
    for (int i = 0; i < 24; ++i) acc[i] = vfmaq_f64(y, acc[i], x);
  double s = 0;
  for (int i = 0; i < 24; ++i) s += vgetq_lane_f64(acc[i], 0) + vgetq_lane_f64(acc[i], 1);
  return s;
}
#endif

// Runs the probe for `iters` iterations and returns the floating-point
// operations it did.
double probe_flops([[maybe_unused]] const std::string& level, long iters) {
  volatile double sink = 0;
  double flops;
#ifdef LAB_X86
  if (level == "avx512") {
    sink = fma_avx512(iters);
    flops = 2.0 * 16 * 8 * double(iters);
  } else if (level == "avx2") {
    sink = fma_avx2(iters);
    flops = 2.0 * 12 * 4 * double(iters);
  } else
#endif
#ifdef LAB_ARM64
  if (level == "neon") {
    sink = fma_neon(iters);
    flops = 2.0 * 24 * 2 * double(iters);
  } else
#endif
  {
    sink = fma_generic(iters);
    flops = 2.0 * 16 * double(iters);
  }
  (void)sink;
  return flops;
}

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

}  // namespace

namespace {

CacheInfo read_cache_info() {
  CacheInfo c;
  const std::string base = "/sys/devices/system/cpu/cpu0/cache/index";
  for (int idx = 0; idx < 8; ++idx) {
    const std::string dir = base + std::to_string(idx) + "/";
    const std::string level = read_line(dir + "level"), type = read_line(dir + "type");
    const int64_t size = parse_size(read_line(dir + "size"));
    if (level.empty() || size <= 0) continue;
    if (level == "1" && type == "Data") c.l1d = size;
    if (level == "2") c.l2 = size;
    if (level == "3") c.l3 = size;
    const int64_t line = parse_size(read_line(dir + "coherency_line_size"));
    if (line > 0) c.line = line;
  }
  return c;
}

}  // namespace

CacheInfo cache_info() {
  // Read once per process (thread-safe): the kernels ask for it on every call,
  // and sysfs costs about 28 file opens, far more than a small product.
  static const CacheInfo c = read_cache_info();
  return c;
}

std::string cpu_simd_level() {
#ifdef LAB_X86
  __builtin_cpu_init();
  if (__builtin_cpu_supports("avx512f")) return "avx512";
  if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) return "avx2";
#elif defined(LAB_ARM64)
  return "neon";  // every 64-bit Arm CPU has it
#endif
  return "generic";
}

int max_threads() {
#ifdef _OPENMP
  return omp_get_max_threads();
#else
  return 1;
#endif
}

double cpu_peak_gflops(int threads) {
  static std::mutex mu;
  static std::map<int, double> cache;
  std::lock_guard<std::mutex> lock(mu);
  if (threads < 1) threads = 1;
#ifdef _OPENMP
  // More threads than processors share the processors: the peak is theirs.
  if (threads > omp_get_num_procs()) threads = omp_get_num_procs();
#endif
  if (auto it = cache.find(threads); it != cache.end()) return it->second;
  const std::string level = cpu_simd_level();
  // Size one trial to about 40 ms on one core (after 40 ms of warm-up, in which
  // the clock ramps up), so that timer resolution and thread start-up vanish.
  long iters = 1 << 14;
  for (auto t0 = std::chrono::steady_clock::now(); seconds_since(t0) < 0.04;) probe_flops(level, iters);
  const auto t0 = std::chrono::steady_clock::now();
  probe_flops(level, iters);
  iters = std::max(iters, static_cast<long>(double(iters) * 0.04 / std::max(seconds_since(t0), 1e-6)));
  // Best of five trials. Each is timed from the moment all threads are ready to
  // the moment the last one is done, so it is a rate the threads reached
  // together, never the sum of rates reached one after the other.
  double best = 0;
  for (int trial = 0; trial < 5; ++trial) {
    double flops = 0, seconds = 0;
    std::chrono::steady_clock::time_point start;
#ifdef _OPENMP
#pragma omp parallel num_threads(threads) reduction(+ : flops)
#endif
    {
#ifdef _OPENMP
#pragma omp barrier
#pragma omp master
#endif
      start = std::chrono::steady_clock::now();
#ifdef _OPENMP
#pragma omp barrier
#endif
      flops += probe_flops(level, iters);
#ifdef _OPENMP
#pragma omp barrier
#pragma omp master
#endif
      seconds = seconds_since(start);
    }
    best = std::max(best, flops / seconds);
  }
  const double gf = best / 1e9;
  cache[threads] = gf;
  return gf;
}

}  // namespace lab
