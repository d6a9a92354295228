// lab/timer.hpp — how every step is timed: warm-up, then repeats until both a
// minimum count and a minimum time are reached; median, min and max reported.
// A call shorter than min_sample_s is timed in batches: each repeat runs it
// as many times as fill min_sample_s and counts their mean, so that the
// clock's own cost and resolution (tens of nanoseconds) vanish from a product
// that takes well under a microsecond.
#pragma once

#include <functional>
#include <vector>

namespace lab {

struct TimingOptions {
  int warmup = 1;           ///< untimed calls first (page faults, caches, JIT, handles)
  int min_reps = 3;         ///< at least this many timed calls
  int max_reps = 1000;      ///< and at most this many
  double min_time_s = 0.3;  ///< keep repeating until this much time was timed
  double min_sample_s = 1e-4;  ///< a shorter call runs several times per repeat (0: once)
};

struct Timing {
  double median_s = 0, min_s = 0, max_s = 0;
  int reps = 0;
  int calls_per_rep = 1;  ///< calls timed together in each repeat (the figures are per call)
};

/// Times fn() on the host clock (steady_clock). fn must finish its work before
/// returning (GPU code: use lab::cuda::time_device, which uses events). The
/// calls that find the batch size count as warm-up; a first call that is long
/// enough on its own is the first repeat (a call of seconds is not repeated
/// for nothing).
Timing time_host(const std::function<void()>& fn, const TimingOptions& opts = {});

/// Median/min/max of samples (seconds); used by both host and device timers.
Timing summarize(std::vector<double> samples);

/// 2 m n k / seconds / 1e9 — the same for every semiring.
inline double gflops(long long m, long long n, long long k, double seconds) {
  return seconds > 0 ? 2.0 * double(m) * double(n) * double(k) / seconds / 1e9 : 0.0;
}

}  // namespace lab
