// step03 tests: the shared kernel contract with the default tiles and with tiny
// odd tiles (so every small size crosses tile edges), any tile sizes on one
// odd shape, bad tiles, the tile arithmetic, and the thread split.
#include <omp.h>

#include <cstring>
#include <stdexcept>

#include "contract.hpp"
#include "lab/check.hpp"
#include "lab/machine.hpp"
#include "tiling.hpp"

LAB_CONTRACT_SUITE(Step03Tiled, ::lab::testing::Subject{&lab::step03::dgemm});
LAB_CONTRACT_SUITE(Step03SmallTiles,
                   ::lab::testing::Subject{[](double alpha, lab::ConstMatView A, lab::ConstMatView B,
                                              double beta, lab::MatView C) {
                     lab::step03::dgemm_tiled(alpha, A, B, beta, C, {3, 5, 7});
                   }});

namespace {

struct Problem {
  lab::Matrix A, B, C0;
  Problem(int64_t m, int64_t n, int64_t k, uint64_t seed) : A(m, k, m + 1), B(k, n, k + 2), C0(m, n, m + 3) {
    A.fill_random(seed);
    B.fill_random(seed + 1);
    C0.fill_random(seed + 2);
  }
};

}  // namespace

TEST(Step03Tiles, AnyTileSizesGiveTheProduct) {
  const uint64_t seed = lab::testing::fresh_seed();
  SCOPED_TRACE(lab::testing::seed_note(seed));
  const Problem p(45, 38, 51, seed);
  const lab::step03::Tiles tiles[] = {{1, 1, 1},    {2, 2, 2},   {4, 6, 8},      {5, 3, 1},
                                      {64, 64, 64}, {7, 300, 2}, {1000, 1, 1000}};
  for (const auto& t : tiles) {
    SCOPED_TRACE("tiles mc " + std::to_string(t.mc) + ", nc " + std::to_string(t.nc) + ", kc " +
                 std::to_string(t.kc) + "; m 45, n 38, k 51, alpha -1.5, beta 0.5");
    lab::Matrix C = p.C0.clone();
    lab::step03::dgemm_tiled(-1.5, p.A.cview(), p.B.cview(), 0.5, C.view(), t);
    const auto r = lab::check_against_reference(-1.5, p.A.cview(), p.B.cview(), 0.5, p.C0.cview(), C.cview());
    EXPECT_TRUE(r.ok) << r.report;
  }
}

TEST(Step03Tiles, BadTilesThrowAndWriteNothing) {
  const Problem p(9, 8, 7, 1);
  const struct {
    lab::step03::Tiles tiles;
    const char* name;
  } bads[] = {{{0, 4, 4}, "tiles.mc"}, {{4, -1, 4}, "tiles.nc"}, {{4, 4, 0}, "tiles.kc"}};
  for (const auto& bad : bads)
    lab::testing::expect_invalid_argument(
        [&](lab::MatView C) { lab::step03::dgemm_tiled(1.0, p.A.cview(), p.B.cview(), 0.0, C, bad.tiles); }, p.C0,
        bad.name);
}

TEST(Step03Tiles, DefaultsFitTheCaches) {
  const lab::CacheInfo cache = lab::cache_info();
  const lab::step03::Tiles t = lab::step03::default_tiles();
  constexpr int64_t d = sizeof(double);
  // The handout's arithmetic (each with the floor the code keeps for tiny caches).
  EXPECT_TRUE(4 * t.kc * d <= cache.l1d / 2 || t.kc == 64) << "kc " << t.kc << ", L1 " << cache.l1d;
  EXPECT_TRUE(t.mc * t.kc * d <= cache.l2 / 2 || t.mc == 2) << "mc " << t.mc << ", L2 " << cache.l2;
  EXPECT_TRUE(t.nc * t.kc * d <= cache.l3 / 2 || t.nc == 2) << "nc " << t.nc << ", L3 " << cache.l3;
  EXPECT_EQ(0, t.mc % 2) << "an odd mc leaves a single row in every block";
  EXPECT_EQ(0, t.nc % 2) << "an odd nc leaves a single column in every block";
}

TEST(Step03Tiles, CommandLineOverrides) {
  const lab::step03::Tiles d{10, 20, 30};
  auto same = [](lab::step03::Tiles a, lab::step03::Tiles b) {
    return a.mc == b.mc && a.nc == b.nc && a.kc == b.kc;
  };
  EXPECT_TRUE(same(lab::step03::tiles_with_overrides(d, {}), d));
  EXPECT_TRUE(same(lab::step03::tiles_with_overrides(d, {1}), {1, 20, 30}));
  EXPECT_TRUE(same(lab::step03::tiles_with_overrides(d, {1, 2, 3}), {1, 2, 3}));
  EXPECT_THROW(lab::step03::tiles_with_overrides(d, {1, 2, 3, 4}), std::invalid_argument);
}

TEST(Step03Threads, SameBitsForAnyThreadCount) {
  const uint64_t seed = lab::testing::fresh_seed();
  SCOPED_TRACE(lab::testing::seed_note(seed));
  // 10 MFLOP: enough work that up to 5 threads take part (one per 2 MFLOP).
  const Problem p(167, 153, 201, seed);
  const lab::step03::Tiles tiles{16, 24, 32};
  const int saved = omp_get_max_threads();
  omp_set_num_threads(1);
  lab::Matrix one = p.C0.clone();
  lab::step03::dgemm_tiled(1.0, p.A.cview(), p.B.cview(), -1.0, one.view(), tiles);
  for (int threads : {2, 3, 5}) {
    omp_set_num_threads(threads);
    lab::Matrix many = p.C0.clone();
    lab::step03::dgemm_tiled(1.0, p.A.cview(), p.B.cview(), -1.0, many.view(), tiles);
    EXPECT_EQ(0, std::memcmp(one.data(), many.data(), sizeof(double) * one.size()))
        << threads << " threads give other bits than one thread: do threads share elements of C, or a variable (a sum "
           "declared outside the parallel loop)?";
  }
  omp_set_num_threads(saved);
}
