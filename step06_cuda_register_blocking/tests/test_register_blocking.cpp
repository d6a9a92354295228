// step06 tests: the kernel contract for both kernels and for every candidate
// DMMA kernel of dmma_variants.cu (with the block tile the launcher picks),
// and every block tile they are built with on shapes that leave partial tiles
// on every edge; then ata_dmma (A^T A on the tensor cores) against the full
// product, with its mirrored half checked to the bit.
#include <gtest/gtest.h>

#include <cstring>
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
  if (lab::testing::skip_if_unavailable(s)) return;
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
  if (lab::testing::skip_if_unavailable(s)) return;
  lab::testing::run_bad_argument_checks(s);
}

INSTANTIATE_TEST_SUITE_P(Contract, Step06CandidateArgs, ::testing::ValuesIn(candidate_names()),
                         [](const ::testing::TestParamInfo<std::string>& info) { return info.param; });

// The name is checked before the GPU is touched, yet the test skips with the
// other DMMA tests: one pass without a GPU would make ctest report the whole
// program passed there.
TEST(Step06Candidates, UnknownNameThrows) {
  if (lab::testing::skip_if_unavailable(dmma())) return;
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
  if (lab::testing::skip_if_unavailable(s)) return;
  const uint64_t seed = lab::testing::fresh_seed();
  SCOPED_TRACE(lab::testing::seed_note(seed));
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
  // dmma_k8 launches the whole tiles and thin partial ones (a quarter of a
  // tile or less) separately: C one row and one column past a whole number
  // of tiles (odd leading dimensions, deep k), thin in n only, thin in m
  // with a NaN C and beta = 0, and one thin and one thick edge (one launch).
  for (const auto& c : lab::step06::dmma_candidates())
    for (const Tile& t : c.tiles) {
      out.push_back({c.name, t, t.bm + 1, t.bn + 1, 1027, 0, 1.5, -0.5, false});
      out.push_back({c.name, t, 2 * t.bm, t.bn + 3, 40, 1, -1.0, 2.0, false});
      out.push_back({c.name, t, 3 * t.bm + t.bm / 4, 2 * t.bn, 17, 2, 1.0, 0.0, true});
      out.push_back({c.name, t, t.bm + 2, t.bn + t.bn / 2, 33, 0, 0.5, 1.0, false});
    }
  // From 6144 rows and columns of C on, dmma_k8 first copies an operand
  // whose columns are not all 16-byte aligned into aligned storage: odd
  // leading dimensions of A, B and C (k odd), with thin edges.
  out.push_back({"dmma_k8", Tile{128, 128, 16}, 6145, 6145, 37, 0, -0.5, 1.5, false});
  return out;
}

INSTANTIATE_TEST_SUITE_P(Built, Step06Tiles, ::testing::ValuesIn(tile_cases()), tile_name);

