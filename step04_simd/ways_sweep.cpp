// step04_ways_sweep — the five loops under ways of parallelism that you pick,
// to see what the cost model in ways.cpp would have to choose (an instructor's
// and a curious student's tool; the step's own runs take layout_for's choice).
//
//   step04_ways_sweep --n 4096 --ways 4x1x1,1x4x1,2x2x1 [--reps 3]
//   step04_ways_sweep --n 4096 --threads 16 --dealt 592x266,296x266
//
// For each jc x ic x jr it forces those ways (force_ways), and for each
// --dealt MCxNC dealt blocks of that size (force_dealt), multiplies two n x n
// random matrices once to warm up, then --reps times, and prints the layout
// (ways and blocks) with the best and the median GFLOP/s. All in one process,
// one after the other, so the figures compare as ratios; the product of each
// is checked against the first ways' C bit for bit (the loops give the same
// bits whatever the ways). --waits adds how much of the median call the
// threads spent waiting for each other at the barriers (mean and busiest
// waiter), how many of those waits slept, and how long the threads that
// finished first waited for the last one at the end of the call: time lost
// to uneven shares, to a slowed core or to waking up, not to the kernel.
// --spin US sets how long a waiting thread spins before it sleeps. --map FILE
// writes, for each dealt run's last call, which thread took which block (a
// CSV that common/tools/dealt_map.py draws).
#include <omp.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <new>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "lab/matrix.hpp"
#include "lab/timer.hpp"
#include "microkernel.hpp"
#include "simd.hpp"
#include "ways.hpp"

