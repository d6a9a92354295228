// step08 tests: the Plan and the multiply on blocks that live on their ranks.
//
// Each rank makes its own blocks with the generator of generate.hpp (by global
// index), inside a padded buffer (ld > rows) whose guard cells must stay; rank 0
// builds the same matrices whole and checks the result, which the z = 0 ranks
// send it. Every finding is agreed by all ranks before it is asserted.
#include <gtest/gtest.h>
#include <mpi.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "comm.hpp"
#include "contract.hpp"
#include "generate.hpp"
#include "lab/check.hpp"
#include "mpi3d.hpp"
#include "mpi_testing.hpp"
#include "transport.hpp"

namespace {

using lab::ConstMatView;
using lab::Matrix;
using lab::MatView;
using lab::step08::Block;
using lab::step08::Grid;
using lab::step08::Plan;
using namespace lab::step08::testing;

// A rank's block inside a buffer with `pad` guard rows below it and a guard column
// on each side; rows x cols at (1, 1 column in). Empty when the rank holds none.
struct Framed {
  Matrix buf;
  int64_t pad = 0;
  Framed() = default;
  Framed(const Block& b, int64_t pad_rows) : pad(pad_rows) {
    if (!b.held) return;
    buf = Matrix(b.rows + pad, b.cols + 2);
    buf.fill_all(guard_value());
  }
  MatView view() {
    if (buf.data() == nullptr) return {nullptr, 0, 0, 1};
    return {buf.data() + buf.ld(), buf.rows() - pad, buf.cols() - 2, buf.ld()};
  }
  ConstMatView cview() { return view(); }
  bool guards_intact(std::string* where) const {
    return buf.data() == nullptr || lab::guards_intact(buf, 0, 1, buf.rows() - pad, buf.cols() - 2, guard_value(), where);
  }
};

struct Shape {
  int64_t m, n, k;
  double alpha, beta;
  int64_t pad;  // ld = rows + pad
};

std::string describe(const Grid& g, const Shape& s) {
  return "grid " + g.str() + ", m=" + std::to_string(s.m) + " n=" + std::to_string(s.n) + " k=" +
         std::to_string(s.k) + " alpha=" + std::to_string(s.alpha) + " beta=" + std::to_string(s.beta) +
         " ld=rows+" + std::to_string(s.pad) + (s.beta == 0 ? " (C full of NaN)" : "");
}

// Rank 0 receives every held C block into the whole C (the test's own gather).
Matrix collect_c(const Plan& plan, Framed& c) {
  const int me = plan.rank(), p = plan.size();
  Matrix whole = me == 0 ? Matrix(plan.layout().m, plan.layout().n) : Matrix();
  if (plan.c_block().held && me != 0) {
    Matrix packed(plan.c_block().rows, plan.c_block().cols);
    const MatView v = c.view();
    for (int64_t j = 0; j < v.cols; ++j)
      for (int64_t i = 0; i < v.rows; ++i) packed(i, j) = v(i, j);
    MPI_Send(packed.data(), int(packed.rows() * packed.cols()), MPI_DOUBLE, 0, 7, MPI_COMM_WORLD);
  }
  if (me == 0)
    for (int r = 0; r < p; ++r) {
      const Block b = plan.layout().c_block(r);
      if (!b.held) continue;
      Matrix got(b.rows, b.cols);
      if (r == 0) {
        const MatView v = c.view();
        for (int64_t j = 0; j < v.cols; ++j)
          for (int64_t i = 0; i < v.rows; ++i) got(i, j) = v(i, j);
      } else {
        MPI_Recv(got.data(), int(got.rows() * got.cols()), MPI_DOUBLE, r, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      }
      for (int64_t j = 0; j < b.cols; ++j)
        for (int64_t i = 0; i < b.rows; ++i) whole(b.row0 + i, b.col0 + j) = got(i, j);
    }
  return whole;
}

// One multiply with the blocks born on their ranks; rank 0 checks C against the
// reference, every rank its guard cells and its A and B blocks; all agree.
std::string multiply_and_check(const Grid& g, const Shape& s, uint64_t seed) {
  const Plan plan(MPI_COMM_WORLD, s.m, s.n, s.k, g);
  const auto seeds = lab::step08::Seeds::from(seed);
  Framed a(plan.a_block(), s.pad), b(plan.b_block(), s.pad), c(plan.c_block(), s.pad);
  const Block ab = plan.a_block(), bb = plan.b_block(), cb = plan.c_block();
  if (ab.held) lab::step08::fill_block(a.view(), seeds.a, ab.row0, ab.col0);
  if (bb.held) lab::step08::fill_block(b.view(), seeds.b, bb.row0, bb.col0);
  if (cb.held && s.beta != 0) lab::step08::fill_block(c.view(), seeds.c, cb.row0, cb.col0);
  if (cb.held && s.beta == 0) {  // beta == 0 must not read C: NaN there must vanish
    const MatView v = c.view();
    for (int64_t j = 0; j < v.cols; ++j)
      for (int64_t i = 0; i < v.rows; ++i) v(i, j) = std::numeric_limits<double>::quiet_NaN();
  }
  lab::step08::multiply(plan, s.alpha, a.cview(), b.cview(), s.beta, c.view());

  std::string mine, where;
  if (!c.guards_intact(&where)) mine += "rank " + std::to_string(plan.rank()) + ": C block: " + where + "\n";
  if (!a.guards_intact(&where)) mine += "rank " + std::to_string(plan.rank()) + ": A block: " + where + "\n";
  if (!b.guards_intact(&where)) mine += "rank " + std::to_string(plan.rank()) + ": B block: " + where + "\n";
  const Matrix got = collect_c(plan, c);
  if (plan.rank() == 0) {
    Matrix A(s.m, s.k), B(s.k, s.n), C0(s.m, s.n);
    lab::step08::fill_block(A.view(), seeds.a, 0, 0);
    lab::step08::fill_block(B.view(), seeds.b, 0, 0);
    if (s.beta != 0) lab::step08::fill_block(C0.view(), seeds.c, 0, 0);
    else C0.fill(0.0);
    const lab::CheckResult r = lab::check_against_reference(s.alpha, A.cview(), B.cview(), s.beta, C0.cview(), got.cview());
    if (!r.ok) mine += "wrong result (checked on rank 0, seed " + std::to_string(seed) + "):\n" + r.report;
  }
  return first_finding(mine);
}

TEST(Step08Multiply, BlocksWhereTheyLieMatchTheReference) {
  // Uneven blocks, sizes smaller than the grid (empty blocks), k = 1, ld > rows,
  // beta = 0 with NaN in C, a beta that must enter once (pz > 1 grids).
  const Shape shapes[] = {{37, 23, 51, 1.5, -0.5, 3}, {5, 3, 2, -1.0, 1.0, 0}, {64, 1, 33, 1.0, 0.0, 2},
                          {20, 30, 1, 1.0, 0.0, 0},   {29, 31, 40, 2.5, 0.5, 1}};
  for (const Grid& g : explicit_grids())
    for (const Shape& s : shapes) {
      SCOPED_TRACE(describe(g, s));
      const std::string finding = multiply_and_check(g, s, lab::testing::fresh_seed());
      EXPECT_TRUE(finding.empty()) << finding;
    }
}

TEST(Step08Plan, EveryElementHasOneOwnerAndTheCubeMatchesTheLayout) {
  const int p = world_size();
  for (const Grid& g : lab::step08::factorizations(p)) {
    const Plan plan(MPI_COMM_WORLD, 7, 5, 6, g);
    std::string mine;
    const lab::step08::Coords c = plan.layout().coords(plan.rank());
    if (c.x != plan.cube().x || c.y != plan.cube().y || c.z != plan.cube().z)
      mine += "rank " + std::to_string(plan.rank()) + " sits at (" + std::to_string(plan.cube().x) + "," +
              std::to_string(plan.cube().y) + "," + std::to_string(plan.cube().z) + ") of the cube, not where Layout says\n";
    // Every rank counts, for every element, the ranks that hold it: exactly one.
    for (auto [rows, cols, which] : {std::tuple{7, 6, 'A'}, std::tuple{6, 5, 'B'}, std::tuple{7, 5, 'C'}}) {
      std::vector<int> owners(size_t(rows) * cols, 0);
      for (int r = 0; r < p; ++r) {
        const Block b = which == 'A' ? plan.layout().a_block(r) : which == 'B' ? plan.layout().b_block(r)
                                                                               : plan.layout().c_block(r);
        if (!b.held) continue;
        for (int64_t j = b.col0; j < b.col0 + b.cols; ++j)
          for (int64_t i = b.row0; i < b.row0 + b.rows; ++i) ++owners[size_t(i + j * rows)];
      }
      if (std::any_of(owners.begin(), owners.end(), [](int o) { return o != 1; }))
        mine += std::string("grid ") + g.str() + ": an element of " + which + " has no owner or two\n";
    }
    const std::string finding = first_finding(mine);
    EXPECT_TRUE(finding.empty()) << finding;
  }
}

TEST(Step08Multiply, OneRankMultipliesItsBlocksWhereTheyLie) {
  // p = 1 (each rank alone on MPI_COMM_SELF): the product gets the caller's own
  // pointers, nothing is moved, no scratch is taken.
  const int64_t m = 33, n = 17, k = 25;
  const Plan plan(MPI_COMM_SELF, m, n, k);
  Matrix A(m, k, m + 2), B(k, n, k + 1), C(m, n, m + 3);
  const auto seeds = lab::step08::Seeds::from(lab::testing::fresh_seed());
  lab::step08::fill_block(A.view(), seeds.a, 0, 0);
  lab::step08::fill_block(B.view(), seeds.b, 0, 0);
  lab::step08::fill_block(C.view(), seeds.c, 0, 0);
  const Matrix C0 = C.clone();
  const double* seen[3] = {nullptr, nullptr, nullptr};
  lab::step08::Product<double> product;
  product.run = [&](ConstMatView a, ConstMatView b, MatView c, bool into_c, void*) {
    seen[0] = a.data;
    seen[1] = b.data;
    seen[2] = c.data;
    lab::reference_gemm(1.0, a, b, into_c ? 0.5 : 0.0, c);
  };
  lab::step08::HostTransport<double> tr(plan.workspace(), lab::step08::Reduction{});
  lab::step08::Breakdown bd;
  lab::step08::multiply_blocks<double>(plan, tr, A.cview(), B.cview(), C.view(), product, &bd);
  EXPECT_EQ(A.data(), seen[0]) << "A was not multiplied where it lies";
  EXPECT_EQ(B.data(), seen[1]) << "B was not multiplied where it lies";
  EXPECT_EQ(C.data(), seen[2]) << "C was not computed where it lies";
  EXPECT_EQ(0u, plan.workspace().bytes()) << "p = 1 took scratch memory";
  for (int ph = 0; ph < lab::step08::kPhases; ++ph)
    EXPECT_EQ(0, bd.traffic[ph].sent + bd.traffic[ph].recv) << lab::step08::phase_name(ph) << " moved bytes";
  const lab::CheckResult r = lab::check_against_reference(1.0, A.cview(), B.cview(), 0.5, C0.cview(), C.cview());
  EXPECT_TRUE(r.ok) << r.report;
}

TEST(Step08Multiply, BadBlocksOnOneRankFailOnEveryRank) {
  const int p = world_size(), me = world_rank(), last = p - 1;
  const Plan plan(MPI_COMM_WORLD, 9, 8, 7);
  Matrix a(std::max<int64_t>(1, plan.a_block().rows), std::max<int64_t>(1, plan.a_block().cols)),
      b(std::max<int64_t>(1, plan.b_block().rows), std::max<int64_t>(1, plan.b_block().cols)),
      c(std::max<int64_t>(1, plan.c_block().rows) + 1, std::max<int64_t>(1, plan.c_block().cols));
  auto exact = [](Matrix& mtx, const Block& blk) -> MatView {
    return blk.held ? MatView{mtx.data(), blk.rows, blk.cols, mtx.ld()} : MatView{nullptr, 0, 0, 1};
  };
  MatView va = exact(a, plan.a_block()), vb = exact(b, plan.b_block()), vc = exact(c, plan.c_block());
  // The last rank that holds a block of C gives it one column too many.
  int c_holder = -1;
  for (int r = 0; r < p; ++r)
    if (plan.layout().c_block(r).held) c_holder = r;
  if (me == c_holder) vc.cols += 1;
  (void)last;
  std::string what;
  try {
    lab::step08::multiply(plan, 1.0, va, vb, 0.0, vc);
    what = "nothing was thrown";
  } catch (const std::invalid_argument& e) {
    what = e.what();
  }
  const std::string want = "C on rank " + std::to_string(c_holder);
  EXPECT_NE(std::string::npos, what.find(want)) << "want an error naming '" << want << "', got: " << what;
  EXPECT_TRUE(same_on_every_rank(what.find(want) != std::string::npos)) << "the ranks disagree: " << what;
}

TEST(Step08Multiply, AnErrorInOneRanksProductFailsEveryRank) {
  const int p = world_size(), me = world_rank();
  const Plan plan(MPI_COMM_WORLD, 6, 6, 6);
  Matrix a(6, 6), b(6, 6), c(6, 6);
  auto mine = [](Matrix& mtx, const Block& blk) -> MatView {
    return blk.held ? MatView{mtx.data(), blk.rows, blk.cols, mtx.ld()} : MatView{nullptr, 0, 0, 1};
  };
  lab::step08::Product<double> product;
  product.run = [&](ConstMatView, ConstMatView, MatView, bool, void*) {
    if (me == p - 1) throw std::runtime_error("the last rank's product failed");
  };
  lab::step08::HostTransport<double> tr(plan.workspace(), lab::step08::Reduction{});
  std::string what = "nothing was thrown";
  try {
    lab::step08::multiply_blocks<double>(plan, tr, mine(a, plan.a_block()), mine(b, plan.b_block()),
                                         mine(c, plan.c_block()), product);
  } catch (const lab::Todo&) {
    throw;  // the skeleton: report "not implemented yet" like every other test
  } catch (const std::runtime_error& e) {
    what = e.what();
  }
  const bool ok = what.find("the last rank's product failed") != std::string::npos;
  EXPECT_TRUE(ok) << what;
  EXPECT_TRUE(same_on_every_rank(ok)) << "the ranks disagree: " << what;
}

// The multiply with another algebra: min-plus on doubles, combined along z with
// MPI_MIN (what step09's MPI back-end does). Results compare exactly.
TEST(Step08Multiply, MinPlusWithMpiMinMatchesTheReferenceExactly) {
  const int64_t m = 19, n = 14, k = 23;
  const uint64_t seed = lab::testing::fresh_seed();
  auto value = [&](char which, int64_t i, int64_t j) {
    return std::floor(8 * lab::step08::generated(seed + which, i, j));  // small integers: sums are exact
  };
  for (const Grid& g : explicit_grids()) {
    SCOPED_TRACE("grid " + g.str());
    const Plan plan(MPI_COMM_WORLD, m, n, k, g);
    const Block ab = plan.a_block(), bb = plan.b_block(), cb = plan.c_block();
    Matrix a(std::max<int64_t>(1, ab.rows), std::max<int64_t>(1, ab.cols)),
        b(std::max<int64_t>(1, bb.rows), std::max<int64_t>(1, bb.cols)),
        c(std::max<int64_t>(1, cb.rows), std::max<int64_t>(1, cb.cols));
    for (int64_t j = 0; j < ab.cols && ab.held; ++j)
      for (int64_t i = 0; i < ab.rows; ++i) a(i, j) = value('A', ab.row0 + i, ab.col0 + j);
    for (int64_t j = 0; j < bb.cols && bb.held; ++j)
      for (int64_t i = 0; i < bb.rows; ++i) b(i, j) = value('B', bb.row0 + i, bb.col0 + j);
    lab::step08::Product<double> minplus;
    minplus.reads_c = false;
    minplus.run = [](ConstMatView A, ConstMatView B, MatView C, bool, void*) {
      for (int64_t j = 0; j < C.cols; ++j)
        for (int64_t i = 0; i < C.rows; ++i) {
          double best = std::numeric_limits<double>::infinity();
          for (int64_t q = 0; q < A.cols; ++q) best = std::min(best, A(i, q) + B(q, j));
          C(i, j) = best;
        }
    };
    lab::step08::HostTransport<double> tr(plan.workspace(), lab::step08::Reduction{MPI_MIN, 3});
    auto view = [](Matrix& mtx, const Block& blk) -> MatView {
      return blk.held ? MatView{mtx.data(), blk.rows, blk.cols, mtx.ld()} : MatView{nullptr, 0, 0, 1};
    };
    lab::step08::multiply_blocks<double>(plan, tr, view(a, ab), view(b, bb), view(c, cb), minplus);
    std::string mine;
    for (int64_t j = 0; j < cb.cols && cb.held; ++j)
      for (int64_t i = 0; i < cb.rows; ++i) {
        double want = std::numeric_limits<double>::infinity();
        for (int64_t q = 0; q < k; ++q)
          want = std::min(want, value('A', cb.row0 + i, q) + value('B', q, cb.col0 + j));
        if (c(i, j) != want && mine.empty())
          mine = "rank " + std::to_string(plan.rank()) + ": C(" + std::to_string(cb.row0 + i) + "," +
                 std::to_string(cb.col0 + j) + ") = " + std::to_string(c(i, j)) + ", want " + std::to_string(want) + "\n";
      }
    const std::string finding = first_finding(mine);
    EXPECT_TRUE(finding.empty()) << finding;
  }
}

// The distributed check passes a right result and catches one wrong element.
TEST(Step08Check, TheDistributedCheckCatchesOneWrongElement) {
  const Grid g = lab::step08::choose_grid(world_size(), 40, 30, 20);
  const Plan plan(MPI_COMM_WORLD, 40, 30, 20, g);
  const auto seeds = lab::step08::Seeds::from(lab::testing::fresh_seed());
  Framed a(plan.a_block(), 1), b(plan.b_block(), 0), c(plan.c_block(), 2);
  const Block ab = plan.a_block(), bb = plan.b_block(), cb = plan.c_block();
  if (ab.held) lab::step08::fill_block(a.view(), seeds.a, ab.row0, ab.col0);
  if (bb.held) lab::step08::fill_block(b.view(), seeds.b, bb.row0, bb.col0);
  if (cb.held) lab::step08::fill_block(c.view(), seeds.c, cb.row0, cb.col0);
  lab::step08::multiply(plan, 1.0, a.cview(), b.cview(), 1.0, c.view());
  auto piece = [](Framed& f, const Block& blk) {
    return blk.held ? lab::step08::Piece::block(f.cview(), blk.row0, blk.col0) : lab::step08::Piece{};
  };
  const lab::CheckResult right = lab::step08::check_distributed(MPI_COMM_WORLD, 40, 30, 20, 1.0, 1.0, seeds,
                                                                piece(a, ab), piece(b, bb), piece(c, cb));
  EXPECT_TRUE(right.ok) << right.report;
  // The last rank holding a C block changes one element by a little more than the bound allows.
  int holder = 0;
  for (int r = 0; r < plan.size(); ++r)
    if (plan.layout().c_block(r).held && plan.layout().c_block(r).rows > 0) holder = r;
  if (plan.rank() == holder) c.view()(cb.rows - 1, 0) += 1e-6;
  const lab::CheckResult wrong = lab::step08::check_distributed(MPI_COMM_WORLD, 40, 30, 20, 1.0, 1.0, seeds,
                                                                piece(a, ab), piece(b, bb), piece(c, cb));
  EXPECT_FALSE(wrong.ok) << "a changed element passed the check";
}

}  // namespace
