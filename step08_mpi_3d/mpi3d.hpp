// step08_mpi_3d — distributed DGEMM on a px x py x pz process grid (the "3D algorithm").
//
// The p ranks of a communicator form a cube. The rank at (x, y, z) multiplies
// A_xz by B_zy: A's blocks live on the y = 0 face and are broadcast along y, B's
// on the x = 0 face and are broadcast along x, and the pz partial products of
// C_xy are summed along z onto the z = 0 face, where C lives. pz = 1 is the 2D
// algorithm on the same code.
//
// Two ways in:
// - Plan + multiply: the data already lives on the ranks, each rank passes its
//   own blocks (host or device memory, any ld), and they are used where they lie.
//   The Plan is made once (the cube, its sub-communicators, every rank's block
//   ranges) and reused by every multiply.
// - dgemm(comm, ...): the full matrices on rank 0, which scatters them, runs the
//   multiply above and gathers C: the simple entry, and the student's first test.
// The multiply is generic: multiply_blocks<T> takes the local product and the
// reduction along z from the caller (step09 runs min-plus through it with MPI_MIN).
#pragma once

#include <mpi.h>

#include <cstdint>
#include <functional>

#include "comm.hpp"
#include "grid.hpp"
#include "lab/matrix.hpp"
#include "lab/registry.hpp"
#include "workspace.hpp"