TEST(Step06Tiles, UnknownTileThrows) {
  const lab::testing::Subject s = simt(Tile{96, 96, 16});
  if (lab::testing::skip_if_unavailable(s)) return;
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

// ---- A^T A on the tensor cores (ata_dmma) --------------------------------
namespace {

struct AtaCase {
  int64_t n, k;
  double alpha, beta;
  int64_t pad;
  bool nan_c, symmetric_c;  // NaN in C (with beta = 0); C0 symmetric (its mirror must be exact too)
};

std::string ata_case_name(const ::testing::TestParamInfo<AtaCase>& info) {
  const AtaCase& c = info.param;
  return "n" + std::to_string(c.n) + "_k" + std::to_string(c.k) + "_pad" + std::to_string(c.pad) +
         (c.beta == 0.0 ? "_b0" : "") + (c.nan_c ? "_nanC" : "") + (c.symmetric_c ? "_symC" : "") + "_" +
         std::to_string(info.index);
}

[[maybe_unused]] void PrintTo(const AtaCase& c, std::ostream* os) {
  *os << "n=" << c.n << " k=" << c.k << " alpha=" << c.alpha << " beta=" << c.beta << " pad=" << c.pad
      << (c.nan_c ? " NaN in C" : "") << (c.symmetric_c ? " symmetric C" : "");
}

// A NaN with a payload arithmetic never makes: a guard cell holding it was not written.
double ata_guard() {
  const uint64_t bits = 0x7ff4dead0000beefULL;
  double d;
  std::memcpy(&d, &bits, sizeof d);
  return d;
}

class Step06AtaDmma : public ::testing::TestWithParam<AtaCase> {};

TEST_P(Step06AtaDmma, MatchesFullProductAndMirrorsExactly) {
  if (lab::testing::skip_if_unavailable(dmma())) return;
  const AtaCase& c = GetParam();
  const uint64_t seed = lab::testing::fresh_seed();
  SCOPED_TRACE(lab::testing::seed_note(seed));
  Matrix A(c.k, c.n, c.k + c.pad), C0(c.n, c.n);
  A.fill_random(seed);
  C0.fill_random(seed + 1);  // not symmetric unless asked: the mirror must apply beta to C's own values
  if (c.symmetric_c)
    for (int64_t j = 0; j < c.n; ++j)
      for (int64_t i = j + 1; i < c.n; ++i) C0(i, j) = C0(j, i);
  if (c.nan_c) C0.fill(std::numeric_limits<double>::quiet_NaN());
  // C inside a frame of guard cells (one row above, pad + 1 below, a column each side).
  Matrix frame(c.n + 2 + c.pad, c.n + 2);
  frame.fill_all(ata_guard());
  MatView C{frame.data() + 1 + frame.ld(), c.n, c.n, frame.ld()};
  for (int64_t j = 0; j < c.n; ++j)
    for (int64_t i = 0; i < c.n; ++i) C(i, j) = C0(i, j);
  lab::cuda::run_on_host_views([](double al, ConstMatView a, ConstMatView, double be, MatView cv,
                                  cudaStream_t s) { lab::step06::ata_dmma(al, a, be, cv, s); },
                               c.alpha, A.cview(), ConstMatView{nullptr, 0, 0, 1}, c.beta, C);
  Matrix At(c.n, c.k), out(c.n, c.n);
  for (int64_t j = 0; j < c.k; ++j)
    for (int64_t i = 0; i < c.n; ++i) At(i, j) = A(j, i);
  for (int64_t j = 0; j < c.n; ++j)
    for (int64_t i = 0; i < c.n; ++i) out(i, j) = C(i, j);
  const auto r = lab::check_against_reference(c.alpha, At.cview(), A.cview(), c.beta, C0.cview(), out.cview());
  EXPECT_TRUE(r.ok) << "A^T A, n=" << c.n << " k=" << c.k << ":\n" << r.report;
  std::string where;
  EXPECT_TRUE(lab::guards_intact(frame, 1, 1, c.n, c.n, ata_guard(), &where)) << "wrote outside C: " << where;
  // Where the old values agree (beta = 0, or a symmetric C), the lower half is
  // the upper half's copy, to the bit.
  if (c.beta == 0.0 || c.symmetric_c) {
    int64_t differ = 0;
    std::string first;
    for (int64_t j = 0; j < c.n; ++j)
      for (int64_t i = j + 1; i < c.n; ++i)
        if (std::memcmp(&out(i, j), &out(j, i), sizeof(double)) != 0 && differ++ == 0)
          first = "C(" + std::to_string(i) + ", " + std::to_string(j) + ") = " + std::to_string(out(i, j)) +
                  " but C(" + std::to_string(j) + ", " + std::to_string(i) + ") = " + std::to_string(out(j, i));
    EXPECT_EQ(differ, 0) << differ << " mirrored elements differ from the upper half; first: " << first;
  }
}

// Odd sizes on every side of the 128 x 128 tile, k ragged against the slice
// of 16, odd and even leading dimensions (odd: the copies go 8 bytes at a
// time), beta = 0 with NaN in C, a symmetric C with beta != 0, alpha = 0, k = 0.
INSTANTIATE_TEST_SUITE_P(
    Shapes, Step06AtaDmma,
    ::testing::Values(AtaCase{0, 5, 1, 0.5, 0, false, false}, AtaCase{4, 0, 1, 0.5, 1, false, false},
                      AtaCase{1, 1, 1, 0, 0, false, false}, AtaCase{7, 3, 2.5, -1, 2, false, false},
                      AtaCase{33, 17, 0.5, 2.5, 1, false, false}, AtaCase{127, 64, 1, 0, 0, true, false},
                      AtaCase{128, 128, -1, 0.5, 0, false, true}, AtaCase{129, 200, 1, 0.5, 1, false, false},
                      AtaCase{255, 33, 1.5, 0, 1, false, false}, AtaCase{257, 301, 1, -0.5, 0, false, true},
                      AtaCase{300, 515, -0.75, 1.25, 3, false, false}, AtaCase{385, 1000, 1, 0, 0, true, false},
                      AtaCase{50, 20, 0, 2.5, 0, false, false}, AtaCase{40, 40, 0, 0, 0, true, false}),
    ata_case_name);

TEST(Step06AtaDmmaArgs, BadArgumentsThrow) {
  if (lab::testing::skip_if_unavailable(dmma())) return;  // as UnknownNameThrows
  Matrix a(8, 5), c(8, 8);
  auto expect_throw = [&](ConstMatView A, MatView C, const std::string& name) {
    try {
      lab::step06::ata_dmma(1.0, A, 0.0, C, nullptr);
      ADD_FAILURE() << "accepted: " << name;
    } catch (const std::invalid_argument& e) {
      EXPECT_NE(std::string(e.what()).find(name), std::string::npos) << e.what();
    }
  };
  expect_throw({a.data(), 4, 5, 8}, {c.data(), 5, 4, 8}, "n x n");
  expect_throw({a.data(), -1, 5, 8}, {c.data(), 5, 5, 8}, "negative");
  expect_throw({a.data(), 6, 5, 5}, {c.data(), 5, 5, 8}, "A.ld");
  expect_throw({a.data(), 6, 5, 8}, {c.data(), 5, 5, 4}, "C.ld");
  expect_throw({nullptr, 6, 5, 8}, {c.data(), 5, 5, 8}, "null");
}

}  // namespace
