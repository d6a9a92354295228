// step04_simd — the block sizes of the five loops, from the cache sizes this
// machine reports (lab::cache_info reads them once, at run time). Nothing to do here;
// the handout works the numbers through for the lab's CPUs.
//
// Each block is sized for the cache level where it is reused:
//   kc: the kc x NR micro-panel of B is read once per MR rows of A by the
//       micro-kernel (loop 1). It gets half of L1d; the other half is for the
//       MR x kc micro-panel of A streaming past it and the tile of C.
//   mc: the packed mc x kc block of A is read once per NR columns (loop 2). It
//       gets half of L2; B's micro-panels and C's tiles pass through the rest.
//   nc: the packed kc x nc panel of B is read once per mc rows (loop 3), by
//       every thread. It gets half of L3, and nc at most 4096: a wider panel
//       saves no packing (A is repacked once per nc columns, a cost of
//       1 / (2 nc) per flop, under 0.1 % at 4096).
// Every pass of loop 4 (one kc slice) reads the C it sweeps and writes it
// back: m x nc per group of threads with fixed ways, mc x nc per thread with
// dealt blocks. Where that fits in half of L3 the traffic stays in L3; where it
// does not, each pass streams C from memory, and the tile of C costs each
// micro-kernel call a fixed time. Then kc doubles (B's micro-panel takes all
// of L1d and streams from L2 for what does not fit) and A's block takes 7/8 of
// L2: half the passes over C. On the Zen 4 VM at n = 2048 that won 2-3 %
// (NOTES.md); where C stays in L3 the deeper slice won nothing.
#include <omp.h>

#include <algorithm>
#include <array>
#include <cstdio>
#include <iterator>
#include <string>

#include "microkernel.hpp"
#include "ways.hpp"

namespace {

int64_t round_down(int64_t value, int64_t multiple) { return std::max(multiple, value / multiple * multiple); }

}  // namespace

lab::step04::Blocking lab::step04::blocking_for(Isa isa, const CacheInfo& caches) {
  const MicroKernel uk = microkernel(isa);
  constexpr int64_t kDouble = sizeof(double);
  const int64_t kc = std::clamp<int64_t>(round_down(caches.l1d / 2 / (kDouble * uk.nr), 8), 32, 1024);
  const int64_t mc = std::min<int64_t>(round_down(caches.l2 / 2 / (kDouble * kc), uk.mr), 4096);
  const int64_t nc = std::min(round_down(caches.l3 / 2 / (kDouble * kc), uk.nr), round_down(4096, uk.nr));
  return {mc, nc, kc};
}

lab::step04::Blocking lab::step04::deep_blocking_for(Isa isa, const CacheInfo& caches) {
  const MicroKernel uk = microkernel(isa);
  constexpr int64_t kDouble = sizeof(double);
  const int64_t kc = std::clamp<int64_t>(round_down(caches.l1d / (kDouble * uk.nr), 8), 32, 1024);
  const int64_t mc = std::min<int64_t>(round_down(caches.l2 / 8 * 7 / (kDouble * kc), uk.mr), 4096);
  const int64_t nc = std::min(round_down(caches.l3 / 2 / (kDouble * kc), uk.nr), round_down(4096, uk.nr));
  return {mc, nc, kc};
}

lab::step04::Blocking lab::step04::blocking_for_call(Isa isa, const CacheInfo& caches, int threads, int64_t m,
                                                     int64_t n, int64_t k) {
  const Blocking base = blocking_for(isa, caches);
  const MicroKernel uk = microkernel(isa);
  const Layout layout = layout_for(threads, m, n, k, uk.mr, uk.nr, base, caches.l3);
  const double swept = double(c_per_pass(layout, m, n)) * double(sizeof(double));
  return swept <= double(caches.l3) / 2 ? base : deep_blocking_for(isa, caches);
}

int lab::step04::threads_for(int64_t m, int64_t n, int64_t k, int available) {
  // A team of threads costs microseconds to start and at each of its barriers
  // (two per pass of loop 4; on some virtual machines each is a system call of
  // over a microsecond), as much as 64 x 64 x 64 takes on one core. A thread
  // joins for every 2 MFLOP of the product (n = 100 on one thread: about 25 us),
  // so the team's cost stays a small part of what it saves.
  constexpr double kFlopsPerThread = 2e6;
  const double threads = 2.0 * double(m) * double(n) * double(k) / kFlopsPerThread;
  return threads >= available ? available : std::max(1, static_cast<int>(threads));
}

lab::step04::Blocking lab::step04::default_blocking(Isa isa) {
  // Worked out once per process (thread-safe): every call of dgemm asks.
  static const auto per_isa = [] {
    std::array<Blocking, std::size(kIsas)> out{};
    for (Isa i : kIsas) out[static_cast<size_t>(i)] = blocking_for(i, lab::cache_info());
    return out;
  }();
  return per_isa[static_cast<size_t>(isa)];
}

lab::step04::Blocking lab::step04::default_blocking(Isa isa, int available, int64_t m, int64_t n, int64_t k) {
  return blocking_for_call(isa, lab::cache_info(), threads_for(m, n, k, available), m, n, k);
}

lab::step04::Blocking lab::step04::default_blocking(Isa isa, int64_t m, int64_t n, int64_t k) {
  return default_blocking(isa, omp_in_parallel() ? 1 : omp_get_max_threads(), m, n, k);
}

std::string lab::step04::describe_default_blocking(Isa isa) {
  const CacheInfo caches = lab::cache_info();
  const Blocking b = blocking_for(isa, caches), deep = deep_blocking_for(isa, caches);
  char text[200];
  std::snprintf(text, sizeof text,
                "mc %lld, nc %lld, kc %lld; where a pass of kc sweeps over %lld MiB of C: mc %lld, nc %lld, kc %lld",
                static_cast<long long>(b.mc), static_cast<long long>(b.nc), static_cast<long long>(b.kc),
                static_cast<long long>(caches.l3 / 2 >> 20), static_cast<long long>(deep.mc),
                static_cast<long long>(deep.nc), static_cast<long long>(deep.kc));
  return text;
}