namespace lab::step08 {

/// What multiplies the blocks on each rank (the DGEMM entries).
enum class LocalKernel {
  step04,    ///< step04's SIMD kernel with Options::threads OpenMP threads
  openblas,  ///< OpenBLAS's dgemm with Options::threads threads (where the build found it)
  cuda,      ///< host blocks: cuBLAS on one GPU per rank, copying the blocks there and back
};

/// The parts of one call, in order; the benchmark reports the time and bytes of each.
enum Phase : int { kSetup, kScatter, kBroadcast, kProduct, kReduce, kGather, kPhases };
inline const char* phase_name(int p) {
  static const char* const names[kPhases] = {"setup", "scatter", "broadcast", "product", "reduce", "gather"};
  return names[p];
}

/// One rank's account of one call: where the time went and what it sent and received.
struct Breakdown {
  Grid grid;                     ///< the grid the call used
  double seconds[kPhases] = {};  ///< wall time per phase, each ending when all ranks are done
  double own[kPhases] = {};      ///< this rank's own part of it, before it waited for the others
  Traffic traffic[kPhases] = {};
};

struct Options {
  Grid grid;  ///< all zero: choose_grid(p, m, n, k)
  LocalKernel local = LocalKernel::step04;
  int threads = 0;                 ///< threads of the cpu kernels (0: OpenMP's default)
  Breakdown* breakdown = nullptr;  ///< when given, this rank's breakdown of the call
  /// Host blocks: A's and B's broadcasts in flight at once (MPI_Ibcast, both
  /// waited for together), or false: one MPI_Bcast after the other.
  bool bcasts_at_once = true;
};

/// How the pz partial products of a C block are combined along z: the MPI
/// operation on host buffers (MPI_SUM, MPI_MIN, MPI_MAX or one of the caller's
/// MPI_Op_create), and NCCL's on device buffers (an ncclRedOp_t as an int, so
/// that this header does not need nccl.h: ncclSum 0, ncclProd 1, ncclMax 2,
/// ncclMin 3). The element type is the multiply's T.
struct Reduction {
  MPI_Op mpi = MPI_SUM;
  int nccl_op = 0;
};

/// The local product of a multiply: C <- A (x) B with C written and not read
/// (into_c == false, every layer z > 0: C is a scratch block), or C combined with
/// the caller's C (into_c == true, the z = 0 layer: beta C, or C (+) ... for a
/// semiring). `reads_c` says whether the into_c form reads C at all (false for
/// beta == 0), so that nothing is copied in for it. `stream` is the transport's
/// cudaStream_t for device blocks, nullptr for host blocks.
template <class T>
struct Product {
  std::function<void(View<const T> A, View<const T> B, View<T> C, bool into_c, void* stream)> run;
  bool reads_c = true;
};

template <class T>
class Transport;  // transport.hpp: how blocks of T travel (host MPI, or device NCCL / MPI)

/// The communicators of the cube. Every rank is in exactly one of each kind; the
/// faces that hold data are those through rank 0 = (0, 0, 0).
struct Cube {
  Comm cart;     // all ranks, with coordinates (x, y, z), numbered as the communicator it was made from
  Comm face_a;   // same y: an x-z face; the y = 0 one holds A
  Comm face_b;   // same x: a y-z face; the x = 0 one holds B
  Comm face_c;   // same z: an x-y face; the z = 0 one holds C
  Comm fibre_a;  // same x and z: A_xz travels along it (y varies)
  Comm fibre_b;  // same y and z: B_zy travels along it (x varies)
  Comm fibre_c;  // same x and y: the partial C_xy are combined along it (z varies)
  int x = 0, y = 0, z = 0;
};

inline namespace LAB_IMPL_NS {

/// Made once for a communicator, a problem size and a grid; collective over
/// `comm`. Holds the cube (its communicators) and, through layout(), every rank's
/// block ranges. Bad sizes or a grid whose product is not the size of `comm`
/// throw the same std::invalid_argument on every rank.
class Plan {
 public:
  Plan(MPI_Comm comm, int64_t m, int64_t n, int64_t k, Grid grid = {});

  const Layout& layout() const { return layout_; }
  const Grid& grid() const { return layout_.grid; }
  const Cube& cube() const { return cube_; }
  int rank() const { return rank_; }
  int size() const { return static_cast<int>(layout_.grid.size()); }
  /// This rank's blocks (held == false: it holds none of that matrix).
  Block a_block() const { return layout_.a_block(rank_); }
  Block b_block() const { return layout_.b_block(rank_); }
  Block c_block() const { return layout_.c_block(rank_); }
  /// Host scratch for the blocks this rank receives, kept between multiplies.
  HostWorkspace& workspace() const { return workspace_; }

 private:
  Layout layout_;
  Cube cube_;
  int rank_ = 0;
  mutable HostWorkspace workspace_;
};

/// The multiply on blocks that live on their ranks, for any element type and
/// algebra. Every rank of the plan calls it with its own blocks: A its A_xz when
/// it holds one (plan.a_block().held), B its B_zy, C its C_xy; the views of
/// blocks a rank does not hold are ignored (pass {nullptr, 0, 0, 1}). The blocks
/// are used where they lie, any ld; they are host or device memory as the
/// transport says. On return C_xy on the z = 0 face holds the result.
/// Bad views on any rank throw the same std::invalid_argument on every rank, and
/// an error on any rank during the call is rethrown on every rank.
template <class T>
void multiply_blocks(const Plan& plan, Transport<T>& transport, View<const T> A, View<const T> B, View<T> C,
                     const Product<T>& product, Breakdown* breakdown = nullptr);

/// C <- alpha A B + beta C on host blocks that live on their ranks (the DGEMM of
/// multiply_blocks, with opts.local multiplying the blocks). The plan's own
/// workspace holds the blocks a rank receives; p = 1 copies nothing.
void multiply(const Plan& plan, double alpha, ConstMatView A, ConstMatView B, double beta, MatView C,
              const Options& opts = {});

/// C <- alpha * A * B + beta * C, collective over `comm`. A (m x k), B (k x n) and
/// C (m x n) are full column-major matrices on rank 0 of `comm`; the views of the
/// other ranks are ignored (pass {nullptr, 0, 0, 1}). Rank 0 scatters the blocks,
/// the multiply above runs, and rank 0 gathers C; rank 0's own blocks are used
/// where they lie in A, B and C. Bad arguments on rank 0, or a grid whose product
/// is not the size of `comm`, throw the same std::invalid_argument on every rank.
void dgemm(MPI_Comm comm, double alpha, ConstMatView A, ConstMatView B, double beta, MatView C,
           const Options& opts = {});

/// The grid with px * py * pz == p that moves the fewest words per rank
/// (words_per_rank in grid.hpp) for an m x k times k x n product; any p, primes
/// too. Ties: the least data per rank, then the smaller pz (see choose_grid.cpp).
Grid choose_grid(int p, int64_t m, int64_t n, int64_t k);

}  // namespace LAB_IMPL_NS
}  // namespace lab::step08
