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
  /// Dealt blocks instead of fixed ways (ways is then threads x 1 x 1): C is
  /// cut into blocks of mc x nc, and each thread takes the next block from a
  /// counter (Team::deal) and runs the five loops on it alone, all of k, with
  /// panels of its own, until none is left. No thread waits for another, and
  /// a thread that runs slower (its core shared with other work) takes fewer
  /// blocks instead of holding the others up at the end.
  bool dealt = false;
};

/// The layout of an m x n x k product on `threads` threads with an mr x nr
/// micro-kernel, the cache blocks `blk` (blocking_for) and an L3 of
/// `l3_bytes`: dealt blocks (dealt_layout_for) where the product makes enough
/// of them, else fixed ways (ways_layout_for). One thread: ways 1 x 1 x 1.
Layout layout_for(int threads, int64_t m, int64_t n, int64_t k, int mr, int nr, Blocking blk, int64_t l3_bytes);

/// Fixed ways (jc * ic * jr == threads, for any threads >= 1): every
/// factorization of the thread count is weighed by a cost model (ways.cpp)
/// and the cheapest kept: the work of the busiest thread, plus what its rows
/// (B read again per mc rows), its columns (A packed again per group) and the
/// sharing of an A block cost.
Layout ways_layout_for(int threads, int64_t m, int64_t n, int64_t k, int mr, int nr, Blocking blk,
                       int64_t l3_bytes);

/// Dealt blocks for kDealtMinThreads threads or more: about kDealtPerThread blocks a
/// thread (kDealtPerThread / 2 where that many would be too small), each mc
/// rows of L2 size by as many columns as that count needs, or square where
/// those would be thinner than mc / 4; std::nullopt where even the smaller
/// count needs blocks under kDealtMinSide rows or columns (a product too small
/// to deal: fixed ways share it better). Each thread's own B panel fits its
/// share of half of L3, as a jc way's does.
std::optional<Layout> dealt_layout_for(int threads, int64_t m, int64_t n, int64_t k, int mr, int nr,
                                       Blocking blk, int64_t l3_bytes);
/// About this many blocks a thread: the last ones then end within about an
/// eighth of a thread's share of each other (measured on a 16-core host, NOTES.md).
constexpr int64_t kDealtPerThread = 8;
constexpr int64_t kDealtMinSide = 128;
/// Fewer threads keep fixed ways: a block packs its own panels, which costs
/// more than the fixed ways' packing where each thread's share is large, and
/// a few threads seldom wait long for the slowest of them (NOTES.md: at 2
/// threads on a quiet host fixed ways ran 10 % faster, at 16 on a shared one
/// dealt blocks 25-40 %).
constexpr int kDealtMinThreads = 8;

/// The layout of a call: layout_for on the threads an m x n x k product gets
/// of `available` (threads_for; pass 1 from inside a parallel region), on the
/// L3 this machine reports; or the ways force_ways set.
Layout layout_for_call(int available, int64_t m, int64_t n, int64_t k, int mr, int nr, Blocking blk);

/// The elements of C one pass of kc reads and writes back, all threads
/// together: m x nc for each group of fixed ways (at most all of C), mc x nc
/// for each thread with dealt blocks.
int64_t c_per_pass(const Layout& layout, int64_t m, int64_t n);

/// "ways jc 2 x ic 8 x jr 4 (64 threads), mc 512, nc 2058, kc 216", or for
/// dealt blocks "dealt 112 blocks of mc 592 x nc 266 (16 threads), kc 216"
/// (describe_for: with the block count of an m x n product)
std::string describe(const Layout& layout);
std::string describe_for(const Layout& layout, int64_t m, int64_t n);

/// Part `part` of `parts` nearly equal parts of 0..count-1, as [first, last):
/// the sizes differ by at most one (and every part is empty only when count is 0).
std::pair<int64_t, int64_t> share(int64_t count, int64_t part, int64_t parts);

/// For tests and experiments: while set, every call from outside a parallel
/// region runs on jc * ic * jr threads in exactly these ways, whatever its
/// size; std::nullopt (the default) goes back to layout_for's choice.
void force_ways(std::optional<Ways> ways);

