#include "compare.hpp"

#include <cmath>
#include <sstream>

#include "text.hpp"

namespace lab::step09::apsp {

double distance_tolerance(const Graph& g) {
  const double m = double(g.n > 1 ? g.n - 1 : 1), u = std::ldexp(1.0, -53);
  if (g.integer_weights && m * g.max_abs_weight < std::ldexp(1.0, 53)) return 0.0;
  return 2.0 * (m * u / (1.0 - m * u)) * m * g.max_abs_weight;
}

Comparison compare_distances(ConstMatView got, ConstMatView want, double tolerance, int base) {
  Comparison c;
  std::ostringstream o;
  if (got.rows != want.rows || got.cols != want.cols) {
    c.mismatches = 1;
    c.report = "the matrices are " + std::to_string(got.rows) + " x " + std::to_string(got.cols) + " and " +
               std::to_string(want.rows) + " x " + std::to_string(want.cols);
    return c;
  }
  constexpr int kShown = 5;
  for (int64_t v = 0; v < got.cols; ++v)
    for (int64_t u = 0; u < got.rows; ++u) {
      const double a = got(u, v), b = want(u, v);
      const bool same = a == b || std::fabs(a - b) <= tolerance;  // inf - inf is NaN: fails unless a == b
      if (same) continue;
      if (c.mismatches++ < kShown)
        o << (c.mismatches > 1 ? "; " : "") << "d(" << u + base << "," << v + base
          << ") = " << format_number(a) << ", expected " << format_number(b);
    }
  if (c.mismatches > kShown) o << "; ... " << c.mismatches << " entries differ in all";
  if (c.mismatches && tolerance > 0) o << " (tolerance " << tolerance << ")";
  c.report = o.str();
  return c;
}

}  // namespace lab::step09::apsp
