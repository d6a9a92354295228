// support.hpp — what the tests share: graphs with every feature the algorithms
// must get right, the reference distances, and a scratch folder.
#pragma once

#include <cstdint>
#include <filesystem>
#include <random>
#include <string>
#include <vector>

#include "graph.hpp"
#include "lab/matrix.hpp"

namespace lab::step09::apsp::testing {

enum class Weights {
  integers,  ///< 0..max_weight: every distance exact, results compare bit for bit
  dyadic,    ///< multiples of 1/1024: not integers, yet every sum is still exact
  reals,     ///< uniform doubles: sums round, results compare within distance_tolerance
};

struct GraphSpec {
  int64_t n = 10;
  double density = 0.2;     ///< chance of an arc u -> v
  int components = 1;       ///< vertex ranges with no arc between them
  bool self_loops = false;  ///< add self-loops of weight >= 0 (they change nothing)
  bool parallel = false;    ///< add heavier and lighter copies of some arcs
  int max_weight = 9;       ///< weights from 0 (zero weights included) to this
  bool negative = false;    ///< negative arcs, but no negative cycle (shifted by vertex potentials)
  Weights weights = Weights::integers;
};

Graph random_test_graph(const GraphSpec& spec, std::mt19937_64& rng);

/// `g` plus a cycle through `length` distinct random vertices whose arcs sum
/// to -1 (length 1: a self-loop of weight -1). Returns the cycle's vertices.
std::vector<int64_t> plant_negative_cycle(Graph& g, int64_t length, std::mt19937_64& rng);

/// The distance matrix by plain Floyd-Warshall (the reference).
Matrix floyd_warshall_distances(const Graph& g);

/// Whether `v` lies on a closed walk of negative weight, from the reference
/// distances `fw`. Not just fw(v, v) < 0: sequential Floyd-Warshall leaves a
/// negative diagonal only where it combined a negative cycle through `v`
/// (certainly at the highest-numbered vertex of every simple negative cycle),
/// while an algorithm that relaxes in another order (squaring, a parallel
/// loop) may find the negative walk from any vertex of that cycle's strongly
/// connected part. So: some w with fw(w, w) < 0 that v reaches and that
/// reaches v.
bool on_negative_closed_walk(const Matrix& fw, int64_t v);

/// "n=17 density=0.2 components=2 ..." for failure messages.
std::string describe(const GraphSpec& spec);

/// A fresh folder under the system's temporary directory, removed with everything in it.
class TempDir {
 public:
  TempDir();
  ~TempDir();
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const std::filesystem::path& path() const { return path_; }
  std::string operator/(const std::string& name) const { return (path_ / name).string(); }

 private:
  std::filesystem::path path_;
};

}  // namespace lab::step09::apsp::testing
