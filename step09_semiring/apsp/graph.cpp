// Reading DIMACS .gr files and edge lists; the distance matrix of a graph.
#include "graph.hpp"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <limits>
#include <ostream>

#include "text.hpp"

namespace lab::step09::apsp {
namespace {

// A dense n x n matrix of 2^31 vertices would be 32 EiB: any count above this
// is a typo or a corrupt file, and saying so beats an overflow further on.
constexpr int64_t kMaxVertices = int64_t(1) << 31;

// Where the reader is, so that every message names the file and the line.
class Cursor {
 public:
  explicit Cursor(std::string name) : name_(std::move(name)) {}
  void next() { ++line_; }
  int64_t line() const { return line_; }
  [[noreturn]] void fail(const std::string& what) const {
    throw GraphError(name_ + ":" + std::to_string(line_) + ": " + what);
  }

 private:
  std::string name_;
  int64_t line_ = 0;
};

// A vertex number of the file, checked against first..last, returned 0-based.
int64_t read_vertex(const Cursor& at, std::string_view token, int64_t first, int64_t last) {
  const auto v = parse_integer(token);
  if (!v) at.fail("vertex " + quote(token) + " is not a whole number");
  if (*v < first || *v > last) {
    std::string msg = "vertex " + std::to_string(*v) + " is out of range " + std::to_string(first) + ".." +
                      std::to_string(last);
    if (first == 1 && *v == 0) msg += " (for vertices numbered from 0, use --zero-based)";
    at.fail(msg);
  }
  return *v - first;
}

double read_weight(const Cursor& at, std::string_view token, const ReadOptions& opts) {
  double w = 0;
  const std::string why = parse_real(token, w, "weight");
  if (!why.empty()) at.fail(why);
  if (w < 0 && !opts.allow_negative)
    at.fail("negative weight " + std::string(token) + " (negative weights need --allow-negative)");
  return w;
}

void add_arc(Graph& g, int64_t u, int64_t v, double w) {
  g.arcs.push_back({u, v, w});
  if (w < 0) g.has_negative = true;
  if (w != std::floor(w)) g.integer_weights = false;
  g.max_abs_weight = std::max(g.max_abs_weight, std::fabs(w));
}

Graph parse_dimacs(std::istream& in, const std::string& name, const ReadOptions& opts) {
  Graph g;
  g.base = 1;
  Cursor at(name);
  int64_t p_line = 0, announced = 0;
  std::string text;
  while (std::getline(in, text)) {
    at.next();
    const auto w = split_words(text);
    if (w.empty() || w[0] == "c") continue;
    if (w[0] == "p") {
      if (p_line) at.fail("a second 'p' line (the first is line " + std::to_string(p_line) + ")");
      if (w.size() != 4 || w[1] != "sp") at.fail("expected 'p sp N M' (N vertices, M arcs)");
      const auto n = parse_integer(w[2]);
      const auto m = parse_integer(w[3]);
      if (!n || *n < 1) at.fail("vertex count " + quote(w[2]) + " is not a whole number >= 1");
      if (*n > kMaxVertices)
        at.fail("vertex count " + std::to_string(*n) + " is too large for a dense matrix");
      if (!m || *m < 0) at.fail("arc count " + quote(w[3]) + " is not a whole number >= 0");
      g.n = *n;
      announced = *m;
      p_line = at.line();
      // Reserve no more than a plausible amount: the count is not checked yet.
      g.arcs.reserve(size_t(std::min<int64_t>(announced, int64_t(1) << 24)));
      continue;
    }
    if (w[0] == "a") {
      if (!p_line) at.fail("an arc before the 'p sp N M' line");
      if (w.size() != 4)
        at.fail("expected 'a U V W' (an arc U -> V of weight W), found " + std::to_string(w.size()) +
                " fields");
      if (int64_t(g.arcs.size()) == announced)
        at.fail("more arcs than the " + std::to_string(announced) + " that the 'p' line (line " +
                std::to_string(p_line) + ") announces");
      const int64_t u = read_vertex(at, w[1], 1, g.n);
      const int64_t v = read_vertex(at, w[2], 1, g.n);
      add_arc(g, u, v, read_weight(at, w[3], opts));
      continue;
    }
    at.fail("a line starting with " + quote(w[0]) + " (expected 'c', 'p' or 'a')");
  }
  if (in.bad()) throw GraphError(name + ": read error after line " + std::to_string(at.line()));
  if (!p_line) throw GraphError(name + ": no 'p sp N M' line (is this a DIMACS .gr file?)");
  if (int64_t(g.arcs.size()) != announced)
    at.fail("the file ends after " + std::to_string(g.arcs.size()) + " arcs, but the 'p' line (line " +
            std::to_string(p_line) + ") announces " + std::to_string(announced));
  return g;
}

Graph parse_edges(std::istream& in, const std::string& name, const ReadOptions& opts) {
  Graph g;
  g.base = opts.zero_based ? 0 : 1;
  Cursor at(name);
  const int64_t last = opts.vertices > 0 ? g.base + opts.vertices - 1 : kMaxVertices - 1 + g.base;
  int64_t largest = -1;  // 0-based
  std::string text;
  while (std::getline(in, text)) {
    at.next();
    std::string_view line(text);
    if (const size_t hash = line.find('#'); hash != std::string_view::npos) line = line.substr(0, hash);
    const auto w = split_words(line);
    if (w.empty()) continue;
    if (w.size() != 3)
      at.fail("expected 'U V W' (an arc U -> V of weight W), found " + std::to_string(w.size()) + " fields");
    const int64_t u = read_vertex(at, w[0], g.base, last);
    const int64_t v = read_vertex(at, w[1], g.base, last);
    add_arc(g, u, v, read_weight(at, w[2], opts));
    largest = std::max({largest, u, v});
  }
  if (in.bad()) throw GraphError(name + ": read error after line " + std::to_string(at.line()));
  g.n = opts.vertices > 0 ? opts.vertices : largest + 1;
  if (g.n == 0) throw GraphError(name + ": no arcs, and no vertex count given (--vertices N)");
  return g;
}

}  // namespace

GraphFormat format_for(const std::string& path) {
  const std::string ext = ".gr";
  const bool gr = path.size() >= ext.size() && path.compare(path.size() - ext.size(), ext.size(), ext) == 0;
  return gr ? GraphFormat::dimacs : GraphFormat::edges;
}

const char* format_name(GraphFormat f) { return f == GraphFormat::dimacs ? "dimacs" : "edges"; }

double max_safe_weight(int64_t n) {
  return n > 1 ? std::numeric_limits<double>::max() / (2.0 * double(n - 1)) : std::numeric_limits<double>::max();
}

Graph parse_graph(std::istream& in, const std::string& name, const ReadOptions& opts) {
  Graph g = opts.format == GraphFormat::dimacs ? parse_dimacs(in, name, opts) : parse_edges(in, name, opts);
  // A shortest path has at most n - 1 arcs, and the algorithms add two such
  // paths: past this bound a path that exists could sum to +inf ("no path")
  // or, with negative weights, to -inf (a negative cycle that is not there).
  if (g.max_abs_weight > max_safe_weight(g.n))
    throw GraphError(name + ": a weight of magnitude " + format_number(g.max_abs_weight) +
                     " can overflow a double on a path of up to " + std::to_string(g.n - 1) + " arcs; with " +
                     std::to_string(g.n) + " vertices every |weight| must be at most " +
                     format_number(max_safe_weight(g.n)) + " (the largest double / (2 (n - 1)))");
  return g;
}

Graph read_graph(const std::string& path, const ReadOptions& opts) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) throw GraphError(path + ": is a folder, not a graph file");
  std::ifstream in(path);
  if (!in) throw GraphError(path + ": cannot open the graph file");
  return parse_graph(in, path, opts);
}

Matrix distance_matrix(const Graph& g) {
  Matrix D(g.n, g.n);
  constexpr double inf = std::numeric_limits<double>::infinity();
  // Parallel first touch: the pages land near the threads that use them.
#pragma omp parallel for schedule(static)
  for (int64_t j = 0; j < g.n; ++j) {
    double* d = D.data() + j * D.ld();
    for (int64_t i = 0; i < g.n; ++i) d[i] = inf;
    d[j] = 0.0;
  }
  for (const Arc& a : g.arcs) D(a.u, a.v) = std::min(D(a.u, a.v), a.w);
  return D;
}

void write_graph(std::ostream& out, const Graph& g, GraphFormat format, const std::string& comment) {
  if (format == GraphFormat::dimacs) {
    out << "c " << comment << "\np sp " << g.n << ' ' << g.arcs.size() << '\n';
    for (const Arc& a : g.arcs) out << "a " << a.u + 1 << ' ' << a.v + 1 << ' ' << format_number(a.w) << '\n';
  } else {
    out << "# " << comment << '\n';
    for (const Arc& a : g.arcs)
      out << a.u + g.base << ' ' << a.v + g.base << ' ' << format_number(a.w) << '\n';
  }
}

}  // namespace lab::step09::apsp
