// generate.hpp — the random graphs the benchmark runs on.
//
// Every vertex gets `degree` arcs to vertices drawn uniformly from the others
// (an occasional parallel arc is kept: the reader keeps the lightest), with
// integer weights drawn uniformly from 1..max_weight. The same seed gives the
// same graph on every machine (the generator is splitmix64, not <random>,
// whose distributions differ between standard libraries).
#pragma once

#include <cstdint>

#include "graph.hpp"

namespace lab::step09::apsp {

struct GenerateOptions {
  int64_t n = 4096;
  int64_t degree = 8;
  uint64_t seed = 1;
  int64_t max_weight = 1000;
};

/// Throws std::invalid_argument naming the option when n < 2, degree < 1 or max_weight < 1.
Graph random_graph(const GenerateOptions& opts);

}  // namespace lab::step09::apsp
