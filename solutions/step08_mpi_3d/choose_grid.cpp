// step08_mpi_3d — TODO for the student: choose the process grid.
//
// What to do: among all grids px * py * pz = p, return the one whose ranks move
// the fewest words (words_per_rank in grid.hpp). The handout shows why a cube wins
// once p is large, and why for a prime p only the 1D grids are left.
// Test:   ctest --test-dir build/student -L step08 -R correctness --output-on-failure
#include <cstdint>
#include <limits>
#include <stdexcept>
#include <string>

#include "grid.hpp"
#include "lab/todo.hpp"
#include "mpi3d.hpp"

lab::step08::Grid lab::step08::choose_grid(int p, int64_t m, int64_t n, int64_t k) {
  if (p < 1)
    throw std::invalid_argument("p: the number of processes must be at least 1, got " + std::to_string(p));
  // LAB:SOLUTION-BEGIN  of all factorizations(p), keep the grid with the fewest words_per_rank
  // Ties (p = 8 and a square problem: 2x2x2 and 2x4x1 move the same) go to the
  // grid that keeps the least data per rank, then to the smaller pz: the
  // reduction also adds, and its partial C blocks are memory 2D does not need.
  Grid best;
  int64_t best_words = std::numeric_limits<int64_t>::max(), best_memory = best_words;
  for (const Grid& g : factorizations(p)) {
    const int64_t mx = Split{m, g.px}.largest(), ny = Split{n, g.py}.largest(), kz = Split{k, g.pz}.largest();
    const int64_t words = words_per_rank(g, m, n, k), memory = mx * kz + kz * ny + mx * ny;
    if (words < best_words || (words == best_words && memory < best_memory) ||
        (words == best_words && memory == best_memory && g.pz < best.pz)) {
      best = g;
      best_words = words;
      best_memory = memory;
    }
  }
  return best;
  // LAB:SKELETON
  LAB_TODO("choose_grid: the factorization px * py * pz = p with the fewest words_per_rank");
  // LAB:SOLUTION-END
}
