#include "lab/timer.hpp"

#include <algorithm>
#include <chrono>

namespace lab {

Timing summarize(std::vector<double> samples) {
  Timing t;
  if (samples.empty()) return t;
  std::sort(samples.begin(), samples.end());
  const size_t n = samples.size();
  t.median_s = n % 2 ? samples[n / 2] : 0.5 * (samples[n / 2 - 1] + samples[n / 2]);
  t.min_s = samples.front();
  t.max_s = samples.back();
  t.reps = static_cast<int>(n);
  return t;
}

Timing time_host(const std::function<void()>& fn, const TimingOptions& opts) {
  using clock = std::chrono::steady_clock;
  for (int w = 0; w < opts.warmup; ++w) fn();
  // Seconds that `calls` calls take together.
  const auto run = [&](long calls) {
    const auto t0 = clock::now();
    for (long c = 0; c < calls; ++c) fn();
    return std::chrono::duration<double>(clock::now() - t0).count();
  };
  std::vector<double> samples;
  double total = 0;
  long batch = 1;
  if (const double first = run(1); first >= opts.min_sample_s) {
    samples.push_back(first);
    total = first;
  } else {
    // Double the batch until it fills min_sample_s (at most about a million calls).
    for (double s = first; s < opts.min_sample_s && batch < (1L << 20);) s = run(batch *= 2);
  }
  while (static_cast<int>(samples.size()) < opts.max_reps &&
         (static_cast<int>(samples.size()) < opts.min_reps || total < opts.min_time_s)) {
    const double s = run(batch);
    samples.push_back(s / double(batch));
    total += s;
  }
  Timing t = summarize(std::move(samples));
  t.calls_per_rep = static_cast<int>(batch);
  return t;
}

}  // namespace lab
