// step07_probe: what bounds step07 on this machine, measured.
//
//   step07_probe [--gpus 0,1] [--bytes 1G] [--dgemm-n 8192] [--sizes 8192,16384,32768]
//                [--streams 2] [--model-gpus N] [--depths 2048,4096] [--sustain 6]
//                [--csv FILE]
//
// Per GPU: pinned and pageable copies host -> device and back, pinned both
// ways at once; all GPUs copying at once (each way, and both ways); peer
// copies between the GPUs (one pair alone, and every GPU sending to every
// other at once), where the GPUs can reach each other; the host's memcpy rate
// (one thread and all cores: what staging a pageable matrix costs);
// device-resident cublasDgemm on random doubles, on one GPU alone and on all
// of them at once (the multi-GPU bounds take the slowest), and, on several
// GPUs, at the shape of the plan's own products (tile x panel, beta = 1), all
// at once. Then, for each size, the
// bytes step07's plan moves and the bound max(PCIe time, compute time) the
// handout compares with, on one GPU and (GPUs listed once each) on all of
// them, without and with panel sharing (below), and on all of them again with
// the products at the panel-shaped rate. --model-gpus N adds the same
// two bounds for a host of N such GPUs, on paper, from the rates measured here.
// --depths D,... times cublasDgemm at the plan's tile (largest size) with
// panels of each depth D, all GPUs listed at once: how deep a panel must be
// for the products to run at cuBLAS's square rate. --sustain S runs the plan's
// panel products back to back for S seconds, all GPUs listed at once, and
// prints each GPU's rate over each half second: whether the GPUs keep the
// short measurements' rate for as long as a large call lasts.
//
// Panel sharing: G GPUs form a team grid gr x gc (gr the largest divisor of G
// not above sqrt(G): 2 -> 1x2, 4 -> 2x2, 8 -> 2x4) and each computes one
// tm x tn tile of a super tile. Per tile a GPU loads 1/gc of the tile's A
// panels and 1/gr of its B panels from the host and gets the rest from the
// GPUs of its team row and column: it sends (and receives)
// (gc-1) tm k / gc + (gr-1) k tn / gr doubles over the peer links; C (m n / G
// per GPU) comes in and goes back over PCIe. The bound per GPU is the longest
// of its product time, its host bytes in, out and both ways at its share of
// the all-GPUs-at-once rates, and its peer bytes at its rate with all pairs
// copying at once. The model takes each GPU's share of the host rates and its
// peer rate as measured here (a GPU's links are its own), and the tiles the
// plan would choose for N GPUs.
#include <cublas_v2.h>
#include <cuda_runtime_api.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <condition_variable>
#include <cstring>
#include <iostream>
#include <memory>
#include <mutex>
#include <set>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "lab/bench.hpp"
#include "lab/cuda.hpp"
#include "engine.hpp"
#include "plan.hpp"

