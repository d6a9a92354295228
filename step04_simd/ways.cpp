// step04_simd — how the threads of one call share the loops (ways.hpp says
// what the ways are). Nothing to do here; the handout draws the ways on a
// 64-core node.
//
// Why not just split the IC loop, as a first version did: with T threads each
// takes m / T rows, so on 64 threads mc falls to a few dozen rows. Every
// thread still reads the whole kc x nc panel of B from L3 for those few rows:
// the micro-kernel's loads from L3 per flop grow as 1 / mc, and 64 cores
// together ask more of the L3 than it gives. Splitting the columns too (jc
// groups, each with its own B panel) keeps each thread's rows at a full mc
// block, at the price of packing A once per group; splitting the JR loop
// shares one A block among a few threads instead.
#include "ways.hpp"

#include <omp.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <stdexcept>
#include <thread>

#if defined(__x86_64__) || defined(_M_X64)
#include <immintrin.h>
#endif
#ifdef __linux__
#include <linux/futex.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <climits>
#endif

#include "microkernel.hpp"

namespace {

int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }
int64_t round_up(int64_t a, int64_t b) { return ceil_div(a, b) * b; }

// Blocks of at most `block` (a multiple of `multiple`) that cut `extent` into
// as few, nearly equal blocks as possible (no thin last block).
int64_t balanced(int64_t extent, int64_t block, int64_t multiple) {
  const int64_t blocks = ceil_div(std::max<int64_t>(extent, 1), block);
  return round_up(ceil_div(std::max<int64_t>(extent, 1), blocks), multiple);
}

// The cost model, in units of one multiply-add of the busiest thread. Each
// term is a stream of doubles per multiply-add, weighed by what a double of
// it costs next to the 16 multiply-adds a core does per cycle:
//   kL3    B read from L3 once per block of mc rows (the micro-kernel's loads
//          of its B panel);
//   kShare more for each other thread that reads the same B panel at the same
//          time (its sharers contend for it in L3; a panel of one thread's
//          own stays close to its core);
//   kPack  A packed once per nc columns by each group: cheap while A lies in
//          L3 (kPackL3), dear once it must come from memory (kPackMemory:
//          every group reads all of it, and nothing overlaps that);
//   kJr    the parts of a shared A block read from the other cores' caches.
// The weights were fitted to forced runs of every factorization of 4 to 64
// threads at n = 2048, 4096 and 8192 on a 64-core Xeon (step04_ways_sweep;
// NOTES.md): of the model's choice to the fastest ways, 0.95 on average
// there, where the first, unfitted weights (B alone, no sharers) gave 0.86.
// What they say: a B panel shared by few threads is worth more groups, each
// packing A again, as long as A stays in L3.
constexpr double kL3 = 64.0, kShare = 16.0, kPackL3 = 8.0, kPackMemory = 128.0, kJr = 16.0;

struct Cost {
  double value;
  int64_t mc, nc;
};

Cost cost_of(lab::step04::Ways w, int64_t m, int64_t n, int64_t k, int mr, int nr, lab::step04::Blocking blk,
             int64_t nc_cap, int64_t l3_bytes) {
  const int64_t row_panels = ceil_div(m, mr), col_panels = ceil_div(n, nr);
  const int64_t rows = mr * ceil_div(row_panels, w.ic);                  // the busiest ic way
  const int64_t group_cols = nr * ceil_div(col_panels, w.jc);            // the widest group
  const int64_t cols = nr * ceil_div(ceil_div(col_panels, w.jc), w.jr);  // the busiest thread's
  const int64_t mc = balanced(rows, round_up(blk.mc, mr), mr);           // its A blocks
  const int64_t nc = balanced(group_cols, nc_cap, nr);                   // its group's B panels
  // B: the thread reads its part of the B panel from L3 once per block of mc rows (1 / mc per
  //    multiply-add), the more dearly the more threads share the panel (ic jr of them); A: its
  //    group packs all of A once per nc columns (1 / nc, whatever jr is); jr: each thread sharing
  //    an A block reads the others' parts of it from their caches once per nc columns, for its
  //    nc / jr of them ((jr - 1) / nc).
  const double pack = double(m) * double(k) * double(sizeof(double)) <= double(l3_bytes) / 2 ? kPackL3 : kPackMemory;
  const double penalty = (kL3 + kShare * double(w.ic * w.jr - 1)) / double(mc) + pack / double(nc) +
                         kJr * double(w.jr - 1) / double(nc);
  return {double(rows) * double(cols) * (1.0 + penalty), mc, nc};
}

}  // namespace

