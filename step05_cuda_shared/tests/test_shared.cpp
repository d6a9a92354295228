// step05 tests: the kernel contract for the three dgemm kernels, a size far
// from any tile multiple, and the A^T A bonus against the full product.
#include <gtest/gtest.h>

#include <cstring>
#include <limits>
#include <string>

#include "contract.hpp"
#include "lab/check.hpp"
#include "lab/cuda_testing.hpp"
#include "lab/todo.hpp"
#include "shared.hpp"

using lab::ConstMatView;
using lab::Matrix;
using lab::MatView;

LAB_CONTRACT_SUITE(Step05Naive, ::lab::cuda::host_subject(&lab::step05::dgemm_naive));
LAB_CONTRACT_SUITE(Step05NaiveCoalesced, ::lab::cuda::host_subject(&lab::step05::dgemm_naive_coalesced));
LAB_CONTRACT_SUITE(Step05Tiled, ::lab::cuda::host_subject(&lab::step05::dgemm));

namespace {

const lab::testing::Subject& tiled() {
  static const lab::testing::Subject s = lab::cuda::host_subject(&lab::step05::dgemm);
  return s;
}

TEST(Step05Tiled, LargeOddShapeMatchesReference) {
  if (lab::testing::skip_if_unavailable(tiled())) return;
  const uint64_t seed = lab::testing::fresh_seed();
  SCOPED_TRACE(lab::testing::seed_note(seed));
  const int64_t m = 301, n = 257, k = 515;  // several tiles in each direction, none full at the edge
  Matrix A(m, k), B(k, n), C0(m, n);
  A.fill_random(seed);
  B.fill_random(seed + 1);
  C0.fill_random(seed + 2);
  Matrix C = C0.clone();
  try {
    tiled().gemm(-0.75, A.cview(), B.cview(), 1.25, C.view());
  } catch (const lab::Todo& e) {
    FAIL() << e.what();
  }
  const auto r = lab::check_against_reference(-0.75, A.cview(), B.cview(), 1.25, C0.cview(), C.cview());
  EXPECT_TRUE(r.ok) << r.report;
}

// ---- A^T A ----------------------------------------------------------------

struct AtaCase {
  int64_t n, k;
  double alpha, beta;
  int64_t pad;
  bool nan_c;
};

std::string ata_name(const ::testing::TestParamInfo<AtaCase>& info) {
  const AtaCase& c = info.param;
  return "n" + std::to_string(c.n) + "_k" + std::to_string(c.k) + "_pad" + std::to_string(c.pad) +
         (c.nan_c ? "_nanC" : "") + "_" + std::to_string(info.index);
}

// How GoogleTest prints a case in reports (instead of its bytes).
[[maybe_unused]] void PrintTo(const AtaCase& c, std::ostream* os) {
  *os << "n=" << c.n << " k=" << c.k << " alpha=" << c.alpha << " beta=" << c.beta << " pad=" << c.pad
      << (c.nan_c ? " NaN in C" : "");
}

// A NaN with a payload arithmetic never makes: a guard cell holding it was not written.
double guard() {
  const uint64_t bits = 0x7ff4dead0000beefULL;
  double d;
  std::memcpy(&d, &bits, sizeof d);
  return d;
}

void ata_on_host(double alpha, ConstMatView A, double beta, MatView C) {
  lab::cuda::run_on_host_views([](double al, ConstMatView a, ConstMatView, double be, MatView c,
                                  cudaStream_t s) { lab::step05::ata(al, a, be, c, s); },
                               alpha, A, ConstMatView{nullptr, 0, 0, 1}, beta, C);
}

class Step05Ata : public ::testing::TestWithParam<AtaCase> {};

TEST_P(Step05Ata, MatchesFullProduct) {
  if (lab::testing::skip_if_unavailable(tiled())) return;
  const AtaCase& c = GetParam();
  const uint64_t seed = lab::testing::fresh_seed();
  SCOPED_TRACE(lab::testing::seed_note(seed));
  Matrix A(c.k, c.n, c.k + c.pad), C0(c.n, c.n);
  A.fill_random(seed);
  C0.fill_random(seed + 1);  // not symmetric: the mirror must apply beta to C's own lower values
  if (c.nan_c) C0.fill(std::numeric_limits<double>::quiet_NaN());
  // C inside a frame of guard cells (one row above, pad + 1 below, a column each side).
  Matrix frame(c.n + 2 + c.pad, c.n + 2);
  frame.fill_all(guard());
  MatView C{frame.data() + 1 + frame.ld(), c.n, c.n, frame.ld()};
  for (int64_t j = 0; j < c.n; ++j)
    for (int64_t i = 0; i < c.n; ++i) C(i, j) = C0(i, j);
  try {
    ata_on_host(c.alpha, A.cview(), c.beta, C);
  } catch (const lab::Todo& e) {
    FAIL() << e.what();
  }
  Matrix At(c.n, c.k), out(c.n, c.n);
  for (int64_t j = 0; j < c.k; ++j)
    for (int64_t i = 0; i < c.n; ++i) At(i, j) = A(j, i);
  for (int64_t j = 0; j < c.n; ++j)
    for (int64_t i = 0; i < c.n; ++i) out(i, j) = C(i, j);
  const auto r =
      lab::check_against_reference(c.alpha, At.cview(), A.cview(), c.beta, C0.cview(), out.cview());
  EXPECT_TRUE(r.ok) << "A^T A, n=" << c.n << " k=" << c.k << ":\n" << r.report;
  std::string where;
  EXPECT_TRUE(lab::guards_intact(frame, 1, 1, c.n, c.n, guard(), &where)) << "wrote outside C: " << where;
}

INSTANTIATE_TEST_SUITE_P(Shapes, Step05Ata,
                         ::testing::Values(AtaCase{0, 5, 1, 0.5, 0, false}, AtaCase{4, 0, 1, 0.5, 1, false},
                                           AtaCase{1, 1, 1, 0, 0, false}, AtaCase{7, 3, 2.5, -1, 2, false},
                                           AtaCase{31, 64, 1, 1, 0, false},
                                           AtaCase{32, 32, -1, 0.5, 3, false},
                                           AtaCase{33, 17, 0.5, 2.5, 1, false},
                                           AtaCase{65, 129, 1, 0, 0, true}, AtaCase{100, 7, 1, -1, 0, false},
                                           AtaCase{129, 200, 1, 0.5, 1, false},
                                           AtaCase{50, 20, 0, 2.5, 0, false}, AtaCase{40, 40, 0, 0, 0, true}),
                         ata_name);

TEST(Step05AtaArgs, BadArgumentsThrow) {
  if (lab::testing::skip_if_unavailable(tiled())) return;
  Matrix a(8, 8), c(8, 8);
  a.fill_random(1);
  c.fill_random(2);
  const Matrix c_before = c.clone();
  struct Bad {
    const char* what;
    ConstMatView A;
    MatView C;
    const char* must_mention;
  };
  const Bad bads[] = {
      {"C not n x n", {a.data(), 4, 5, 8}, {c.data(), 5, 4, 8}, "n x n"},
      {"negative k", {a.data(), -1, 5, 8}, {c.data(), 5, 5, 8}, "rows"},
      {"A.ld < A.rows", {a.data(), 6, 5, 5}, {c.data(), 5, 5, 8}, "ld"},
      {"C.ld < C.rows", {a.data(), 6, 5, 8}, {c.data(), 5, 5, 4}, "ld"},
      {"A.data is null", {nullptr, 6, 5, 8}, {c.data(), 5, 5, 8}, "null"},
  };
  for (const Bad& bad : bads) {
    SCOPED_TRACE(bad.what);
    bool threw = false;
    try {
      ata_on_host(1.0, bad.A, 0.5, bad.C);
    } catch (const std::invalid_argument& e) {
      threw = true;
      EXPECT_NE(std::string(e.what()).find(bad.must_mention), std::string::npos) << e.what();
    } catch (const lab::Todo& e) {
      FAIL() << e.what();
    }
    EXPECT_TRUE(threw) << "no std::invalid_argument for " << bad.what;
    EXPECT_EQ(0, std::memcmp(c_before.data(), c.data(), sizeof(double) * c.size())) << "C was written";
  }
}

}  // namespace
