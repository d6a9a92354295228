// local_kernel.hpp — what multiplies the two blocks on one rank.
//
// The distributed algorithm does not care how a rank multiplies its blocks; this is
// the one place that knows. `cpu` is the SIMD kernel of step04 with OpenMP threads.
// `cuda` is cuBLAS on one GPU per rank: local_cuda.cpp, which the benchmark links
// where the CUDA Toolkit is found and which plugs itself in here at start-up. A
// program without it (the tests, a build without CUDA) says so when asked for it.
#pragma once

#include <mpi.h>
#include <omp.h>

#include <stdexcept>

#include "mpi3d.hpp"
#include "simd.hpp"

namespace lab::step08 {

/// The cuda kernel, when the program has one (set by local_cuda.cpp).
struct CudaKernel {
  /// Collective over comm, once per process: picks this rank's GPU by its index on its node.
  void (*setup)(MPI_Comm comm) = nullptr;
  /// C <- alpha A B + beta C for host blocks, on this rank's GPU (beta == 0: C is not read).
  void (*gemm)(double alpha, ConstMatView A, ConstMatView B, double beta, MatView C) = nullptr;
};
inline CudaKernel& cuda_kernel() {
  static CudaKernel kernel;
  return kernel;
}

inline void local_setup(LocalKernel kind, MPI_Comm comm) {
  if (kind != LocalKernel::cuda) return;
  if (!cuda_kernel().setup)
    throw std::runtime_error(
        "--local cuda: this program has no CUDA kernel (it was built without the CUDA Toolkit, or it is a "
        "test program); use the step08_mpi_3d benchmark of a build where nvcc was found, or --local cpu");
  cuda_kernel().setup(comm);
}

inline namespace LAB_IMPL_NS {

inline void local_gemm(LocalKernel kind, int threads, double alpha, ConstMatView A, ConstMatView B,
                       double beta, MatView C) {
  if (kind == LocalKernel::cuda) {
    cuda_kernel().gemm(alpha, A, B, beta, C);  // local_setup made sure it is there
    return;
  }
  if (threads > 0) omp_set_num_threads(threads);
  lab::step04::dgemm(alpha, A, B, beta, C);
}

}  // namespace LAB_IMPL_NS
}  // namespace lab::step08
