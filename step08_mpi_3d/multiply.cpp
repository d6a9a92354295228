// multiply.cpp — the DGEMM entries of multiply_blocks: which transport moves the
// blocks and which kernel multiplies them. Nothing here to write; compiled with
// each implementation (student, solution), whose multiply_blocks it calls.
#include <mpi.h>

#include <string>
#include <vector>

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

namespace {

// One phase of the rank-0 entry on GPUs, timed like multiply_blocks' phases; a
// failure anywhere fails every rank, which first drop the NCCL communicator that
// may still hold a transfer the failed rank will never match.
template <class F>
void root_phase(const Plan& plan, DeviceContext& dev, Breakdown& bd, Phase ph, F&& fn) {
  const Cube& c = plan.cube();
  note_progress(phase_name(ph), plan.grid(), c.x, c.y, c.z);
  const double t0 = MPI_Wtime();
  try {
    all_or_none(c.cart.get(), [&] {
      fn(bd.traffic[ph]);
      bd.own[ph] += MPI_Wtime() - t0;
      note_step("done, waiting for the other ranks to finish it");
    });
  } catch (...) {
    root_abandon(dev);
    throw;
  }
  bd.seconds[ph] += MPI_Wtime() - t0;
}

std::vector<Block> every_rank(const Plan& plan, Block (Layout::*which)(int) const) {
  std::vector<Block> out;
  for (int r = 0; r < plan.size(); ++r) out.push_back((plan.layout().*which)(r));
  return out;
}

}  // namespace

void dgemm_device_root(const Plan& plan, DeviceContext& dev, double alpha, ConstMatView A, ConstMatView B,
                       double beta, MatView C, const Options& opts) {
  Breakdown own;
  Breakdown& bd = opts.breakdown ? *opts.breakdown : own;
  bd = Breakdown{};
  bd.grid = plan.grid();
  const Layout& lay = plan.layout();
  const bool root = plan.rank() == 0;
  // Rank 0's scalars are the call's (as in dgemm(comm, ...)).
  double scalars[2] = {alpha, beta};
  LAB_MPI_CHECK(MPI_Bcast(scalars, 2, MPI_DOUBLE, 0, plan.cube().cart.get()));
  alpha = scalars[0];
  beta = scalars[1];
  MatView a{nullptr, 0, 0, 1}, b{nullptr, 0, 0, 1}, c{nullptr, 0, 0, 1};
  root_phase(plan, dev, bd, kSetup, [&](Traffic&) {
    if (root) {
      check_gemm_args(A, B, C);
      if (C.rows != lay.m || C.cols != lay.n || A.cols != lay.k)
        throw std::invalid_argument("dgemm_device_root: the plan is for m=" + std::to_string(lay.m) +
                                    " n=" + std::to_string(lay.n) + " k=" + std::to_string(lay.k) + ", got m=" +
                                    std::to_string(C.rows) + " n=" + std::to_string(C.cols) +
                                    " k=" + std::to_string(A.cols));
    }
  });
  // Only once every rank knows the arguments are good: making the all-ranks NCCL
  // communicator is collective, and a rank in it would wait for a rank 0 that threw.
  root_phase(plan, dev, bd, kSetup, [&](Traffic&) {
    root_prepare(dev);
    a = root_block(dev, 0, plan.a_block());
    b = root_block(dev, 1, plan.b_block());
    c = root_block(dev, 2, plan.c_block());
  });
  if (lay.m == 0 || lay.n == 0) return;
  if (lay.k == 0 || alpha == 0.0) {  // C <- beta C on rank 0; A and B are not read
    if (root) gemm_quick_return(alpha, A, B, beta, C);
    return;
  }
  const int threads = opts.threads;
  root_phase(plan, dev, bd, kScatter, [&](Traffic& t) {
    root_scatter(dev, 0, every_rank(plan, &Layout::a_block), A, a, threads, t);
    root_scatter(dev, 1, every_rank(plan, &Layout::b_block), B, b, threads, t);
    // beta == 0 must not read C: then it is not sent at all (cuBLAS writes c without reading it).
    if (beta != 0.0) root_scatter(dev, 2, every_rank(plan, &Layout::c_block), C, c, threads, t);
  });
  multiply_device(plan, dev, alpha, a, b, beta, c, &bd);
  root_phase(plan, dev, bd, kGather, [&](Traffic& t) {
    root_gather(dev, 2, every_rank(plan, &Layout::c_block), c, C, threads, t);
  });
}

void dgemm_device_root(MPI_Comm comm, double alpha, ConstMatView A, ConstMatView B, double beta, MatView C,
                       const Options& opts) {
  const Problem pb = share_problem(comm, alpha, A, B, beta, C);
  int p = 1;
  LAB_MPI_CHECK(MPI_Comm_size(comm, &p));
  if (opts.grid.given()) validate_grid(opts.grid, p);  // the same values, the same verdict, on every rank
  const Plan plan(comm, pb.m, pb.n, pb.k, opts.grid);
  DeviceContext dev(plan.cube());
  dgemm_device_root(plan, dev, pb.alpha, A, B, pb.beta, C, opts);
}
#endif

}  // namespace LAB_IMPL_NS
}  // namespace lab::step08
