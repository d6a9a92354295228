// step06 tests: the kernel contract for both kernels (with the block tile the
// launcher picks), and every block tile they are built with on shapes that
// leave partial tiles on every edge.
#include <gtest/gtest.h>

#include <limits>
#include <stdexcept>
#include <string>

#include "contract.hpp"
#include "lab/check.hpp"
#include "lab/cuda_testing.hpp"
#include "lab/todo.hpp"
#include "register_blocking.hpp"

namespace {

using lab::ConstMatView;
using lab::Matrix;
using lab::MatView;
using lab::step06::Tile;

lab::testing::Subject simt(Tile tile = {}) {
  return lab::cuda::host_subject(
      [tile](double alpha, ConstMatView A, ConstMatView B, double beta, MatView C, cudaStream_t s) {
        lab::step06::dgemm(alpha, A, B, beta, C, s, tile);
      });
}

// Available only where the GPU has FP64 tensor cores; elsewhere its tests skip.
lab::testing::Subject dmma(Tile tile = {}) {
  auto s = lab::cuda::host_subject(
      [tile](double alpha, ConstMatView A, ConstMatView B, double beta, MatView C, cudaStream_t st) {
        lab::step06::dgemm_dmma(alpha, A, B, beta, C, st, tile);
      });
  s.available = [](std::string* why) { return lab::step06::dmma_supported(why); };
  return s;
}

}  // namespace

LAB_CONTRACT_SUITE(Step06Simt, simt());
LAB_CONTRACT_SUITE(Step06Dmma, dmma());

namespace {

struct TileCase {
  const char* kernel;  // "simt" or "dmma"
  Tile tile;
  int64_t m, n, k, pad;
  double alpha, beta;
  bool nan_c;
};

std::string tile_name(const ::testing::TestParamInfo<TileCase>& info) {
  const TileCase& c = info.param;
  return std::string(c.kernel) + "_" + std::to_string(c.tile.bm) + "x" + std::to_string(c.tile.bn) + "x" +
         std::to_string(c.tile.bk) + "_m" + std::to_string(c.m) + "_n" + std::to_string(c.n) + "_k" +
         std::to_string(c.k) + "_pad" + std::to_string(c.pad) + (c.nan_c ? "_nanC" : "");
}

// How GoogleTest prints a case in reports (instead of its bytes).
[[maybe_unused]] void PrintTo(const TileCase& c, std::ostream* os) {
  *os << c.kernel << " tile " << c.tile.bm << "x" << c.tile.bn << "x" << c.tile.bk << ", m=" << c.m << " n=" << c.n
      << " k=" << c.k << " alpha=" << c.alpha << " beta=" << c.beta << " pad=" << c.pad << (c.nan_c ? " NaN in C" : "");
}

class Step06Tiles : public ::testing::TestWithParam<TileCase> {};

TEST_P(Step06Tiles, MatchesReference) {
  const TileCase& c = GetParam();
  const lab::testing::Subject s = std::string(c.kernel) == "simt" ? simt(c.tile) : dmma(c.tile);
  if (lab::testing::skip_if_unavailable(s)) GTEST_SKIP();
  const uint64_t seed = lab::testing::fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed) + " (rerun with LAB_SEED=" + std::to_string(seed) + ")");
  Matrix A(c.m, c.k, c.m + c.pad), B(c.k, c.n, c.k + c.pad), C0(c.m, c.n, c.m + c.pad);
  A.fill_random(seed);
  B.fill_random(seed + 1);
  C0.fill_random(seed + 2);
  if (c.nan_c) C0.fill(std::numeric_limits<double>::quiet_NaN());
  Matrix C = C0.clone();
  try {
    s.gemm(c.alpha, A.cview(), B.cview(), c.beta, C.view());
  } catch (const lab::Todo& e) {
    FAIL() << e.what();
  }
  const auto r = lab::check_against_reference(c.alpha, A.cview(), B.cview(), c.beta, C0.cview(), C.cview());
  EXPECT_TRUE(r.ok) << r.report;
}

// Every tile each kernel is built with, on shapes with ragged edges in m, n
// and k, odd leading dimensions (columns not 16-byte aligned: the DMMA kernel
// then copies 8 bytes at a time) and even ones, and NaN in C with beta = 0.
std::vector<TileCase> tile_cases() {
  std::vector<TileCase> out;
  auto add = [&](const char* kernel, Tile t) {
    out.push_back({kernel, t, 301, 257, 515, 2, -0.75, 1.25, false});  // ld 303, 517, 303
    out.push_back({kernel, t, 2 * t.bm, 2 * t.bn, 3 * t.bk, 0, 1.0, 0.5, false});  // exact multiples
    out.push_back({kernel, t, 97, 200, 37, 3, 2.5, 0.0, true});  // ld 100, 40, 100
  };
  for (const Tile& t : lab::step06::simt_tiles()) add("simt", t);
  for (const Tile& t : lab::step06::dmma_tiles()) add("dmma", t);
  return out;
}

INSTANTIATE_TEST_SUITE_P(Built, Step06Tiles, ::testing::ValuesIn(tile_cases()), tile_name);

TEST(Step06Tiles, UnknownTileThrows) {
  const lab::testing::Subject s = simt(Tile{96, 96, 16});
  if (lab::testing::skip_if_unavailable(s)) GTEST_SKIP();
  Matrix A(64, 64), B(64, 64), C(64, 64);
  A.fill_random(1);
  B.fill_random(2);
  C.fill_random(3);
  try {
    s.gemm(1.0, A.cview(), B.cview(), 0.0, C.view());
    ADD_FAILURE() << "a tile the kernel was not built with was accepted";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("built"), std::string::npos) << e.what();
  } catch (const lab::Todo& e) {
    FAIL() << e.what();
  }
}

}  // namespace
