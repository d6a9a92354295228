// algorithms.hpp — all-pairs shortest paths on a min-plus GEMM, whatever the engine.
//
//   squaring   D <- D (x) D until nothing changes, at most ceil(log2(n - 1))
//              products (a shortest path has at most n - 1 arcs, and after p
//              products D covers every path of up to 2^p arcs): 2 n^3 per
//              product, 2 n^3 log2(n) in the worst case.
//   fw         blocked Floyd-Warshall: for each diagonal block K of b vertices,
//              close D(K, K), update the panels D(K, :) and D(:, K) by products
//              with it, then D(I, J) <- min(D(I, J), D(I, K) (x) D(K, J)) for the
//              rest. Every pair meets every block once: n^3 min-plus updates in
//              all (2 n^3 operations), nearly all of it GEMM with k = b.
//   plain      textbook Floyd-Warshall as one block (the CLI runs it on one CPU
//              core): the same n^3 updates, none of them in a GEMM.
//
// With negative arcs (and only then) the algorithms watch the diagonal: a
// negative D(v, v) means v lies on a negative cycle; they stop there and report v.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "engine.hpp"

namespace lab::step09::apsp {

struct AlgorithmOptions {
  int64_t block = 256;            ///< fw: vertices per diagonal block (clamped to 1..n)
  bool negative_weights = false;  ///< the graph has negative arcs: look for negative cycles
};

struct RunReport {
  std::vector<std::pair<std::string, double>> phases;  ///< seconds of each kind of step
  double seconds = 0;                                  ///< the whole run
  int products = 0;                                    ///< squaring: n x n products run
  int product_limit = 0;        ///< squaring: ceil(log2(n - 1)) (+1 to rule out negative cycles)
  double inner = 0;             ///< the work is 2 n^2 * inner min-plus operations
  int64_t negative_cycle = -1;  ///< a vertex on a negative cycle, or -1
};

struct Algorithm {
  std::string name;   ///< as --algorithm takes it
  std::string title;  ///< for reports
  std::function<RunReport(Engine&, const AlgorithmOptions&)> run;
};

/// The one list: the CLI, the benchmark and the tests all read it.
const std::vector<Algorithm>& algorithms();
/// nullptr when there is no such algorithm.
const Algorithm* find_algorithm(const std::string& name);
/// "squaring, fw, plain"
std::string algorithm_names();

/// ceil(log2(n - 1)) for n > 2, else 0: products that cover every path.
int squaring_products(int64_t n);

}  // namespace lab::step09::apsp
