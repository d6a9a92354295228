// lab_stream — the memory bandwidth of this machine, measured the way STREAM
// does: the triad a[i] = b[i] + s * c[i] over three arrays far larger than the
// last-level cache, on one thread and on all threads, best of several repeats.
// The roofline (common/tools/roofline.py) draws these rates as its memory roofs.
//
//   lab_stream [--csv FILE] [--mib N] [--repeats R]
//
// Bytes are counted as STREAM counts them: 3 arrays x 8 bytes x n per triad
// (read b, read c, write a). A plain store first reads the line it writes
// (write-allocate), so the memory really moves 4 x 8 x n; the rate printed is
// the STREAM rate, about 3/4 of the bus traffic. The arrays are first touched by
// the threads that use them (the same static schedule), so on a machine with
// several memory nodes each thread streams from its own.
#include <omp.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include "lab/machine.hpp"

namespace {

struct FreeDeleter {
  void operator()(double* p) const { std::free(p); }
};
using Array = std::unique_ptr<double[], FreeDeleter>;

Array make_array(size_t n) {
  void* p = std::aligned_alloc(64, ((n * sizeof(double) + 63) / 64) * 64);
  if (!p) {
    std::fprintf(stderr, "lab_stream: error: cannot allocate %zu MiB\n", n * sizeof(double) >> 20);
    std::exit(1);
  }
  return Array(static_cast<double*>(p));
}

// The best triad rate in GB/s (1e9 bytes) with `threads` threads.
double triad_gbs(double* a, const double* b, const double* c, long n, int threads, int repeats) {
  const double s = 3.0;
  double best = 1e30;
  for (int r = 0; r <= repeats; ++r) {  // repeat 0 warms up (page faults, clock ramp)
    const auto t0 = std::chrono::steady_clock::now();
#pragma omp parallel for schedule(static) num_threads(threads)
    for (long i = 0; i < n; ++i) a[i] = b[i] + s * c[i];
    const double t = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    if (r > 0) best = std::min(best, t);
  }
  // A check that the loop ran (and is not optimized away): every a[i] is 1 + 3 * 2.
  if (a[n / 2] != 7.0) {
    std::fprintf(stderr, "lab_stream: error: the triad computed %g, want 7\n", a[n / 2]);
    std::exit(1);
  }
  return 3.0 * sizeof(double) * double(n) / best / 1e9;
}

long positive(const char* flag, const char* text) {
  char* end = nullptr;
  const long v = std::strtol(text, &end, 10);
  if (*end != '\0' || v < 1) {
    std::fprintf(stderr, "lab_stream: error: %s takes a positive whole number, got '%s'\n", flag, text);
    std::exit(2);
  }
  return v;
}

}  // namespace

int main(int argc, char** argv) {
  std::string csv;
  long mib = 0, repeats = 10;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--help" || a == "-h") {
      std::printf("usage: lab_stream [--csv FILE] [--mib N] [--repeats R]\n"
                  "  --mib N      MiB per array (default: 4x the last-level cache, at least 256)\n"
                  "  --repeats R  timed repeats per thread count, best kept (default 10)\n");
      return 0;
    }
    if (i + 1 >= argc) {
      std::fprintf(stderr, "lab_stream: error: unknown or incomplete argument '%s' (see --help)\n", a.c_str());
      return 2;
    }
    if (a == "--csv") csv = argv[++i];
    else if (a == "--mib") mib = positive("--mib", argv[++i]);
    else if (a == "--repeats") repeats = positive("--repeats", argv[++i]);
    else {
      std::fprintf(stderr, "lab_stream: error: unknown argument '%s' (see --help)\n", a.c_str());
      return 2;
    }
  }
  const lab::CacheInfo caches = lab::cache_info();
  const int64_t llc = std::max({caches.l1d, caches.l2, caches.l3});
  if (mib == 0) mib = std::max<int64_t>(256, 4 * llc >> 20);
  const long n = mib * (1L << 20) / long(sizeof(double));
  const int all = omp_get_num_procs();

  Array a = make_array(n), b = make_array(n), c = make_array(n);
#pragma omp parallel for schedule(static) num_threads(all)
  for (long i = 0; i < n; ++i) {
    a[i] = 0.0;
    b[i] = 1.0;
    c[i] = 2.0;
  }
  std::vector<int> counts = {1};
  if (all > 1) counts.push_back(all);
  std::string rows;
  std::printf("STREAM triad, 3 arrays of %ld MiB (last-level cache %lld MiB), best of %ld\n", mib,
              static_cast<long long>(llc >> 20), repeats);
  for (int t : counts) {
    const double gbs = triad_gbs(a.get(), b.get(), c.get(), n, t, int(repeats));
    std::printf("  %2d thread%s  %8.1f GB/s\n", t, t == 1 ? " " : "s", gbs);
    char line[256];
    std::snprintf(line, sizeof line, "triad,%d,%ld,%.6g,cpu,3 arrays x 8 bytes x n (write-allocate not counted)\n",
                  t, n, gbs);
    rows += line;
  }
  if (!csv.empty()) {
    const std::string tmp = csv + ".tmp";
    {
      std::ofstream f(tmp, std::ios::trunc);
      f << "probe,threads,n,gb_s,device,note\n" << rows;
      if (!f) {
        std::fprintf(stderr, "lab_stream: error: cannot write '%s'\n", csv.c_str());
        return 1;
      }
    }
    if (std::rename(tmp.c_str(), csv.c_str()) != 0) {
      std::fprintf(stderr, "lab_stream: error: cannot write '%s'\n", csv.c_str());
      return 1;
    }
  }
  return 0;
}