std::pair<int64_t, int64_t> lab::step04::share(int64_t count, int64_t part, int64_t parts) {
  return {count * part / parts, count * (part + 1) / parts};
}

lab::step04::Layout lab::step04::ways_layout_for(int threads, int64_t m, int64_t n, int64_t k, int mr, int nr,
                                                 Blocking blk, int64_t l3_bytes) {
  threads = std::max(threads, 1);
  const int64_t kc = balanced(k, blk.kc, 1);
  Layout best{};
  double best_cost = -1;
  for (int jc = 1; jc <= threads; ++jc) {
    if (threads % jc) continue;
    for (int ic = 1; ic <= threads / jc; ++ic) {
      if ((threads / jc) % ic) continue;
      const Ways w{jc, ic, threads / jc / ic};
      // Each group's B panel gets its share of half of L3 (the other half:
      // A blocks on their way to L2, C, and what else runs).
      const int64_t l3_share = l3_bytes / 2 / jc / int64_t(sizeof(double)) / kc;
      const int64_t nc_cap = std::max<int64_t>(nr, std::min(round_up(blk.nc, nr), l3_share / nr * nr));
      const Cost c = cost_of(w, m, n, k, mr, nr, blk, nc_cap, l3_bytes);
      // Ties go to the first found: fewer groups, then fewer ic ways (fewer
      // copies of A, fewer threads sharing a panel).
      if (best_cost < 0 || c.value < best_cost * (1 - 1e-9)) {
        best = {w, c.mc, c.nc, kc};
        best_cost = c.value;
      }
    }
  }
  return best;
}

std::optional<lab::step04::Layout> lab::step04::dealt_layout_for(int threads, int64_t m, int64_t n, int64_t k,
                                                                 int mr, int nr, Blocking blk, int64_t l3_bytes) {
  if (threads < kDealtMinThreads) return std::nullopt;
  const int64_t kc = balanced(k, blk.kc, 1);
  const int64_t mc_cap = round_up(blk.mc, mr);
  // Each thread's B panel of its own in its share of half of L3, as a jc way's.
  const int64_t nc_cap = std::min(round_up(blk.nc, nr), l3_bytes / 2 / threads / int64_t(sizeof(double)) / kc / nr * nr);
  for (int64_t per_thread : {kDealtPerThread, kDealtPerThread / 2}) {
    const int64_t want = per_thread * threads;
    // Full mc rows (the A block in L2), and as many columns as make `want` blocks...
    int64_t mc = balanced(m, mc_cap, mr);
    int64_t nc = balanced(n, round_up(ceil_div(n, ceil_div(want, ceil_div(m, mc))), nr), nr);
    if (4 * nc < mc) {
      // ...unless that makes them thin: then square ones (B packed once per mc
      // rows, A once per nc columns: for the same area, square packs least).
      const int64_t side = int64_t(std::sqrt(double(m) * double(n) / double(want)));
      mc = balanced(m, round_up(std::max<int64_t>(side, 1), mr), mr);
      nc = balanced(n, round_up(std::max<int64_t>(side, 1), nr), nr);
    }
    nc = std::min(nc, nc_cap);
    if (mc >= kDealtMinSide && nc >= kDealtMinSide && ceil_div(m, mc) * ceil_div(n, nc) >= want * 3 / 4) {
      Layout l{{threads, 1, 1}, mc, nc, kc};
      l.dealt = true;
      return l;
    }
  }
  return std::nullopt;
}

