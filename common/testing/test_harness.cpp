// Tests of the harness itself: a check that cannot fail is worse than none.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "lab/bench.hpp"
#include "lab/check.hpp"
#include "lab/gemm_args.hpp"
#include "lab/grade_wire.hpp"
#include "lab/random.hpp"
#include "lab/registry.hpp"
#include "lab/timer.hpp"

#ifdef _OPENMP
#include <omp.h>
#endif

namespace {

using lab::Matrix;

struct Product {
  Matrix A, B, C0, C;
  Product(int64_t m, int64_t n, int64_t k, uint64_t seed) : A(m, k), B(k, n), C0(m, n), C(m, n) {
    A.fill_random(seed);
    B.fill_random(seed + 1);
    C0.fill_random(seed + 2);
    C = C0.clone();
  }
};

// The same product summed in the opposite order: a different, equally valid rounding.
void reversed_gemm(double alpha, lab::ConstMatView A, lab::ConstMatView B, double beta, lab::MatView C) {
  for (int64_t j = 0; j < C.cols; ++j)
    for (int64_t i = 0; i < C.rows; ++i) {
      double s = 0;
      for (int64_t p = A.cols - 1; p >= 0; --p) s += A(i, p) * B(p, j);
      C(i, j) = alpha * s + beta * C(i, j);
    }
}

TEST(Check, AcceptsAnotherSummationOrder) {
  Product p(70, 50, 300, 11);
  reversed_gemm(1.5, p.A.cview(), p.B.cview(), -0.5, p.C.view());
  auto r = lab::check_against_reference(1.5, p.A.cview(), p.B.cview(), -0.5, p.C0.cview(), p.C.cview());
  EXPECT_TRUE(r.ok) << r.report;
  EXPECT_GT(r.worst_ratio, 0.0);  // the two orders do round differently
}

TEST(Check, CatchesOneWrongElementAndSaysWhere) {
  Product p(40, 30, 20, 12);
  lab::reference_gemm(1.0, p.A.cview(), p.B.cview(), 1.0, p.C.view());
  p.C(37, 4) += 1e-9;  // tiny, but far above the bound at k = 20
  auto r = lab::check_against_reference(1.0, p.A.cview(), p.B.cview(), 1.0, p.C0.cview(), p.C.cview());
  EXPECT_FALSE(r.ok);
  EXPECT_EQ(1, r.mismatches);
  EXPECT_NE(r.report.find("C(37,4)"), std::string::npos) << r.report;
  EXPECT_NE(r.report.find("block map"), std::string::npos) << r.report;
}

TEST(Check, SaysWhenWrongElementsWereNotWrittenAtAll) {
  Product p(12, 10, 6, 14);
  lab::reference_gemm(0.5, p.A.cview(), p.B.cview(), 2.0, p.C.view());
  for (int64_t i = 0; i < 12; ++i) p.C(i, 7) = p.C0(i, 7);  // a column never written
  auto r = lab::check_against_reference(0.5, p.A.cview(), p.B.cview(), 2.0, p.C0.cview(), p.C.cview());
  EXPECT_FALSE(r.ok);
  EXPECT_NE(r.report.find("each of them still holds C's value from before the call"), std::string::npos) << r.report;
  p.C(0, 0) += 1.0;  // and one written wrong
  r = lab::check_against_reference(0.5, p.A.cview(), p.B.cview(), 2.0, p.C0.cview(), p.C.cview());
  EXPECT_NE(r.report.find("12 of them still hold C's value from before the call"), std::string::npos) << r.report;
}

TEST(Check, NaNWhereANumberIsDueFails) {
  Product p(8, 8, 8, 13);
  lab::reference_gemm(1.0, p.A.cview(), p.B.cview(), 0.0, p.C.view());
  p.C(3, 3) = std::numeric_limits<double>::quiet_NaN();
  auto r = lab::check_against_reference(1.0, p.A.cview(), p.B.cview(), 0.0, p.C0.cview(), p.C.cview());
  EXPECT_FALSE(r.ok);
  EXPECT_NE(r.report.find('N'), std::string::npos);
}

TEST(Check, BetaZeroIgnoresNaNInC0) {
  Product p(9, 7, 5, 14);
  p.C0.fill_nan();
  p.C.fill_nan();
  lab::reference_gemm(2.0, p.A.cview(), p.B.cview(), 0.0, p.C.view());
  auto r = lab::check_against_reference(2.0, p.A.cview(), p.B.cview(), 0.0, p.C0.cview(), p.C.cview());
  EXPECT_TRUE(r.ok) << r.report;
}

TEST(Freivalds, PassesRightAndCatchesWrong) {
  Product p(300, 200, 250, 15);
  lab::reference_gemm(1.0, p.A.cview(), p.B.cview(), 0.5, p.C.view());
  EXPECT_TRUE(lab::freivalds_check(1.0, p.A.cview(), p.B.cview(), 0.5, p.C0.cview(), p.C.cview()).ok);
  p.C(123, 45) += 1e-6;
  auto r = lab::freivalds_check(1.0, p.A.cview(), p.B.cview(), 0.5, p.C0.cview(), p.C.cview());
  EXPECT_FALSE(r.ok);
  EXPECT_NE(r.report.find("(123)"), std::string::npos) << r.report;
  // a NaN in C: the row is named as holding one, not as a difference of nan against a bound of nan
  p.C(123, 45) = std::numeric_limits<double>::quiet_NaN();
  r = lab::freivalds_check(1.0, p.A.cview(), p.B.cview(), 0.5, p.C0.cview(), p.C.cview());
  EXPECT_FALSE(r.ok);
  EXPECT_NE(r.report.find("(row 123 of C holds NaN or Inf)"), std::string::npos) << r.report;
  EXPECT_EQ(r.report.find("bound nan"), std::string::npos) << r.report;
}

TEST(Guards, DetectAWriteOutsideTheBlock) {
  Matrix full(10, 6);
  full.fill_all(-7.0);
  EXPECT_TRUE(lab::guards_intact(full, 1, 1, 5, 3, -7.0));
  full(6, 2) = 0.0;  // just below the 5-row block starting at row 1
  std::string where;
  EXPECT_FALSE(lab::guards_intact(full, 1, 1, 5, 3, -7.0, &where));
  EXPECT_NE(where.find("(6,2)"), std::string::npos) << where;
}

TEST(Matrix, RejectsBadShapes) {
  EXPECT_THROW(Matrix(-1, 3), std::invalid_argument);
  EXPECT_THROW(Matrix(3, -1), std::invalid_argument);
  EXPECT_THROW(Matrix(5, 3, 4), std::invalid_argument);
  EXPECT_THROW(Matrix(int64_t(1) << 40, int64_t(1) << 40), std::invalid_argument);
  Matrix padded(5, 3, 8);
  EXPECT_EQ(8, padded.ld());
  EXPECT_EQ(0u, reinterpret_cast<uintptr_t>(padded.data()) % 64);
}

// The random fill is counter-based: the same seed gives the same matrix for any
// number of threads and any ld, inside [lo, hi), and another seed another one.
TEST(Matrix, FillRandomIsTheSameForAnyThreadsAndLd) {
  const int64_t m = 1500, n = 900;  // over a million elements: the parallel path
  Matrix a(m, n), b(m, n, m + 7), c(m, n);
#ifdef _OPENMP
  const int before = omp_get_max_threads();
  omp_set_num_threads(1);
  a.fill_random(42);
  omp_set_num_threads(3);
  b.fill_random(42);
  omp_set_num_threads(before);
#else
  a.fill_random(42);
  b.fill_random(42);
#endif
  c.fill_random(43);
  int64_t same_as_other_seed = 0;
  double lo = 1, hi = -1, sum = 0;
  for (int64_t j = 0; j < n; ++j)
    for (int64_t i = 0; i < m; ++i) {
      ASSERT_EQ(a(i, j), b(i, j)) << "at (" << i << ", " << j << ")";
      same_as_other_seed += a(i, j) == c(i, j);
      lo = std::min(lo, a(i, j));
      hi = std::max(hi, a(i, j));
      sum += a(i, j);
    }
  EXPECT_EQ(same_as_other_seed, 0);
  // the element lab/random.hpp gives (i, j), which step08 fills its blocks on the ranks with
  EXPECT_EQ(a(1234, 567), 2.0 * lab::random_unit(42, 1234, 567) - 1.0);
  EXPECT_GE(lo, -1.0);
  EXPECT_LT(hi, 1.0);
  EXPECT_LT(lo, -0.999);  // the whole range is used
  EXPECT_GT(hi, 0.999);
  EXPECT_NEAR(sum / double(m * n), 0.0, 0.01);  // and evenly (the mean's standard error is 0.0005)
  Matrix small(3, 2);
  small.fill_random(7, 2.0, 2.5);
  for (int64_t j = 0; j < 2; ++j)
    for (int64_t i = 0; i < 3; ++i) {
      EXPECT_GE(small(i, j), 2.0);
      EXPECT_LT(small(i, j), 2.5);
    }
}

// The grader's refill between repeated speed-case calls (lab/refill.hpp): the
// same key gives the same bits on every core (the checker recomputes the last
// call's A and B with it), and A, B and each call get numbers of their own.
TEST(Refill, EachCallAndOperandGetsFreshNumbersTheSameOnEveryCore) {
  const size_t count = (size_t(1) << 18) + 333;  // over the parallel threshold
  std::vector<double> b2(count), b3(count), a3(count), b2_again(count), other_seed(count);
  lab::wire::refill(b2.data(), count, lab::wire::refill_key(99, 2, 1));
  lab::wire::refill(b3.data(), count, lab::wire::refill_key(99, 3, 1));
  lab::wire::refill(a3.data(), count, lab::wire::refill_key(99, 3, 0));
  lab::wire::refill(other_seed.data(), count, lab::wire::refill_key(100, 2, 1));
#ifdef _OPENMP
  const int before = omp_get_max_threads();
  omp_set_num_threads(1);  // the refill takes every core whatever this says; the bits may not depend on it
#endif
  for (size_t i = 0; i < count; ++i) b2_again[i] = lab::wire::refill_value(lab::wire::refill_key(99, 2, 1), i);
#ifdef _OPENMP
  omp_set_num_threads(before);
#endif
  size_t same = 0;
  double lo = 1, hi = -1;
  for (size_t i = 0; i < count; ++i) {
    ASSERT_EQ(b2[i], b2_again[i]) << "element " << i;
    same += (b2[i] == b3[i]) + (b3[i] == a3[i]) + (b2[i] == other_seed[i]);
    lo = std::min(lo, b2[i]);
    hi = std::max(hi, b2[i]);
  }
  EXPECT_EQ(0u, same) << "elements shared between calls, operands or seeds";
  EXPECT_GE(lo, -1.0);
  EXPECT_LT(hi, 1.0);
  EXPECT_LT(lo, -0.999);
  EXPECT_GT(hi, 0.999);
}

TEST(QuickReturn, AlphaZeroScalesWithoutReadingAB) {
  Matrix C(4, 4);
  C.fill(2.0);
  Matrix a(4, 3), b(3, 4);
  a.fill_nan();
  b.fill_nan();
  EXPECT_TRUE(lab::gemm_quick_return(0.0, a.cview(), b.cview(), 0.5, C.view()));
  EXPECT_EQ(1.0, C(3, 3));
}

TEST(Timer, MedianOfSamples) {
  auto t = lab::summarize({3.0, 1.0, 2.0, 10.0});
  EXPECT_DOUBLE_EQ(2.5, t.median_s);
  EXPECT_DOUBLE_EQ(1.0, t.min_s);
  EXPECT_DOUBLE_EQ(10.0, t.max_s);
  EXPECT_EQ(4, t.reps);
}

TEST(Cli, BadInputIsAUsageError) {
  const lab::StepInfo info{"step00", "test", lab::Backend::cpu, 64};
  auto parse = [&](std::vector<const char*> args) {
    args.insert(args.begin(), "prog");
    return lab::parse_bench_args(static_cast<int>(args.size()), args.data(), info);
  };
  EXPECT_THROW(parse({"--n", "-5"}), lab::UsageError);
  EXPECT_THROW(parse({"--n", "12x"}), lab::UsageError);
  EXPECT_THROW(parse({"--n"}), lab::UsageError);
  EXPECT_THROW(parse({"--frobnicate"}), lab::UsageError);
  EXPECT_THROW(parse({"--impl", "teacher"}), lab::UsageError);
  EXPECT_THROW(parse({"--tile", "8,0"}), lab::UsageError);
  auto o = parse({"--n", "100", "--k=7"});
  EXPECT_EQ(100, o.m);
  EXPECT_EQ(100, o.n);
  EXPECT_EQ(7, o.k);
}

// Two variants of a made-up step: one that takes --tile mc,nc,kc (one to three
// numbers), one that takes none.
const lab::StepInfo kTileStep{"step00", "tile test", lab::Backend::cpu, 8};
void plain_gemm(const lab::GemmCall& c) { reversed_gemm(c.alpha, c.A, c.B, c.beta, c.C); }
[[maybe_unused]] const int blocked_variant = lab::register_variant(
    {"step00", "blocked", "solution", lab::Backend::cpu, plain_gemm, "takes tiles", nullptr, nullptr,
     {{"mc", "nc", "kc"}, 1, [](const lab::Params& p) {
        std::vector<int64_t> t{4, 5, 6};
        for (size_t i = 0; i < p.tile.size(); ++i) t[i] = p.tile[i];
        return lab::format_tiles({"mc", "nc", "kc"}, t);
      }}});
[[maybe_unused]] const int plain_variant =
    lab::register_variant({"step00", "plain", "solution", lab::Backend::cpu, plain_gemm, "takes no tiles"});

int run_bench(std::vector<const char*> args, std::string* out, std::string* err) {
  args.insert(args.begin(), "step00_test");
  ::testing::internal::CaptureStdout();
  ::testing::internal::CaptureStderr();
  const int status = lab::bench_main(static_cast<int>(args.size()), const_cast<char**>(args.data()), kTileStep);
  *out = ::testing::internal::GetCapturedStdout();
  *err = ::testing::internal::GetCapturedStderr();
  return status;
}

TEST(Tiles, WrongCountOrNoTilesSaysWhyInOneLine) {
  const auto& all = lab::registered_variants();
  const lab::Variant& blocked = all[blocked_variant];
  const lab::Variant& plain = all[plain_variant];
  EXPECT_EQ("", lab::tile_error(blocked, {8}));
  EXPECT_EQ("", lab::tile_error(blocked, {8, 8, 8}));
  EXPECT_EQ("blocked (solution) takes 1 to 3 numbers (mc,nc,kc), got 4", lab::tile_error(blocked, {1, 2, 3, 4}));
  EXPECT_EQ("plain (solution) takes no tiles", lab::tile_error(plain, {4}));
  EXPECT_EQ("", lab::tile_error(plain, {}));
  lab::Variant exact = blocked;
  exact.tiles.min_given = 0;  // all three
  EXPECT_EQ("blocked (solution) takes 3 numbers (mc,nc,kc), got 2", lab::tile_error(exact, {8, 8}));
}

TEST(Tiles, BenchRefusesATileNoSelectedVariantTakesWithStatus2) {
  std::string out, err;
  EXPECT_EQ(lab::kExitUsage, run_bench({"--variant", "plain", "--tile", "4"}, &out, &err));
  EXPECT_EQ("step00_test: error: --tile: no selected variant takes tiles (plain)\n", err);
  EXPECT_EQ(lab::kExitUsage, run_bench({"--variant", "blocked,plain", "--tile", "1,2,3,4"}, &out, &err));
  EXPECT_EQ("step00_test: error: --tile: blocked (solution) takes 1 to 3 numbers (mc,nc,kc), got 4\n", err);
  EXPECT_EQ("", out);
}

TEST(Tiles, BannerNamesEachVariantsTilesDefaultsToo) {
  std::string out, err;
  const std::vector<const char*> small{"--variant", "blocked,plain", "--reps", "1", "--min-time", "0"};
  auto with = [&](std::vector<const char*> more) {
    more.insert(more.begin(), small.begin(), small.end());
    return more;
  };
  ASSERT_EQ(lab::kExitOk, run_bench(with({}), &out, &err)) << out << err;
  EXPECT_NE(std::string::npos, out.find("# blocked: tiles mc 4, nc 5, kc 6 (defaults)\n")) << out;
  EXPECT_NE(std::string::npos, out.find("# no block sizes to set (--tile): plain\n")) << out;
  ASSERT_EQ(lab::kExitOk, run_bench(with({"--tile", "16"}), &out, &err)) << out << err;
  EXPECT_NE(std::string::npos, out.find("# blocked: tiles mc 16, nc 5, kc 6 (--tile, the rest defaults)\n")) << out;
  EXPECT_NE(std::string::npos, out.find("# --tile does not apply to: plain\n")) << out;
  // Only the row that took the tile is tagged with it.
  EXPECT_NE(std::string::npos, out.find("tile=16")) << out;
  EXPECT_EQ(out.find("tile=16"), out.rfind("tile=16")) << out;
}

}  // namespace
