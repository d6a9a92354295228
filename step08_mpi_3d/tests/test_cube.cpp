// step08 tests: the collective dgemm against the reference on every grid the rank
// count allows, what it sends where, and failures that every rank agrees on.
//
// The tests are collective: every rank runs each of them, and every rank must
// reach the same verdict. Rank 0 of the communicator holds the matrices; where a
// check can only be made there, its verdict is broadcast and every rank asserts it.
#include <gtest/gtest.h>
#include <mpi.h>

#include <cstring>
#include <string>
#include <vector>

#include "comm.hpp"
#include "contract.hpp"
#include "grid.hpp"
#include "lab/check.hpp"
#include "lab/todo.hpp"
#include "mpi3d.hpp"
#include "mpi_testing.hpp"

namespace {

using lab::ConstMatView;
using lab::Matrix;
using lab::MatView;
using lab::step08::Breakdown;
using lab::step08::Comm;
using lab::step08::Grid;
using lab::step08::Options;
using lab::step08::Split;
using namespace lab::step08::testing;

// The contract suite, collectively. Every rank draws the same matrices (the test
// main gives all ranks one seed), the root of each call is another rank of a
// rotated communicator (so dgemm is seen to use its communicator's rank 0, not
// MPI_COMM_WORLD's), and the root's C is then copied to every rank, so that each
// rank's check of its own C checks the distributed result.
lab::testing::HostGemm with_rotating_root(Options options) {
  return [options](double alpha, ConstMatView A, ConstMatView B, double beta, MatView C) {
    static int calls = 0;  // the same sequence of calls on every rank
    const int p = world_size(), me = world_rank(), root = calls++ % p;
    MPI_Comm turn = MPI_COMM_NULL;
    MPI_Comm_split(MPI_COMM_WORLD, 0, (me - root + p) % p, &turn);
    const Comm owned(turn);
    lab::step08::dgemm(owned.get(), alpha, A, B, beta, C, options);
    for (int64_t j = 0; j < C.cols; ++j) MPI_Bcast(&C(0, j), int(C.rows), MPI_DOUBLE, root, MPI_COMM_WORLD);
  };
}

LAB_CONTRACT_SUITE(Step08DefaultGrid, ::lab::testing::Subject{with_rotating_root(Options{})});

struct Shape {
  int64_t m, n, k;
  double alpha, beta;
  bool nan_c;  // C full of NaN; with beta == 0 it must vanish
};

// One call on MPI_COMM_WORLD with the matrices on rank 0 (the others pass empty
// views); rank 0 checks C and its guard frame, every rank gets the verdict.
lab::CheckResult run_on_grid(const Grid& g, const Shape& s, Breakdown* bd = nullptr) {
  const bool root = world_rank() == 0;
  const uint64_t seed = lab::testing::fresh_seed();
  Matrix a(s.m, s.k), b(s.k, s.n), c0(s.m, s.n);
  Matrix framed(s.m + 3, s.n + 2);  // C at (1, 1), ld = m + 3: guard cells all around
  MatView C{framed.data() + 1 + framed.ld(), s.m, s.n, framed.ld()};
  if (root) {
    a.fill_random(seed);
    b.fill_random(seed + 1);
    c0.fill_random(seed + 2);
    if (s.nan_c) c0.fill_nan();
    framed.fill_all(guard_value());
    for (int64_t j = 0; j < s.n; ++j)
      for (int64_t i = 0; i < s.m; ++i) C(i, j) = c0(i, j);
  }
  Options o;
  o.grid = g;
  o.breakdown = bd;
  const MatView none{nullptr, 0, 0, 1};
  lab::step08::dgemm(MPI_COMM_WORLD, s.alpha, root ? a.cview() : none, root ? b.cview() : none, s.beta,
                     root ? C : none, o);
  lab::CheckResult r;
  if (root) {
    Matrix out(s.m, s.n);
    for (int64_t j = 0; j < s.n; ++j)
      for (int64_t i = 0; i < s.m; ++i) out(i, j) = C(i, j);
    r = lab::check_against_reference(s.alpha, a.cview(), b.cview(), s.beta, c0.cview(), out.cview());
    std::string where;
    if (!lab::guards_intact(framed, 1, 1, s.m, s.n, guard_value(), &where)) {
      r.ok = false;
      r.report += "wrote outside C: " + where + "\n";
    }
    if (!r.ok)
      r.report += "(seed " + std::to_string(seed) + ", rerun with LAB_SEED=" + std::to_string(seed) + ")\n";
  }
  r = share_from_root(r);
  if (!r.ok && g.given())  // which part of the way: the product of the blocks, or rank 0's scatter and gather
    r.report = lab::step08::testing::where_rank0_went_wrong(g, s.m, s.n, s.k, s.alpha, s.beta, seed) + r.report;
  return r;
}

std::string describe(const Grid& g, const Shape& s) {
  return "grid " + g.str() + ", m=" + std::to_string(s.m) + " n=" + std::to_string(s.n) +
         " k=" + std::to_string(s.k) + " alpha=" + std::to_string(s.alpha) +
         " beta=" + std::to_string(s.beta) + (s.nan_c ? " (C full of NaN)" : "");
}

TEST(Step08Grids, ExplicitGridsMatchTheReference) {
  // Odd and rectangular sizes, sizes smaller than the grid (empty blocks), k = 1.
  const Shape shapes[] = {{37, 23, 51, 1.5, -0.5, false}, {5, 3, 2, -1.0, 1.0, false},
                          {64, 1, 33, 1.0, 0.0, true},    {1, 50, 7, 2.5, 0.5, false},
                          {20, 30, 1, 1.0, 0.0, true},    {29, 31, 40, 1.0, 0.0, true}};
  for (const Grid& g : explicit_grids())
    for (const Shape& s : shapes) {
      SCOPED_TRACE(describe(g, s));
      const lab::CheckResult r = run_on_grid(g, s);
      EXPECT_TRUE(r.ok) << "wrong result (checked on rank 0):\n" << r.report;
    }
}

// The bytes each rank passed to MPI, phase by phase, are those of the algorithm:
// its own blocks and nothing more (in particular, no rank receives all of A or B).
TEST(Step08Traffic, EveryRankMovesItsBlocksAndNoMore) {
  const int p = world_size(), me = world_rank();
  const Shape s{45, 38, 29, 1.0, 0.5, false};
  constexpr int64_t w = sizeof(double);
  for (const Grid& g : lab::step08::factorizations(p)) {
    SCOPED_TRACE(describe(g, s));
    Breakdown bd;
    const lab::CheckResult r = run_on_grid(g, s, &bd);
    // The bytes are those of the algorithm only once the result is; the phase
    // that went wrong is named by Step08Multiply.BlocksWhereTheyLieMatchTheReference.
    ASSERT_TRUE(r.ok) << "the result is wrong, so the words each rank moved were not checked (see "
                         "Step08Multiply.BlocksWhereTheyLieMatchTheReference for the phase that went wrong):\n"
                      << r.report;
    // Cartesian ranks are numbered row-major: rank = (x * py + y) * pz + z.
    const int x = me / (g.py * g.pz), y = (me / g.pz) % g.py, z = me % g.pz;
    const Split sm{s.m, g.px}, sn{s.n, g.py}, sk{s.k, g.pz};
    const int64_t a_blk = sm.size(x) * sk.size(z), b_blk = sk.size(z) * sn.size(y),
                  c_blk = sm.size(x) * sn.size(y);
    using lab::step08::kBroadcast, lab::step08::kReduce, lab::step08::kScatter, lab::step08::kGather;
    const int64_t moved = bd.traffic[kBroadcast].sent + bd.traffic[kBroadcast].recv +
                          bd.traffic[kReduce].sent + bd.traffic[kReduce].recv;
    std::string wrong;
    auto expect = [&](const char* what, int64_t want, int64_t got) {
      if (want != got)
        wrong += "rank " + std::to_string(me) + " at (" + std::to_string(x) + "," + std::to_string(y) + "," +
                 std::to_string(z) + "): " + what + " " + std::to_string(got) + " bytes, want " +
                 std::to_string(want) + "\n";
    };
    if (!(g == bd.grid)) wrong += "the breakdown names another grid: " + bd.grid.str() + "\n";
    expect("broadcast and reduce moved", w * lab::step08::rank_words(g, s.m, s.n, s.k, x, y, z), moved);
    if (me == 0) {
      expect("scatter sent", w * (s.m * s.k - a_blk + s.k * s.n - b_blk + s.m * s.n - c_blk),
             bd.traffic[kScatter].sent);
      expect("gather received", w * (s.m * s.n - c_blk), bd.traffic[kGather].recv);
    } else {
      expect("scatter received", w * ((y == 0 ? a_blk : 0) + (x == 0 ? b_blk : 0) + (z == 0 ? c_blk : 0)),
             bd.traffic[kScatter].recv);
      expect("gather sent", w * (z == 0 ? c_blk : 0), bd.traffic[kGather].sent);
    }
    const std::string finding = first_finding(wrong);
    EXPECT_TRUE(finding.empty()) << finding;
  }
}

// Calls dgemm on MPI_COMM_WORLD and says whether it threw std::invalid_argument
// whose message contains `mention` (and whatever else it threw, in `what`).
bool throws_invalid_argument(const Options& o, ConstMatView A, ConstMatView B, MatView C, const char* mention,
                             std::string* what) {
  try {
    lab::step08::dgemm(MPI_COMM_WORLD, 1.0, A, B, 0.0, C, o);
  } catch (const std::invalid_argument& e) {
    *what = e.what();
    return what->find(mention) != std::string::npos;
  } catch (const std::exception& e) {
    *what = std::string("not std::invalid_argument: ") + e.what();
    return false;
  }
  *what = "nothing was thrown";
  return false;
}

TEST(Step08Errors, BadGridFailsAlikeOnEveryRank) {
  const int p = world_size();
  Matrix a(6, 5), b(5, 4), c(6, 4);
  a.fill_random(1);
  b.fill_random(2);
  c.fill_random(3);
  const Matrix c_before = c.clone();
  for (const Grid& bad :
       {Grid{p + 1, 1, 1}, Grid{1, 2 * p, 1}, Grid{0, p, 1}, Grid{-1, -1, p}, Grid{p, 1, 0}}) {
    SCOPED_TRACE("grid " + bad.str() + " on " + std::to_string(p) + " ranks");
    Options o;
    o.grid = bad;
    std::string what;
    const bool ok = throws_invalid_argument(o, a.cview(), b.cview(), c.view(), "grid", &what);
    EXPECT_TRUE(ok) << what;
    EXPECT_TRUE(same_on_every_rank(ok)) << "the ranks disagree about the bad grid";
    EXPECT_EQ(0, std::memcmp(c_before.data(), c.data(), sizeof(double) * c.size())) << "C was written";
  }
}

TEST(Step08Errors, BadArgumentsOnRankZeroFailOnEveryRank) {
  // Only rank 0's views count: a shape error there must reach every rank.
  Matrix a(6, 5), b(4, 4), c(6, 4);
  const MatView none{nullptr, 0, 0, 1};
  const bool root = world_rank() == 0;
  std::string what;
  const bool ok = throws_invalid_argument(Options{}, root ? a.cview() : none, root ? b.cview() : none,
                                          root ? c.view() : none, "k", &what);
  EXPECT_TRUE(ok) << what;
  EXPECT_TRUE(same_on_every_rank(ok)) << "the ranks disagree about the bad arguments";
}

}  // namespace
