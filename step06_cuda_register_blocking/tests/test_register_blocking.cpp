// step06 tests: the kernel contract for both kernels and for every candidate
// DMMA kernel of dmma_variants.cu (with the block tile the launcher picks),
// and every block tile they are built with on shapes that leave partial tiles
// on every edge.
#include <gtest/gtest.h>

#include <limits>
#include <stdexcept>
#include <string>
#include <tuple>
#include <vector>

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

// A candidate DMMA kernel (dmma_variants.cu), by name; skips like dmma().
lab::testing::Subject candidate(const std::string& name, Tile tile = {}) {
  auto s = lab::cuda::host_subject(
      [name, tile](double alpha, ConstMatView A, ConstMatView B, double beta, MatView C, cudaStream_t st) {
        lab::step06::dgemm_dmma_candidate(name, alpha, A, B, beta, C, st, tile);
      });
  s.available = [](std::string* why) { return lab::step06::dmma_supported(why); };
  return s;
}

std::vector<std::string> candidate_names() {
  std::vector<std::string> out;
  for (const auto& c : lab::step06::dmma_candidates()) out.push_back(c.name);
  return out;
}

}  // namespace

LAB_CONTRACT_SUITE(Step06Simt, simt());
LAB_CONTRACT_SUITE(Step06Dmma, dmma());

// The contract suite for every candidate: the same cases, the same checks.
namespace {
using CandidateCase = std::tuple<std::string, lab::testing::Case>;

class Step06CandidateContract : public ::testing::TestWithParam<CandidateCase> {};

TEST_P(Step06CandidateContract, MatchesReference) {
  const lab::testing::Subject s = candidate(std::get<0>(GetParam()));
  if (lab::testing::skip_if_unavailable(s)) GTEST_SKIP();
  lab::testing::run_contract_case(s, std::get<1>(GetParam()), lab::testing::fresh_seed());
}

std::string candidate_case_name(const ::testing::TestParamInfo<CandidateCase>& info) {
  const ::testing::TestParamInfo<lab::testing::Case> inner(std::get<1>(info.param), info.index);
  return std::get<0>(info.param) + "_" + lab::testing::case_name(inner);
}

INSTANTIATE_TEST_SUITE_P(Contract, Step06CandidateContract,
                         ::testing::Combine(::testing::ValuesIn(candidate_names()),
                                            ::testing::ValuesIn(lab::testing::contract_cases())),
                         candidate_case_name);

class Step06CandidateArgs : public ::testing::TestWithParam<std::string> {};

TEST_P(Step06CandidateArgs, BadArgumentsThrow) {
  const lab::testing::Subject s = candidate(GetParam());
  if (lab::testing::skip_if_unavailable(s)) GTEST_SKIP();
  lab::testing::run_bad_argument_checks(s);
}

INSTANTIATE_TEST_SUITE_P(Contract, Step06CandidateArgs, ::testing::ValuesIn(candidate_names()),
                         [](const ::testing::TestParamInfo<std::string>& info) { return info.param; });

TEST(Step06Candidates, UnknownNameThrows) {
  Matrix A(4, 4), B(4, 4), C(4, 4);
  EXPECT_THROW(lab::step06::dgemm_dmma_candidate("no_such_kernel", 1.0, A.cview(), B.cview(), 0.0, C.view(),
                                                 nullptr),
               std::invalid_argument);
}
}  // namespace

namespace {

struct TileCase {
  std::string kernel;  // "simt", "dmma" or a candidate's name
  Tile tile;
  int64_t m, n, k, pad;
  double alpha, beta;
  bool nan_c;
};

std::string tile_name(const ::testing::TestParamInfo<TileCase>& info) {
  const TileCase& c = info.param;
  return c.kernel + "_" + std::to_string(c.tile.bm) + "x" + std::to_string(c.tile.bn) + "x" +
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
  const lab::testing::Subject s = c.kernel == "simt" ? simt(c.tile) : c.kernel == "dmma" ? dmma(c.tile)
                                                                                        : candidate(c.kernel, c.tile);
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
  auto add = [&](const std::string& kernel, Tile t) {
    out.push_back({kernel, t, 301, 257, 515, 2, -0.75, 1.25, false});  // ld 303, 517, 303
    out.push_back({kernel, t, 2 * t.bm, 2 * t.bn, 3 * t.bk, 0, 1.0, 0.5, false});  // exact multiples
    out.push_back({kernel, t, 97, 200, 37, 3, 2.5, 0.0, true});  // ld 100, 40, 100
  };
  for (const Tile& t : lab::step06::simt_tiles()) add("simt", t);
  for (const Tile& t : lab::step06::dmma_tiles()) add("dmma", t);
  for (const auto& c : lab::step06::dmma_candidates())
    for (const Tile& t : c.tiles) add(c.name, t);
  // dmma_splitk splits k only where C has few tiles and k is deep: a 256 x 200
  // C with k = 4100 (4 tiles, ragged in m, n and k) splits 4 ways on an H100.
  for (const auto& c : lab::step06::dmma_candidates())
    if (c.name == "dmma_splitk") {
      out.push_back({c.name, c.tiles.front(), 256, 200, 4100, 1, 1.5, -0.5, false});
      out.push_back({c.name, c.tiles.front(), 255, 129, 4099, 0, 1.0, 0.0, true});
    }
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
