// The algorithms on the CPU engine (reference min-plus GEMM) against plain
// Floyd-Warshall: exact equality wherever the weights make every sum exact.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <stdexcept>
#include <string>

#include "algorithms.hpp"
#include "compare.hpp"
#include "contract.hpp"
#include "engine.hpp"
#include "reference.hpp"
#include "support.hpp"

namespace lab::step09::apsp {
namespace {

using testing::GraphSpec;
using testing::Weights;
constexpr double kInf = std::numeric_limits<double>::infinity();

struct Result {
  RunReport report;
  Matrix D;
};

Result run_cpu(const std::string& algorithm, const Graph& g, int64_t block,
               HostMinPlusGemm gemm = reference_minplus_gemm) {
  auto engine = make_cpu_engine(distance_matrix(g), std::move(gemm), "reference");
  Result r;
  r.report = find_algorithm(algorithm)->run(*engine, AlgorithmOptions{block, g.has_negative});
  r.D = engine->take_result();
  return r;
}

// ---- the reference min-plus product itself --------------------------------

TEST(ReferenceGemm, SmallProductByHand) {
  // A = [0 2; inf 1], B = [3 inf; 0 5]  ->  A (x) B = [2 7; 1 6]
  Matrix A(2, 2), B(2, 2), C(2, 2);
  A(0, 0) = 0, A(0, 1) = 2, A(1, 0) = kInf, A(1, 1) = 1;
  B(0, 0) = 3, B(0, 1) = kInf, B(1, 0) = 0, B(1, 1) = 5;
  C.fill_nan();  // accumulate = false must not read C
  reference_minplus_gemm(A.cview(), B.cview(), C.view(), false);
  EXPECT_EQ(C(0, 0), 2);
  EXPECT_EQ(C(0, 1), 7);
  EXPECT_EQ(C(1, 0), 1);
  EXPECT_EQ(C(1, 1), 6);
  C(0, 0) = 1, C(1, 1) = 9;
  reference_minplus_gemm(A.cview(), B.cview(), C.view(), true);
  EXPECT_EQ(C(0, 0), 1);  // min(1, 2)
  EXPECT_EQ(C(1, 1), 6);  // min(9, 6)
}

TEST(ReferenceGemm, EmptyInnerDimensionIsTheMinPlusZero) {
  Matrix A(3, 0), B(0, 2), C(3, 2);
  C.fill(5);
  reference_minplus_gemm(A.cview(), B.cview(), C.view(), true);
  EXPECT_EQ(C(2, 1), 5);
  reference_minplus_gemm(A.cview(), B.cview(), C.view(), false);
  EXPECT_EQ(C(2, 1), kInf);
}

TEST(ReferenceGemm, BadShapesThrowNamingTheArgument) {
  Matrix A(3, 4), B(5, 2), C(3, 2);
  try {
    reference_minplus_gemm(A.cview(), B.cview(), C.view(), false);
    FAIL() << "no exception";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("A.cols"), std::string::npos) << e.what();
  }
}

// ---- both algorithms against plain Floyd-Warshall --------------------------

struct Case {
  std::string algorithm;
  int64_t n, block;
  GraphSpec spec;
};

void PrintTo(const Case& c, std::ostream* os) {
  *os << c.algorithm << " block " << c.block << " on " << testing::describe(c.spec);
}

std::string case_name(const ::testing::TestParamInfo<Case>& info) {
  const Case& c = info.param;
  std::string s = c.algorithm + "_n" + std::to_string(c.n) + "_b" + std::to_string(c.block);
  if (c.spec.components > 1) s += "_parts" + std::to_string(c.spec.components);
  if (c.spec.self_loops) s += "_loops";
  if (c.spec.parallel) s += "_parallel";
  if (c.spec.negative) s += "_negative";
  return s + "_" + std::to_string(info.index);
}

std::vector<Case> cases() {
  std::vector<Case> out;
  GraphSpec plain, messy, negative;
  messy.components = 3, messy.self_loops = true, messy.parallel = true;
  negative.negative = true, negative.parallel = true, negative.self_loops = true, negative.components = 2;
  for (const GraphSpec& base : {plain, messy, negative})
    for (int64_t n : {1, 2, 3, 5, 17, 64, 100}) {
      GraphSpec s = base;
      s.n = n;
      s.density = n > 20 ? 0.08 : 0.3;  // sparse enough for long shortest paths
      out.push_back({"squaring", n, 0, s});
      out.push_back({"plain", n, 0, s});
      // Blocks that divide n, that do not, of one vertex, and larger than n.
      for (int64_t b : {1, 7, 16, 32, 1000})
        if (b <= n || b == 1000) out.push_back({"fw", n, b, s});
    }
  return out;
}

class Apsp : public ::testing::TestWithParam<Case> {};

TEST_P(Apsp, MatchesFloydWarshallExactly) {
  const Case& c = GetParam();
  const uint64_t seed = lab::testing::fresh_seed();
  SCOPED_TRACE(testing::describe(c.spec) + ", seed " + std::to_string(seed) +
               " (rerun with LAB_SEED=" + std::to_string(seed) + ")");
  std::mt19937_64 rng(seed);
  const Graph g = testing::random_test_graph(c.spec, rng);
  const Result r = run_cpu(c.algorithm, g, c.block);
  EXPECT_EQ(r.report.negative_cycle, -1);
  const Matrix want = testing::floyd_warshall_distances(g);
  const Comparison cmp = compare_distances(r.D.cview(), want.cview(), 0.0, g.base);
  EXPECT_TRUE(cmp.ok()) << cmp.report;
  if (c.algorithm == "squaring") {
    EXPECT_LE(r.report.products, squaring_products(c.n) + (g.has_negative ? 1 : 0));
  }
}

INSTANTIATE_TEST_SUITE_P(Cpu, Apsp, ::testing::ValuesIn(cases()), case_name);

// Weights that are not integers: multiples of 1/1024 still add exactly.
TEST(ApspWeights, DyadicWeightsCompareExactly) {
  const uint64_t seed = lab::testing::fresh_seed();
  SCOPED_TRACE(lab::testing::seed_note(seed));
  std::mt19937_64 rng(seed);
  GraphSpec s;
  s.n = 90, s.density = 0.06, s.weights = Weights::dyadic, s.negative = true;
  const Graph g = testing::random_test_graph(s, rng);
  ASSERT_FALSE(g.integer_weights);
  const Matrix want = testing::floyd_warshall_distances(g);
  for (const char* alg : {"squaring", "fw"}) {
    const Result r = run_cpu(alg, g, 13);
    const Comparison cmp = compare_distances(r.D.cview(), want.cview(), 0.0, g.base);
    EXPECT_TRUE(cmp.ok()) << alg << ": " << cmp.report;
  }
}

// Real weights round; the two results may differ by the bound of compare.hpp,
// and by no more (with the bound a millionth of the distances' size here).
TEST(ApspWeights, RealWeightsAgreeWithinTheRoundingBound) {
  const uint64_t seed = lab::testing::fresh_seed();
  SCOPED_TRACE(lab::testing::seed_note(seed));
  std::mt19937_64 rng(seed);
  GraphSpec s;
  s.n = 120, s.density = 0.05, s.weights = Weights::reals, s.max_weight = 1;
  const Graph g = testing::random_test_graph(s, rng);
  const double tol = distance_tolerance(g);
  ASSERT_GT(tol, 0);
  ASSERT_LT(tol, 1e-9);
  const Matrix want = testing::floyd_warshall_distances(g);
  for (const char* alg : {"squaring", "fw"}) {
    const Result r = run_cpu(alg, g, 32);
    const Comparison cmp = compare_distances(r.D.cview(), want.cview(), tol, g.base);
    EXPECT_TRUE(cmp.ok()) << alg << ": " << cmp.report;
  }
}

// ---- negative cycles --------------------------------------------------------

struct CycleCase {
  std::string algorithm;
  int64_t n, length;
};

void PrintTo(const CycleCase& c, std::ostream* os) {
  *os << c.algorithm << " n=" << c.n << " cycle length " << c.length;
}

class NegativeCycle : public ::testing::TestWithParam<CycleCase> {};

TEST_P(NegativeCycle, ReportsAVertexOnANegativeCycle) {
  const CycleCase& c = GetParam();
  const uint64_t seed = lab::testing::fresh_seed();
  SCOPED_TRACE("n=" + std::to_string(c.n) + " cycle length " + std::to_string(c.length) + ", seed " +
               std::to_string(seed));
  std::mt19937_64 rng(seed);
  GraphSpec s;
  s.n = c.n, s.density = 0.1, s.negative = true;
  Graph g = testing::random_test_graph(s, rng);
  testing::plant_negative_cycle(g, c.length, rng);
  for (int64_t block : {int64_t(1), int64_t(3), int64_t(16)}) {
    const Result r = run_cpu(c.algorithm, g, block);
    ASSERT_GE(r.report.negative_cycle, 0) << "block " << block;
    ASSERT_LT(r.report.negative_cycle, g.n);
    // The reported vertex lies on a closed walk of negative weight.
    const Matrix fw = testing::floyd_warshall_distances(g);
    EXPECT_TRUE(testing::on_negative_closed_walk(fw, r.report.negative_cycle)) << "vertex " << r.report.negative_cycle;
    if (c.algorithm != "fw") break;  // the others take no block
  }
}

std::vector<CycleCase> cycle_cases() {
  std::vector<CycleCase> out;
  for (const char* alg : {"squaring", "fw", "plain"}) {
    out.push_back({alg, 1, 1});  // a negative self-loop alone
    out.push_back({alg, 2, 2});  // n = 2: squaring needs its one extra product
    out.push_back({alg, 5, 5});  // a cycle through all 5 vertices: 4 arcs per path, 5 in the cycle
    out.push_back({alg, 9, 9});
    out.push_back({alg, 17, 3});
    out.push_back({alg, 40, 1});
    out.push_back({alg, 40, 40});
  }
  return out;
}

INSTANTIATE_TEST_SUITE_P(Cpu, NegativeCycle, ::testing::ValuesIn(cycle_cases()),
                         [](const ::testing::TestParamInfo<CycleCase>& i) {
                           return i.param.algorithm + "_n" + std::to_string(i.param.n) + "_len" +
                                  std::to_string(i.param.length);
                         });

// A ring through all n vertices and nothing else: the only negative closed
// walks have n arcs, one more than any shortest path, which repeated squaring
// sees only with its extra product when n - 1 is a power of two.
TEST(NegativeCycleRing, IsFoundAtEveryLength) {
  for (int64_t n : {2, 3, 5, 9, 17, 33}) {
    Graph g;
    g.n = n;
    g.has_negative = true;
    for (int64_t v = 0; v + 1 < n; ++v) g.arcs.push_back({v, v + 1, 1.0});
    g.arcs.push_back({n - 1, 0, -double(n)});  // the ring weighs -1
    for (const char* alg : {"squaring", "fw", "plain"}) {
      const Result r = run_cpu(alg, g, 4);
      EXPECT_GE(r.report.negative_cycle, 0) << alg << " n=" << n;
    }
  }
}

// ---- repeated squaring's product count ------------------------------------

TEST(Squaring, ProductCountIsCeilLog2OfNMinus1) {
  EXPECT_EQ(squaring_products(1), 0);
  EXPECT_EQ(squaring_products(2), 0);
  EXPECT_EQ(squaring_products(3), 1);
  EXPECT_EQ(squaring_products(5), 2);
  EXPECT_EQ(squaring_products(6), 3);
  EXPECT_EQ(squaring_products(1025), 10);
  EXPECT_EQ(squaring_products(1026), 11);
}

// A path 1 -> 2 -> ... -> n needs every product: the last one still adds the
// longest path.
TEST(Squaring, APathNeedsEveryProduct) {
  for (int64_t n : {3, 5, 9, 33, 50}) {
    Graph g;
    g.n = n;
    for (int64_t v = 0; v + 1 < n; ++v) g.arcs.push_back({v, v + 1, 1.0});
    const Result r = run_cpu("squaring", g, 0);
    EXPECT_EQ(r.report.products, squaring_products(n)) << "n=" << n;
    EXPECT_EQ(r.D(0, n - 1), double(n - 1));
    EXPECT_EQ(r.D(n - 1, 0), kInf);
  }
}

// When every arc is already a shortest path, the first product changes nothing
// and squaring stops there.
TEST(Squaring, StopsEarlyWhenNothingChanges) {
  Graph g;
  g.n = 40;
  for (int64_t u = 0; u < g.n; ++u)
    for (int64_t v = 0; v < g.n; ++v)
      if (u != v) g.arcs.push_back({u, v, 1.0});
  const Result r = run_cpu("squaring", g, 0);
  EXPECT_EQ(r.report.products, 1);
  EXPECT_EQ(r.report.product_limit, squaring_products(40));
}

// ---- the tests can fail -------------------------------------------------------

// A GEMM that forgets accumulate (overwrites C) loses the shorter paths that
// C held: the comparison must see it.
TEST(ApspChecks, ABrokenGemmIsCaught) {
  const uint64_t seed = lab::testing::fresh_seed();
  std::mt19937_64 rng(seed);
  GraphSpec s;
  s.n = 60, s.density = 0.1;
  const Graph g = testing::random_test_graph(s, rng);
  const Result r = run_cpu("fw", g, 16, [](ConstMatView A, ConstMatView B, MatView C, bool) {
    reference_minplus_gemm(A, B, C, false);
  });
  const Matrix want = testing::floyd_warshall_distances(g);
  EXPECT_FALSE(compare_distances(r.D.cview(), want.cview(), 0.0, g.base).ok()) << "seed " << seed;
}

TEST(ApspChecks, ComparisonNamesTheEntryInFileNumbers) {
  Matrix a(3, 3), b(3, 3);
  a.fill(1);
  b.fill(1);
  b(2, 0) = kInf;
  const Comparison c = compare_distances(a.cview(), b.cview(), 0.0, 1);
  EXPECT_EQ(c.mismatches, 1);
  EXPECT_NE(c.report.find("d(3,1) = 1, expected inf"), std::string::npos) << c.report;
}

TEST(ApspChecks, ToleranceIsZeroForIntegerWeights) {
  Graph g;
  g.n = 1000;
  g.max_abs_weight = 1e6;
  EXPECT_EQ(distance_tolerance(g), 0.0);
  g.max_abs_weight = 1e13;  // (n - 1) * 1e13 > 2^53: sums may round
  EXPECT_GT(distance_tolerance(g), 0.0);
  g.max_abs_weight = 1.0;
  g.integer_weights = false;
  EXPECT_GT(distance_tolerance(g), 0.0);
}

}  // namespace
}  // namespace lab::step09::apsp
