// multiply.cpp — the DGEMM entries of multiply_blocks: which transport moves the
// blocks and which kernel multiplies them. Nothing here to write; compiled with
// each implementation (student, solution), whose multiply_blocks it calls.
#include <mpi.h>

#include "local_kernel.hpp"
#include "mpi3d.hpp"
#include "transport.hpp"
#if LAB_STEP08_HAVE_CUDA
#include "device.hpp"
#endif

namespace lab::step08 {
inline namespace LAB_IMPL_NS {

void multiply(const Plan& plan, double alpha, ConstMatView A, ConstMatView B, double beta, MatView C,
              const Options& opts) {
  all_or_none(plan.cube().cart.get(), [&] {
    require_local_kernel(opts.local);
#if LAB_STEP08_HAVE_CUDA
    if (opts.local == LocalKernel::cuda) cuda_host_setup(plan.cube());
#endif
  });
  HostTransport<double> transport(plan.workspace(), Reduction{MPI_SUM, 0}, opts.bcasts_at_once);
  multiply_blocks<double>(plan, transport, A, B, C, dgemm_product(opts.local, opts.threads, alpha, beta),
                          opts.breakdown);
}

#if LAB_STEP08_HAVE_CUDA
void multiply_device(const Plan& plan, DeviceContext& dev, double alpha, ConstMatView A, ConstMatView B,
                     double beta, MatView C, Breakdown* breakdown) {
  DeviceTransport<double> transport(dev, Reduction{MPI_SUM, 0});
  multiply_blocks<double>(plan, transport, A, B, C, cublas_product(dev, alpha, beta), breakdown);
}
#endif

}  // namespace LAB_IMPL_NS
}  // namespace lab::step08
