// bench_report.cpp — the benchmark's table and breakdown CSV (bench_report.hpp).
#include "bench_report.hpp"

#include <mpi.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <vector>

#include "comm.hpp"
#include "grid.hpp"

namespace lab::step08 {

int64_t words_moved(const Breakdown& b) {
  using lab::step08::kBroadcast, lab::step08::kReduce;
  return (b.traffic[kBroadcast].sent + b.traffic[kBroadcast].recv + b.traffic[kReduce].sent +
          b.traffic[kReduce].recv) /
         int64_t(sizeof(double));
}

Placement placement(int threads) {
  Placement pl;
  pl.cores = static_cast<int>(sysconf(_SC_NPROCESSORS_ONLN));
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm node_comm = MPI_COMM_NULL;
  LAB_MPI_CHECK(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, rank, MPI_INFO_NULL, &node_comm));
  const lab::step08::Comm node(node_comm);
  pl.ranks_on_node = node.size();
  int over = pl.ranks_on_node * threads > pl.cores ? 1 : 0, any = 0;
  LAB_MPI_CHECK(MPI_Allreduce(&over, &any, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD));
  pl.oversubscribed = any != 0;
  return pl;
}

Figures figures_of(const RunResult& r, const lab::BenchOptions& o) {
  Figures f;
  f.wall = lab::summarize(r.samples).median_s;
  f.gflops = lab::gflops(o.m, o.n, o.k, f.wall);
  std::vector<double> prod;
  for (const Breakdown& b : r.ranks) {
    prod.push_back(b.own[lab::step08::kProduct]);
    f.most_words = std::max(f.most_words, words_moved(b));
  }
  if (!prod.empty() && r.impl != "baseline") {
    std::sort(prod.begin(), prod.end());
    f.has_product = true;
    f.product_min = prod.front();
    f.product_max = prod.back();
    f.product_median = prod[(prod.size() - 1) / 2];
    f.overhead = f.wall > 0 ? (f.wall - f.product_max) / f.wall : 0;
  }
  return f;
}

void print_run(const RunResult& r, const lab::BenchOptions& o, int p, int threads, const Placement& pl) {
  if (r.check.report.rfind("not implemented yet", 0) == 0) {
    std::printf("%-9s %s\n", r.impl.c_str(), r.check.report.c_str());
    return;
  }
  const lab::Timing t = lab::summarize(r.samples);
  const Figures f = figures_of(r, o);
  std::printf("%-9s %-8s %-12s wall %.4f s (min %.4f, max %.4f, %d calls)  %.2f GFLOP/s  check: %s\n",
              r.impl.c_str(), r.local.c_str(), r.layout.c_str(), t.median_s, t.min_s, t.max_s, t.reps, f.gflops,
              r.check.ok ? "pass" : "FAIL");
  if (!r.note.empty()) std::printf("  %s\n", r.note.c_str());
  if (f.has_product) {
    std::printf("  local product per rank: min %.4f  median %.4f  max %.4f s;  overhead (wall - slowest product) / "
                "wall = %.1f %%\n",
                f.product_min, f.product_median, f.product_max, 100 * f.overhead);
    if (r.local_alone_s > 0)
      std::printf("  the local product alone on the same blocks: %.4f s (the multiply takes %.1f %% more)\n",
                  r.local_alone_s, 100 * (t.median_s / r.local_alone_s - 1));
    std::printf("  per phase, slowest rank (s):");
    for (int ph = 0; ph < kPhases; ++ph) {
      double worst = 0;
      for (const Breakdown& b : r.ranks) worst = std::max(worst, b.seconds[ph]);
      if (worst > 0) std::printf("  %s %.4f", lab::step08::phase_name(ph), worst);
    }
    std::printf("\n");
    const double m = double(o.m), n = double(o.n), k = double(o.k);
    const double formula = lab::step08::words_formula(r.grid, m, n, k);
    const Grid g2 = lab::step08::best_2d_grid(p, o.m, o.n, o.k);
    std::printf("  words per rank in the broadcasts and the reduction: busiest %lld, formula %.0f (%s), best 2D (pz = 1) %s "
                "%.0f, cube %.0f, lower bound %.0f\n",
                (long long)f.most_words, formula, r.grid.str().c_str(), g2.str().c_str(),
                lab::step08::words_formula(g2, m, n, k), lab::step08::cube_formula(p, m, n, k),
                lab::step08::lower_bound_words(p, m, n, k));
  }
  if (!r.check.ok) std::printf("%s", r.check.report.c_str());
  std::printf("  (%d rank(s), %d thread(s) each, %d core(s) per node%s)\n", p, threads, pl.cores,
              pl.oversubscribed ? ": OVERSUBSCRIBED, times say nothing about scaling" : "");
}

