// step08 tests: choosing the grid, cutting the sizes, and the volume formulas.
// Plain arithmetic, no communication: every rank checks the same thing.
#include <gtest/gtest.h>

#include <cstdint>
#include <string>

#include "grid.hpp"
#include "mpi3d.hpp"

namespace {

using lab::step08::factorizations;
using lab::step08::Grid;
using lab::step08::Split;
using lab::step08::words_per_rank;

struct Problem {
  int64_t m, n, k;
};
const Problem kProblems[] = {{1000, 1000, 1000}, {1023, 1023, 1023}, {10, 10, 100000}, {5000, 20, 20},
                             {20, 5000, 20},     {300, 200, 1},      {1, 1, 1},        {7, 3000, 11}};

TEST(Step08ChooseGrid, UsesEveryRankAndMovesNoMoreThanAnyOtherGrid) {
  for (int p : {1, 2, 3, 4, 5, 6, 7, 8, 9, 12, 13, 16, 24, 27, 31, 64, 97})
    for (const Problem& pb : kProblems) {
      SCOPED_TRACE("p=" + std::to_string(p) + " m=" + std::to_string(pb.m) + " n=" + std::to_string(pb.n) +
                   " k=" + std::to_string(pb.k));
      const Grid g = lab::step08::choose_grid(p, pb.m, pb.n, pb.k);
      ASSERT_TRUE(g.px >= 1 && g.py >= 1 && g.pz >= 1) << g.str();
      ASSERT_EQ(p, g.size()) << g.str();
      const int64_t w = words_per_rank(g, pb.m, pb.n, pb.k);
      for (const Grid& other : factorizations(p))
        EXPECT_LE(w, words_per_rank(other, pb.m, pb.n, pb.k))
            << g.str() << " moves more than " << other.str();
    }
}

TEST(Step08ChooseGrid, ThreeDimensionsNeverLoseToTwo) {
  // p = 8: the cube moves no more than the best 2D grid; p = 64: strictly less
  // (3 n^2 / 16 against n^2 / 4 words per rank).
  const int64_t n = 1200;
  for (int p : {8, 64}) {
    const Grid g = lab::step08::choose_grid(p, n, n, n), g2 = lab::step08::best_2d_grid(p, n, n, n);
    EXPECT_LE(words_per_rank(g, n, n, n), words_per_rank(g2, n, n, n)) << g.str() << " vs " << g2.str();
  }
  const Grid g64 = lab::step08::choose_grid(64, n, n, n);
  EXPECT_EQ((Grid{4, 4, 4}), g64) << g64.str();
}

TEST(Step08Grid, Best2dGridBreaksTiesAsChooseGridDoes) {
  // The benchmark's "best 2D" line: at p = 4 every 2D grid moves n^2 words per
  // rank, and 2x2x1 holds the least (what choose_grid picks), not 4x1x1.
  const int64_t n = 1024;
  EXPECT_EQ((Grid{2, 2, 1}), lab::step08::best_2d_grid(4, n, n, n)) << lab::step08::best_2d_grid(4, n, n, n).str();
  EXPECT_EQ((Grid{4, 4, 1}), lab::step08::best_2d_grid(16, n, n, n)) << lab::step08::best_2d_grid(16, n, n, n).str();
  EXPECT_EQ((Grid{1, 1, 1}), lab::step08::best_2d_grid(1, n, n, n));
  // a prime: 1D only; a tall-skinny product: its rows split
  EXPECT_EQ(1, lab::step08::best_2d_grid(7, n, n, n).pz);
  EXPECT_EQ((Grid{8, 1, 1}), lab::step08::best_2d_grid(8, 1 << 16, 64, 64)) << lab::step08::best_2d_grid(8, 1 << 16, 64, 64).str();
}

TEST(Step08ChooseGrid, TiesGoToTheLeastDataPerRankThenTheSmallerPz) {
  // A square problem ties often. The tie-break (choose_grid.cpp's comment): first
  // the fewest words moved; then the least data per rank, counted as the words
  // of the three blocks rank (0, 0, 0) holds (mx kz + kz ny + mx ny); then the
  // smaller pz; then the first grid in factorizations() order.
  const int64_t n = 1200;
  // p = 8: 2x2x2, 1x2x4, 1x4x2, 2x1x4, ... all move 0.75 n^2 words per rank;
  // 2x2x2 holds 0.75 n^2 of blocks, 1x2x4 (the first of them) 0.875 n^2.
  EXPECT_EQ((Grid{2, 2, 2}), lab::step08::choose_grid(8, n, n, n)) << lab::step08::choose_grid(8, n, n, n).str();
  // p = 4: every grid moves n^2; 2x2x1, 1x2x2 and 2x1x2 hold 1.25 n^2; pz = 1 wins.
  EXPECT_EQ((Grid{2, 2, 1}), lab::step08::choose_grid(4, n, n, n)) << lab::step08::choose_grid(4, n, n, n).str();
  // p = 2: all three grids move n^2 and hold 2 n^2; pz = 1, then the order: 1x2x1.
  EXPECT_EQ((Grid{1, 2, 1}), lab::step08::choose_grid(2, n, n, n)) << lab::step08::choose_grid(2, n, n, n).str();
}

TEST(Step08ChooseGrid, TheShapeOfTheProblemDecides) {
  // A long k and a tiny C: split k and sum the small C along z.
  EXPECT_EQ(8, lab::step08::choose_grid(8, 10, 10, 100000).pz);
  // k = 1: nothing to sum, the 2D grid on C (pz = 1).
  EXPECT_EQ(1, lab::step08::choose_grid(8, 4000, 4000, 1).pz);
  // A prime number of ranks leaves only 1D grids.
  const Grid g = lab::step08::choose_grid(7, 500, 500, 500);
  EXPECT_EQ(2, (g.px == 1) + (g.py == 1) + (g.pz == 1)) << g.str();
}

TEST(Step08Split, EveryItemOnceInBalancedContiguousPieces) {
  for (int64_t n : {0, 1, 5, 7, 100, 1023})
    for (int parts : {1, 2, 3, 7, 8, 16}) {
      const Split s{n, parts};
      int64_t next = 0;
      for (int b = 0; b < parts; ++b) {
        EXPECT_EQ(next, s.start(b)) << "n=" << n << " parts=" << parts << " piece " << b;
        EXPECT_LE(s.size(b), s.largest());
        EXPECT_GE(s.size(b), s.largest() - 1);
        next += s.size(b);
      }
      EXPECT_EQ(n, next) << "n=" << n << " parts=" << parts;
    }
}

TEST(Step08Volume, WholeBlocksMatchTheFormulaWhenSizesDivide) {
  for (const Grid& g : factorizations(24))
    EXPECT_DOUBLE_EQ(lab::step08::words_formula(g, 480, 240, 720), double(words_per_rank(g, 480, 240, 720)))
        << g.str();
  // The cube of 8: each rank moves a quarter of each matrix.
  EXPECT_EQ(3 * 400 * 400 / 4, words_per_rank(Grid{2, 2, 2}, 400, 400, 400));
  // No rank moves fewer words than the lower bound, on any grid.
  for (const Grid& g : factorizations(64))
    EXPECT_GE(double(words_per_rank(g, 960, 960, 960)), lab::step08::lower_bound_words(64, 960, 960, 960))
        << g.str();
}

}  // namespace
