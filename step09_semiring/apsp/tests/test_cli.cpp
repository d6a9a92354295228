// The apsp command end to end: files in, files out, queries, the benchmark,
// and every refusal with its exit status (and no file left half-written).
#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

#include "apsp_cli.hpp"
#include "compare.hpp"
#include "contract.hpp"
#include "distance_io.hpp"
#include "reference.hpp"
#include "support.hpp"
#include "text.hpp"

namespace lab::step09::apsp {
namespace {

using testing::TempDir;

struct Outcome {
  int status;
  std::string out, err;
};

Outcome apsp(std::vector<std::string> args, const MinPlusGemms& gemms = reference_gemms()) {
  std::vector<char*> argv;
  std::string name = "apsp";
  argv.push_back(name.data());
  for (auto& a : args) argv.push_back(a.data());
  ::testing::internal::CaptureStdout();
  ::testing::internal::CaptureStderr();
  const int status = apsp_main_with(int(argv.size()), argv.data(), gemms);
  std::cout.flush();
  std::cerr.flush();
  std::fflush(stdout);
  Outcome o{status, ::testing::internal::GetCapturedStdout(), ::testing::internal::GetCapturedStderr()};
  return o;
}

bool contains(const std::string& text, const std::string& words) {
  return text.find(words) != std::string::npos;
}

// A graph with every feature, written to `path` in `format`; returns it.
Graph write_test_graph(const std::string& path, GraphFormat format, uint64_t seed, int64_t n = 45,
                       bool negative = false, int base = 1) {
  std::mt19937_64 rng(seed);
  testing::GraphSpec s;
  s.n = n, s.density = 0.08, s.components = 2, s.self_loops = true, s.parallel = true, s.negative = negative;
  Graph g = testing::random_test_graph(s, rng);
  g.base = base;
  std::ofstream f(path);
  write_graph(f, g, format, "test graph");
  return g;
}

void expect_same(const std::string& file, const Graph& g) {
  const DistanceFile back = read_distances(file);
  EXPECT_EQ(back.base, g.base);
  const Matrix want = testing::floyd_warshall_distances(g);
  const Comparison c = compare_distances(back.D.cview(), want.cview(), 0.0, g.base);
  EXPECT_TRUE(c.ok()) << c.report;
}

TEST(Cli, WritesTextAndBinaryDistancesThatReadBack) {
  TempDir dir;
  const uint64_t seed = lab::testing::fresh_seed();
  SCOPED_TRACE(lab::testing::seed_note(seed));
  const Graph g = write_test_graph(dir / "g.gr", GraphFormat::dimacs, seed);
  Outcome o = apsp({"--graph", dir / "g.gr", "--out", dir / "d.txt", "--check", "--block", "16"});
  ASSERT_EQ(o.status, 0) << o.out << o.err;
  EXPECT_TRUE(contains(o.out, "matches plain Floyd-Warshall exactly")) << o.out;
  EXPECT_TRUE(contains(o.out, "bulk")) << o.out;  // the phases are timed and shown
  expect_same(dir / "d.txt", g);
  o = apsp({"--graph", dir / "g.gr", "--algorithm", "squaring", "--out", dir / "d.bin", "--threads", "1"});
  ASSERT_EQ(o.status, 0) << o.out << o.err;
  expect_same(dir / "d.bin", g);  // *.bin: the binary format
  std::ifstream bin(dir / "d.bin", std::ios::binary);
  char magic[9] = {};
  bin.read(magic, 8);
  EXPECT_EQ(std::string(magic), "APSPDIST");
}

TEST(Cli, ZeroBasedEdgeListWithNegativeArcs) {
  TempDir dir;
  const uint64_t seed = lab::testing::fresh_seed();
  SCOPED_TRACE(lab::testing::seed_note(seed));
  const Graph g = write_test_graph(dir / "g.txt", GraphFormat::edges, seed, 40, true, 0);
  ASSERT_TRUE(g.has_negative);
  // Without permission the first negative weight is refused, naming its line.
  Outcome o = apsp({"--graph", dir / "g.txt", "--zero-based", "--out", dir / "d.txt"});
  EXPECT_EQ(o.status, 2);
  EXPECT_TRUE(contains(o.err, "g.txt:")) << o.err;
  EXPECT_TRUE(contains(o.err, "--allow-negative")) << o.err;
  EXPECT_FALSE(std::filesystem::exists(dir / "d.txt"));
  // --vertices: the last vertices may have no arcs, and an edge list alone would end before them.
  for (const char* alg : {"fw", "squaring"}) {
    o = apsp({"--graph", dir / "g.txt", "--zero-based", "--vertices", "40", "--allow-negative", "--algorithm",
              alg, "--out", dir / "d.txt", "--out-format", "text", "--check"});
    ASSERT_EQ(o.status, 0) << alg << "\n" << o.out << o.err;
    expect_same(dir / "d.txt", g);
  }
}

TEST(Cli, QueriesAnswerInTheFilesNumbers) {
  TempDir dir;
  const uint64_t seed = lab::testing::fresh_seed();
  const Graph g = write_test_graph(dir / "g.gr", GraphFormat::dimacs, seed, 30);
  const Matrix want = testing::floyd_warshall_distances(g);
  const Outcome o = apsp({"--graph", dir / "g.gr", "--query", "1,2", "30,1", "--query=7,7"});
  ASSERT_EQ(o.status, 0) << o.out << o.err;
  for (auto [u, v] : {std::pair{1, 2}, {30, 1}, {7, 7}}) {
    const std::string line = "d(" + std::to_string(u) + "," + std::to_string(v) +
                             ") = " + format_number(want(u - 1, v - 1)) + "\n";
    EXPECT_TRUE(contains(o.out, line)) << "missing '" << line << "' in\n" << o.out << "(seed " << seed << ")";
  }
}

TEST(Cli, GeneratorAndBenchmarkWriteTheLabsCsv) {
  TempDir dir;
  Outcome o =
      apsp({"--generate", "70", "--degree", "3", "--seed", "5", "--max-weight", "20", "--out", dir / "g.gr"});
  ASSERT_EQ(o.status, 0) << o.err;
  o = apsp(
      {"--graph", dir / "g.gr", "--bench", "--block", "16", "--csv", dir / "r.csv", "--out", dir / "d.bin"});
  ASSERT_EQ(o.status, 0) << o.out << o.err;
  std::ifstream csv(dir / "r.csv");
  std::string header, line;
  std::getline(csv, header);
  EXPECT_EQ(header.rfind("step,variant,impl,m,n,k,threads,median_s,gflops", 0), 0u) << header;
  std::vector<std::string> rows;
  while (std::getline(csv, line)) rows.push_back(line);
  ASSERT_EQ(rows.size(), 3u);
  EXPECT_EQ(rows[0].rfind("step09,apsp_plain_cpu,baseline,70,70,70,1,", 0), 0u) << rows[0];
  EXPECT_TRUE(contains(rows[0], ",first,")) << rows[0];
  EXPECT_EQ(rows[1].rfind("step09,apsp_fw_cpu,solution,70,70,70,", 0), 0u) << rows[1];
  EXPECT_TRUE(contains(rows[1], ",pass,")) << rows[1];
  EXPECT_EQ(rows[2].rfind("step09,apsp_squaring_cpu,solution,70,70,", 0), 0u) << rows[2];
  EXPECT_TRUE(contains(rows[2], ",pass,")) << rows[2];
  // --expect: the saved result checks a later run; a changed entry fails it.
  o = apsp({"--graph", dir / "g.gr", "--bench", "--algorithm", "fw", "--expect", dir / "d.bin"});
  EXPECT_EQ(o.status, 0) << o.out << o.err;
  DistanceFile d = read_distances(dir / "d.bin");
  d.D(3, 4) -= 1;
  {
    OutputFile f(dir / "wrong.bin");
    write_distances(f, d.D.cview(), d.base, DistanceFormat::binary);
    f.commit();
  }
  o = apsp({"--graph", dir / "g.gr", "--algorithm", "squaring", "--expect", dir / "wrong.bin"});
  EXPECT_EQ(o.status, 1) << o.out << o.err;
  EXPECT_TRUE(contains(o.err, "d(4,5)")) << o.err;
}

TEST(Cli, NegativeCycleIsReportedWithItsVertex) {
  TempDir dir;
  std::ofstream(dir / "cycle.gr") << "p sp 4 4\na 1 2 1\na 2 3 -2\na 3 2 1\na 3 4 5\n";
  for (const char* alg : {"fw", "squaring", "plain"}) {
    const Outcome o = apsp({"--graph", dir / "cycle.gr", "--allow-negative", "--algorithm", alg, "--out",
                            dir / "d.txt", "--query", "1,4"});
    EXPECT_EQ(o.status, 2) << alg;
    EXPECT_TRUE(contains(o.err, "negative cycle: vertex 2 ") || contains(o.err, "negative cycle: vertex 3 "))
        << alg << ": " << o.err;
    EXPECT_FALSE(contains(o.out, "d(1,4)")) << alg;
    EXPECT_FALSE(std::filesystem::exists(dir / "d.txt")) << alg;
  }
}

TEST(Cli, CheckCatchesAWrongGemmAndWritesNothing) {
  TempDir dir;
  write_test_graph(dir / "g.gr", GraphFormat::dimacs, lab::testing::fresh_seed(), 60);
  MinPlusGemms broken = reference_gemms();
  broken.cpu = [](ConstMatView A, ConstMatView B, MatView C, bool) {
    reference_minplus_gemm(A, B, C, false);
  };
  const Outcome o =
      apsp({"--graph", dir / "g.gr", "--check", "--block", "8", "--out", dir / "d.txt"}, broken);
  EXPECT_EQ(o.status, 1) << o.out << o.err;
  EXPECT_TRUE(contains(o.err, "differs from plain Floyd-Warshall")) << o.err;
  EXPECT_FALSE(std::filesystem::exists(dir / "d.txt"));
}

TEST(Cli, GpuBackendWithoutAGpuEngineIsSkipped) {
  TempDir dir;
  write_test_graph(dir / "g.gr", GraphFormat::dimacs, 1, 10);
  MinPlusGemms cpu_only = reference_gemms();
  cpu_only.gpu = nullptr;
  const Outcome o = apsp({"--graph", dir / "g.gr", "--backend", "gpu", "--out", dir / "d.txt"}, cpu_only);
  EXPECT_EQ(o.status, 77);
  EXPECT_TRUE(contains(o.err, "skipped")) << o.err;
  EXPECT_FALSE(std::filesystem::exists(dir / "d.txt"));
}

TEST(Cli, BadUsageIsOneLineAndExitTwo) {
  TempDir dir;
  std::ofstream(dir / "g.gr") << "p sp 3 1\na 1 2 1\n";
  std::ofstream(dir / "bad.gr") << "p sp 3 2\na 1 2 1\na 1 4 1\n";
  std::ofstream(dir / "huge.gr") << "p sp 2000000000 1\na 1 2 1\n";  // 32 EB of distances
  std::ofstream(dir / "overflow.gr") << "p sp 3 2\na 1 2 1e308\na 2 3 1e308\n";
  std::ofstream(dir / "underflow.gr") << "p sp 3 2\na 1 2 -1e308\na 2 3 -1e308\n";
  const std::string g = dir / "g.gr";
  const std::vector<std::pair<std::vector<std::string>, std::string>> cases = {
      {{}, "--graph FILE is required"},
      {{"--graph"}, "--graph needs a value"},
      {{"--graph", g, "--bogus"}, "unknown option '--bogus'"},
      {{"--graph", g, "--block", "0"}, "--block expects a whole number from 1"},
      {{"--graph", g, "--threads", "x"}, "--threads expects a whole number"},
      {{"--graph", g, "--algorithm", "dijkstra"}, "unknown algorithm 'dijkstra'"},
      {{"--graph", g, "--algorithm", "fw,squaring"}, "a list only with --bench"},
      {{"--graph", g, "--backend", "tpu"}, "--backend is cpu or gpu"},
      {{"--graph", g, "--format", "csv"}, "--format is dimacs or edges"},
      {{"--graph", g, "--zero-based"}, "for edge lists"},
      {{"--graph", g, "--query", "1"}, "--query expects U,V"},
      {{"--graph", g, "--query", "1,4"}, "vertex 4 is not in 1..3"},
      {{"--graph", g, "--out-format", "text"}, "--out-format goes with --out"},
      {{"--graph", g, "--bench", "--check"}, "takes no --check"},
      {{"--graph", g, "--seed", "3"}, "go with --generate"},
      {{"--generate", "10"}, "--generate needs --out"},
      {{"--generate", "1", "--out", dir / "x.gr"}, "--generate expects a whole number from 2"},
      {{"--graph", g, "--out", dir / "no/such/dir/d.txt"}, "cannot write"},
      {{"--graph", dir / "missing.gr"}, "missing.gr: cannot open the graph file"},
      {{"--graph", dir.path().string()}, "is a folder, not a graph file"},
      {{"--graph", dir / "huge.gr"}, "2000000000 vertices need"},
      {{"--graph", dir / "bad.gr"}, "bad.gr:3: vertex 4 is out of range 1..3"},
      {{"--graph", g, "--expect", dir / "missing.txt"}, "missing.txt: cannot open"},
      {{"--check=yes", "--graph", g}, "--check takes no value"},
      // a path exists, but its length overflows a double: refused, never "no path"
      {{"--graph", dir / "overflow.gr"}, "can overflow a double on a path of up to 2 arcs"},
      {{"--graph", dir / "underflow.gr", "--allow-negative"}, "every |weight| must be at most"},
      // output and expected files that are folders: refused before any work
      {{"--graph", g, "--out", dir.path().string()}, "is a folder"},
      {{"--graph", g, "--expect", dir.path().string()}, "is a folder, not a distance file"},
      {{"--graph", g, "--csv", dir.path().string()}, "--csv: cannot write"},
  };
  for (const auto& [args, words] : cases) {
    const Outcome o = apsp(args);
    EXPECT_EQ(o.status, 2) << words;
    EXPECT_TRUE(contains(o.err, words)) << "expected '" << words << "' in: " << o.err;
    EXPECT_EQ(o.err.find('\n'), o.err.size() - 1) << "not one line: " << o.err;
  }
}

TEST(Cli, HelpDescribesTheFormats) {
  const Outcome o = apsp({"--help"});
  EXPECT_EQ(o.status, 0);
  EXPECT_TRUE(contains(o.out, "usage: apsp --graph FILE"));
  EXPECT_TRUE(contains(o.out, "APSPDIST"));
}

}  // namespace
}  // namespace lab::step09::apsp
