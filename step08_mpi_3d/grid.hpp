// grid.hpp — how the process cube cuts the matrices, and how many words that moves.
//
// The rank at (x, y, z) of a px x py x pz grid owns
//   A_xz: row block x of m (px blocks)  x  block z of k (pz blocks)
//   B_zy: block z of k                  x  column block y of n (py blocks)
//   C_xy: row block x of m              x  column block y of n
// and computes the partial product A_xz * B_zy; the pz partials of C_xy are summed
// along z. Everything here is arithmetic on sizes: no MPI, the same on every rank.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <ostream>
#include <stdexcept>
#include <string>
#include <vector>

namespace lab::step08 {

/// A process grid. px splits the rows of A and C (m), py the columns of B and C (n),
/// pz the inner dimension (k). pz = 1 is the 2D algorithm, px = py = 1 or one of
/// them = p is 1D. All zero means "not given": dgemm then calls choose_grid.
struct Grid {
  int px = 0, py = 0, pz = 0;

  bool given() const { return px != 0 || py != 0 || pz != 0; }
  int64_t size() const { return int64_t(px) * py * pz; }
  std::string str() const { return std::to_string(px) + "x" + std::to_string(py) + "x" + std::to_string(pz); }
  bool operator==(const Grid& o) const { return px == o.px && py == o.py && pz == o.pz; }
};
/// "2x2x2", also in test reports.
inline std::ostream& operator<<(std::ostream& os, const Grid& g) { return os << g.str(); }

/// n items cut into `parts` contiguous pieces whose sizes differ by at most one (the
/// first n % parts pieces get one more): any n works for any number of ranks, and a
/// piece may be empty when n < parts.
struct Split {
  int64_t n;
  int parts;

  int64_t size(int b) const { return n / parts + (b < n % parts ? 1 : 0); }
  int64_t start(int b) const { return b * (n / parts) + std::min<int64_t>(b, n % parts); }
  int64_t largest() const { return size(0); }
};

/// Where a rank sits in the grid: Cartesian ranks are numbered row-major (no
/// reordering), rank = (x * py + y) * pz + z.
struct Coords {
  int x = 0, y = 0, z = 0;
};
inline Coords coords_of(const Grid& g, int rank) { return {rank / (g.py * g.pz), (rank / g.pz) % g.py, rank % g.pz}; }

/// A block of a matrix: rows [row0, row0 + rows) and columns [col0, col0 + cols).
/// `held` is false for a rank that holds no block of that matrix (off its face);
/// a held block may still be empty when a size is smaller than the grid.
struct Block {
  int64_t row0 = 0, col0 = 0, rows = 0, cols = 0;
  bool held = false;
};

/// Which blocks of an m x k times k x n product each rank of a grid holds, before
/// and after the multiply: A_xz on the y = 0 face, B_zy on the x = 0 face, C_xy on
/// the z = 0 face. Arithmetic only: every rank can ask about every other rank.
struct Layout {
  Grid grid;
  int64_t m = 0, n = 0, k = 0;

  Split rows() const { return {m, grid.px}; }
  Split cols() const { return {n, grid.py}; }
  Split inner() const { return {k, grid.pz}; }
  Coords coords(int rank) const { return coords_of(grid, rank); }
  Block a_block(int rank) const {
    const Coords c = coords(rank);
    return {rows().start(c.x), inner().start(c.z), rows().size(c.x), inner().size(c.z), c.y == 0};
  }
  Block b_block(int rank) const {
    const Coords c = coords(rank);
    return {inner().start(c.z), cols().start(c.y), inner().size(c.z), cols().size(c.y), c.x == 0};
  }
  Block c_block(int rank) const {
    const Coords c = coords(rank);
    return {rows().start(c.x), cols().start(c.y), rows().size(c.x), cols().size(c.y), c.z == 0};
  }
  /// The blocks a rank works on during the multiply (held or received): the same
  /// ranges with held = true.
  Block a_work(int rank) const { return with_held(a_block(rank)); }
  Block b_work(int rank) const { return with_held(b_block(rank)); }
  Block c_work(int rank) const { return with_held(c_block(rank)); }

