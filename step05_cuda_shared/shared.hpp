// step05_cuda_shared — the GPU's first lesson: stage tiles in shared memory.
//
// Every function takes DEVICE views (data points to GPU memory) and queues its
// work on `stream`; nothing waits for the GPU. Rules of the kernel contract
// hold as in every step (bad arguments throw std::invalid_argument before any
// launch; beta == 0 never reads C; alpha == 0 or k == 0 never reads A, B).
#pragma once

#include <cuda_runtime_api.h>

#include "lab/matrix.hpp"
#include "lab/registry.hpp"

namespace lab::step05 {
inline namespace LAB_IMPL_NS {

/// Side of the square tile the shared-memory kernels stage (TILE x TILE threads per block).
constexpr int kTile = 32;

/// Given: the textbook kernel, one thread per C(i,j) reading A and B straight
/// from global memory, with threadIdx.x -> column j (as row-major code is
/// usually written). In column-major storage a warp then reads 32 different
/// columns of B and writes 32 different columns of C: uncoalesced.
void dgemm_naive(double alpha, ConstMatView A, ConstMatView B, double beta, MatView C, cudaStream_t stream);

/// Given: the same kernel with threadIdx.x -> row i, so that a warp reads 32
/// consecutive doubles of a column of A and writes 32 consecutive doubles of C.
void dgemm_naive_coalesced(double alpha, ConstMatView A, ConstMatView B, double beta, MatView C,
                           cudaStream_t stream);

/// The step: C <- alpha * A * B + beta * C, each block staging kTile x kTile
/// tiles of A and B in shared memory, each thread computing one C(i,j).
void dgemm(double alpha, ConstMatView A, ConstMatView B, double beta, MatView C, cudaStream_t stream);

/// Bonus: C <- alpha * A^T * A + beta * C for A of k x n and C of n x n. Only the
/// tiles on and above the diagonal are computed; each off-diagonal tile is also
/// written, transposed, to its mirror below the diagonal (with beta applied to
/// the C values there), so the whole of C is the full product's result.
void ata(double alpha, ConstMatView A, double beta, MatView C, cudaStream_t stream);

}  // namespace LAB_IMPL_NS
}  // namespace lab::step05
