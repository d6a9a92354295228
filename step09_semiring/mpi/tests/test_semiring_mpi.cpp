// step09 MPI tests: the semiring product on step08's cube, on host blocks.
//
// Every rank builds the same whole matrices (by global index), takes its own
// blocks into padded buffers framed by guard cells, runs the distributed
// product, and compares its C block with the plain reference: exactly for
// min-plus and max-plus (each sum is rounded once and min/max pick one operand,
// in any order of the ranks), within the harness's bound for plus-times. Every
// finding is agreed by all ranks before it is asserted, so the verdict (and the
// one report) is the same on every rank.
#include <gtest/gtest.h>
#include <mpi.h>

#include <cstdlib>
#include <cstring>
#include <tuple>
#include <limits>
#include <stdexcept>
#include <string>
#include <vector>

#include "mpi_testing.hpp"  // step08's: explicit_grids, first_finding, same_on_every_rank
#include "semiring_mpi.hpp"
#include "semiring_mpi_testing.hpp"
#include "simd.hpp"  // step04: the micro-kernel each rank chose

namespace {

using lab::step08::Grid;
using lab::step08::Plan;
using namespace lab::step08::testing;
using namespace step09_mpi_testing;
namespace s9m = lab::step09::mpi;

uint64_t test_seed() { return std::strtoull(std::getenv("LAB_SEED"), nullptr, 10); }

// Uneven blocks on every grid (sizes that no p divides), k = 1 and k >> m, n,
// k = 0, an empty C, padded leading dimensions, and both accumulate modes.
std::vector<Case> cases(bool infinities) {
  std::vector<Case> out;
  for (bool acc : {false, true}) {
    out.push_back({37, 29, 53, 3, acc, infinities});
    out.push_back({1, 1, 1, 0, acc, infinities});
    out.push_back({5, 7, 1, 1, acc, infinities});
    out.push_back({3, 2, 97, 0, acc, infinities});
    out.push_back({64, 33, 130, 2, acc, infinities});
    out.push_back({9, 11, 0, 1, acc, infinities});
    out.push_back({0, 5, 6, 0, acc, infinities});
  }
  return out;
}

std::vector<Grid> grids() {
  std::vector<Grid> g = explicit_grids();
  g.push_back(Grid{});  // chosen by choose_grid
  return g;
}

// One distributed product and every rank's findings, agreed on every rank.
template <class S>
std::string run_case(const Grid& g, const Case& c, uint64_t seed, const s9m::Options& opts = {}) {
  const Plan plan(MPI_COMM_WORLD, c.m, c.n, c.k, g);
  const auto seeds = lab::step08::Seeds::from(seed);
  const Problem pb = make_problem<S>(c, seeds);
  const Matrix &A = pb.A, &B = pb.B, &C0 = pb.C0, &ref = pb.ref;

  Framed a(plan.a_block(), c.pad, &A), b(plan.b_block(), c.pad, &B),
      cc(plan.c_block(), c.pad, c.accumulate ? &C0 : nullptr);
  if (!c.accumulate) {  // accumulate == false must not read C: NaN there must vanish
    const MatView v = cc.view();
    for (int64_t j = 0; j < v.cols; ++j)
      for (int64_t i = 0; i < v.rows; ++i) v(i, j) = std::numeric_limits<double>::quiet_NaN();
  }
  s9m::gemm<S>(plan, a.cview(), b.cview(), cc.view(), c.accumulate, opts);

  const int me = plan.rank();
  std::string mine, where;
  if (!cc.guards_intact(&where)) mine += "rank " + std::to_string(me) + ": C block: " + where + "\n";
  if (!a.guards_intact(&where)) mine += "rank " + std::to_string(me) + ": A block: " + where + "\n";
  if (!b.guards_intact(&where)) mine += "rank " + std::to_string(me) + ": B block: " + where + "\n";
  // A and B are only read, on their owners too (they are the roots of the broadcasts).
  for (auto [blk, src, name] : {std::tuple{plan.a_block(), &A, "A"}, std::tuple{plan.b_block(), &B, "B"}}) {
    if (!blk.held) continue;
    const ConstMatView v = (name[0] == 'A' ? a : b).cview();
    for (int64_t j = 0; j < v.cols; ++j)
      for (int64_t i = 0; i < v.rows; ++i)
        if (!(v(i, j) == (*src)(blk.row0 + i, blk.col0 + j)) &&
            !(std::isnan(v(i, j)) && std::isnan((*src)(blk.row0 + i, blk.col0 + j)))) {
          mine += "rank " + std::to_string(me) + ": its " + name + " block was written\n";
          i = v.rows, j = v.cols;
        }
  }
  mine += check_block<S>(plan.c_block(), cc.cview(), A, B, C0, ref, c.accumulate, me);
  // each rank chose its micro-kernel by timing them: which one computed its wrong block
  if (!mine.empty())
    mine = "rank " + std::to_string(me) + " ran the " + lab::step04::isa_name(lab::step04::best_isa()) +
           " micro-kernel (" + lab::step04::kernel_choice().why + "; LAB_STEP04_KERNEL=avx512|avx2|neon|generic picks one)\n" +
           mine;
  const std::string found = first_finding(mine);
  return found.empty() ? "" : describe(plan.grid(), c) + " (LAB_SEED=" + std::to_string(seed) + "):\n" + found;
}

// One thread per rank: the blocks are small, and several ranks share the cores
// (OpenMP threads spinning beside busy-polling MPI ranks slow everything down).
template <class S>
void run_all(bool infinities, s9m::Options opts = {}) {
  opts.threads = 1;
  const uint64_t seed = test_seed();
  for (const Grid& g : grids())
    for (const Case& c : cases(infinities)) {
      const std::string found = run_case<S>(g, c, seed, opts);
      ASSERT_TRUE(found.empty()) << S::name << ": " << found;
    }
}

TEST(Step09Mpi, MinPlusEqualsReferenceExactly) { run_all<s9::MinPlus>(false); }
TEST(Step09Mpi, MinPlusWithInfinitiesEqualsReferenceExactly) { run_all<s9::MinPlus>(true); }
TEST(Step09Mpi, MaxPlusEqualsReferenceExactly) { run_all<s9::MaxPlus>(false); }
TEST(Step09Mpi, MaxPlusWithInfinitiesEqualsReferenceExactly) { run_all<s9::MaxPlus>(true); }
TEST(Step09Mpi, PlusTimesWithinTheBound) { run_all<s9::PlusTimes>(false); }

// The general path: an MPI_Op made from S::add gives the same bits as MPI_MIN / MPI_MAX.
TEST(Step09Mpi, UserDefinedReductionEqualsReferenceExactly) {
  s9m::Options o;
  o.user_op = true;
  run_all<s9::MinPlus>(true, o);
  run_all<s9::MaxPlus>(true, o);
}

TEST(Step09Mpi, ReductionIsTheSemiringsAdd) {
  EXPECT_EQ(s9m::SemiringOp<s9::MinPlus>().mpi(), MPI_MIN);
  EXPECT_EQ(s9m::SemiringOp<s9::MaxPlus>().mpi(), MPI_MAX);
  EXPECT_EQ(s9m::SemiringOp<s9::PlusTimes>().mpi(), MPI_SUM);
  EXPECT_EQ(s9m::SemiringOp<s9::MinPlus>().reduction().nccl_op, 3);  // ncclMin
  EXPECT_EQ(s9m::SemiringOp<s9::MaxPlus>().reduction().nccl_op, 2);  // ncclMax
  // The user-defined op on every rank's values, against MPI_MIN: +inf stays +inf.
  const s9m::SemiringOp<s9::MinPlus> user(true);
  EXPECT_TRUE(user.user_defined());
  EXPECT_FALSE(user.has_nccl());
  const double inf = std::numeric_limits<double>::infinity();
  const int me = world_rank();
  std::vector<double> mine{inf, double(me), -double(me), me % 2 ? inf : 1.5, -inf}, a(mine.size()), b(mine.size());
  MPI_Allreduce(mine.data(), a.data(), int(mine.size()), MPI_DOUBLE, user.mpi(), MPI_COMM_WORLD);
  MPI_Allreduce(mine.data(), b.data(), int(mine.size()), MPI_DOUBLE, MPI_MIN, MPI_COMM_WORLD);
  for (size_t i = 0; i < a.size(); ++i) EXPECT_EQ(a[i], b[i]) << "element " << i;
  EXPECT_EQ(a[0], inf);
}

// A bad view on one rank (the last that holds a C block): every rank throws the
// same std::invalid_argument naming it, and no rank writes its C.
TEST(Step09Mpi, BadArgumentsAreAgreedByEveryRank) {
  const int64_t m = 23, n = 19, k = 17;
  const Plan plan(MPI_COMM_WORLD, m, n, k);
  int bad = 0;
  for (int r = 0; r < plan.size(); ++r)
    if (plan.layout().c_block(r).held && plan.layout().c_block(r).rows > 1) bad = r;
  const Matrix A = whole<s9::MinPlus>(1, m, k, false, false, false), B = whole<s9::MinPlus>(2, k, n, false, false, false);
  Framed a(plan.a_block(), 0, &A), b(plan.b_block(), 0, &B);
  for (int what = 0; what < 3; ++what) {
    Framed c(plan.c_block(), 1, nullptr);  // all guard values: nothing may change
    MatView cv = c.view();
    if (plan.rank() == bad) {
      if (what == 0) cv.cols -= 1;         // the wrong shape
      if (what == 1) cv.ld = cv.rows - 1;  // ld < rows
      if (what == 2) cv.data = nullptr;    // no data
    }
    std::string msg;
    try {
      s9m::gemm<s9::MinPlus>(plan, a.cview(), b.cview(), cv, false);
    } catch (const std::invalid_argument& e) {
      msg = e.what();
    }
    std::string mine;
    const double guard = guard_value();
    if (msg.empty()) mine = "rank " + std::to_string(plan.rank()) + " did not throw std::invalid_argument\n";
    // Every element of the frame, inside too, still holds the guard value.
    if (c.buf.data() != nullptr)
      for (int64_t j = 0; j < c.buf.cols(); ++j)
        for (int64_t i = 0; i < c.buf.rows(); ++i)
          if (std::memcmp(&c.buf(i, j), &guard, sizeof(double)) != 0) {
            mine += "rank " + std::to_string(plan.rank()) + ": C was written\n";
            i = c.buf.rows(), j = c.buf.cols();
          }
    const std::string found = first_finding(mine);
    EXPECT_TRUE(found.empty()) << "case " << what << ": " << found;
    EXPECT_TRUE(same_on_every_rank(msg.find("rank " + std::to_string(bad)) != std::string::npos))
        << "case " << what << ": the message differs between ranks: " << msg;
    EXPECT_NE(msg.find("C on rank " + std::to_string(bad)), std::string::npos) << "case " << what << ": " << msg;
  }
}

}  // namespace