 private:
  static Block with_held(Block b) {
    b.held = true;
    return b;
  }
};

/// Throws std::invalid_argument (naming "grid") unless every dimension is >= 1 and
/// px * py * pz == p. Every rank evaluates this on the same values, so every rank
/// throws the same error and none is left waiting in a collective.
inline void validate_grid(const Grid& g, int p) {
  if (g.px < 1 || g.py < 1 || g.pz < 1)
    throw std::invalid_argument("grid: every dimension must be at least 1, got " + g.str());
  if (g.size() != p)
    throw std::invalid_argument("grid: " + g.str() + " needs " + std::to_string(g.size()) +
                                " processes, but the communicator has " + std::to_string(p));
}

/// Every (px, py, pz) with px * py * pz == p, px outermost.
inline std::vector<Grid> factorizations(int p) {
  std::vector<Grid> out;
  for (int px = 1; px <= p; ++px) {
    if (p % px != 0) continue;
    for (int py = 1; py <= p / px; ++py)
      if ((p / px) % py == 0) out.push_back({px, py, p / px / py});
  }
  return out;
}

/// Words (doubles) that the rank at (x, y, z) sends or receives in the broadcasts
/// and the reduction, counted once per block:
///   its A block if A travels along y (py > 1), its B block if B travels along x
///   (px > 1), its C block if C is summed along z (pz > 1).
/// The root of a broadcast counts the block it sends, the others the block they
/// receive, so every rank of an even grid moves the same number of words.
inline int64_t rank_words(const Grid& g, int64_t m, int64_t n, int64_t k, int x, int y, int z) {
  const int64_t mx = Split{m, g.px}.size(x), ny = Split{n, g.py}.size(y), kz = Split{k, g.pz}.size(z);
  return (g.py > 1 ? mx * kz : 0) + (g.px > 1 ? kz * ny : 0) + (g.pz > 1 ? mx * ny : 0);
}

/// The largest rank_words of the grid (rank (0, 0, 0) holds the largest blocks).
inline int64_t words_per_rank(const Grid& g, int64_t m, int64_t n, int64_t k) {
  return rank_words(g, m, n, k, 0, 0, 0);
}

/// The handout's formula with exact fractions instead of whole blocks:
///   [py>1] mk/(px pz) + [px>1] kn/(py pz) + [pz>1] mn/(px py).
inline double words_formula(const Grid& g, double m, double n, double k) {
  return (g.py > 1 ? m * k / (g.px * g.pz) : 0.0) + (g.px > 1 ? k * n / (g.py * g.pz) : 0.0) +
         (g.pz > 1 ? m * n / (g.px * g.py) : 0.0);
}

/// The 2D grid (pz = 1) that moves the fewest words: what the 3D grid is compared with.
/// Ties as choose_grid breaks them (the least data per rank, then the first in
/// factorizations order), so where the best grid is 2D the two name the same one.
inline Grid best_2d_grid(int p, int64_t m, int64_t n, int64_t k) {
  Grid best{p, 1, 1};
  int64_t best_words = -1, best_data = -1;
  for (const Grid& g : factorizations(p)) {
    if (g.pz != 1) continue;
    const int64_t mx = Split{m, g.px}.largest(), ny = Split{n, g.py}.largest();
    const int64_t words = words_per_rank(g, m, n, k), data = mx * k + k * ny + mx * ny;
    if (best_words < 0 || words < best_words || (words == best_words && data < best_data)) {
      best = g;
      best_words = words;
      best_data = data;
    }
  }
  return best;
}

/// The ideal cube, px = py = pz = p^(1/3) (p a perfect cube or not): (mk + kn + mn) / p^(2/3).
inline double cube_formula(int p, double m, double n, double k) {
  return p > 1 ? (m * k + k * n + m * n) / std::pow(double(p), 2.0 / 3.0) : 0.0;
}

/// The memory-independent lower bound: some rank does mnk/p multiply-adds and, by the
/// Loomis-Whitney inequality, needs at least 3 (mnk/p)^(2/3) distinct entries of A, B
/// and C for them; at most (mk + kn + mn)/p of those can start on the rank.
inline double lower_bound_words(int p, double m, double n, double k) {
  if (p <= 1) return 0.0;
  return std::max(0.0, 3.0 * std::pow(m * n * k / p, 2.0 / 3.0) - (m * k + k * n + m * n) / p);
}

}  // namespace lab::step08
