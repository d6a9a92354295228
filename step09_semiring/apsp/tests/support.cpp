#include "support.hpp"

#include <stdlib.h>

#include <algorithm>
#include <limits>
#include <numeric>
#include <sstream>
#include <system_error>

#include "reference.hpp"

namespace lab::step09::apsp::testing {
namespace {

double draw_weight(const GraphSpec& s, std::mt19937_64& rng) {
  switch (s.weights) {
    case Weights::integers:
      return double(std::uniform_int_distribution<int>(0, s.max_weight)(rng));
    case Weights::dyadic:
      return double(std::uniform_int_distribution<int>(0, 1024 * s.max_weight)(rng)) / 1024.0;
    case Weights::reals:
      return std::uniform_real_distribution<double>(0.0, double(s.max_weight))(rng);
  }
  return 0;
}

void note_arc(Graph& g, int64_t u, int64_t v, double w) {
  g.arcs.push_back({u, v, w});
  g.has_negative |= w < 0;
  g.integer_weights &= w == double(int64_t(w));
  g.max_abs_weight = std::max(g.max_abs_weight, std::abs(w));
}

}  // namespace

Graph random_test_graph(const GraphSpec& s, std::mt19937_64& rng) {
  Graph g;
  g.n = s.n;
  g.base = 1;
  // Vertex potentials p: w(u, v) + p(u) - p(v) keeps every cycle's weight (the
  // p terms cancel around it) while making many arcs negative.
  std::vector<int> potential(size_t(s.n), 0);
  if (s.negative)
    for (auto& p : potential) p = std::uniform_int_distribution<int>(0, 3 * s.max_weight)(rng);
  auto component = [&](int64_t v) { return v * s.components / std::max<int64_t>(s.n, 1); };
  std::bernoulli_distribution arc(s.density), coin(0.5);
  for (int64_t u = 0; u < s.n; ++u)
    for (int64_t v = 0; v < s.n; ++v) {
      if (u == v || component(u) != component(v) || !arc(rng)) continue;
      const double shift = double(potential[size_t(u)] - potential[size_t(v)]);
      const double w = draw_weight(s, rng);
      note_arc(g, u, v, w + shift);
      if (s.parallel && coin(rng)) note_arc(g, u, v, draw_weight(s, rng) + shift);
    }
  if (s.self_loops)
    for (int64_t v = 0; v < s.n; ++v)
      if (coin(rng)) note_arc(g, v, v, draw_weight(s, rng));
  std::shuffle(g.arcs.begin(), g.arcs.end(), rng);  // parallel arcs apart, in any order
  return g;
}

std::vector<int64_t> plant_negative_cycle(Graph& g, int64_t length, std::mt19937_64& rng) {
  std::vector<int64_t> order(size_t(g.n));
  std::iota(order.begin(), order.end(), 0);
  std::shuffle(order.begin(), order.end(), rng);
  order.resize(size_t(length));
  double lightest = 0;
  for (const Arc& a : g.arcs) lightest = std::min(lightest, a.w);
  // Arcs of weight lightest - 1 each, and one that brings the sum to -1 (a
  // lighter parallel arc already there only makes the cycle lighter).
  const double each = lightest - 1;
  for (int64_t i = 0; i < length; ++i) {
    const double w = i + 1 == length ? -1 - each * double(length - 1) : each;
    note_arc(g, order[size_t(i)], order[size_t((i + 1) % length)], w);
  }
  return order;
}

Matrix floyd_warshall_distances(const Graph& g) {
  Matrix D = distance_matrix(g);
  plain_floyd_warshall(D.view());
  return D;
}

bool on_negative_closed_walk(const Matrix& fw, int64_t v) {
  const double inf = std::numeric_limits<double>::infinity();
  for (int64_t w = 0; w < fw.rows(); ++w) {
    const bool reaches = w == v || (fw(v, w) < inf && fw(w, v) < inf);
    if (reaches && fw(w, w) < 0) return true;
  }
  return false;
}

std::string describe(const GraphSpec& s) {
  static const char* const names[] = {"integers", "dyadic", "reals"};
  std::ostringstream o;
  o << "n=" << s.n << " density=" << s.density << " components=" << s.components
    << " self_loops=" << s.self_loops << " parallel=" << s.parallel << " max_weight=" << s.max_weight
    << " negative=" << s.negative << " weights=" << names[int(s.weights)];
  return o.str();
}

TempDir::TempDir() {
  // mkdtemp: a name no other test run (or process) holds.
  std::string templ = (std::filesystem::temp_directory_path() / "apsp-test-XXXXXX").string();
  if (!mkdtemp(templ.data())) throw std::runtime_error("mkdtemp failed for " + templ);
  path_ = templ;
}

TempDir::~TempDir() {
  std::error_code ignored;
  std::filesystem::remove_all(path_, ignored);
}

}  // namespace lab::step09::apsp::testing
