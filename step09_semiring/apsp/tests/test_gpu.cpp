// The GPU engine (on the reference device GEMM) against plain Floyd-Warshall,
// the engine's own kernels, and the device reference GEMM against the host
// one. Every test here skips where there is no GPU engine (the run then ends
// with LAB-SKIP, and ctest reports it skipped).
#include <gtest/gtest.h>

#include <fstream>
#include <limits>
#include <string>

#include "algorithms.hpp"
#include "apsp_cli.hpp"
#include "compare.hpp"
#include "contract.hpp"
#include "distance_io.hpp"
#include "engine.hpp"
#include "reference.hpp"
#include "support.hpp"
#ifdef LAB_APSP_CUDA
#include "lab/cuda.hpp"
#endif

namespace lab::step09::apsp {
namespace {

using testing::GraphSpec;

bool skip_without_gpu() {
  lab::testing::Subject gpu;
  gpu.available = [](std::string* why) {
    if (reference_gemms().gpu) return gpu_engine_available(why);
    *why = "this program was built without CUDA (no GPU engine)";
    return false;
  };
  return lab::testing::skip_if_unavailable(gpu);
}

struct Result {
  RunReport report;
  Matrix D;
};

Result run_gpu(const std::string& algorithm, const Graph& g, int64_t block) {
  auto engine = make_gpu_engine(distance_matrix(g), reference_gemms().gpu, "reference");
  Result r;
  r.report = find_algorithm(algorithm)->run(*engine, AlgorithmOptions{block, g.has_negative});
  r.D = engine->take_result();
  return r;
}

struct Case {
  std::string algorithm;
  int64_t n, block;
  bool negative;
};

void PrintTo(const Case& c, std::ostream* os) {
  *os << c.algorithm << " n=" << c.n << " block " << c.block << (c.negative ? " negative arcs" : "");
}

class GpuApsp : public ::testing::TestWithParam<Case> {};

TEST_P(GpuApsp, MatchesFloydWarshallExactly) {
  if (skip_without_gpu()) return;
  const Case& c = GetParam();
  const uint64_t seed = lab::testing::fresh_seed();
  GraphSpec s;
  s.n = c.n, s.density = c.n > 40 ? 0.04 : 0.2, s.components = 2, s.self_loops = true, s.parallel = true;
  s.negative = c.negative;
  SCOPED_TRACE(testing::describe(s) + ", seed " + std::to_string(seed) +
               " (rerun with LAB_SEED=" + std::to_string(seed) + ")");
  std::mt19937_64 rng(seed);
  const Graph g = testing::random_test_graph(s, rng);
  const Result r = run_gpu(c.algorithm, g, c.block);
  EXPECT_EQ(r.report.negative_cycle, -1);
  const Matrix want = testing::floyd_warshall_distances(g);
  const Comparison cmp = compare_distances(r.D.cview(), want.cview(), 0.0, g.base);
  EXPECT_TRUE(cmp.ok()) << cmp.report;
}

std::vector<Case> cases() {
  std::vector<Case> out;
  for (bool negative : {false, true})
    for (int64_t n : {1, 2, 31, 33, 64, 97, 300}) {
      out.push_back({"squaring", n, 0, negative});
      // plain on the GPU engine: the engine's tiled Floyd-Warshall kernels on the whole matrix
      out.push_back({"plain", n, 0, negative});
      for (int64_t b : {7, 32, 45, 256})
        if (b < n || b == 256) out.push_back({"fw", n, b, negative});
    }
  return out;
}

INSTANTIATE_TEST_SUITE_P(Gpu, GpuApsp, ::testing::ValuesIn(cases()),
                         [](const ::testing::TestParamInfo<Case>& i) {
                           return i.param.algorithm + "_n" + std::to_string(i.param.n) + "_b" +
                                  std::to_string(i.param.block) + (i.param.negative ? "_negative" : "");
                         });

TEST(GpuNegativeCycle, ReportsAVertexOnANegativeCycle) {
  if (skip_without_gpu()) return;
  const uint64_t seed = lab::testing::fresh_seed();
  SCOPED_TRACE(lab::testing::seed_note(seed));
  std::mt19937_64 rng(seed);
  for (int64_t n : {1, 2, 5, 9, 40, 100}) {
    GraphSpec s;
    s.n = n, s.density = n == 5 || n == 9 ? 0.0 : 0.1, s.negative = true;  // 5, 9: the ring alone
    Graph g = testing::random_test_graph(s, rng);
    testing::plant_negative_cycle(g, n == 40 ? 1 : n, rng);
    const Matrix fw = testing::floyd_warshall_distances(g);
    for (const char* alg : {"squaring", "fw", "plain"}) {
      const Result r = run_gpu(alg, g, 16);
      ASSERT_GE(r.report.negative_cycle, 0) << alg << " n=" << n;
      EXPECT_TRUE(testing::on_negative_closed_walk(fw, r.report.negative_cycle))
          << alg << " n=" << n << ": vertex " << r.report.negative_cycle;
    }
  }
}

#ifdef LAB_APSP_CUDA
// The device reference GEMM against the host one, +inf entries included, on
// shapes with partial 16 x 16 tiles and padded leading dimensions.
TEST(GpuReferenceGemm, MatchesTheHostReferenceExactly) {
  if (skip_without_gpu()) return;
  const uint64_t seed = lab::testing::fresh_seed();
  SCOPED_TRACE(lab::testing::seed_note(seed));
  std::mt19937_64 rng(seed);
  const int64_t shapes[][3] = {{1, 1, 1}, {17, 5, 33}, {64, 64, 64}, {100, 37, 1}, {3, 90, 20}, {20, 20, 0}};
  for (const auto& sh : shapes)
    for (bool accumulate : {false, true}) {
      const int64_t m = sh[0], n = sh[1], k = sh[2];
      Matrix A(m, k, m + 3), B(k, n, k + 1), C(m, n, m + 2);
      for (Matrix* M : {&A, &B, &C}) {
        M->fill_integers(rng(), -20, 20);
        for (int64_t j = 0; j < M->cols(); ++j)
          for (int64_t i = 0; i < M->rows(); ++i)
            if (rng() % 5 == 0) (*M)(i, j) = std::numeric_limits<double>::infinity();
      }
      Matrix want = C.clone();
      reference_minplus_gemm(A.cview(), B.cview(), want.view(), accumulate);
      cuda::Stream stream;
      auto dA = cuda::DeviceMatrix::from_host(A.cview(), stream.get());
      auto dB = cuda::DeviceMatrix::from_host(B.cview(), stream.get());
      auto dC = cuda::DeviceMatrix::from_host(C.cview(), stream.get());
      reference_minplus_gemm_device(dA.view(), dB.view(), dC.view(), accumulate, stream.get());
      Matrix got(m, n);
      dC.to_host(got.view(), stream.get());
      const Comparison cmp = compare_distances(got.cview(), want.cview(), 0.0, 0);
      EXPECT_TRUE(cmp.ok()) << m << "x" << n << "x" << k << " accumulate=" << accumulate << ": "
                            << cmp.report;
    }
}
#endif

TEST(GpuCli, GpuBackendWritesWhatTheCpuBackendWrites) {
  if (skip_without_gpu()) return;
  testing::TempDir dir;
  const uint64_t seed = lab::testing::fresh_seed();
  std::mt19937_64 rng(seed);
  GraphSpec s;
  s.n = 150, s.density = 0.03, s.negative = true;
  const Graph g = testing::random_test_graph(s, rng);
  {
    std::ofstream f(dir / "g.gr");
    write_graph(f, g, GraphFormat::dimacs, "test graph");
  }
  for (const char* alg : {"fw", "squaring"}) {
    std::vector<std::string> args = {
        "apsp",    "--graph", dir / "g.gr", "--allow-negative", "--algorithm", alg, "--backend", "gpu",
        "--block", "40",      "--out",      dir / "gpu.bin",    "--check"};
    std::vector<char*> argv;
    for (auto& a : args) argv.push_back(a.data());
    ASSERT_EQ(apsp_main_with(int(argv.size()), argv.data(), reference_gemms()), 0)
        << alg << ", seed " << seed;
    const DistanceFile back = read_distances(dir / "gpu.bin");
    const Matrix want = testing::floyd_warshall_distances(g);
    const Comparison cmp = compare_distances(back.D.cview(), want.cview(), 0.0, g.base);
    EXPECT_TRUE(cmp.ok()) << alg << ": " << cmp.report;
  }
}

}  // namespace
}  // namespace lab::step09::apsp
