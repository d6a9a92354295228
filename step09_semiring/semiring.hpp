// step09_semiring — one GEMM structure, any semiring.
//
// A semiring swaps the + and x of the matrix product for two other operations,
// an "addition" (+) and a "multiplication" (x):
//     C(i, j) = (+) over q of A(i, q) (x) B(q, j).
// PlusTimes is the ordinary product. MinPlus ((+) = min, (x) = +) is the
// shortest-path product: with A = B = the edge weights of a graph, C(i, j) is
// the shortest way from i to j in at most two edges. MaxPlus ((+) = max) gives
// longest (critical) paths. Each semiring is a small type whose zero() is the
// neutral element of (+) (and annihilates under (x)) and one() that of (x).
//
// Special values, decided once for every back-end (CPU, GPU, the reference):
//  - MinPlus: +inf is the zero ("no path"): +inf (x) x = +inf for any finite
//    or infinite x except -inf, and min never picks it over a number.
//  - A NaN term is skipped by (+), as IEEE 754 minNum / fmin do: NaN reads as
//    the zero. So +inf (x) -inf (= NaN) is the zero too, a NaN in A or B is an
//    absent edge, and no result is ever NaN. -inf is allowed ("unbounded
//    below", what a negative cycle leaves). MaxPlus mirrors all of this (-inf
//    is its zero, +inf its unbounded value).
//  - PlusTimes keeps IEEE arithmetic as dgemm does: NaN and Inf propagate.
//  - MinPlusI32 (int32, GPU): see its comment below.
//
// gemm<S>(A, B, C, accumulate) keeps the lab's kernel contract (any shape and
// ld, guard cells untouched, bad arguments -> std::invalid_argument naming
// the argument, nothing written): accumulate == false gives C <- A (x) B and
// never reads C (a NaN there vanishes); true gives C <- C (+) (A (x) B), where
// a NaN in C reads as the zero like any other NaN. k == 0 gives the zero
// (accumulate == false) or C (+) zero.
#pragma once

#include <cstdint>

#include "lab/matrix.hpp"
#include "lab/registry.hpp"
#include "simd.hpp"  // step04: Isa, Blocking, the kernel dispatch

// The operations run on the host and in CUDA kernels alike.
#if defined(__CUDACC__)
#define LAB_STEP09_HD __host__ __device__ __forceinline__
#else
#define LAB_STEP09_HD inline
#endif

namespace lab::step09 {

struct PlusTimes {
  using value_type = double;
  static constexpr const char* name = "plustimes";
  LAB_STEP09_HD static constexpr double zero() { return 0.0; }
  LAB_STEP09_HD static constexpr double one() { return 1.0; }
  LAB_STEP09_HD static constexpr double add(double x, double y) { return x + y; }
  LAB_STEP09_HD static constexpr double mul(double x, double y) { return x * y; }
};

struct MinPlus {
  using value_type = double;
  static constexpr const char* name = "minplus";
  LAB_STEP09_HD static constexpr double zero() { return __builtin_huge_val(); }
  LAB_STEP09_HD static constexpr double one() { return 0.0; }
  /// min that skips a NaN operand (returns the other one).
  LAB_STEP09_HD static constexpr double add(double x, double y) { return (y < x || x != x) ? y : x; }
  LAB_STEP09_HD static constexpr double mul(double x, double y) { return x + y; }
};

struct MaxPlus {
  using value_type = double;
  static constexpr const char* name = "maxplus";
  LAB_STEP09_HD static constexpr double zero() { return -__builtin_huge_val(); }
  LAB_STEP09_HD static constexpr double one() { return 0.0; }
  /// max that skips a NaN operand (returns the other one).
  LAB_STEP09_HD static constexpr double add(double x, double y) { return (y > x || x != x) ? y : x; }
  LAB_STEP09_HD static constexpr double mul(double x, double y) { return x + y; }
};

/// Min-plus on 32-bit integers, for the GPU (Hopper's DPX instructions fuse
/// the add and the min: __viaddmin_s32). Integers have no infinity, so:
///  - finite values lie in [-kMax, kMax] (kMax = 2^29 - 1), infinity is kInf
///    (2^30 - 1): with inputs in that domain no sum of two overflows;
///  - results saturate: a sum above kMax is infinity (a path that long is
///    reported as no path), so results are again in the domain, except sums
///    below -kMax, which the caller must prevent (APSP: n * max |w| <= kMax);
///  - inputs outside the domain give unspecified values (never a crash).
struct MinPlusI32 {
  using value_type = int32_t;
  static constexpr const char* name = "minplus_i32";
  static constexpr int32_t kInf = (1 << 30) - 1;
  static constexpr int32_t kMax = (1 << 29) - 1;
  LAB_STEP09_HD static constexpr int32_t zero() { return kInf; }
  LAB_STEP09_HD static constexpr int32_t one() { return 0; }
  LAB_STEP09_HD static constexpr int32_t saturate(int32_t v) { return v > kMax ? kInf : v; }
  LAB_STEP09_HD static constexpr int32_t add(int32_t x, int32_t y) { return y < x ? y : x; }
  LAB_STEP09_HD static constexpr int32_t mul(int32_t x, int32_t y) { return saturate(x + y); }
};

inline namespace LAB_IMPL_NS {

/// C <- A (x) B (accumulate == false) or C <- C (+) (A (x) B), on the CPU:
/// step04's packed panels and five loops, a micro-kernel per instruction set
/// chosen at run time, OpenMP over row blocks (one thread inside a parallel
/// region). S is PlusTimes, MinPlus or MaxPlus.
template <class S>
void gemm(View<const typename S::value_type> A, View<const typename S::value_type> B,
          View<typename S::value_type> C, bool accumulate);

/// The same with the micro-kernel of `isa` and the given cache blocks (any
/// sizes >= 1). Throws std::invalid_argument when this CPU cannot run `isa`
/// or a block is < 1.
template <class S>
void gemm_with(View<const typename S::value_type> A, View<const typename S::value_type> B,
               View<typename S::value_type> C, bool accumulate, step04::Isa isa, step04::Blocking blocking);

#define LAB_STEP09_DECLARE(S)                                                                             \
  extern template void gemm<S>(View<const double>, View<const double>, View<double>, bool);                \
  extern template void gemm_with<S>(View<const double>, View<const double>, View<double>, bool, step04::Isa, \
                                    step04::Blocking)
LAB_STEP09_DECLARE(PlusTimes);
LAB_STEP09_DECLARE(MinPlus);
LAB_STEP09_DECLARE(MaxPlus);
#undef LAB_STEP09_DECLARE

}  // namespace LAB_IMPL_NS
}  // namespace lab::step09
