// graph.hpp — weighted directed graphs from files, and their distance matrix.
//
// Two formats:
//   DIMACS .gr (the 9th DIMACS implementation challenge, shortest paths):
//       c any comment
//       p sp N M        once, before any arc: N vertices, M arcs
//       a U V W         an arc U -> V of weight W; vertices 1..N
//   a plain edge list:
//       # a comment (also after the numbers on a line)
//       U V W           an arc U -> V of weight W; vertices from 1, or from 0
//                       with --zero-based; N is the largest vertex (or --vertices)
// Weights are decimal numbers (integers in DIMACS files, but any finite double
// is read, up to max_safe_weight(N) in magnitude). Negative weights are an error unless allowed. Parallel arcs keep the
// lightest; a self-loop of negative weight is a negative cycle, one of weight
// >= 0 changes nothing (the empty path is shorter).
//
// Every error is one line naming the file and the line: "road.gr:17: ...".
#pragma once

#include <cstdint>
#include <iosfwd>
#include <stdexcept>
#include <string>
#include <vector>

#include "lab/matrix.hpp"

namespace lab::step09::apsp {

enum class GraphFormat { dimacs, edges };

/// "dimacs" for a name ending in .gr, "edges" otherwise.
GraphFormat format_for(const std::string& path);
const char* format_name(GraphFormat f);

struct ReadOptions {
  GraphFormat format = GraphFormat::dimacs;
  bool zero_based = false;      ///< edge lists: vertices from 0 instead of 1
  int64_t vertices = 0;         ///< edge lists: the vertex count (0: the largest vertex seen)
  bool allow_negative = false;  ///< accept negative weights
};

struct Arc {
  int64_t u, v;  ///< 0-based
  double w;
};

struct Graph {
  int64_t n = 0;
  std::vector<Arc> arcs;
  int base = 1;                 ///< the file's first vertex number (output uses it too)
  bool has_negative = false;    ///< some weight < 0
  bool integer_weights = true;  ///< every weight a whole number
  double max_abs_weight = 0;
};

/// A malformed graph file: what() is the whole one-line message.
struct GraphError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

/// The largest |weight| a graph of n vertices may have: every sum the
/// algorithms form (two paths of up to n - 1 arcs) stays a finite double.
/// A graph with a heavier arc is refused (GraphError naming this bound).
double max_safe_weight(int64_t n);

Graph read_graph(const std::string& path, const ReadOptions& opts);
/// The same from a stream; `name` stands for the file in messages.
Graph parse_graph(std::istream& in, const std::string& name, const ReadOptions& opts);

/// n x n: D(i, j) = the lightest arc i -> j, +inf where there is none, and
/// D(i, i) = min(0, self-loops of i).
Matrix distance_matrix(const Graph& g);

/// Writes `g` in `format` (vertex numbers from g.base; DIMACS always from 1),
/// with `comment` as the first comment line.
void write_graph(std::ostream& out, const Graph& g, GraphFormat format, const std::string& comment);

}  // namespace lab::step09::apsp
