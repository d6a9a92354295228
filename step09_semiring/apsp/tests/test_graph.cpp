// Graph files (each kind of malformed input names its line), distance files,
// the all-or-nothing output file, the generator and the number helpers.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <limits>
#include <random>
#include <sstream>

#include "contract.hpp"
#include "distance_io.hpp"
#include "generate.hpp"
#include "graph.hpp"
#include "support.hpp"
#include "text.hpp"

namespace lab::step09::apsp {
namespace {

using testing::TempDir;
constexpr double kInf = std::numeric_limits<double>::infinity();

Graph parse(const std::string& text, GraphFormat format, bool allow_negative = false, bool zero_based = false,
            int64_t vertices = 0) {
  std::istringstream in(text);
  ReadOptions o;
  o.format = format;
  o.allow_negative = allow_negative;
  o.zero_based = zero_based;
  o.vertices = vertices;
  return parse_graph(in, "t.gr", o);
}

// Parsing `text` must fail with a message that starts with "t.gr:<line>:" (or
// "t.gr:" for line 0: a fault of the whole file) and contains `words`.
void expect_error(const std::string& text, GraphFormat format, int line, const std::string& words,
                  bool allow_negative = false, bool zero_based = false, int64_t vertices = 0) {
  try {
    parse(text, format, allow_negative, zero_based, vertices);
    ADD_FAILURE() << "no error for:\n" << text;
  } catch (const GraphError& e) {
    const std::string msg = e.what(), where = line ? "t.gr:" + std::to_string(line) + ": " : "t.gr: ";
    EXPECT_EQ(msg.rfind(where, 0), 0u) << "message does not start with '" << where << "': " << msg;
    EXPECT_NE(msg.find(words), std::string::npos) << "message lacks '" << words << "': " << msg;
    EXPECT_EQ(msg.find('\n'), std::string::npos) << "not one line: " << msg;
  }
}

const GraphFormat kDimacs = GraphFormat::dimacs, kEdges = GraphFormat::edges;

// ---- reading what is right ---------------------------------------------------

TEST(GraphRead, DimacsWithCommentsParallelArcsAndSelfLoops) {
  const Graph g = parse(
      "c a small graph\r\n"
      "p sp 4 6\r\n"
      "c arcs follow\n"
      "\n"
      "a 1 2 5\n"
      "a 1 2 3\n"   // parallel: the lighter one counts
      "a 2\t3 0\n"  // a zero weight, a tab
      "a 3 3 7\n"   // a self-loop of weight >= 0 changes nothing
      "a 4 1 2.5\n"
      "a 1 2 +4\n",
      kDimacs);
  EXPECT_EQ(g.n, 4);
  EXPECT_EQ(g.arcs.size(), 6u);
  EXPECT_EQ(g.base, 1);
  EXPECT_FALSE(g.integer_weights);
  EXPECT_FALSE(g.has_negative);
  const Matrix D = distance_matrix(g);
  EXPECT_EQ(D(0, 1), 3);
  EXPECT_EQ(D(1, 2), 0);
  EXPECT_EQ(D(2, 2), 0);
  EXPECT_EQ(D(3, 0), 2.5);
  EXPECT_EQ(D(1, 0), kInf);
}

TEST(GraphRead, EdgeListsFromOneOrZeroWithComments) {
  const Graph one = parse("# from 1\n1 2 4  # trailing comment\n\n3 1 1\n", kEdges);
  EXPECT_EQ(one.n, 3);
  EXPECT_EQ(one.base, 1);
  EXPECT_EQ(distance_matrix(one)(0, 1), 4);
  const Graph zero = parse("0 2 4\n2 1 -1\n", kEdges, true, true);
  EXPECT_EQ(zero.n, 3);
  EXPECT_EQ(zero.base, 0);
  EXPECT_TRUE(zero.has_negative);
  EXPECT_EQ(distance_matrix(zero)(2, 1), -1);
  // --vertices: isolated vertices past the largest one named
  EXPECT_EQ(parse("1 2 1\n", kEdges, false, false, 6).n, 6);
}

TEST(GraphRead, NegativeSelfLoopIsOnTheDiagonal) {
  const Matrix D = distance_matrix(parse("p sp 2 1\na 2 2 -3\n", kDimacs, true));
  EXPECT_EQ(D(1, 1), -3);
  EXPECT_EQ(D(0, 0), 0);
}

TEST(GraphRead, FormatFromTheFileName) {
  EXPECT_EQ(format_for("USA-road-d.NY.gr"), kDimacs);
  EXPECT_EQ(format_for("edges.txt"), kEdges);
  EXPECT_EQ(format_for("gr"), kEdges);
}

// ---- each kind of malformed input ------------------------------------------

TEST(GraphErrors, DimacsUnknownLineType) {
  expect_error("p sp 3 1\nc\nx 1 2 3\n", kDimacs, 3, "expected 'c', 'p' or 'a'");
}
TEST(GraphErrors, DimacsCommentWithoutSpace) { expect_error("cfoo\np sp 1 0\n", kDimacs, 1, "'cfoo'"); }
TEST(GraphErrors, DimacsArcWithTooFewFields) {
  expect_error("p sp 3 1\na 1 2\n", kDimacs, 2, "found 3 fields");
}
TEST(GraphErrors, DimacsArcWithTooManyFields) {
  expect_error("p sp 3 1\na 1 2 3 4\n", kDimacs, 2, "found 5 fields");
}
TEST(GraphErrors, DimacsVertexOutOfRange) {
  expect_error("p sp 4 1\na 1 5 3\n", kDimacs, 2, "vertex 5 is out of range 1..4");
}
TEST(GraphErrors, DimacsVertexZero) {
  expect_error("p sp 4 1\na 0 1 3\n", kDimacs, 2, "vertex 0 is out of range 1..4");
}
TEST(GraphErrors, DimacsVertexNotANumber) {
  expect_error("p sp 4 1\na 1 x2 3\n", kDimacs, 2, "vertex 'x2' is not a whole number");
}
TEST(GraphErrors, DimacsVertexNotWhole) { expect_error("p sp 4 1\na 1.5 2 3\n", kDimacs, 2, "'1.5'"); }
TEST(GraphErrors, DimacsArcBeforeP) {
  expect_error("c\na 1 2 3\np sp 3 1\n", kDimacs, 2, "before the 'p sp N M' line");
}
TEST(GraphErrors, DimacsDuplicateP) {
  expect_error("c\np sp 3 0\np sp 3 0\n", kDimacs, 3, "second 'p' line (the first is line 2)");
}
TEST(GraphErrors, DimacsPLineNotSp) { expect_error("p max 3 1\n", kDimacs, 1, "expected 'p sp N M'"); }
TEST(GraphErrors, DimacsPLineBadCount) { expect_error("p sp three 1\n", kDimacs, 1, "vertex count 'three'"); }
TEST(GraphErrors, DimacsPLineZeroVertices) { expect_error("p sp 0 0\n", kDimacs, 1, "vertex count '0'"); }
TEST(GraphErrors, DimacsPLineTooManyVertices) {
  expect_error("p sp 3000000000 0\n", kDimacs, 1, "vertex count 3000000000 is too large for a dense matrix");
}
TEST(GraphErrors, DimacsPLineNegativeArcs) { expect_error("p sp 2 -1\n", kDimacs, 1, "arc count '-1'"); }
TEST(GraphErrors, DimacsMoreArcsThanAnnounced) {
  expect_error("p sp 3 1\na 1 2 3\na 2 3 1\n", kDimacs, 3,
               "more arcs than the 1 that the 'p' line (line 1) announces");
}
TEST(GraphErrors, DimacsFewerArcsThanAnnounced) {
  expect_error("p sp 3 3\na 1 2 3\nc end\n", kDimacs, 3,
               "ends after 1 arcs, but the 'p' line (line 1) announces 3");
}
TEST(GraphErrors, DimacsNoPLineAtAll) { expect_error("c only comments\n", kDimacs, 0, "no 'p sp N M' line"); }
TEST(GraphErrors, WeightNotANumber) {
  expect_error("p sp 2 1\na 1 2 abc\n", kDimacs, 2, "weight 'abc' is not a number");
}
TEST(GraphErrors, WeightWithTrailingText) {
  expect_error("p sp 2 1\na 1 2 3kg\n", kDimacs, 2, "weight '3kg' is not a number");
}
TEST(GraphErrors, WeightNaN) {
  expect_error("p sp 2 1\na 1 2 nan\n", kDimacs, 2, "weight 'nan' is not a finite number");
}
TEST(GraphErrors, WeightInf) {
  expect_error("p sp 2 1\na 1 2 inf\n", kDimacs, 2, "weight 'inf' is not a finite number");
}
TEST(GraphErrors, WeightMinusInf) { expect_error("1 2 -inf\n", kEdges, 1, "not a finite number", true); }
TEST(GraphErrors, WeightOutOfRange) {
  expect_error("p sp 2 1\na 1 2 1e999\n", kDimacs, 2, "out of the range of double");
}
TEST(GraphErrors, NegativeWeightWithoutPermission) {
  expect_error("p sp 2 1\na 1 2 -4\n", kDimacs, 2,
               "negative weight -4 (negative weights need --allow-negative)");
  EXPECT_NO_THROW(parse("p sp 2 1\na 1 2 -4\n", kDimacs, true));
}
TEST(GraphErrors, EdgeListWrongFieldCount) { expect_error("1 2 3\n\n1 2\n", kEdges, 3, "expected 'U V W'"); }
TEST(GraphErrors, EdgeListZeroInOneBased) { expect_error("1 2 3\n0 1 1\n", kEdges, 2, "use --zero-based"); }
TEST(GraphErrors, EdgeListNegativeVertex) {
  expect_error("0 -1 3\n", kEdges, 1, "vertex -1 is out of range", false, true);
}
TEST(GraphErrors, EdgeListVertexBeyondCount) {
  expect_error("1 2 3\n1 9 1\n", kEdges, 2, "vertex 9 is out of range 1..4", false, false, 4);
}
TEST(GraphErrors, EdgeListWithoutArcs) {
  expect_error("# nothing\n", kEdges, 0, "no arcs, and no vertex count");
}
TEST(GraphErrors, BinaryBytesStayOneLine) {
  const std::string bytes(
      "\x7f"
      "ELF\x02\x01\x01\x00\x00\r\x1b[0m and then some more bytes",
      40);
  expect_error(bytes + "\n", kDimacs, 1, "a line starting with '?ELF??????");
  expect_error("p sp 2 1\na 1 2 " + std::string(100, '7') + "x\n", kDimacs, 2, "7777...' is not a number");
}
TEST(GraphErrors, MissingFileIsNamed) {
  try {
    read_graph("/nonexistent/g.gr", ReadOptions{});
    ADD_FAILURE() << "no error";
  } catch (const GraphError& e) {
    EXPECT_NE(std::string(e.what()).find("/nonexistent/g.gr: cannot open"), std::string::npos) << e.what();
  }
}

// ---- numbers ----------------------------------------------------------------

TEST(Text, IntegersAreWholeTokens) {
  EXPECT_EQ(parse_integer("42"), 42);
  EXPECT_EQ(parse_integer("+7"), 7);
  EXPECT_EQ(parse_integer("-3"), -3);
  EXPECT_FALSE(parse_integer(""));
  EXPECT_FALSE(parse_integer("4x"));
  EXPECT_FALSE(parse_integer("+-4"));
  EXPECT_FALSE(parse_integer("99999999999999999999"));
}

TEST(Text, NumbersPrintShortAndReadBackExactly) {
  EXPECT_EQ(format_number(3), "3");
  EXPECT_EQ(format_number(0.1), "0.1");
  EXPECT_EQ(format_number(kInf), "inf");
  std::mt19937_64 rng(lab::testing::fresh_seed());
  std::uniform_real_distribution<double> u(-1e6, 1e6);
  for (int i = 0; i < 1000; ++i) {
    const double x = u(rng);
    double y = 0;
    ASSERT_EQ(parse_real(format_number(x), y, "x"), "");
    ASSERT_EQ(x, y);
  }
}

// ---- distance files -----------------------------------------------------------

Matrix random_distances(int64_t n, bool reals) {
  std::mt19937_64 rng(lab::testing::fresh_seed());
  Matrix D(n, n);
  for (int64_t j = 0; j < n; ++j)
    for (int64_t i = 0; i < n; ++i) {
      const double r = std::uniform_real_distribution<double>(-50, 50)(rng);
      D(i, j) = r > 40 ? kInf : (reals ? r : std::round(r));
    }
  return D;
}

TEST(DistanceFiles, TextAndBinaryRoundTripExactly) {
  TempDir dir;
  for (const auto format : {DistanceFormat::text, DistanceFormat::binary})
    for (int base : {0, 1})
      for (int64_t n : {1, 5, 70}) {
        const Matrix D = random_distances(n, base == 0);
        const std::string path = dir / "d.out";
        OutputFile out(path);
        write_distances(out, D.cview(), base, format);
        out.commit();
        const DistanceFile back = read_distances(path);
        EXPECT_EQ(back.base, base);
        ASSERT_EQ(back.D.rows(), n);
        for (int64_t j = 0; j < n; ++j)
          for (int64_t i = 0; i < n; ++i) ASSERT_EQ(back.D(i, j), D(i, j)) << i << "," << j;
      }
}

TEST(DistanceFiles, TextIsRowsOfDistancesFromEachVertex) {
  TempDir dir;
  Matrix D(2, 2);
  D(0, 0) = 0, D(0, 1) = 2.5, D(1, 0) = kInf, D(1, 1) = 0;
  OutputFile out(dir / "d.txt");
  write_distances(out, D.cview(), 1, DistanceFormat::text);
  out.commit();
  std::ifstream in(dir / "d.txt");
  std::string comment, header, row1, row2;
  std::getline(in, comment);
  std::getline(in, header);
  std::getline(in, row1);
  std::getline(in, row2);
  EXPECT_EQ(comment[0], '#');
  EXPECT_EQ(header, "n 2 base 1");
  EXPECT_EQ(row1, "0 2.5");
  EXPECT_EQ(row2, "inf 0");
}

TEST(DistanceFiles, MalformedFilesNameTheLine) {
  TempDir dir;
  auto expect_bad = [&](const std::string& text, const std::string& words) {
    std::ofstream(dir / "bad.txt") << text;
    try {
      read_distances(dir / "bad.txt");
      ADD_FAILURE() << "no error for " << text;
    } catch (const DistanceFileError& e) {
      EXPECT_NE(std::string(e.what()).find(words), std::string::npos) << e.what();
    }
  };
  expect_bad("n 2 base 1\n0 1\n1\n", "bad.txt:3: row of vertex 2 has 1 numbers, not 2");
  expect_bad("n 2 base 1\n0 1\n1 x\n", "bad.txt:3: distance 'x' is not a number");
  expect_bad("n 2 base 1\n0 1\n", "bad.txt:2: the file ends after 1 of 2 rows");
  expect_bad("0 1\n", "bad.txt:1: expected the header 'n N base B'");
  expect_bad("APSPDIST\x03", "a binary distance file with a bad header or size");
}

TEST(OutputFiles, NothingAppearsUntilCommit) {
  TempDir dir;
  const std::string path = dir / "result.txt";
  {
    OutputFile out(path);
    std::fputs("half", out.stream());
  }  // destroyed without commit: a failed run
  EXPECT_FALSE(std::filesystem::exists(path));
  EXPECT_TRUE(std::filesystem::is_empty(dir.path())) << "a temporary file was left behind";
  {
    OutputFile out(path);
    std::fputs("whole", out.stream());
    out.commit();
  }
  std::string text;
  std::ifstream(path) >> text;
  EXPECT_EQ(text, "whole");
}

TEST(OutputFiles, AnUnwritablePathFailsAtOnce) {
  try {
    OutputFile out("/nonexistent-dir/d.txt");
    ADD_FAILURE() << "no error";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("/nonexistent-dir/d.txt"), std::string::npos) << e.what();
  }
}

// ---- the generator -------------------------------------------------------------

TEST(Generator, SameSeedSameGraphAndItReadsBack) {
  GenerateOptions o;
  o.n = 300, o.degree = 5, o.seed = 7, o.max_weight = 50;
  const Graph a = random_graph(o), b = random_graph(o);
  ASSERT_EQ(a.arcs.size(), size_t(300 * 5));
  for (size_t i = 0; i < a.arcs.size(); ++i) {
    ASSERT_EQ(a.arcs[i].v, b.arcs[i].v);
    ASSERT_EQ(a.arcs[i].w, b.arcs[i].w);
    ASSERT_NE(a.arcs[i].u, a.arcs[i].v) << "a self-loop";
    ASSERT_GE(a.arcs[i].w, 1);
    ASSERT_LE(a.arcs[i].w, 50);
  }
  o.seed = 8;
  const Graph c = random_graph(o);
  bool differs = false;
  for (size_t i = 0; i < a.arcs.size(); ++i)
    differs |= c.arcs[i].v != a.arcs[i].v || c.arcs[i].w != a.arcs[i].w;
  EXPECT_TRUE(differs) << "seeds 7 and 8 gave the same graph";
  for (const auto format : {kDimacs, kEdges}) {
    std::stringstream text;
    write_graph(text, a, format, "test");
    ReadOptions ro;
    ro.format = format;
    const Graph back = parse_graph(text, "gen", ro);
    ASSERT_EQ(back.n, a.n);
    ASSERT_EQ(back.arcs.size(), a.arcs.size());
    for (size_t i = 0; i < a.arcs.size(); ++i) ASSERT_EQ(back.arcs[i].w, a.arcs[i].w);
  }
}

}  // namespace
}  // namespace lab::step09::apsp
