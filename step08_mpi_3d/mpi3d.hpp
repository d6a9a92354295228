// step08_mpi_3d — distributed DGEMM on a px x py x pz process grid (the "3D algorithm").
//
// The p ranks of a communicator form a cube. A is cut into blocks on the y = 0 face
// and broadcast along y, B on the x = 0 face and broadcast along x, every rank
// multiplies its two blocks, the partial products are summed along z onto the
// z = 0 face, and C is gathered from there. pz = 1 is the 2D algorithm on the same code.
#pragma once

#include <mpi.h>

#include <cstdint>

#include "grid.hpp"
#include "lab/matrix.hpp"
#include "lab/registry.hpp"

namespace lab::step08 {

/// What multiplies the blocks on each rank.
enum class LocalKernel {
  cpu,   ///< step04's SIMD kernel with Options::threads OpenMP threads
  cuda,  ///< cuBLAS on one GPU per rank, chosen by the rank's index on its node
};

/// The parts of one call, in order; the benchmark reports the time and bytes of each.
enum Phase : int { kSetup, kScatter, kBroadcast, kCompute, kReduce, kGather, kPhases };
inline const char* phase_name(int p) {
  static const char* const names[kPhases] = {"setup", "scatter", "broadcast", "compute", "reduce", "gather"};
  return names[p];
}

/// Bytes one rank passed to MPI in one phase (see the counting wrappers in comm.hpp).
struct Traffic {
  int64_t sent = 0, recv = 0;
};

/// One rank's account of one call: where the time went and what it sent and received.
struct Breakdown {
  Grid grid;                     ///< the grid the call used
  double seconds[kPhases] = {};  ///< wall time per phase, each ending when all ranks are done
  Traffic traffic[kPhases] = {};
};

struct Options {
  Grid grid;  ///< all zero: choose_grid(p, m, n, k)
  LocalKernel local = LocalKernel::cpu;
  int threads = 0;                 ///< OpenMP threads of the cpu kernel (0: OpenMP's default)
  Breakdown* breakdown = nullptr;  ///< when given, this rank's breakdown of the call
};

inline namespace LAB_IMPL_NS {

/// C <- alpha * A * B + beta * C, collective over `comm`. A (m x k), B (k x n) and
/// C (m x n) are full column-major matrices on rank 0 of `comm`; the views of the
/// other ranks are ignored (pass {nullptr, 0, 0, 1}). Bad arguments on rank 0, or a
/// grid whose product is not the size of `comm`, throw the same std::invalid_argument
/// on every rank; an error on any rank during the call is rethrown on every rank.
void dgemm(MPI_Comm comm, double alpha, ConstMatView A, ConstMatView B, double beta, MatView C,
           const Options& opts = {});

/// The grid with px * py * pz == p that moves the fewest words per rank
/// (words_per_rank in grid.hpp) for an m x k times k x n product; any p, primes too.
Grid choose_grid(int p, int64_t m, int64_t n, int64_t k);

}  // namespace LAB_IMPL_NS
}  // namespace lab::step08
