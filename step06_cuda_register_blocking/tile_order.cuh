// step06 — given: the order in which blocks walk the tiles of C.
//
// Blocks that run at the same time should share their panels of A and B in
// the L2 cache. Numbering tiles row by row, a wave of 132 blocks would cover
// one or two block columns of C and stream all of A from DRAM for each of
// them; numbering them in groups of kGroupRows block rows, a wave covers a
// nearly square patch of C and reads only that patch's panels.
#pragma once

#include <cstdint>

namespace lab::step06::detail {

constexpr int kGroupRows = 8;

/// The tile (row, column) of C that block `id` of a 1-D grid computes.
__device__ __forceinline__ void tile_of_block(int64_t id, int64_t tiles_m, int64_t tiles_n, int64_t* tm,
                                              int64_t* tn) {
  const int64_t per_group = int64_t(kGroupRows) * tiles_n;
  const int64_t first = (id / per_group) * kGroupRows;
  const int64_t rows = tiles_m - first < kGroupRows ? tiles_m - first : kGroupRows;
  const int64_t in_group = id % per_group;
  *tm = first + in_group % rows;
  *tn = in_group / rows;
}

}  // namespace lab::step06::detail
