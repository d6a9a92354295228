// local_kernel.hpp — what multiplies the two blocks on one rank (the DGEMM entries).
//
// The distributed algorithm does not care how a rank multiplies its blocks; this
// is the one place that knows. `step04` is the SIMD kernel of step04 with OpenMP
// threads; `openblas` is OpenBLAS's dgemm (where the build found it: the same
// local BLAS as ScaLAPACK's, for a fair comparison); `cuda` multiplies host blocks
// on this rank's GPU with cuBLAS, copying them there and back (device.hpp has the
// path that keeps the blocks on the GPU).
#pragma once

#include <omp.h>

#include <stdexcept>
#include <string>

#include "lab/matrix.hpp"
#include "mpi3d.hpp"
#include "simd.hpp"

namespace lab::step08 {

#if LAB_STEP08_HAVE_OPENBLAS
/// cblas_dgemm with `threads` OpenBLAS threads (0: its default); local_openblas.cpp.
void openblas_gemm(int threads, double alpha, ConstMatView A, ConstMatView B, double beta, MatView C);
#endif
#if LAB_STEP08_HAVE_CUDA
/// cuBLAS on this rank's GPU for host blocks (copied in and out); device.cpp.
void cuda_host_gemm(double alpha, ConstMatView A, ConstMatView B, double beta, MatView C);
#endif

/// True when this rank can run the cuda kernel (a build with CUDA and a visible GPU); else `why`.
bool cuda_usable(std::string* why);

inline const char* local_kernel_name(LocalKernel k) {
  switch (k) {
    case LocalKernel::step04: return "step04";
    case LocalKernel::openblas: return "openblas";
    case LocalKernel::cuda: return "cuda";
  }
  return "?";
}

/// Throws std::invalid_argument when this build has no such kernel.
inline void require_local_kernel(LocalKernel k) {
#if !LAB_STEP08_HAVE_OPENBLAS
  if (k == LocalKernel::openblas)
    throw std::invalid_argument("local kernel openblas: this build has no OpenBLAS (apt-get install libopenblas-dev)");
#endif
#if !LAB_STEP08_HAVE_CUDA
  if (k == LocalKernel::cuda)
    throw std::invalid_argument("local kernel cuda: this build has no CUDA (it was built without the CUDA Toolkit)");
#endif
  (void)k;
}

inline namespace LAB_IMPL_NS {

inline void local_gemm(LocalKernel kind, int threads, double alpha, ConstMatView A, ConstMatView B,
                       double beta, MatView C) {
  switch (kind) {
    case LocalKernel::step04:
      if (threads > 0) omp_set_num_threads(threads);
      lab::step04::dgemm(alpha, A, B, beta, C);
      return;
    case LocalKernel::openblas:
#if LAB_STEP08_HAVE_OPENBLAS
      openblas_gemm(threads, alpha, A, B, beta, C);
      return;
#else
      break;
#endif
    case LocalKernel::cuda:
#if LAB_STEP08_HAVE_CUDA
      cuda_host_gemm(alpha, A, B, beta, C);
      return;
#else
      break;
#endif
  }
  require_local_kernel(kind);
}

/// The DGEMM local product of multiply_blocks: alpha A B, plus beta C on the z = 0 layer.
inline Product<double> dgemm_product(LocalKernel kind, int threads, double alpha, double beta) {
  Product<double> p;
  p.run = [=](ConstMatView A, ConstMatView B, MatView C, bool into_c, void*) {
    local_gemm(kind, threads, alpha, A, B, into_c ? beta : 0.0, C);
  };
  p.reads_c = beta != 0.0;
  return p;
}

}  // namespace LAB_IMPL_NS
}  // namespace lab::step08
