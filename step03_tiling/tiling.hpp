// step03_tiling — cache blocking over i, j, k and 2 x 2 register reuse.
#pragma once

#include <cstdint>
#include <vector>

#include "lab/matrix.hpp"
#include "lab/registry.hpp"

namespace lab::step03 {
inline namespace LAB_IMPL_NS {

/// Block sizes: C is computed in mc x nc blocks, the k dimension in slices of kc.
struct Tiles {
  int64_t mc, nc, kc;
};

/// Tiles chosen from the cache sizes lab::cache_info() reads off this machine
/// (the arithmetic is in the handout): four kc-long vectors fill at most half of
/// L1, a kc x mc block of the transposed A at most half of L2, a kc x nc block of
/// B at most half of L3.
Tiles default_tiles();

/// `defaults` with the first values replaced by those of --tile mc,nc,kc (as
/// many as given). Throws std::invalid_argument for more than three values.
Tiles tiles_with_overrides(Tiles defaults, const std::vector<int64_t>& tile);

/// C <- alpha * A * B + beta * C with the given tiles (each >= 1; any m, n, k).
/// Throws std::invalid_argument naming the tile when one is < 1.
void dgemm_tiled(double alpha, ConstMatView A, ConstMatView B, double beta, MatView C, Tiles tiles);

/// dgemm_tiled with default_tiles().
void dgemm(double alpha, ConstMatView A, ConstMatView B, double beta, MatView C);

}  // namespace LAB_IMPL_NS
}  // namespace lab::step03
