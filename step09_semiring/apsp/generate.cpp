#include "generate.hpp"

#include <stdexcept>

#include "lab/random.hpp"

namespace lab::step09::apsp {
namespace {

struct SplitMix64 {
  uint64_t state;
  uint64_t next() { return mix64(state += 0x9e3779b97f4a7c15ULL); }  // the finalizer: lab/random.hpp
  // Uniform in [0, bound): the high half of a 64 x 64-bit product (Lemire's
  // method without the rejection step; its bias, below bound / 2^64, is far
  // too small to matter for a benchmark graph).
  int64_t below(int64_t bound) { return int64_t((unsigned __int128)next() * uint64_t(bound) >> 64); }
};

}  // namespace

Graph random_graph(const GenerateOptions& o) {
  if (o.n < 2) throw std::invalid_argument("--generate: the vertex count must be at least 2");
  if (o.degree < 1) throw std::invalid_argument("--degree must be at least 1");
  if (o.max_weight < 1) throw std::invalid_argument("--max-weight must be at least 1");
  Graph g;
  g.n = o.n;
  g.base = 1;
  g.max_abs_weight = double(o.max_weight);
  g.arcs.reserve(size_t(o.n * o.degree));
  SplitMix64 rng{o.seed};
  for (int64_t u = 0; u < o.n; ++u)
    for (int64_t d = 0; d < o.degree; ++d) {
      int64_t v = rng.below(o.n - 1);
      v += v >= u;  // skip u itself: self-loops of weight >= 1 would change nothing
      g.arcs.push_back({u, v, double(1 + rng.below(o.max_weight))});
    }
  return g;
}

}  // namespace lab::step09::apsp