lab::step04::Layout lab::step04::layout_for(int threads, int64_t m, int64_t n, int64_t k, int mr, int nr,
                                            Blocking blk, int64_t l3_bytes) {
  if (auto dealt = dealt_layout_for(threads, m, n, k, mr, nr, blk, l3_bytes)) return *dealt;
  return ways_layout_for(threads, m, n, k, mr, nr, blk, l3_bytes);
}

namespace {

// jc, ic, jr in 16 bits each; 0: none forced.
std::atomic<uint64_t> forced_ways{0};
// force_dealt: the threads (0: none forced) and the blocks.
std::atomic<int> forced_dealt_threads{0};
std::atomic<int64_t> forced_dealt_mc{0}, forced_dealt_nc{0};

}  // namespace

void lab::step04::force_dealt(std::optional<DealtBlocks> blocks) {
  forced_dealt_threads.store(0);
  if (!blocks) return;
  forced_dealt_mc.store(std::max<int64_t>(blocks->mc, 1));
  forced_dealt_nc.store(std::max<int64_t>(blocks->nc, 1));
  forced_dealt_threads.store(std::max(blocks->threads, 1));
}

void lab::step04::force_ways(std::optional<Ways> ways) {
  forced_ways.store(ways ? uint64_t(ways->jc) | uint64_t(ways->ic) << 16 | uint64_t(ways->jr) << 32 : 0);
}

lab::step04::Ways lab::step04::parse_ways(const std::string& text, const std::string& what) {
  int w[3] = {0, 0, 0};
  size_t at = 0;
  for (int i = 0; i < 3; ++i) {
    const size_t end = i < 2 ? text.find('x', at) : text.size();
    const std::string part = end == std::string::npos ? std::string() : text.substr(at, end - at);
    const bool digits = !part.empty() && part.size() <= 3 &&
                        std::all_of(part.begin(), part.end(), [](char c) { return c >= '0' && c <= '9'; });
    w[i] = digits ? std::stoi(part) : 0;
    if (w[i] < 1 || w[i] > 256) {
      throw std::invalid_argument(what + "='" + text +
                                  "': expected JCxICxJR, three whole numbers from 1 to 256, e.g. 1x2x2");
    }
    at = end + 1;
  }
  return {w[0], w[1], w[2]};
}

std::optional<lab::step04::Ways> lab::step04::ways_from_environment() {
  // Read once (a static's initializer runs again after it threw: a malformed
  // value throws on every call, never half-read).
  static const std::optional<Ways> ways = []() -> std::optional<Ways> {
    const char* text = std::getenv("LAB_STEP04_WAYS");
    if (text == nullptr || *text == '\0') return std::nullopt;  // unset, or set to nothing
    return parse_ways(text, "LAB_STEP04_WAYS");
  }();
  return ways;
}

lab::step04::Layout lab::step04::layout_for_call(int available, int64_t m, int64_t n, int64_t k, int mr,
                                                 int nr, Blocking blk) {
  const int dealt_threads = forced_dealt_threads.load();
  if (dealt_threads != 0 && available > 1) {
    Layout l{{dealt_threads, 1, 1},
             balanced(m, round_up(forced_dealt_mc.load(), mr), mr),
             balanced(n, round_up(forced_dealt_nc.load(), nr), nr),
             balanced(k, blk.kc, 1)};
    l.dealt = true;
    return l;
  }
  const uint64_t forced = forced_ways.load();
  const std::optional<Ways> from_env = forced != 0 ? std::nullopt : ways_from_environment();
  if ((forced != 0 || from_env) && available > 1) {
    const Ways w = from_env ? *from_env
                            : Ways{int(forced & 0xffff), int(forced >> 16 & 0xffff), int(forced >> 32 & 0xffff)};
    const int64_t rows = mr * ceil_div(ceil_div(m, mr), w.ic), cols = nr * ceil_div(ceil_div(n, nr), w.jc);
    return {w, balanced(rows, round_up(blk.mc, mr), mr), balanced(cols, round_up(blk.nc, nr), nr),
            balanced(k, blk.kc, 1)};
  }
  return layout_for(threads_for(m, n, k, available), m, n, k, mr, nr, blk, lab::cache_info().l3);
}

