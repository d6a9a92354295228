// bench_report.hpp — how a run of the distributed benchmark is reported: the
// table on stdout (wall, each rank's local product, overhead, words moved against
// the formulas) and the per-rank breakdown CSV that plot_breakdown.py draws.
// Shared by step08's benchmark and step09's semiring product on the same cube
// (RunResult::step and ::variant name the rows).
#pragma once

#include <string>

#include "implementations.hpp"
#include "lab/bench.hpp"

namespace lab::step08 {

/// The words a rank sent and received in the broadcasts and the reduction.
int64_t words_moved(const Breakdown& b);

/// The machine: whether some node runs more rank threads than it has cores.
struct Placement {
  int cores = 1, ranks_on_node = 1;
  bool oversubscribed = false;
};
/// Collective over MPI_COMM_WORLD.
Placement placement(int threads);

/// What the tables and the plot show of one run.
struct Figures {
  double wall = 0, gflops = 0, product_min = 0, product_median = 0, product_max = 0, overhead = 0;
  int64_t most_words = 0;
  bool has_product = false;
};
Figures figures_of(const RunResult& r, const lab::BenchOptions& o);

/// Rank 0: the run's lines of the table on stdout.
void print_run(const RunResult& r, const lab::BenchOptions& o, int p, int threads, const Placement& pl);

/// Rank 0: appends the run's per-rank rows to the breakdown CSV (the header first in a new file).
void append_breakdown_csv(const std::string& path, const RunResult& r, const lab::BenchOptions& o, int threads,
                          bool data_on_root, const Placement& pl);

/// The CSV's variant column: RunResult::variant, else "pdgemm" for the baseline and "cube".
inline std::string variant_of(const RunResult& r) {
  return !r.variant.empty() ? r.variant : r.impl == "baseline" ? "pdgemm" : "cube";
}

}  // namespace lab::step08
