// step06 — given: launching the kernels of the step, one per block tile.
//
// Each kernel file is built with a few block tiles (bm x bn x bk); its
// launcher list is a table of KernelChoice, and run_tile picks the row that
// matches the tile asked for (--tile on the command line).
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <mutex>
#include <set>
#include <stdexcept>
#include <string>
#include <vector>

#include "lab/cuda.hpp"
#include "register_blocking.hpp"

namespace lab::step06::detail {

using Launcher = void (*)(double, ConstMatView, ConstMatView, double, MatView, cudaStream_t);

/// A block tile a kernel file is built with, and the function that launches it.
struct KernelChoice {
  int bm, bn, bk;
  Launcher run;
};

/// Blocks needed to cover C with bm x bn tiles.
inline unsigned tile_count(MatView C, int bm, int bn) {
  return unsigned(((C.rows + bm - 1) / bm) * ((C.cols + bn - 1) / bn));
}

/// A block may use more than 48 KiB of dynamic shared memory only after its
/// kernel opts in; this does it once per kernel.
inline void allow_dynamic_smem(const void* kernel, size_t bytes) {
  static std::mutex mu;
  static std::set<const void*> done;
  const std::lock_guard<std::mutex> lock(mu);
  if (done.count(kernel)) return;
  LAB_CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, int(bytes)));
  done.insert(kernel);
}

/// The tiles of a launcher table, in its order.
inline std::vector<Tile> tiles_of(const KernelChoice* choices, size_t count) {
  std::vector<Tile> out;
  for (size_t i = 0; i < count; ++i) out.push_back({choices[i].bm, choices[i].bn, choices[i].bk});
  return out;
}
template <size_t N>
std::vector<Tile> tiles_of(const KernelChoice (&choices)[N]) {
  return tiles_of(choices, N);
}

/// "bm,bn,bk bm,bn,bk ...", as --tile takes them.
inline std::string tile_list(const std::vector<Tile>& tiles) {
  std::string out;
  for (const Tile& t : tiles) {
    if (!out.empty()) out += " ";
    out += std::to_string(t.bm) + "," + std::to_string(t.bn) + "," + std::to_string(t.bk);
  }
  return out;
}

/// Runs the choice built for `tile`, or throws std::invalid_argument naming the built ones.
inline void run_tile(const char* who, const KernelChoice* choices, size_t count, Tile tile, double alpha,
                     ConstMatView A, ConstMatView B, double beta, MatView C, cudaStream_t stream) {
  for (size_t i = 0; i < count; ++i) {
    const KernelChoice& k = choices[i];
    if (k.bm == tile.bm && k.bn == tile.bn && k.bk == tile.bk) return k.run(alpha, A, B, beta, C, stream);
  }
  throw std::invalid_argument(std::string(who) + ": no kernel for tile " + tile_list({tile}) + " (built: " +
                              tile_list(tiles_of(choices, count)) + ")");
}
template <size_t N>
void run_tile(const char* who, const KernelChoice (&choices)[N], Tile tile, double alpha, ConstMatView A,
              ConstMatView B, double beta, MatView C, cudaStream_t stream) {
  run_tile(who, choices, N, tile, alpha, A, B, beta, C, stream);
}

}  // namespace lab::step06::detail
