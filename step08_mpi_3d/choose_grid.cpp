// step08_mpi_3d — TODO for the student: choose the process grid.
//
// What to do: among all grids px * py * pz = p, return the one whose ranks move
// the fewest words (words_per_rank in grid.hpp). The handout shows why a cube wins
// once p is large, and why for a prime p only the 1D grids are left.
//
// Ties are common (p = 8 and a square problem: 2x2x2, 1x2x4, 2x4x1, ... all move
// 0.75 n^2 words per rank). Break them, in this order, by
//   1. the least data per rank: the words of the three blocks that rank (0, 0, 0),
//      the largest, holds: mx * kz + kz * ny + mx * ny, with mx, ny, kz the largest
//      pieces of m, n, k (Split::largest);
//   2. the smaller pz (the reduction along z also adds, and its partial C blocks
//      are memory a 2D grid does not need);
//   3. the first grid in factorizations(p) order.
// The tests pin this: p = 8 square gives 2x2x2, p = 4 gives 2x2x1, p = 2 gives 1x2x1.
// Test:   ./lab test step08
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
  // TODO: of all factorizations(p), keep the grid with the fewest words_per_rank, ties broken as above
  LAB_TODO("step08 choose_grid: the factorization px * py * pz = p with the fewest words_per_rank");
}
