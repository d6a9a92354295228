// lab/timer.hpp — how every step is timed: warm-up, then repeats until both a
// minimum count and a minimum time are reached; median, min and max reported.
#pragma once

#include <functional>
#include <vector>

namespace lab {

struct TimingOptions {
  int warmup = 1;           ///< untimed calls first (page faults, caches, JIT, handles)
  int min_reps = 3;         ///< at least this many timed calls
  int max_reps = 1000;      ///< and at most this many
  double min_time_s = 0.3;  ///< keep repeating until this much time was timed
};

struct Timing {
  double median_s = 0, min_s = 0, max_s = 0;
  int reps = 0;
};

/// Times fn() on the host clock (steady_clock). fn must finish its work before
/// returning (GPU code: use lab::cuda::time_device, which uses events).
Timing time_host(const std::function<void()>& fn, const TimingOptions& opts = {});

/// Median/min/max of samples (seconds); used by both host and device timers.
Timing summarize(std::vector<double> samples);

/// 2 m n k / seconds / 1e9 — the same for every semiring.
inline double gflops(long long m, long long n, long long k, double seconds) {
  return seconds > 0 ? 2.0 * double(m) * double(n) * double(k) / seconds / 1e9 : 0.0;
}

}  // namespace lab
