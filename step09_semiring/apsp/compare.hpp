// compare.hpp — when two distance matrices agree.
//
// With integer weights every distance is an integer sum: exact in doubles while
// it stays below 2^53, so two correct algorithms agree bit for bit and any
// difference is a bug. With other weights, two algorithms may add the same
// shortest path's weights in different orders (squaring pairs halves, Floyd-
// Warshall grows paths one block at a time). A sum of at most n - 1 weights is
// within gamma_{n-1} * sum|w| of its exact value (Higham, section 4.2; gamma_m =
// m u / (1 - m u), u = 2^-53), and sum|w| <= (n - 1) max|w|, so two results
// differ by at most
//     tolerance = 2 gamma_{n-1} (n - 1) max|w|.
// (For weights of mixed sign this assumes the minimizing walks are paths,
// which holds whenever no cycle has weight exactly zero.) +inf must match +inf.
#pragma once

#include <cstdint>
#include <string>

#include "graph.hpp"
#include "lab/matrix.hpp"

namespace lab::step09::apsp {

/// 0 when the graph's distances are exact in doubles, else the bound above.
double distance_tolerance(const Graph& g);

struct Comparison {
  int64_t mismatches = 0;
  std::string report;  ///< the first few mismatches, in the file's vertex numbers
  bool ok() const { return mismatches == 0; }
};

/// Compares got against want entry by entry (same shape expected).
Comparison compare_distances(ConstMatView got, ConstMatView want, double tolerance, int base);

}  // namespace lab::step09::apsp