int64_t lab::step04::c_per_pass(const Layout& l, int64_t m, int64_t n) {
  if (l.dealt) return std::min(m * n, int64_t(l.ways.threads()) * l.mc * l.nc);
  return m * std::min(n, int64_t(l.ways.jc) * l.nc);
}

std::string lab::step04::describe(const Layout& l) { return describe_for(l, -1, -1); }

std::string lab::step04::describe_for(const Layout& l, int64_t m, int64_t n) {
  char text[160];
  if (l.dealt) {
    char count[40] = "";
    if (m >= 0 && n >= 0)
      std::snprintf(count, sizeof count, "%lld ", static_cast<long long>(ceil_div(m, l.mc) * ceil_div(n, l.nc)));
    std::snprintf(text, sizeof text, "dealt %sblocks of mc %lld x nc %lld (%d thread%s), kc %lld", count,
                  static_cast<long long>(l.mc), static_cast<long long>(l.nc), l.ways.threads(),
                  l.ways.threads() == 1 ? "" : "s", static_cast<long long>(l.kc));
    return text;
  }
  std::snprintf(text, sizeof text, "ways jc %d x ic %d x jr %d (%d thread%s), mc %lld, nc %lld, kc %lld",
                l.ways.jc, l.ways.ic, l.ways.jr, l.ways.threads(), l.ways.threads() == 1 ? "" : "s",
                static_cast<long long>(l.mc), static_cast<long long>(l.nc), static_cast<long long>(l.kc));
  return text;
}

namespace {

static_assert(sizeof(std::atomic<unsigned>) == sizeof(unsigned) && std::atomic<unsigned>::is_always_lock_free,
              "the futex waits on the atomic's own four bytes");

// Sleeps while *word == value (returns at once when it already differs), and
// wakes every thread sleeping on word.
void sleep_while(std::atomic<unsigned>* word, unsigned value) {
#ifdef __linux__
  syscall(SYS_futex, reinterpret_cast<unsigned*>(word), FUTEX_WAIT_PRIVATE, value, nullptr, nullptr, 0);
#else
  if (word->load() == value) std::this_thread::yield();
#endif
}

void wake_all(std::atomic<unsigned>* word) {
#ifdef __linux__
  syscall(SYS_futex, reinterpret_cast<unsigned*>(word), FUTEX_WAKE_PRIVATE, INT_MAX, nullptr, nullptr, 0);
#else
  (void)word;
#endif
}

std::atomic<bool> counting_waits{false};
struct alignas(64) WaitTotal {
  lab::step04::ThreadWaits waits;
  double finished = -1;  // when its share of the current call ended (seconds on the steady clock)
};
// Each slot is written by its own thread only, and read between calls.
WaitTotal wait_totals[lab::step04::kCountedThreads];

double now_seconds() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

// Nanoseconds a waiting thread spins before it sleeps; < 0: the built-in
// choice (1000 pauses).
std::atomic<int64_t> spin_ns{-1};

// While counting: who took each dealt block of the last call. Sized by the
// call's Team before its threads start; each block's slot is written by the
// one thread that took it, and read between calls.
std::vector<int> deal_map;

}  // namespace

std::vector<int> lab::step04::take_deal_map() {
  std::vector<int> out;
  out.swap(deal_map);
  return out;
}

void lab::step04::count_waits(bool on) {
  for (auto& w : wait_totals) w = WaitTotal{};
  counting_waits.store(on, std::memory_order_relaxed);
}

