// step09_semiring/mpi — the semiring product on step08's 3D process grid.
//
// Nothing of the distributed algorithm changes from step08: the same Plan (the
// cube, its sub-communicators, every rank's block ranges), the same
// broadcasts of A along y and B along x, the same multiply_blocks. Two things
// are the semiring's:
//   - the local product: step09's gemm<S> on the CPU (step04's packed panels,
//     OpenMP), or its register-blocked kernel gemm_device<S> on the rank's GPU;
//   - the reduction along z: the semiring's add (semiring_op.hpp): MPI_MIN for
//     min-plus, MPI_MAX for max-plus, MPI_SUM for plus-times, a user-defined
//     MPI_Op in general; ncclMin / ncclMax / ncclSum for device blocks moved
//     with NCCL.
// accumulate == false: C <- A (x) B, C never read (a NaN there vanishes);
// true: C <- C (+) (A (x) B) on the z = 0 face, where C lives. Every rank
// passes its own blocks (plan.a_block(), b_block(), c_block(); any ld; views of
// blocks it does not hold are ignored). Bad views on any rank throw the same
// std::invalid_argument on every rank (step08's rule).
#pragma once

#include <mpi.h>

#include <cstdint>

#include "mpi3d.hpp"  // step08: Plan, Breakdown
#include "semiring.hpp"
#include "semiring_op.hpp"
#if LAB_STEP08_HAVE_CUDA && defined(LAB_STEP09_GPU)
#include "device.hpp"  // step08: DeviceContext
#define LAB_STEP09_MPI_DEVICE 1
#else
#define LAB_STEP09_MPI_DEVICE 0
#endif

namespace lab::step09::mpi {

struct Options {
  int threads = 0;          ///< OpenMP threads of the CPU product per rank (0: OpenMP's default)
  bool user_op = false;     ///< reduce with an MPI_Op_create of S::add even where a built-in op exists
  step08::Breakdown* breakdown = nullptr;  ///< when given, this rank's breakdown of the call
};

inline namespace LAB_IMPL_NS {

/// The product on host blocks, collective over the plan's communicator.
template <class S>
void gemm(const step08::Plan& plan, View<const typename S::value_type> A, View<const typename S::value_type> B,
          View<typename S::value_type> C, bool accumulate, const Options& opts = {});

#if LAB_STEP09_MPI_DEVICE
/// The product on device blocks that live on each rank's GPU (dev: step08's
/// context, one GPU per rank by node-local rank; NCCL where it uses it).
/// A user-defined op (opts.user_op, or a semiring without a built-in one)
/// needs a context that moves blocks with MPI (Transfer::mpi): NCCL has no
/// user operations; otherwise std::invalid_argument on every rank.
template <class S>
void gemm_device(const step08::Plan& plan, step08::DeviceContext& dev, View<const typename S::value_type> A,
                 View<const typename S::value_type> B, View<typename S::value_type> C, bool accumulate,
                 const Options& opts = {});
#endif

#define LAB_STEP09_MPI_DECLARE(S)                                                                            \
  extern template void gemm<S>(const step08::Plan&, View<const double>, View<const double>, View<double>, bool, \
                               const Options&)
LAB_STEP09_MPI_DECLARE(PlusTimes);
LAB_STEP09_MPI_DECLARE(MinPlus);
LAB_STEP09_MPI_DECLARE(MaxPlus);
#undef LAB_STEP09_MPI_DECLARE

}  // namespace LAB_IMPL_NS
}  // namespace lab::step09::mpi