void append_breakdown_csv(const std::string& path, const RunResult& r, const lab::BenchOptions& o, int threads,
                          bool data_on_root, const Placement& pl) {
  std::ostringstream header;
  header << "step,variant,impl,m,n,k,threads,median_s,gflops,p,layout,px,py,pz,local,data,rank,x,y,z,cores,"
            "ranks_on_node,oversubscribed,wall_s";
  for (int ph = 0; ph < kPhases; ++ph) header << ',' << lab::step08::phase_name(ph) << "_s";
  for (int ph = 0; ph < kPhases; ++ph) header << ',' << lab::step08::phase_name(ph) << "_own_s";
  for (int ph = 0; ph < kPhases; ++ph)
    header << ',' << lab::step08::phase_name(ph) << "_sent_B," << lab::step08::phase_name(ph) << "_recv_B";
  header << ",words_moved,words_formula,words_best_2d,words_cube,words_lower_bound,local_alone_s,check\n";
  std::ostringstream out;
  const int p = static_cast<int>(r.ranks.size());
  const Grid& g = r.grid;
  const double m = double(o.m), n = double(o.n), k = double(o.k), wall = lab::summarize(r.samples).median_s;
  char num[64];
  auto f = [&](double v) {
    std::snprintf(num, sizeof num, "%.9g", v);
    return std::string(num);
  };
  for (int rank = 0; rank < p; ++rank) {
    const Breakdown& b = r.ranks[rank];
    const lab::step08::Coords c = g.given() ? lab::step08::coords_of(g, rank) : lab::step08::Coords{};
    out << r.step << ',' << variant_of(r) << ',' << r.impl << ',' << o.m << ',' << o.n
        << ',' << o.k << ',' << threads << ',' << f(wall) << ',' << f(lab::gflops(o.m, o.n, o.k, wall)) << ','
        << p << ',' << r.layout << ',' << g.px << ',' << g.py << ',' << g.pz << ',' << r.local << ','
        << (data_on_root ? "root" : "ranks") << ',' << rank << ',' << c.x << ',' << c.y << ',' << c.z << ','
        << pl.cores << ',' << pl.ranks_on_node << ',' << (pl.oversubscribed ? 1 : 0) << ',' << f(wall);
    for (int ph = 0; ph < kPhases; ++ph) out << ',' << f(b.seconds[ph]);
    for (int ph = 0; ph < kPhases; ++ph) out << ',' << f(b.own[ph]);
    for (int ph = 0; ph < kPhases; ++ph) out << ',' << b.traffic[ph].sent << ',' << b.traffic[ph].recv;
    const bool cube = r.impl != "baseline";
    out << ',' << words_moved(b) << ',' << (cube ? f(lab::step08::words_formula(g, m, n, k)) : "") << ','
        << f(lab::step08::words_formula(lab::step08::best_2d_grid(p, o.m, o.n, o.k), m, n, k)) << ','
        << f(lab::step08::cube_formula(p, m, n, k)) << ',' << f(lab::step08::lower_bound_words(p, m, n, k)) << ','
        << f(r.local_alone_s) << ',' << (r.check.ok ? "pass" : "fail") << '\n';
  }
  lab::append_file_whole(path, header.str(), out.str(), "breakdown");
}

}  // namespace lab::step08
