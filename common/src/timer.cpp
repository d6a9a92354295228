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
  std::vector<double> samples;
  double total = 0;
  while (static_cast<int>(samples.size()) < opts.max_reps &&
         (static_cast<int>(samples.size()) < opts.min_reps || total < opts.min_time_s)) {
    const auto t0 = clock::now();
    fn();
    const double s = std::chrono::duration<double>(clock::now() - t0).count();
    samples.push_back(s);
    total += s;
  }
  return summarize(std::move(samples));
}

}  // namespace lab
