// Device timing with events (the GPU counterpart of lab::time_host).
#include <vector>

#include "lab/cuda.hpp"

namespace lab::cuda {

Timing time_device(const std::function<void()>& queue_work, cudaStream_t stream, const TimingOptions& opts) {
  for (int w = 0; w < opts.warmup; ++w) {
    queue_work();
    LAB_CUDA_CHECK_LAUNCH();
  }
  LAB_CUDA_CHECK(cudaStreamSynchronize(stream));
  // Each call is timed alone between two events, so a sample is the GPU's time
  // for the work, not the time the host took to queue it.
  Event start, stop;
  std::vector<double> samples;
  double total = 0;
  while (int(samples.size()) < opts.max_reps &&
         (int(samples.size()) < opts.min_reps || total < opts.min_time_s)) {
    start.record(stream);
    queue_work();
    LAB_CUDA_CHECK_LAUNCH();
    stop.record(stream);
    stop.sync();
    samples.push_back(stop.seconds_since(start));
    total += samples.back();
  }
  return summarize(samples);
}

}  // namespace lab::cuda
