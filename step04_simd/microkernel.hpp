// step04_simd internals: the micro-kernel contract and the packing routines.
//
// The contract (as in BLIS). A micro-kernel gets
//   a: a packed MR x kc panel of A: for p = 0..kc-1, the MR values A(i0.., p) in a row;
//   b: a packed kc x NR panel of B: for p = 0..kc-1, the NR values B(p, j0..) in a row;
//   c: an MR x NR tile of C, column-major with leading dimension ldc,
// and computes C <- a * b + beta * C. With beta == 0 it never reads C (C may
// hold NaN). The A panel is 64-byte aligned, the B panel 8-byte aligned
// (broadcasts need no more); kc may be any size >= 1.
#pragma once

#include <cstdint>

#include "lab/matrix.hpp"
#include "simd.hpp"

namespace lab::step04 {
inline namespace LAB_IMPL_NS {

using MicroKernelFn = void (*)(int64_t kc, const double* a, const double* b, double beta, double* c,
                               int64_t ldc);

/// The largest tile any kernel uses (edge tiles go through a buffer this big).
constexpr int kMaxMr = 16, kMaxNr = 14;

struct MicroKernel {
  Isa isa;
  int mr, nr;        ///< the tile of C the kernel keeps in registers
  MicroKernelFn fn;  ///< nullptr where the build cannot have this kernel (another architecture's)
};

// One per Isa, each in its own file (kernel_<isa>.cpp).
MicroKernel microkernel_generic();
MicroKernel microkernel_avx2();
MicroKernel microkernel_avx512();
MicroKernel microkernel_neon();

/// The kernel of `isa` (the caller has checked isa_supported).
MicroKernel microkernel(Isa isa);

/// The short path for a small product (small.cpp): computes C <- alpha * A * B +
/// beta * C straight from A and B, with the SIMD of `isa`, and returns true; or
/// returns false, doing nothing, when the product is too big for it (over
/// 160^3, or big enough for threads_for to give it more than one thread) or
/// `isa` has no such path (generic). The caller has checked the arguments and taken
/// the quick returns (alpha == 0, k == 0, empty C).
bool small_product(double alpha, ConstMatView A, ConstMatView B, double beta, MatView C, Isa isa);

/// How many of `available` threads an m x n x k product gets: one for a small
/// product (a team costs more than it saves), one more per 2 MFLOP of work.
int threads_for(int64_t m, int64_t n, int64_t k, int available);

/// Where one call packs: `b_count` kc x nc panels of B (one per group of
/// threads, ways.hpp) and `a_count` mc x kc blocks of A (one per ic way), each
/// starting on a page of its own: the threads that pack a buffer are the first
/// to write to it, so its pages are placed near them.
struct PackBuffers {
  double* b;         ///< panel i starts at b + i * b_stride
  double* a;         ///< block i starts at a + i * a_stride
  int64_t b_stride;  ///< doubles from one B panel to the next
  int64_t a_stride;  ///< doubles from one A block to the next
};
/// The calling thread's packing buffers, at least this big. They belong to the
/// calling thread and are kept from call to call (grown when a call needs
/// more; never written here), so a call allocates nothing once the sizes have
/// been seen; a call made from inside a parallel region gets its own thread's
/// buffers. Valid until the calling thread's next pack_buffers call.
PackBuffers pack_buffers(int64_t b_doubles, int b_count, int64_t a_doubles, int a_count);

/// Packs alpha * A (an mb x kb block) into ceil(mb / mr) panels of mr x kb, one
/// after the other; rows past mb in the last panel are zero.
void pack_a(double alpha, ConstMatView A, int mr, double* dst);

/// Packs B (a kb x nb block) into ceil(nb / nr) panels of kb x nr, one after the
/// other; columns past nb in the last panel are zero.
void pack_b(ConstMatView B, int nr, double* dst);

}  // namespace LAB_IMPL_NS
}  // namespace lab::step04
