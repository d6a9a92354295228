// The benchmark's check (mpi_bench.hpp): a few whole rows and columns of every
// rank's C block against the reference computed from the generator itself.
#include <mpi.h>

#include <cmath>
#include <cstdio>
#include <limits>
#include <random>
#include <type_traits>

#include "mpi_bench.hpp"
#include "generate.hpp"
#include "semiring.hpp"

namespace lab::step09::mpi {

template <class S>
CheckResult check_sampled(const step08::Block& cb, int rank, int64_t k, ConstMatView C, const step08::Seeds& seeds,
                          bool accumulate, int samples) {
  CheckResult mine;
  std::string report;
  if (cb.held && cb.rows > 0 && cb.cols > 0) {
    // the first and last row and column (edge tiles) and `samples` random ones
    std::mt19937_64 rng(seeds.x + uint64_t(rank));
    std::vector<std::pair<int64_t, int64_t>> picks;  // (i, -1): row i; (-1, j): column j
    for (int64_t i : {int64_t(0), cb.rows - 1}) picks.push_back({i, -1});
    for (int64_t j : {int64_t(0), cb.cols - 1}) picks.push_back({-1, j});
    for (int s = 0; s < samples; ++s) {
      picks.push_back({int64_t(rng() % uint64_t(cb.rows)), -1});
      picks.push_back({-1, int64_t(rng() % uint64_t(cb.cols))});
    }
    int64_t checked = 0, bad = 0;
    for (const auto& pick : picks) {
      // plain variables: the parallel loop below uses them, and before C++20 no
      // lambda or OpenMP region may capture a structured binding (Clang refuses it)
      const int64_t pi = pick.first, pj = pick.second;
      const bool row = pi >= 0;
      const int64_t len = row ? cb.cols : cb.rows;
      // the fixed row of A (or column of B), made once
      std::vector<double> fixed(size_t(k > 0 ? k : 1));
      for (int64_t q = 0; q < k; ++q)
        fixed[size_t(q)] = row ? step08::generated(seeds.a, cb.row0 + pi, q) : step08::generated(seeds.b, q, cb.col0 + pj);
#pragma omp parallel for schedule(static) reduction(+ : checked, bad)
      for (int64_t t = 0; t < len; ++t) {
        const int64_t i = row ? pi : t, j = row ? t : pj;
        double acc = S::zero(), size = 0;
        for (int64_t q = 0; q < k; ++q) {
          const double a = row ? fixed[size_t(q)] : step08::generated(seeds.a, cb.row0 + i, q);
          const double b = row ? step08::generated(seeds.b, q, cb.col0 + j) : fixed[size_t(q)];
          acc = S::add(acc, S::mul(a, b));
          size += std::fabs(a * b);
        }
        const double c0 = step08::generated(seeds.c, cb.row0 + i, cb.col0 + j);
        if (accumulate) {
          acc = S::add(c0, acc);
          size += std::fabs(c0);
        }
        bool ok = C(i, j) == acc;
        if constexpr (std::is_same_v<S, PlusTimes>)
          ok = std::fabs(C(i, j) - acc) <= kBoundConstant * double(k + 2) * std::numeric_limits<double>::epsilon() * size;
        ++checked;
        if (!ok) {
          ++bad;
#pragma omp critical
          if (report.size() < 400) {
            char line[200];
            std::snprintf(line, sizeof line, "  rank %d: C(%lld, %lld) = %.17g, want %.17g\n", rank,
                          (long long)(cb.row0 + i), (long long)(cb.col0 + j), C(i, j), acc);
            report += line;
          }
        }
      }
    }
    mine.checked = checked;
    mine.mismatches = bad;
  }
  // Every rank: the totals, and the report of the lowest rank that found something.
  int64_t local[2] = {mine.checked, mine.mismatches}, total[2] = {0, 0};
  MPI_Allreduce(local, total, 2, MPI_INT64_T, MPI_SUM, MPI_COMM_WORLD);
  CheckResult r;
  r.checked = total[0];
  r.mismatches = total[1];
  r.ok = r.mismatches == 0;
  if (!r.ok) {
    int p = 1;
    MPI_Comm_size(MPI_COMM_WORLD, &p);
    int me = mine.mismatches ? rank : p, first = p;
    MPI_Allreduce(&me, &first, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    int len = static_cast<int>(report.size());
    MPI_Bcast(&len, 1, MPI_INT, first, MPI_COMM_WORLD);
    report.resize(size_t(len));
    MPI_Bcast(report.data(), len, MPI_CHAR, first, MPI_COMM_WORLD);
    r.worst_ratio = std::numeric_limits<double>::infinity();
    r.report = std::to_string(r.mismatches) + " of " + std::to_string(r.checked) + " sampled elements differ (" +
               (std::is_same_v<S, PlusTimes> ? "outside the bound" : "mismatch") + "):\n" + report;
  }
  return r;
}

template CheckResult check_sampled<PlusTimes>(const step08::Block&, int, int64_t, ConstMatView, const step08::Seeds&,
                                         bool, int);
template CheckResult check_sampled<MinPlus>(const step08::Block&, int, int64_t, ConstMatView, const step08::Seeds&,
                                         bool, int);
template CheckResult check_sampled<MaxPlus>(const step08::Block&, int, int64_t, ConstMatView, const step08::Seeds&,
                                         bool, int);

}  // namespace lab::step09::mpi
