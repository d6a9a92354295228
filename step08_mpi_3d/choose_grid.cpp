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
  // TODO: of all factorizations(p), keep the grid with the fewest words_per_rank
  LAB_TODO("choose_grid: the factorization px * py * pz = p with the fewest words_per_rank");
}
