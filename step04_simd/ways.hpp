// step04_simd internals: how the threads of one call share the five loops.
// Given code (ways.cpp); the five loops (simd.cpp) read it.
//
// The threads are split the way BLIS splits them ("ways of parallelism"):
//   jc ways: groups of threads, each with its own columns of C and its own
//            packed kc x nc panel of B (each group's panel in its share of L3);
//   ic ways: inside a group, each way takes its own rows of C, in blocks of mc
//            rows (mc stays the size that fits L2, whatever the thread count);
//   jr ways: the threads of one ic way share one packed block of A and split
//            its JR loop (the NR-column micro-panels of the group's B panel).
// jc * ic * jr is the thread count. The threads that share a panel wait for
// each other (Barrier), never the whole team.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "simd.hpp"

namespace lab::step04 {
inline namespace LAB_IMPL_NS {

struct Ways {
  int jc = 1, ic = 1, jr = 1;
  int threads() const { return jc * ic * jr; }
};

/// How one call cuts its work: the ways and the blocks they run with.
struct Layout {
  Ways ways;
  int64_t mc, nc, kc;  ///< the blocks (mc a multiple of mr, nc of nr)
};

/// The layout of an m x n x k product on `threads` threads (jc * ic * jr ==
/// threads, for any threads >= 1) with an mr x nr micro-kernel, the cache
/// blocks `blk` (blocking_for) and an L3 of `l3_bytes`. Every factorization
/// of the thread count is weighed by a cost model (ways.cpp) and the cheapest
/// kept: the work of the busiest thread, plus what its rows (B read again per
/// mc rows), its columns (A packed again per group) and the sharing of an A
/// block cost.
Layout layout_for(int threads, int64_t m, int64_t n, int64_t k, int mr, int nr, Blocking blk,
                  int64_t l3_bytes);

/// The layout of a call: layout_for on the threads an m x n x k product gets
/// of `available` (threads_for; pass 1 from inside a parallel region), on the
/// L3 this machine reports; or the ways force_ways set.
Layout layout_for_call(int available, int64_t m, int64_t n, int64_t k, int mr, int nr, Blocking blk);

/// "ways jc 2 x ic 8 x jr 4 (64 threads), mc 512, nc 2058, kc 216"
std::string describe(const Layout& layout);

/// Part `part` of `parts` nearly equal parts of 0..count-1, as [first, last):
/// the sizes differ by at most one (and every part is empty only when count is 0).
std::pair<int64_t, int64_t> share(int64_t count, int64_t part, int64_t parts);

/// For tests and experiments: while set, every call from outside a parallel
/// region runs on jc * ic * jr threads in exactly these ways, whatever its
/// size; std::nullopt (the default) goes back to layout_for's choice.
void force_ways(std::optional<Ways> ways);

/// For experiments (step04_ways_sweep --waits): while on, each Barrier::wait
/// adds the seconds it took to its OpenMP thread's total (thread numbers below
/// kCountedThreads). Off by default, when a wait costs one more relaxed load.
constexpr int kCountedThreads = 1024;
void count_waits(bool on);
/// Threads 0..threads-1's seconds in waits since the last take (or since
/// count_waits(true)), set back to zero. Call it outside parallel regions.
std::vector<double> take_wait_seconds(int threads);

/// A barrier for `count` threads: they spin briefly, then sleep until the last
/// one arrives (a futex on Linux, so the kernel runs a woken thread soon even
/// on a busy machine; elsewhere they yield the core). A barrier of one thread
/// returns at once.
class alignas(64) Barrier {
 public:
  explicit Barrier(int count = 1) : count_(count) {}
  /// Sets the count, before any thread waits.
  void reset(int count) { count_ = count; }
  void wait();

 private:
  void arrive_and_wait();
  int count_;
  std::atomic<int> arrived_{0};
  std::atomic<int> sleepers_{0};  ///< threads asleep (or about to be) on generation_
  std::atomic<unsigned> generation_{0};
};

/// One thread's place in the layout: which columns of C its group owns, which
/// rows its ic way owns, its rank among the threads of its group (who share
/// the B panel) and of its A block (the jr ways), their barriers and buffers.
struct Seat {
  std::pair<int64_t, int64_t> cols;  ///< its group's columns of C: [first, last)
  std::pair<int64_t, int64_t> rows;  ///< its ic way's rows of C: [first, last)
  int in_group, group_size;          ///< rank among the threads sharing the B panel
  int in_block, block_size;          ///< rank among the threads sharing the A block (jr)
  Barrier* group;                    ///< the threads sharing the B panel
  Barrier* block;                    ///< the threads sharing the A block
  double* b;                         ///< the group's B panel (kc x nc)
  double* a;                         ///< the A block (mc x kc) of its ic way
};

/// Thread `t`'s seat (0 <= t < layout.ways.threads()) in an m x n product:
/// its ranges and ranks; no barriers or buffers (nullptr).
Seat place(const Layout& layout, int mr, int nr, int64_t m, int64_t n, int t);

/// The seats of one call: barriers for each group and each A block, and the
/// packing buffers (pack_buffers: the calling thread's, kept from call to
/// call; the threads that pack a buffer are the first to touch its pages).
class Team {
 public:
  Team(const Layout& layout, int mr, int nr, int64_t m, int64_t n);
  /// Thread `t` (0 <= t < threads) of the team: place(), with its barriers and buffers.
  Seat seat(int t) const;

 private:
  Layout layout_;
  int mr_, nr_;
  int64_t m_, n_;
  // One barrier per group, then one per A block; a team of one thread has
  // only `alone_` (a call allocates nothing then). Mutable: seats wait on them.
  mutable Barrier alone_;
  std::unique_ptr<Barrier[]> barriers_;
  Barrier *groups_, *blocks_;
  double *b_, *a_;
  int64_t b_stride_, a_stride_;
};

}  // namespace LAB_IMPL_NS
}  // namespace lab::step04
