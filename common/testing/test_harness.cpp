// Tests of the harness itself: a check that cannot fail is worse than none.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "lab/bench.hpp"
#include "lab/check.hpp"
#include "lab/gemm_args.hpp"
#include "lab/timer.hpp"

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

}  // namespace