namespace {

using Clock = std::chrono::steady_clock;
constexpr int kReps = 5;

struct Row {
  std::string what;
  int gpu;
  double value;
  std::string unit;
};
std::vector<Row> rows;

void report(const std::string& what, int gpu, double value, const std::string& unit) {
  rows.push_back({what, gpu, value, unit});
  if (gpu >= 0)
    std::printf("  %-44s GPU %d  %10.2f %s\n", what.c_str(), gpu, value, unit.c_str());
  else
    std::printf("  %-44s        %10.2f %s\n", what.c_str(), value, unit.c_str());
  std::fflush(stdout);
}

// "4096", "1.5G", "64K": a whole count of at least 1 (no more than 2^50), or
// UsageError naming the option.
int64_t parse_size(const std::string& flag, const std::string& s) {
  const std::string bad = flag + " expects a size such as 4096, 64K or 2G, got '" + s + "'";
  char* end = nullptr;
  double v = std::strtod(s.c_str(), &end);
  if (end == s.c_str()) throw lab::UsageError(bad);
  const std::string unit = end;
  if (unit == "K" || unit == "k")
    v *= 1024;
  else if (unit == "M" || unit == "m")
    v *= 1024.0 * 1024;
  else if (unit == "G" || unit == "g")
    v *= 1024.0 * 1024 * 1024;
  else if (!unit.empty())
    throw lab::UsageError(bad);
  if (!(v >= 1 && v <= double(int64_t(1) << 50))) throw lab::UsageError(bad);
  return int64_t(v);
}

// Best of kReps of one copy of `bytes` (seconds), timed with events.
double time_copy(void* dst, const void* src, size_t bytes, cudaMemcpyKind kind, cudaStream_t s) {
  lab::cuda::Event a, b;
  double best = 1e30;
  LAB_CUDA_CHECK(cudaMemcpyAsync(dst, src, bytes, kind, s));  // warm-up
  LAB_CUDA_CHECK(cudaStreamSynchronize(s));
  for (int r = 0; r < kReps; ++r) {
    a.record(s);
    LAB_CUDA_CHECK(cudaMemcpyAsync(dst, src, bytes, kind, s));
    b.record(s);
    b.sync();
    best = std::min(best, b.seconds_since(a));
  }
  return best;
}

// Pageable copies are synchronous for the host: timed on the host clock.
double time_pageable(void* dst, const void* src, size_t bytes, cudaMemcpyKind kind) {
  double best = 1e30;
  LAB_CUDA_CHECK(cudaMemcpy(dst, src, bytes, kind));
  for (int r = 0; r < kReps; ++r) {
    const auto t = Clock::now();
    LAB_CUDA_CHECK(cudaMemcpy(dst, src, bytes, kind));
    best = std::min(best, std::chrono::duration<double>(Clock::now() - t).count());
  }
  return best;
}

double gbs(size_t bytes, double s) { return double(bytes) / s / 1e9; }

struct PinnedHost {
  void* p = nullptr;
  explicit PinnedHost(size_t bytes) { LAB_CUDA_CHECK(cudaHostAlloc(&p, bytes, cudaHostAllocPortable)); }
  ~PinnedHost() { cudaFreeHost(p); }
};

void probe_gpu(int g, size_t bytes, double* h2d_out, double* d2h_out, double* both_out) {
  LAB_CUDA_CHECK(cudaSetDevice(g));
  lab::cuda::DeviceBuffer<char> d(bytes), d2(bytes);
  PinnedHost h(bytes), h2(bytes);
  std::vector<char> pageable(bytes, 1);
  std::memset(h.p, 1, bytes);
  lab::cuda::Stream s1, s2;
  const double h2d = gbs(bytes, time_copy(d.data(), h.p, bytes, cudaMemcpyHostToDevice, s1.get()));
  const double d2h = gbs(bytes, time_copy(h.p, d.data(), bytes, cudaMemcpyDeviceToHost, s1.get()));
  report("pinned H2D", g, h2d, "GB/s");
  report("pinned D2H", g, d2h, "GB/s");
  // Both directions at once (two copy engines): the duplex rate step07 relies on.
  lab::cuda::Event a, b1, b2;
  double best = 1e30;
  for (int r = 0; r < kReps; ++r) {
    LAB_CUDA_CHECK(cudaDeviceSynchronize());
    a.record(s1.get());
    LAB_CUDA_CHECK(cudaStreamWaitEvent(s2.get(), a.get()));
    LAB_CUDA_CHECK(cudaMemcpyAsync(d.data(), h.p, bytes, cudaMemcpyHostToDevice, s1.get()));
    LAB_CUDA_CHECK(cudaMemcpyAsync(h2.p, d2.data(), bytes, cudaMemcpyDeviceToHost, s2.get()));
    b1.record(s1.get());
    b2.record(s2.get());
    b1.sync();
    b2.sync();
    best = std::min(best, std::max(b1.seconds_since(a), b2.seconds_since(a)));
  }
  const double both = gbs(2 * bytes, best);
  report("pinned H2D + D2H at once (sum)", g, both, "GB/s");
  report("pageable H2D", g,
         gbs(bytes, time_pageable(d.data(), pageable.data(), bytes, cudaMemcpyHostToDevice)), "GB/s");
  report("pageable D2H", g,
         gbs(bytes, time_pageable(pageable.data(), d.data(), bytes, cudaMemcpyDeviceToHost)), "GB/s");
  *h2d_out = h2d;
  *d2h_out = d2h;
  *both_out = both;
}

// Every GPU copying at once (sum over the GPUs, GB/s): host to device, device to
// host, or both ways at once (each GPU one copy each way, on two streams).
enum class Way { h2d, d2h, both };
double probe_all_at_once(const std::vector<int>& gpus, size_t bytes, Way way) {
  std::vector<std::unique_ptr<lab::cuda::DeviceBuffer<char>>> d, d2;
  std::vector<std::unique_ptr<PinnedHost>> h, h2;
  std::vector<std::unique_ptr<lab::cuda::Stream>> s, s2;
  for (int g : gpus) {
    LAB_CUDA_CHECK(cudaSetDevice(g));
    d.push_back(std::make_unique<lab::cuda::DeviceBuffer<char>>(bytes));
    h.push_back(std::make_unique<PinnedHost>(bytes));
    s.push_back(std::make_unique<lab::cuda::Stream>());
    if (way == Way::both) {
      d2.push_back(std::make_unique<lab::cuda::DeviceBuffer<char>>(bytes));
      h2.push_back(std::make_unique<PinnedHost>(bytes));
      s2.push_back(std::make_unique<lab::cuda::Stream>());
    }
  }
  double best = 1e30;
  for (int r = 0; r < kReps + 1; ++r) {
    const auto t = Clock::now();
    for (size_t i = 0; i < gpus.size(); ++i) {
      LAB_CUDA_CHECK(cudaSetDevice(gpus[i]));
      if (way == Way::d2h)
        LAB_CUDA_CHECK(cudaMemcpyAsync(h[i]->p, d[i]->data(), bytes, cudaMemcpyDeviceToHost, s[i]->get()));
      else
        LAB_CUDA_CHECK(cudaMemcpyAsync(d[i]->data(), h[i]->p, bytes, cudaMemcpyHostToDevice, s[i]->get()));
      if (way == Way::both)
        LAB_CUDA_CHECK(cudaMemcpyAsync(h2[i]->p, d2[i]->data(), bytes, cudaMemcpyDeviceToHost, s2[i]->get()));
    }
    for (auto& st : s) st->sync();
    for (auto& st : s2) st->sync();
    if (r > 0) best = std::min(best, std::chrono::duration<double>(Clock::now() - t).count());
  }
  return gbs(bytes * gpus.size() * (way == Way::both ? 2 : 1), best);
}

// One peer copy of `bytes` from GPU `src` to GPU `dst` (GB/s), best of kReps,
// timed with events on a stream of the sender.
double probe_peer_pair(int src, int dst, size_t bytes) {
  LAB_CUDA_CHECK(cudaSetDevice(dst));
  lab::cuda::DeviceBuffer<char> to(bytes);
  LAB_CUDA_CHECK(cudaSetDevice(src));
  lab::cuda::DeviceBuffer<char> from(bytes);
  lab::cuda::Stream s;
  lab::cuda::Event a, b;
  LAB_CUDA_CHECK(cudaMemcpyPeerAsync(to.data(), dst, from.data(), src, bytes, s.get()));  // warm-up
  s.sync();
  double best = 1e30;
  for (int r = 0; r < kReps; ++r) {
    a.record(s.get());
    LAB_CUDA_CHECK(cudaMemcpyPeerAsync(to.data(), dst, from.data(), src, bytes, s.get()));
    b.record(s.get());
    b.sync();
    best = std::min(best, b.seconds_since(a));
  }
  return gbs(bytes, best);
}

// Every GPU sending to every other at once, one stream per pair (GB/s, the sum
// over all pairs). Each GPU sends `bytes` in all, split over its peers, and
// receives as much, so each holds about twice `bytes`.
double probe_peer_all(const std::vector<int>& gpus, size_t bytes) {
  const size_t g = gpus.size(), part = std::max<size_t>(1, bytes / (g - 1));
  std::vector<std::unique_ptr<lab::cuda::DeviceBuffer<char>>> from, to;  // to: [receiver * g + sender]
  std::vector<std::unique_ptr<lab::cuda::Stream>> s;                     // s: [sender * g + receiver]
  for (size_t i = 0; i < g; ++i) {
    LAB_CUDA_CHECK(cudaSetDevice(gpus[i]));
    from.push_back(std::make_unique<lab::cuda::DeviceBuffer<char>>(part));
    for (size_t j = 0; j < g; ++j) {
      to.push_back(std::make_unique<lab::cuda::DeviceBuffer<char>>(i == j ? 0 : part));
      s.push_back(std::make_unique<lab::cuda::Stream>());
    }
  }
  double best = 1e30;
  for (int r = 0; r < kReps + 1; ++r) {  // the first round warms up
    const auto t = Clock::now();
    for (size_t i = 0; i < g; ++i) {
      LAB_CUDA_CHECK(cudaSetDevice(gpus[i]));
      for (size_t j = 0; j < g; ++j)
        if (i != j)
          LAB_CUDA_CHECK(cudaMemcpyPeerAsync(to[j * g + i]->data(), gpus[j], from[i]->data(), gpus[i], part,
                                             s[i * g + j]->get()));
    }
    for (auto& st : s) st->sync();
    if (r > 0) best = std::min(best, std::chrono::duration<double>(Clock::now() - t).count());
  }
  return gbs(part * g * (g - 1), best);
}

double probe_host_memcpy(size_t bytes, int threads) {
  std::vector<char> src(bytes, 1);
  PinnedHost dst(bytes);
  double best = 1e30;
  for (int r = 0; r < kReps + 1; ++r) {
    const auto t = Clock::now();
    std::vector<std::thread> ts;
    const size_t part = (bytes + size_t(threads) - 1) / size_t(threads);
    for (int i = 0; i < threads; ++i)
      ts.emplace_back([&, i] {
        const size_t lo = std::min(bytes, part * size_t(i)), hi = std::min(bytes, lo + part);
        std::memcpy(static_cast<char*>(dst.p) + lo, src.data() + lo, hi - lo);
      });
    for (auto& th : ts) th.join();
    if (r > 0) best = std::min(best, std::chrono::duration<double>(Clock::now() - t).count());
  }
  return gbs(bytes, best);
}

// Device-resident cublasDgemm, C (m x n) <- A (m x k) B (k x n) + beta C, on
// random doubles, on each GPU of `gpus` at the same time (one host thread
// each; all of them set up before any is timed): each GPU's median rate in
// TFLOP/s. With several GPUs this is the rate each keeps while the others run
// too (they share the node's power and cooling), the product rate of the
// multi-GPU bounds.
//
// sustain_s > 0: instead, the products run back to back for sustain_s seconds
// and `windows` gets each GPU's rate over each half second of it, in order
// (whether a GPU keeps its rate as long as a large call of step07 lasts, or
// slows as it heats); the rate returned is the median of the windows.
std::vector<double> probe_dgemm(const std::vector<int>& gpus, int64_t m, int64_t n, int64_t k, double beta,
                                double sustain_s = 0, std::vector<std::vector<double>>* windows = nullptr) {
  lab::Matrix A(m, k), B(k, n), C(m, n);
  A.fill_random(1);
  B.fill_random(2);
  C.fill_random(3);
  const size_t g = gpus.size();
  std::vector<double> tflops(g, 0.0);
  std::vector<std::string> errors(g);
  std::mutex mu;
  std::condition_variable ready_cv;
  size_t ready = 0;
  auto run = [&](size_t i) {
    try {
      LAB_CUDA_CHECK(cudaSetDevice(gpus[i]));
      const lab::cuda::DeviceMatrix dA = lab::cuda::DeviceMatrix::from_host(A.cview());
      const lab::cuda::DeviceMatrix dB = lab::cuda::DeviceMatrix::from_host(B.cview());
      lab::cuda::DeviceMatrix dC = lab::cuda::DeviceMatrix::from_host(C.cview());
      lab::cuda::CublasHandle h;
      lab::cuda::Stream s;
      const double one = 1.0;
      auto call = [&] {
        LAB_CUDA_CHECK(cublasDgemm_64(h.on(s.get()), CUBLAS_OP_N, CUBLAS_OP_N, m, n, k, &one, dA.view().data, m,
                                      dB.view().data, k, &beta, dC.view().data, m));
      };
      {
        std::unique_lock<std::mutex> lock(mu);
        ++ready;
        ready_cv.notify_all();
        ready_cv.wait(lock, [&] { return ready >= g; });  // (>=: a failed GPU sets it to g)
      }
      if (sustain_s > 0) {
        call();  // the first call, untimed: cuBLAS's set-up
        s.sync();
        lab::cuda::Event t0, t1;
        t0.record(s.get());
        call();
        t1.record(s.get());
        t1.sync();
        const int batch = std::max(1, int(0.5 / std::max(1e-6, t1.seconds_since(t0))));
        std::vector<double> rates;
        for (double spent = 0; spent < sustain_s;) {
          t0.record(s.get());
          for (int c = 0; c < batch; ++c) call();
          t1.record(s.get());
          t1.sync();
          const double dt = t1.seconds_since(t0);
          spent += dt;
          rates.push_back(lab::gflops(m, n, k, dt / batch) / 1e3);
        }
        std::vector<double> sorted = rates;
        std::sort(sorted.begin(), sorted.end());
        tflops[i] = sorted[sorted.size() / 2];
        if (windows) (*windows)[i] = std::move(rates);
      } else {
        lab::TimingOptions o;
        o.min_reps = 3;
        o.min_time_s = 1.0;
        tflops[i] = lab::gflops(m, n, k, lab::cuda::time_device(call, s.get(), o).median_s) / 1e3;
      }
    } catch (const std::exception& e) {
      std::lock_guard<std::mutex> lock(mu);
      errors[i] = e.what();
      ready = g;  // the others need not wait for this one
      ready_cv.notify_all();
    }
  };
  if (windows) windows->assign(g, {});
  std::vector<std::thread> threads;
  for (size_t i = 0; i < g; ++i) threads.emplace_back(run, i);
  for (auto& t : threads) t.join();
  for (size_t i = 0; i < g; ++i)
    if (!errors[i].empty()) throw std::runtime_error("cublasDgemm on GPU " + std::to_string(gpus[i]) + ": " + errors[i]);
  return tflops;
}

// "tm x tn x tk, T tiles": the plan's tile and how many.
std::string plan_shape(const lab::step07::Plan& plan) {
  char shape[64];
  std::snprintf(shape, sizeof shape, "%lldx%lldx%lld, %lld tiles", (long long)plan.shape.tm,
                (long long)plan.shape.tn, (long long)plan.shape.tk, (long long)plan.tiles());
  return shape;
}

// What each GPU gets when G of them work at once: its share of the host's
// all-at-once copy rates (GB/s), its rate to its peers with every pair copying
// at once (GB/s, 0 where not measured) and its product rate (TFLOP/s).
struct Rates {
  double h2d = 0, d2h = 0, both = 0, peer = 0, tflops = 0;
};

// The time of each part of one call on G GPUs (seconds; 0 where a part has no bytes).
struct Bound {
  double h2d = 0, d2h = 0, both = 0, peer = 0, gemm = 0;
  double seconds() const { return std::max({h2d, d2h, both, peer, gemm}); }
};

// The team grid of panel sharing: gr x gc = G, gr the largest divisor of G
// not above sqrt(G) (2 -> 1x2, 4 -> 2x2, 8 -> 2x4).
int team_rows(int g) {
  int rows = 1;
  for (int d = 1; d * d <= g; ++d)
    if (g % d == 0) rows = d;
  return rows;
}

// Without sharing: every tile's panels come from the host (plan.hpp's bytes),
// the copies split over the G GPUs, C in and back.
Bound bound_plain(const lab::step07::Plan& plan, int g, const Rates& r) {
  Bound b;
  const double in = plan.h2d_bytes(true) / g, out = plan.d2h_bytes() / g;
  b.h2d = in / (r.h2d * 1e9);
  b.d2h = out / (r.d2h * 1e9);
  b.both = (in + out) / (r.both * 1e9);
  b.gemm = 2.0 * double(plan.m) * double(plan.n) * double(plan.k) / g / (r.tflops * 1e12);
  return b;
}

// With sharing (the file's header): per tile 1/gc of A's panels and 1/gr of
// B's from the host, the rest from the team over the peer links.
Bound bound_sharing(const lab::step07::Plan& plan, int g, const Rates& r) {
  const int gr = team_rows(g), gc = g / gr;
  const double a = 8.0 * double(plan.tiles_n) * double(plan.m) * double(plan.k);  // A's panels of every tile
  const double bb = 8.0 * double(plan.tiles_m) * double(plan.k) * double(plan.n);  // B's panels of every tile
  const double c = 8.0 * double(plan.m) * double(plan.n);
  const double in = (a / gc + bb / gr + c) / g, out = c / g;
  const double peer = ((gc - 1) * a / gc + (gr - 1) * bb / gr) / g;
  Bound b = bound_plain(plan, g, r);
  b.h2d = in / (r.h2d * 1e9);
  b.d2h = out / (r.d2h * 1e9);
  b.both = (in + out) / (r.both * 1e9);
  b.peer = peer > 0 ? peer / (r.peer * 1e9) : 0.0;
  return b;
}

// The two bounds on G GPUs for every size, as a table and as CSV rows
// ("bound pinned n=N on G GPUs" and "bound pinned, sharing n=N on G GPUs",
// followed by `suffix`). Sharing needs a peer rate.
// The plan of an n x n x n product on g GPUs of `cap` bytes each: one tile per
// stream without sharing, one per GPU of a super tile with it (no GPU idle).
lab::step07::Plan plan_on(int64_t n, int g, int streams, size_t cap, bool sharing) {
  lab::step07::Options o;
  o.streams_per_gpu = streams;
  return lab::step07::make_plan(n, n, n, o, cap, streams, sharing ? g : g * streams, false);
}

void bound_tables(const std::vector<int64_t>& sizes, int g, int streams, size_t cap, const Rates& r,
                  const std::string& suffix) {
  std::printf("  %6s %-8s %-34s %8s %8s %8s %8s %8s %9s\n", "n", "scheme", "plan", "H2D_s", "D2H_s", "both_s",
              "peer_s", "gemm_s", "bound");
  for (int64_t n : sizes) {
    for (bool sharing : {false, true}) {
      if (sharing && r.peer <= 0) continue;
      const auto plan = plan_on(n, g, streams, cap, sharing);
      const Bound b = sharing ? bound_sharing(plan, g, r) : bound_plain(plan, g, r);
      const double tf = lab::gflops(n, n, n, b.seconds()) / 1e3;
      char peer[32] = "";
      if (sharing) std::snprintf(peer, sizeof peer, "%.3f", b.peer);
      std::printf("  %6lld %-8s %-34s %8.3f %8.3f %8.3f %8s %8.3f %6.1f TF\n", (long long)n,
                  sharing ? "sharing" : "plain", plan_shape(plan).c_str(), b.h2d, b.d2h, b.both, peer, b.gemm, tf);
      rows.push_back({std::string("bound pinned") + (sharing ? ", sharing" : "") + " n=" + std::to_string(n) +
                          " on " + std::to_string(g) + " GPUs" + suffix,
                      -1, tf, "TFLOP/s"});
    }
  }
  if (r.peer <= 0) std::printf("  (no sharing line: no peer rate was measured here)\n");
}

// "--model-gpus 8": a whole number of GPUs from 1 to 1024, or UsageError.
// "8": a whole number from 1 to `most` (digits only), or UsageError naming the
// option and what the number counts ("GPUs", "seconds").
int parse_whole(const std::string& flag, const std::string& s, long most, const std::string& what) {
  char* end = nullptr;
  errno = 0;
  const long v = std::strtol(s.c_str(), &end, 10);
  if (s.empty() || !std::isdigit(static_cast<unsigned char>(s[0])) || *end != '\0' || errno == ERANGE || v < 1 ||
      v > most)
    throw lab::UsageError(flag + " expects a whole number of " + what + " from 1 to " + std::to_string(most) +
                          ", got '" + s + "'");
  return int(v);
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<int> gpus;
  size_t bytes = size_t(1) << 30;
  int64_t dgemm_n = 8192;
  std::vector<int64_t> sizes{8192, 16384, 32768};
  int streams = 2;
  int model_gpus = 0;
  std::vector<int64_t> depths;
  int sustain_s = 0;
  std::string csv;
  try {
    for (int i = 1; i < argc; ++i) {
      const std::string a = argv[i];
      auto value = [&]() -> std::string {
        if (i + 1 >= argc) throw lab::UsageError("option " + a + " needs a value");
        return argv[++i];
      };
      if (a == "--gpus") {
        gpus = lab::parse_gpu_list(a, value());
      } else if (a == "--bytes") {
        bytes = size_t(parse_size(a, value()));
      } else if (a == "--dgemm-n") {
        dgemm_n = parse_size(a, value());
      } else if (a == "--sizes") {
        sizes.clear();
        for (const auto& s : lab::split_list(value())) sizes.push_back(parse_size(a, s));
      } else if (a == "--streams") {
        const int64_t v = parse_size(a, value());
        if (v > 1024) throw lab::UsageError(a + " takes 1 to 1024 streams, got " + std::to_string(v));
        streams = int(v);
      } else if (a == "--model-gpus") {
        model_gpus = parse_whole(a, value(), 1024, "GPUs");
      } else if (a == "--depths") {
        depths.clear();
        for (const auto& d : lab::split_list(value())) depths.push_back(parse_size(a, d));
        if (depths.empty()) throw lab::UsageError("--depths needs at least one depth, e.g. 2048,4096");
      } else if (a == "--sustain") {
        sustain_s = parse_whole(a, value(), 600, "seconds");
      } else if (a == "--csv") {
        csv = value();
        if (csv.empty()) throw lab::UsageError("--csv needs a file name");
        lab::require_writable(csv, "--csv");
      } else if (a == "--help" || a == "-h") {
        std::printf(
            "usage: step07_probe [--gpus 0,1] [--bytes 1G] [--dgemm-n 8192] [--sizes 8192,16384,32768] "
            "[--streams 2] [--model-gpus N] [--depths D,...] [--sustain S] [--csv FILE]\n"
            "  --model-gpus N  also the bounds for a host of N such GPUs, on paper: each GPU's share of the\n"
            "                  host copy rates and its peer rate as measured here (1 to 1024)\n"
            "  --depths D,...  also cublasDgemm at the plan's tile (largest of --sizes) with panels D deep\n"
            "                  (beta = 1), all GPUs listed at once: the product rate each panel depth allows\n"
            "  --sustain S     also the plan's panel products (largest of --sizes) back to back for S seconds\n"
            "                  (1 to 600), all GPUs listed at once: each GPU's rate over each half second\n");
        return 0;
      } else {
        throw lab::UsageError("unknown option '" + a + "' (see --help)");
      }
    }
    if (sizes.empty()) throw lab::UsageError("--sizes needs at least one size, e.g. 16384,32768");
    const int64_t largest = *std::max_element(sizes.begin(), sizes.end());
    for (int64_t d : depths)
      if (d > largest)
        throw lab::UsageError("--depths: a panel " + std::to_string(d) + " deep is deeper than the largest of --sizes (" +
                              std::to_string(largest) + ")");
  } catch (const lab::UsageError& e) {
    std::cerr << "step07_probe: error: " << e.what() << "\n";
    return 2;
  }
  std::string why;
  if (!lab::cuda::device_available(&why)) {
    std::printf("step07_probe: skipped: %s\n", why.c_str());
    return 77;
  }
  try {
    int count = 0;
    LAB_CUDA_CHECK(cudaGetDeviceCount(&count));
    if (gpus.empty())
      for (int g = 0; g < count; ++g) gpus.push_back(g);
    for (int g : gpus)
      if (g >= count) throw lab::UsageError("--gpus: GPU " + std::to_string(g) + " does not exist");
    std::printf("# step07_probe: %zu GPU(s), copies of %.2f GiB, best of %d\n", gpus.size(),
                double(bytes) / double(1 << 30), kReps);
    double h2d = 1e30, d2h = 1e30, both = 1e30;
    for (int g : gpus) {
      double a = 0, b = 0, c = 0;
      probe_gpu(g, bytes, &a, &b, &c);
      h2d = std::min(h2d, a);
      d2h = std::min(d2h, b);
      both = std::min(both, c);
    }
    double all_h2d = h2d, all_d2h = d2h, all_both = 0;
    if (gpus.size() > 1) {
      all_h2d = probe_all_at_once(gpus, bytes, Way::h2d);
      all_d2h = probe_all_at_once(gpus, bytes, Way::d2h);
      report("pinned H2D, all GPUs at once (sum)", -1, all_h2d, "GB/s");
      report("pinned D2H, all GPUs at once (sum)", -1, all_d2h, "GB/s");
      all_both = probe_all_at_once(gpus, bytes, Way::both);
      report("pinned both ways, all GPUs at once (sum)", -1, all_both, "GB/s");
    }
    // Peer copies: between the GPUs listed, each once, where all of them reach each other.
    std::vector<int> distinct;
    for (int g : gpus)
      if (std::find(distinct.begin(), distinct.end(), g) == distinct.end()) distinct.push_back(g);
    double peer_per_gpu = 0;  // each GPU's sending rate with every pair copying at once
    if (distinct.size() > 1) {
      if (lab::cuda::unreachable(distinct).empty()) {
        lab::cuda::enable_peers(distinct);
        report("peer copy, one pair (GPU " + std::to_string(distinct[0]) + " to " + std::to_string(distinct[1]) +
                   ")",
               -1, probe_peer_pair(distinct[0], distinct[1], bytes), "GB/s");
        const double all = probe_peer_all(distinct, bytes);
        report("peer copy, all pairs at once (sum)", -1, all, "GB/s");
        peer_per_gpu = all / double(distinct.size());
      } else {
        std::printf("  (no peer copies: not every pair of the GPUs listed can access each other's memory)\n");
      }
    }
    const int cores = int(std::max(1u, std::thread::hardware_concurrency()));
    const double mc1 = probe_host_memcpy(bytes, 1), mcn = probe_host_memcpy(bytes, cores);
    report("host memcpy pageable -> pinned, 1 thread", -1, mc1, "GB/s");
    report("host memcpy pageable -> pinned, " + std::to_string(cores) + " threads", -1, mcn, "GB/s");
    const double tflops = probe_dgemm({gpus.front()}, dgemm_n, dgemm_n, dgemm_n, 0.0).front();
    report("device-resident cublasDgemm n=" + std::to_string(dgemm_n), gpus.front(), tflops, "TFLOP/s");
    // The multi-GPU bounds take the rate of the slowest GPU with all of them
    // multiplying at once: the plans deal the tiles evenly, so it finishes last.
    double tflops_all = tflops;
    if (distinct.size() > 1) {
      const std::vector<double> each = probe_dgemm(distinct, dgemm_n, dgemm_n, dgemm_n, 0.0);
      for (size_t i = 0; i < each.size(); ++i)
        report("device-resident cublasDgemm n=" + std::to_string(dgemm_n) + ", all GPUs at once", distinct[i],
               each[i], "TFLOP/s");
      tflops_all = *std::min_element(each.begin(), each.end());
      report("device-resident cublasDgemm n=" + std::to_string(dgemm_n) + ", all GPUs at once (slowest)", -1,
             tflops_all, "TFLOP/s");
    }
    // The products step07 runs on all GPUs are not square: a tm x tn tile times
    // a tk-deep panel, added to C (beta = 1). Their rate, all GPUs at once, at
    // the plan of the largest size: a second product rate for the bounds (the
    // products alone cannot go faster than this, whatever the copies do).
    LAB_CUDA_CHECK(cudaSetDevice(gpus.front()));
    size_t free_b = 0, total_b = 0;
    LAB_CUDA_CHECK(cudaMemGetInfo(&free_b, &total_b));
    double tflops_panel = 0;
    if (distinct.size() > 1 && distinct.size() == gpus.size() && !sizes.empty()) {
      try {
        const int64_t n = *std::max_element(sizes.begin(), sizes.end());
        const auto shape = plan_on(n, int(gpus.size()), streams, free_b / 10 * 9, true).shape;
        const std::vector<double> each = probe_dgemm(distinct, shape.tm, shape.tn, shape.tk, 1.0);
        tflops_panel = *std::min_element(each.begin(), each.end());
        report("device-resident cublasDgemm " + std::to_string(shape.tm) + "x" + std::to_string(shape.tn) + "x" +
                   std::to_string(shape.tk) + " (the plan's panel products, beta = 1), all GPUs at once (slowest)",
               -1, tflops_panel, "TFLOP/s");
      } catch (const std::exception& e) {
        std::printf("  (no panel-shaped product rate: %s)\n", e.what());
        tflops_panel = 0;
      }
    }

    // --depths and --sustain: the plan of the largest size on the GPUs listed.
    const int64_t largest = *std::max_element(sizes.begin(), sizes.end());
    const auto largest_shape = [&] {
      return plan_on(largest, int(distinct.size()), streams, free_b / 10 * 9, distinct.size() > 1).shape;
    };

    // --depths: the plan's tile with panels of other depths, the slowest GPU of all at once.
    if (!depths.empty()) {
      const int64_t n = largest;
      const auto shape = largest_shape();
      std::printf("\n# cublasDgemm at the plan's tile for n = %lld (%lld x %lld) with panels of each depth, "
                  "beta = 1, %zu GPU(s) at once (slowest)\n",
                  (long long)n, (long long)shape.tm, (long long)shape.tn, distinct.size());
      for (int64_t d : depths) {
        const std::vector<double> each = probe_dgemm(distinct, shape.tm, shape.tn, d, 1.0);
        report("device-resident cublasDgemm " + std::to_string(shape.tm) + "x" + std::to_string(shape.tn) + "x" +
                   std::to_string(d) + " (beta = 1), " + std::to_string(distinct.size()) + " GPU(s) at once (slowest)",
               -1, *std::min_element(each.begin(), each.end()), "TFLOP/s");
      }
    }

    // --sustain: the plan's panel products back to back, as long as a large call
    // lasts: does each GPU keep the rate of the short measurements above?
    double tflops_sustained = 0;  // the slowest GPU's median rate over the sustained run
    if (sustain_s > 0) {
      const int64_t n = largest;
      const auto shape = largest_shape();
      std::printf("\n# cublasDgemm %lld x %lld x %lld (the plan's panel products for n = %lld, beta = 1) back to "
                  "back for %d s, %zu GPU(s) at once: TFLOP/s over each half second\n",
                  (long long)shape.tm, (long long)shape.tn, (long long)shape.tk, (long long)n, sustain_s,
                  distinct.size());
      std::vector<std::vector<double>> windows;
      const std::vector<double> each =
          probe_dgemm(distinct, shape.tm, shape.tn, shape.tk, 1.0, double(sustain_s), &windows);
      for (size_t i = 0; i < distinct.size(); ++i) {
        const auto& w = windows[i];
        std::printf("  GPU %d:", distinct[i]);
        for (double r : w) std::printf(" %.1f", r);
        std::printf("\n");
        report("sustained panel products, median of " + std::to_string(w.size()) + " half seconds", distinct[i],
               each[i], "TFLOP/s");
        report("sustained panel products, first half second", distinct[i], w.front(), "TFLOP/s");
        report("sustained panel products, last half second", distinct[i], w.back(), "TFLOP/s");
      }
      tflops_sustained = *std::min_element(each.begin(), each.end());
      report("sustained panel products, all GPUs at once (slowest median)", -1, tflops_sustained, "TFLOP/s");
    }

    // The bound: PCIe time (each direction on its own engine) against compute.
    std::printf("\n# bound of step07 (one GPU, %d streams, tiles for all its memory), pinned and pageable:\n",
                streams);
    std::printf("  %6s %-34s %8s %8s %8s %9s %12s\n", "n", "plan", "H2D_s", "D2H_s", "gemm_s", "bound",
                "pageable");
    LAB_CUDA_CHECK(cudaSetDevice(gpus.front()));
    for (int64_t n : sizes) {
      lab::step07::Options o;
      o.streams_per_gpu = streams;
      const auto plan = lab::step07::make_plan(n, n, n, o, free_b / 10 * 9, streams, 1, false);
      const double t_h2d = plan.h2d_bytes(true) / (h2d * 1e9), t_d2h = plan.d2h_bytes() / (d2h * 1e9);
      const double t_gemm = 2.0 * double(n) * double(n) * double(n) / (tflops * 1e12);
      const double bound = std::max({t_h2d, t_d2h, t_gemm});
      // Pageable: every byte also passes the host's memcpy (all cores).
      const double t_host = (plan.h2d_bytes(true) + plan.d2h_bytes()) / (mcn * 1e9);
      const double bound_pg = std::max(bound, t_host);
      std::printf("  %6lld %-34s %8.3f %8.3f %8.3f %6.1f TF %9.1f TF\n", (long long)n, plan_shape(plan).c_str(),
                  t_h2d, t_d2h, t_gemm, lab::gflops(n, n, n, bound) / 1e3, lab::gflops(n, n, n, bound_pg) / 1e3);
      rows.push_back({"bound pinned n=" + std::to_string(n), gpus.front(), lab::gflops(n, n, n, bound) / 1e3,
                      "TFLOP/s"});
      rows.push_back({"bound pageable n=" + std::to_string(n), gpus.front(),
                      lab::gflops(n, n, n, bound_pg) / 1e3, "TFLOP/s"});
    }
    // Every GPU listed (the multigpu variant): the C tiles dealt over all streams of
    // all GPUs; each GPU gets its share of the host's aggregate rates, the product divides.
    if (gpus.size() > 1 && distinct.size() == gpus.size()) {
      const int g = int(gpus.size());
      std::printf("\n# bound of step07 on all %d GPUs listed (%d streams each), pinned: each GPU's share of the "
                  "aggregate copy rates above, the product split %d ways at the slowest GPU's rate with all "
                  "multiplying at once; without and with panel sharing\n",
                  g, streams, g);
      bound_tables(sizes, g, streams, free_b / 10 * 9,
                   Rates{all_h2d / g, all_d2h / g, all_both / g, peer_per_gpu, tflops_all}, "");
      if (tflops_panel > 0) {
        std::printf("\n# the same bounds with the products at the rate of the plan's panel products (%.1f TFLOP/s "
                    "a GPU, all at once), not of square ones\n",
                    tflops_panel);
        bound_tables(sizes, g, streams, free_b / 10 * 9,
                     Rates{all_h2d / g, all_d2h / g, all_both / g, peer_per_gpu, tflops_panel},
                     " at the panel rate");
      }
      if (tflops_sustained > 0) {
        std::printf("\n# the same bounds with the products at their sustained rate (%.1f TFLOP/s a GPU, all at "
                    "once, the median over --sustain %d s): the ceiling of a call that long\n",
                    tflops_sustained, sustain_s);
        bound_tables(sizes, g, streams, free_b / 10 * 9,
                     Rates{all_h2d / g, all_d2h / g, all_both / g, peer_per_gpu, tflops_sustained},
                     " at the sustained rate");
      }
    }
    // On paper: a host of N such GPUs, each copying as one of these does with all at once.
    if (model_gpus > 0) {
      const double g = double(gpus.size());
      const Rates per_gpu = gpus.size() > 1 ? Rates{all_h2d / g, all_d2h / g, all_both / g, peer_per_gpu, tflops_all}
                                            : Rates{h2d, d2h, both, 0.0, tflops};
      std::printf("\n# on paper: step07 on %d such GPUs (%d streams each), pinned: per GPU %.1f GB/s in, "
                  "%.1f out, %.1f both ways, %.1f to its peers, %.1f TFLOP/s\n",
                  model_gpus, streams, per_gpu.h2d, per_gpu.d2h, per_gpu.both, per_gpu.peer, per_gpu.tflops);
      bound_tables(sizes, model_gpus, streams, free_b / 10 * 9, per_gpu, " (on paper)");
    }
    if (!csv.empty()) {
      std::string text = "what,gpu,value,unit\n";
      char line[256];
      for (const Row& r : rows) {
        // (quoted: most descriptions hold a comma)
        std::snprintf(line, sizeof line, "\"%s\",%d,%.4f,%s\n", r.what.c_str(), r.gpu, r.value, r.unit.c_str());
        text += line;
      }
      lab::write_file_whole(csv, text, "--csv");
    }
  } catch (const lab::UsageError& e) {
    std::cerr << "step07_probe: error: " << e.what() << "\n";
    return 2;
  } catch (const std::exception& e) {
    std::cerr << "step07_probe: error: " << e.what() << "\n";
    return 4;
  }
  return 0;
}