/// "JCxICxJR" (e.g. "1x2x2") as Ways; std::invalid_argument naming `what`
/// and the text where it is not three whole numbers from 1 to 256.
Ways parse_ways(const std::string& text, const std::string& what);
/// The environment's LAB_STEP04_WAYS, read once: while force_ways and
/// force_dealt set nothing, every call from outside a parallel region that
/// runs the five loops (dgemm_with; dgemm where the short path for a small
/// product does not take it) runs in these ways, as force_ways would, where
/// OpenMP allows more than one thread (OMP_NUM_THREADS > 1; step09's CPU
/// semirings too, on step04's loops). The grader sets it (with OMP_NUM_THREADS = jc * ic * jr)
/// so that every wait of the five loops is needed; a student reproduces that
/// run with it. Unset or empty: std::nullopt. Malformed: every call throws
/// std::invalid_argument naming it.
std::optional<Ways> ways_from_environment();

/// For experiments: while set, every call from outside a parallel region runs
/// on `threads` threads with dealt blocks of (at most) mc x nc, rounded to the
/// kernel's mr and nr; std::nullopt (the default) ends it. Wins over force_ways.
struct DealtBlocks {
  int threads;
  int64_t mc, nc;
};
void force_dealt(std::optional<DealtBlocks> blocks);

/// For experiments (step04_ways_sweep --waits): while on, each Barrier::wait
/// adds the seconds it took (and whether it slept) to its OpenMP thread's
/// totals, and note_finish the moment the thread's share of the call ended
/// (thread numbers below kCountedThreads). Off by default, when a wait costs
/// one more relaxed load.
constexpr int kCountedThreads = 1024;
void count_waits(bool on);
/// A thread of a team says its share of the call is done (dgemm_with calls it;
/// nothing happens unless count_waits is on).
void note_finish();
/// One thread's waits in the calls since the last take: at barriers (seconds,
/// and how many of those waits went to sleep), and at the end of each call
/// (the seconds from its finish to the last thread's: uneven shares, or a
/// thread slowed by something else on its core).
struct ThreadWaits {
  double barrier_seconds = 0, end_seconds = 0;
  int64_t sleeps = 0;
};
/// Threads 0..threads-1's waits since the last take (or since count_waits(true)),
/// set back to zero. Call it outside parallel regions, after each call.
std::vector<ThreadWaits> take_waits(int threads);

/// For experiments (step04_ways_sweep --map): while count_waits is on, the
/// OpenMP thread that took each dealt block of the last call, by block number
/// (dealt_block); empty when the last call dealt none. Set back to empty.
std::vector<int> take_deal_map();

/// For experiments: how long a thread at a Barrier spins before it sleeps;
/// std::nullopt (the default) goes back to the built-in choice.
void set_barrier_spin(std::optional<double> microseconds);

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
  bool arrive_and_wait();  ///< true when this thread slept
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
/// its ranges and ranks; no barriers or buffers (nullptr). Dealt blocks: the
/// ranks of a thread alone, and empty ranges until Team::deal fills them.
Seat place(const Layout& layout, int mr, int nr, int64_t m, int64_t n, int t);

/// Dealt blocks: the rows and columns of C of block `block` of an m x n
/// product (blocks numbered down each column of blocks, then across), or
/// std::nullopt past the last.
struct DealtBlock {
  std::pair<int64_t, int64_t> rows, cols;  ///< [first, last)
};
std::optional<DealtBlock> dealt_block(const Layout& layout, int64_t m, int64_t n, int64_t block);

/// The seats of one call: barriers for each group and each A block, and the
/// packing buffers (pack_buffers: the calling thread's, kept from call to
/// call; the threads that pack a buffer are the first to touch its pages).
class Team {
 public:
  Team(const Layout& layout, int mr, int nr, int64_t m, int64_t n);
  /// Thread `t` (0 <= t < threads) of the team: place(), with its barriers and buffers.
  Seat seat(int t) const;
  /// Dealt blocks: sets `s`'s rows and columns to the next block no thread has
  /// taken yet, or returns false when every block is taken.
  bool deal(Seat& s) const;
  /// Thread `t`'s work: `loops(seat)` on its seat, or with dealt blocks on each
  /// block it takes until none is left; then note_finish().
  template <class Loops>
  void run(int t, Loops&& loops) const {
    Seat me = seat(t);
    if (!layout_.dealt) {
      loops(static_cast<const Seat&>(me));
    } else {
      while (deal(me)) loops(static_cast<const Seat&>(me));
    }
    note_finish();
  }

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
  mutable std::atomic<int64_t> next_block_{0};  ///< dealt blocks: the next one to take
};

}  // namespace LAB_IMPL_NS
}  // namespace lab::step04