namespace {

using lab::step04::Ways;

struct Args {
  int64_t n = 2048;
  int reps = 3;
  bool waits = false;
  std::optional<double> spin_us;
  std::vector<Ways> ways;
  int threads = 0;  // for --dealt; 0: OpenMP's count
  std::string map;  // --map: the CSV of who took which dealt block
  std::vector<std::pair<int64_t, int64_t>> dealt;
};

// A layout to force: ways, or dealt blocks.
struct Forced {
  Ways ways;
  std::optional<lab::step04::DealtBlocks> dealt;
  int threads() const { return dealt ? dealt->threads : ways.threads(); }
};

[[noreturn]] void usage_error(const std::string& what) {
  std::fprintf(stderr, "step04_ways_sweep: error: %s (see --help)\n", what.c_str());
  std::exit(2);
}

// A whole number in [lo, hi], or a one-line error naming the option.
long long whole(const char* opt, const std::string& v, long long lo, long long hi) {
  if (v.empty() || v.find_first_not_of("0123456789") != std::string::npos || v.size() > 9)
    usage_error(std::string(opt) + " takes a whole number, got '" + v + "'");
  const long long x = std::stoll(v);
  if (x < lo || x > hi)
    usage_error(std::string(opt) + " must be in " + std::to_string(lo) + ".." + std::to_string(hi) + ", got " + v);
  return x;
}

// "a,b,c" -> {"a", "b", "c"} ("" is one empty entry, which the readers below refuse).
std::vector<std::string> entries(const std::string& list) {
  std::vector<std::string> out;
  for (size_t at = 0; at <= list.size();) {
    const size_t end = std::min(list.find(',', at), list.size());
    out.push_back(list.substr(at, end - at));
    at = end + 1;
  }
  return out;
}

// "592x266,296x266": each entry two whole numbers, mc x nc, in [1, hi].
std::vector<std::pair<int64_t, int64_t>> parse_dealt(const std::string& list, long long hi) {
  std::vector<std::pair<int64_t, int64_t>> out;
  for (const std::string& item : entries(list)) {
    const size_t x = item.find('x');
    if (x == std::string::npos) usage_error("--dealt: '" + item + "' is not mc x nc, e.g. 592x266");
    out.push_back({whole("--dealt", item.substr(0, x), 1, hi), whole("--dealt", item.substr(x + 1), 1, hi)});
  }
  return out;
}

// "4x1x1,1x4x1": each entry read by the library's own JCxICxJR parser, at
// most 1024 threads in all.
std::vector<Ways> parse_ways(const std::string& list) {
  std::vector<Ways> out;
  for (const std::string& item : entries(list)) {
    Ways w{};
    try {
      w = lab::step04::parse_ways(item, "--ways");
    } catch (const std::invalid_argument& e) {
      usage_error(e.what());
    }
    if (int64_t(w.jc) * w.ic * w.jr > 1024)
      usage_error("--ways: '" + std::to_string(w.jc) + "x" + std::to_string(w.ic) + "x" + std::to_string(w.jr) +
                  "' makes more than 1024 threads");
    out.push_back(w);
  }
  return out;
}

Args parse(int argc, char** argv) {
  Args a;
  for (int i = 1; i < argc; ++i) {
    const std::string opt = argv[i];
    if (opt == "-h" || opt == "--help") {
      std::printf(
          "usage: step04_ways_sweep [--ways JCxICxJR[,...]] [--dealt MCxNC[,...] [--threads T]] [--n N]\n"
          "                         [--reps R] [--waits] [--map FILE] [--spin US]\n"
          "  --ways LIST   the ways to force, one after the other (threads = jc * ic * jr;\n"
          "                each from 1 to 256, at most 1024 threads)\n"
          "  --dealt LIST  then dealt blocks of mc x nc (ways.hpp), one size after the other\n"
          "  --threads T   the threads of the dealt runs (default: OpenMP's count, 1..1024)\n"
          "  --n N         the size of the square product (default 2048, 1..32768)\n"
          "  --reps R      timed calls per ways after one warm-up (default 3, 1..100)\n"
          "  --waits       also the share of the median call the threads spent at barriers\n"
          "                (mean over the threads, and the most any one waited), the barrier\n"
          "                waits that slept per thread, and the mean wait for the last thread\n"
          "                at the end of the call\n"
          "  --map FILE    a CSV of which thread took each dealt block (the last call of each\n"
          "                --dealt size; common/tools/dealt_map.py draws it)\n"
          "  --spin US     microseconds a thread at a barrier spins before it sleeps\n"
          "                (0..100000; default: the built-in choice)\n");
      std::exit(0);
    }
    if (opt == "--waits") {
      a.waits = true;
      continue;
    }
    if (i + 1 >= argc) usage_error("option " + opt + " needs a value");
    const std::string v = argv[++i];
    if (opt == "--n")
      a.n = whole("--n", v, 1, 32768);
    else if (opt == "--reps")
      a.reps = int(whole("--reps", v, 1, 100));
    else if (opt == "--ways")
      a.ways = parse_ways(v);
    else if (opt == "--dealt")
      a.dealt = parse_dealt(v, 1 << 20);
    else if (opt == "--map")
      a.map = v;
    else if (opt == "--threads")
      a.threads = int(whole("--threads", v, 1, 1024));
    else if (opt == "--spin")
      a.spin_us = double(whole("--spin", v, 0, 100000));
    else
      usage_error("unknown option '" + opt + "'");
  }
  if (a.ways.empty() && a.dealt.empty()) usage_error("--ways or --dealt is required (e.g. --ways 4x1x1,1x4x1)");
  return a;
}

int run(const Args& a) {
  const int64_t n = a.n;
  lab::Matrix A(n, n), B(n, n), C(n, n), first(n, n);
  A.fill_random(1);
  B.fill_random(2);
  const auto mk = lab::step04::microkernel(lab::step04::best_isa());
  const auto blk = lab::step04::default_blocking(lab::step04::best_isa());
  std::printf("step04_ways_sweep: n = %lld, %d timed call(s) each, %s %dx%d kernel, %d OpenMP threads at most\n",
              (long long)n, a.reps, lab::step04::isa_name(lab::step04::best_isa()), mk.mr, mk.nr,
              omp_get_max_threads());
  if (a.spin_us) std::printf("barrier spin: %.0f us before sleeping\n", *a.spin_us);
  std::printf("%-62s %8s %8s  %s%s\n", "layout", "best", "median", "GFLOP/s; same bits as the first",
              a.waits ? "; barrier waits mean / max % of the median call, sleeps per thread; end wait mean %" : "");
  FILE* map = nullptr;
  if (!a.map.empty()) {
    map = std::fopen(a.map.c_str(), "w");
    if (map == nullptr) {
      std::fprintf(stderr, "step04_ways_sweep: error: --map: cannot write '%s'\n", a.map.c_str());
      return 2;
    }
    std::fprintf(map, "n,threads,mc,nc,block,row0,row1,col0,col1,thread,seconds\n");
  }
  if (a.waits || map) lab::step04::count_waits(true);
  lab::step04::set_barrier_spin(a.spin_us);
  std::vector<Forced> runs;
  for (const Ways& w : a.ways) runs.push_back({w, std::nullopt});
  const int dealt_threads = a.threads > 0 ? a.threads : omp_get_max_threads();
  for (const auto& [mc, nc] : a.dealt) runs.push_back({{dealt_threads, 1, 1}, lab::step04::DealtBlocks{dealt_threads, mc, nc}});
  bool all_same = true;
  for (size_t w = 0; w < runs.size(); ++w) {
    const Forced forced = runs[w];
    lab::step04::force_ways(forced.ways);
    lab::step04::force_dealt(forced.dealt);
    omp_set_num_threads(forced.threads());
    struct Call {
      double seconds, wait_mean, wait_max, end_mean;  // (waits as shares of the call)
      double sleeps;                                  // per thread
    };
    std::vector<Call> calls;
    for (int r = 0; r <= a.reps; ++r) {
      const auto t0 = std::chrono::steady_clock::now();
      lab::step04::dgemm(1.0, A.cview(), B.cview(), 0.0, C.view());
      const double dt = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      const std::vector<lab::step04::ThreadWaits> w = lab::step04::take_waits(forced.threads());
      const std::vector<int> taken = lab::step04::take_deal_map();
      if (map && r == a.reps && forced.dealt) {
        const auto l = lab::step04::layout_for_call(forced.threads(), n, n, n, mk.mr, mk.nr, blk);
        for (size_t b = 0; b < taken.size(); ++b) {
          const auto [rows, cols] = *lab::step04::dealt_block(l, n, n, int64_t(b));
          std::fprintf(map, "%lld,%d,%lld,%lld,%zu,%lld,%lld,%lld,%lld,%d,%.6f\n", (long long)n, forced.threads(),
                       (long long)l.mc, (long long)l.nc, b, (long long)rows.first, (long long)rows.second,
                       (long long)cols.first, (long long)cols.second, taken[b], dt);
        }
      }
      double sum = 0, most = 0, end = 0, sleeps = 0;
      for (const auto& x : w) {
        sum += x.barrier_seconds, most = std::max(most, x.barrier_seconds);
        end += x.end_seconds, sleeps += double(x.sleeps);
      }
      const double count = std::max<double>(double(w.size()), 1);
      if (r > 0) calls.push_back({dt, sum / count / dt, most / dt, end / count / dt, sleeps / count});  // the first call warms up
    }
    std::sort(calls.begin(), calls.end(), [](const Call& x, const Call& y) { return x.seconds < y.seconds; });
    const Call& median = calls[calls.size() / 2];
    if (w == 0) std::memcpy(first.data(), C.data(), sizeof(double) * size_t(n) * size_t(n));
    const bool same = std::memcmp(first.data(), C.data(), sizeof(double) * size_t(n) * size_t(n)) == 0;
    all_same = all_same && same;
    const auto layout = lab::step04::layout_for_call(forced.threads(), n, n, n, mk.mr, mk.nr, blk);
    char waited[96] = "";
    if (a.waits)
      std::snprintf(waited, sizeof waited, "   %5.1f / %5.1f  %7.1f  %5.1f", 100 * median.wait_mean,
                    100 * median.wait_max, median.sleeps, 100 * median.end_mean);
    std::printf("%-62s %8.1f %8.1f  %s%s\n", lab::step04::describe_for(layout, n, n).c_str(),
                lab::gflops(n, n, n, calls.front().seconds), lab::gflops(n, n, n, median.seconds), same ? "yes" : "NO ",
                waited);
  }
  lab::step04::force_ways(std::nullopt);
  lab::step04::force_dealt(std::nullopt);
  lab::step04::count_waits(false);
  lab::step04::set_barrier_spin(std::nullopt);
  if (map && std::fclose(map) != 0) {
    std::fprintf(stderr, "step04_ways_sweep: error: --map: writing '%s' failed\n", a.map.c_str());
    return 1;
  }
  if (!all_same) {
    std::fprintf(stderr, "step04_ways_sweep: error: some ways gave other bits than the first\n");
    return 1;
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  const Args a = parse(argc, argv);
  try {
    return run(a);
  } catch (const std::bad_alloc&) {
    std::fprintf(stderr, "step04_ways_sweep: error: not enough memory for three %lld x %lld matrices and a copy\n",
                 (long long)a.n, (long long)a.n);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "step04_ways_sweep: error: %s\n", e.what());
  }
  return 1;
}
