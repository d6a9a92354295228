// semiring_op.hpp — the z-reduction of step08's cube, done with the semiring's add.
//
// The pz partial products of a C block are combined along z. For DGEMM that is
// MPI_SUM; for a semiring it is its (+): MPI_MIN for min-plus, MPI_MAX for
// max-plus, MPI_SUM for plus-times (all on doubles, where MPI's built-in
// operations are exact and fast), and for any other semiring an MPI_Op made
// from S::add with MPI_Op_create. SemiringOp owns such an op (RAII: freed with
// MPI_Op_free) and says which NCCL operation does the same on device buffers
// (ncclMin, ncclMax, ncclSum; none for a user-defined op: NCCL has no user
// operations, so those device blocks are reduced with MPI through host buffers).
//
// Exactness: min and max pick one of their operands, so the reduction adds no
// rounding and the result does not depend on the order of the ranks: the
// distributed min-plus product equals the plain reference bit for bit. A
// partial product is never NaN (semiring.hpp), so MPI_MIN's treatment of NaN
// never matters; +inf stays +inf.
#pragma once

#include <mpi.h>

#include <type_traits>

#include "comm.hpp"   // step08: LAB_MPI_CHECK, mpi::mpi_type
#include "mpi3d.hpp"  // step08: Reduction
#include "semiring.hpp"

namespace lab::step09::mpi {

/// The built-in MPI and NCCL operations of a semiring, where it has them.
/// nccl: ncclSum 0, ncclMax 2, ncclMin 3 (step08's Reduction carries it as an int).
template <class S>
struct BuiltinOp {
  static constexpr bool exists = false;
};
template <>
struct BuiltinOp<PlusTimes> {
  static constexpr bool exists = true;
  static MPI_Op mpi() { return MPI_SUM; }
  static constexpr int nccl = 0;
};
template <>
struct BuiltinOp<MinPlus> {
  static constexpr bool exists = true;
  static MPI_Op mpi() { return MPI_MIN; }
  static constexpr int nccl = 3;
};
template <>
struct BuiltinOp<MaxPlus> {
  static constexpr bool exists = true;
  static MPI_Op mpi() { return MPI_MAX; }
  static constexpr int nccl = 2;
};

/// The MPI_Op (and NCCL op) that combines partial products of S. Built-in where
/// S has one, unless `user_defined` asks for the general path (a test of it);
/// otherwise an MPI_Op_create of S::add, freed when this object goes.
template <class S>
class SemiringOp {
 public:
  static constexpr int kNoNccl = -1;

  explicit SemiringOp(bool user_defined = false) {
    if constexpr (BuiltinOp<S>::exists) {
      if (!user_defined) {
        op_ = BuiltinOp<S>::mpi();
        nccl_ = BuiltinOp<S>::nccl;
        return;
      }
    }
    // min, max and + are commutative: MPI may combine the ranks in any order.
    LAB_MPI_CHECK(MPI_Op_create(&apply, /*commute=*/1, &op_));
    owned_ = true;
  }
  ~SemiringOp() {
    if (owned_) MPI_Op_free(&op_);  // nothing useful to do with an error in a destructor
  }
  SemiringOp(const SemiringOp&) = delete;
  SemiringOp& operator=(const SemiringOp&) = delete;

  MPI_Op mpi() const { return op_; }
  bool user_defined() const { return owned_; }
  bool has_nccl() const { return nccl_ != kNoNccl; }
  /// The reduction step08's transports apply along z.
  step08::Reduction reduction() const { return {op_, nccl_}; }

 private:
  // MPI's user function: inout[i] <- in[i] (+) inout[i], for the element type of S.
  static void apply(void* in, void* inout, int* len, MPI_Datatype*) {
    using T = typename S::value_type;
    const T* a = static_cast<const T*>(in);
    T* b = static_cast<T*>(inout);
    for (int i = 0; i < *len; ++i) b[i] = S::add(a[i], b[i]);
  }

  MPI_Op op_ = MPI_OP_NULL;
  int nccl_ = kNoNccl;
  bool owned_ = false;
};

}  // namespace lab::step09::mpi
