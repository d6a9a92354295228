// lab/machine.hpp — what the harness reads off (or measures on) this machine.
#pragma once

#include <cstdint>
#include <string>

namespace lab {

/// Data-cache sizes in bytes as the OS reports them for CPU 0 (sysfs on Linux),
/// with conservative defaults (32 KiB, 1 MiB, 8 MiB) where nothing is reported.
/// Read on the first call; later calls return the same values at no cost.
struct CacheInfo {
  int64_t l1d = 32 << 10, l2 = 1 << 20, l3 = 8 << 20;
  int64_t line = 64;
};
CacheInfo cache_info();

/// The widest SIMD this CPU runs: "avx512", "avx2", "neon" (64-bit Arm), or "generic".
std::string cpu_simd_level();

/// Double-precision FMA throughput of this CPU in GFLOP/s with `threads` threads,
/// measured by a probe of independent vector FMAs at the widest SIMD level the CPU
/// has: after a warm-up, the best of five trials of about 40 ms each, all threads
/// timed together (about 0.25 s in all; threads beyond the processor count add
/// nothing). Cached after the first call per thread count. A shared machine can
/// still make it read low: callers that show "% of peak" say so above 100 %.
double cpu_peak_gflops(int threads);

/// Threads OpenMP will use (omp_get_max_threads, or 1 without OpenMP).
int max_threads();

}  // namespace lab