void lab::step04::note_finish() {
  if (!counting_waits.load(std::memory_order_relaxed)) return;
  const int t = omp_get_thread_num();
  if (t < kCountedThreads) wait_totals[t].finished = now_seconds();
}

std::vector<lab::step04::ThreadWaits> lab::step04::take_waits(int threads) {
  std::vector<ThreadWaits> out;
  const int count = std::min(threads, kCountedThreads);
  double last = -1;
  for (int t = 0; t < count; ++t) last = std::max(last, wait_totals[t].finished);
  for (int t = 0; t < count; ++t) {
    ThreadWaits w = wait_totals[t].waits;
    if (wait_totals[t].finished >= 0) w.end_seconds += last - wait_totals[t].finished;
    out.push_back(w);
    wait_totals[t] = WaitTotal{};
  }
  return out;
}

void lab::step04::set_barrier_spin(std::optional<double> microseconds) {
  spin_ns.store(microseconds ? int64_t(std::max(0.0, *microseconds) * 1e3) : -1);
}

void lab::step04::Barrier::wait() {
  if (count_ <= 1) return;
  if (!counting_waits.load(std::memory_order_relaxed)) {
    arrive_and_wait();
    return;
  }
  const double t0 = now_seconds();
  const bool slept = arrive_and_wait();
  const int t = omp_get_thread_num();
  if (t < kCountedThreads) {
    wait_totals[t].waits.barrier_seconds += now_seconds() - t0;
    wait_totals[t].waits.sleeps += slept;
  }
}

bool lab::step04::Barrier::arrive_and_wait() {
  // The generation is read before arriving: it cannot move on until this
  // thread has arrived. The last to arrive resets the count, then opens the
  // barrier (what everyone wrote before arriving is seen after it), and wakes
  // the threads that went to sleep.
  const unsigned generation = generation_.load(std::memory_order_acquire);
  if (arrived_.fetch_add(1, std::memory_order_acq_rel) + 1 == count_) {
    arrived_.store(0, std::memory_order_relaxed);
    generation_.store(generation + 1, std::memory_order_seq_cst);
    if (sleepers_.load(std::memory_order_seq_cst) > 0) wake_all(&generation_);
    return false;
  }
  // Spin a little: on a quiet machine the others come within microseconds.
  const int64_t budget = spin_ns.load(std::memory_order_relaxed);
  const auto start = std::chrono::steady_clock::now();
  for (int spins = 0;; ++spins) {
    if (generation_.load(std::memory_order_acquire) != generation) return false;
#if defined(__x86_64__) || defined(_M_X64)
    _mm_pause();
#endif
    if (budget < 0 ? spins >= 1000
                   : spins % 32 == 31 && std::chrono::steady_clock::now() - start >= std::chrono::nanoseconds(budget))
      break;
  }
  // Then sleep. A thread that yielded instead would wait behind whatever else
  // runs on its core (a compiler, a whole time slice); a woken one runs soon.
  // (Counted as a sleeper before looking again: the last thread then either
  // sees the count and wakes it, or opened the barrier before the look.)
  sleepers_.fetch_add(1, std::memory_order_seq_cst);
  while (generation_.load(std::memory_order_seq_cst) == generation) sleep_while(&generation_, generation);
  sleepers_.fetch_sub(1, std::memory_order_relaxed);
  std::atomic_thread_fence(std::memory_order_acquire);
  return true;
}

