// step06_cuda_register_blocking — each thread computes an 8 x 8 block of C in
// registers; bonus: the FP64 tensor cores (DMMA) through mma.sync.
//
// Every function takes DEVICE views and queues its work on `stream`; the
// kernel contract holds as in every step.
#pragma once

#include <cuda_runtime_api.h>

#include <string>
#include <vector>

#include "lab/matrix.hpp"
#include "lab/registry.hpp"

namespace lab::step06 {
inline namespace LAB_IMPL_NS {

/// The block tile a kernel runs with: bm x bn of C per block, bk of k per
/// stage. Zeros mean "the launcher picks" (from the shape and the GPU); a
/// shape the kernel was not built for throws std::invalid_argument listing
/// the ones it was.
struct Tile {
  int bm = 0, bn = 0, bk = 0;
};

/// C <- alpha * A * B + beta * C on the CUDA cores: 8 x 8 register blocks per
/// thread, warp tiling, B transposed into shared memory, a ring of
/// shared-memory stages filled by cp.async, operands fetched a step ahead.
void dgemm(double alpha, ConstMatView A, ConstMatView B, double beta, MatView C, cudaStream_t stream,
           Tile tile = {});

/// True when the current GPU has FP64 tensor cores (compute capability 8.0 or
/// later); otherwise `why` says what it has.
bool dmma_supported(std::string* why = nullptr);

/// The same product on the FP64 tensor cores (mma.sync, 16 x 8 x 16 on sm_90,
/// 8 x 8 x 4 on sm_80/86/89), with a multi-stage cp.async pipeline. Throws
/// std::runtime_error where dmma_supported() is false.
void dgemm_dmma(double alpha, ConstMatView A, ConstMatView B, double beta, MatView C, cudaStream_t stream,
                Tile tile = {});

/// The block tiles dgemm and dgemm_dmma are built with: what `tile` accepts
/// (the tests run every one, the benchmark lists them).
std::vector<Tile> simt_tiles();
std::vector<Tile> dmma_tiles();

/// A candidate DMMA kernel beside the teaching one (dmma_variants.cu, given
/// code: faster ideas measured against cuBLAS, too intricate for the
/// handout). `name` is its benchmark variant (--variant), `about` one line
/// on what it changes, `tiles` the block tiles it is built with.
struct DmmaCandidate {
  std::string name, about;
  std::vector<Tile> tiles;
};

/// Every candidate, in the order the benchmark lists them; the CLI's
/// variants and the tests are made from this list.
const std::vector<DmmaCandidate>& dmma_candidates();

/// The product with the candidate `name` (one of dmma_candidates()); the same
/// contract and the same errors as dgemm_dmma, and std::invalid_argument for
/// an unknown name.
void dgemm_dmma_candidate(const std::string& name, double alpha, ConstMatView A, ConstMatView B, double beta,
                          MatView C, cudaStream_t stream, Tile tile = {});

/// C <- alpha * A^T * A + beta * C for A of k x n and C of n x n (step05's
/// AtA bonus, lab::step05::ata, on the FP64 tensor cores; ata_dmma.cu): only
/// the tiles on and above the diagonal are computed, each written also,
/// transposed, below it (with beta applied to C's own values there). With
/// beta == 0 the lower half is bit-equal to the upper. Throws
/// std::invalid_argument for bad arguments, std::runtime_error where
/// dmma_supported() is false.
void ata_dmma(double alpha, ConstMatView A, double beta, MatView C, cudaStream_t stream);

}  // namespace LAB_IMPL_NS
}  // namespace lab::step06
