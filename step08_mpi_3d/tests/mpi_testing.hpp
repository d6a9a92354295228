// mpi_testing.hpp — what step08's collective tests share: every rank runs every
// test and must reach the same verdict, so findings are agreed before they are asserted.
#pragma once

#include <mpi.h>

#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "contract.hpp"
#include "grid.hpp"
#include "lab/check.hpp"

namespace lab::step08::testing {

inline int world_rank() {
  int r = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &r);
  return r;
}
inline int world_size() {
  int p = 1;
  MPI_Comm_size(MPI_COMM_WORLD, &p);
  return p;
}

/// True on every rank when `mine` is the same on every rank.
inline bool same_on_every_rank(bool mine) {
  int v = mine ? 1 : 0, lo = 0, hi = 0;
  MPI_Allreduce(&v, &lo, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
  MPI_Allreduce(&v, &hi, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  return lo == hi;
}

/// Whether to skip a test: on every rank unless every rank can run it. Rank 0
/// says why (say_skipped: it prints GoogleTest's report), and only a program
/// whose every test skipped ends with the LAB-SKIP line that ctest reads.
inline bool skip_unless(bool mine, const std::string& why) {
  int ok = mine ? 1 : 0, all = 0;
  MPI_Allreduce(&ok, &all, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
  if (all) return false;
  lab::testing::say_skipped(why);
  return true;
}

/// Rank 0's verdict and report, on every rank.
inline lab::CheckResult share_from_root(lab::CheckResult r) {
  int head[2] = {r.ok ? 1 : 0, static_cast<int>(r.report.size())};
  MPI_Bcast(head, 2, MPI_INT, 0, MPI_COMM_WORLD);
  r.ok = head[0] != 0;
  r.report.resize(head[1]);
  MPI_Bcast(r.report.data(), head[1], MPI_CHAR, 0, MPI_COMM_WORLD);
  return r;
}

/// When the rank-0 dgemm gave a wrong C on grid g: the same product through
/// the multiply of the blocks where they lie (test_distributed.cpp), watched
/// phase by phase, to say whether the fault is there or on the way to and from
/// rank 0 (scatter_blocks, gather_blocks). Collective: every rank calls it.
std::string where_rank0_went_wrong(const Grid& g, int64_t m, int64_t n, int64_t k, double alpha, double beta,
                                   uint64_t seed);

/// Every rank's own finding, judged on every rank: the text of the lowest rank
/// that found something (empty when none did), so that the report is the same
/// everywhere and printed once.
inline std::string first_finding(const std::string& mine) {
  const int p = world_size(), me = world_rank();
  int lowest = mine.empty() ? p : me, first = p;
  MPI_Allreduce(&lowest, &first, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
  if (first == p) return "";
  int len = first == me ? static_cast<int>(mine.size()) : 0;
  MPI_Bcast(&len, 1, MPI_INT, first, MPI_COMM_WORLD);
  std::string text = first == me ? mine : std::string(len, ' ');
  MPI_Bcast(text.data(), len, MPI_CHAR, first, MPI_COMM_WORLD);
  return text;
}

/// The grids of the issue where the rank count allows them, and the 1D grids.
inline std::vector<Grid> explicit_grids() {
  const int p = world_size();
  std::vector<Grid> out;
  for (Grid g : {Grid{2, 2, 2}, Grid{3, 1, 2}, Grid{1, 1, p}, Grid{p, 1, 1}, Grid{1, p, 1}, Grid{2, p / 2, 1}})
    if (g.size() == p) {
      bool seen = false;
      for (const Grid& h : out) seen = seen || h == g;
      if (!seen) out.push_back(g);
    }
  return out;
}

/// A NaN with a payload that arithmetic does not make: a guard cell that still has
/// these bits was not written.
inline double guard_value() {
  const uint64_t bits = 0x7ff4dead0000beefULL;
  double d;
  std::memcpy(&d, &bits, sizeof d);
  return d;
}

}  // namespace lab::step08::testing