lab::step04::Team::Team(const Layout& layout, int mr, int nr, int64_t m, int64_t n)
    : layout_(layout), mr_(mr), nr_(nr), m_(m), n_(n) {
  const Ways w = layout.ways;
  if (counting_waits.load(std::memory_order_relaxed) && !omp_in_parallel())
    deal_map.assign(layout.dealt ? size_t(ceil_div(m, layout.mc) * ceil_div(n, layout.nc)) : 0, -1);
  if (layout.dealt) {
    // Every thread alone on its blocks, with panels of its own: one barrier of
    // one thread (its waits return at once) serves them all.
    groups_ = blocks_ = &alone_;
    const int t = w.threads();
    const PackBuffers buffers = pack_buffers(layout.kc * layout.nc, t, layout.mc * layout.kc, t);
    b_ = buffers.b, a_ = buffers.a, b_stride_ = buffers.b_stride, a_stride_ = buffers.a_stride;
    return;
  }
  if (w.threads() == 1) {
    groups_ = blocks_ = &alone_;
  } else {
    barriers_.reset(new Barrier[w.jc + w.jc * w.ic]);
    groups_ = barriers_.get(), blocks_ = groups_ + w.jc;
    for (int g = 0; g < w.jc; ++g) groups_[g].reset(w.ic * w.jr);
    for (int b = 0; b < w.jc * w.ic; ++b) blocks_[b].reset(w.jr);
  }
  const PackBuffers buffers = pack_buffers(layout.kc * layout.nc, w.jc, layout.mc * layout.kc, w.jc * w.ic);
  b_ = buffers.b, a_ = buffers.a, b_stride_ = buffers.b_stride, a_stride_ = buffers.a_stride;
}

// Thread t sits in group t / (ic jr), in ic way (t / jr) % ic, and is jr
// way t % jr: neighbouring threads (often neighbouring cores) share an A
// block, then a B panel.
lab::step04::Seat lab::step04::place(const Layout& layout, int mr, int nr, int64_t m, int64_t n, int t) {
  if (layout.dealt) return {{0, 0}, {0, 0}, 0, 1, 0, 1, nullptr, nullptr, nullptr, nullptr};
  const Ways w = layout.ways;
  const int group = t / (w.ic * w.jr), in_group = t % (w.ic * w.jr);
  const int way = in_group / w.jr, in_block = in_group % w.jr;
  const auto [c0, c1] = share(ceil_div(n, nr), group, w.jc);
  const auto [r0, r1] = share(ceil_div(m, mr), way, w.ic);
  return {{std::min(n, c0 * nr), std::min(n, c1 * nr)},
          {std::min(m, r0 * mr), std::min(m, r1 * mr)},
          in_group,
          w.ic * w.jr,
          in_block,
          w.jr,
          nullptr,
          nullptr,
          nullptr,
          nullptr};
}

std::optional<lab::step04::DealtBlock> lab::step04::dealt_block(const Layout& layout, int64_t m, int64_t n,
                                                                int64_t block) {
  const int64_t row_blocks = ceil_div(m, layout.mc), col_blocks = ceil_div(n, layout.nc);
  if (block < 0 || block >= row_blocks * col_blocks) return std::nullopt;
  const int64_t r = block % row_blocks, c = block / row_blocks;
  return DealtBlock{{r * layout.mc, std::min(m, (r + 1) * layout.mc)}, {c * layout.nc, std::min(n, (c + 1) * layout.nc)}};
}

bool lab::step04::Team::deal(Seat& s) const {
  const int64_t number = next_block_.fetch_add(1, std::memory_order_relaxed);
  const auto block = dealt_block(layout_, m_, n_, number);
  if (!block) return false;
  if (counting_waits.load(std::memory_order_relaxed) && size_t(number) < deal_map.size())
    deal_map[size_t(number)] = omp_get_thread_num();
  s.rows = block->rows;
  s.cols = block->cols;
  return true;
}

lab::step04::Seat lab::step04::Team::seat(int t) const {
  Seat s = place(layout_, mr_, nr_, m_, n_, t);
  if (layout_.dealt) {
    s.group = s.block = &alone_;
    s.b = b_ + t * b_stride_;
    s.a = a_ + t * a_stride_;
    return s;
  }
  const Ways w = layout_.ways;
  const int group = t / (w.ic * w.jr), block = group * w.ic + t % (w.ic * w.jr) / w.jr;
  s.group = &groups_[group];
  s.block = &blocks_[block];
  s.b = b_ + group * b_stride_;
  s.a = a_ + block * a_stride_;
  return s;
}
