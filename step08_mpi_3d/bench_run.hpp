// bench_run.hpp — one benchmark run of an implementation (included by register.cpp,
// so it is compiled with each implementation and calls that one's Plan and multiply).
//
// Data born on the ranks (the default): every rank fills its own blocks by global
// index (threaded), in host memory (--local step04 or openblas) or on its GPU
// (--local cuda); the timed call is the multiply alone; the check is the
// distributed Freivalds check. --data root: rank 0 makes the full matrices and the
// timed call is the rank-0 entry (scatter, multiply, gather): dgemm(comm, ...), or
// with --local cuda the GPU entry dgemm_device_root.
#pragma once

#include <mpi.h>

#include <algorithm>
#include <functional>
#include <limits>
#include <optional>

#include "generate.hpp"
#include "implementations.hpp"
#include "lab/check.hpp"
#include "local_kernel.hpp"
#include "mpi3d.hpp"
#if LAB_STEP08_HAVE_CUDA
#include <cuda_runtime_api.h>

#include "device.hpp"
#include "lab/cuda.hpp"
#endif

namespace lab::step08 {
inline namespace LAB_IMPL_NS {
namespace bench {

inline int world_rank() {
  int r = 0;
  LAB_MPI_CHECK(MPI_Comm_rank(MPI_COMM_WORLD, &r));
  return r;
}

// A rank's block in host memory with ld = rows + pad, or nothing when it holds none.
inline Matrix host_block(const Block& b, int64_t pad) {
  return b.held ? Matrix(b.rows, b.cols, std::max<int64_t>(1, b.rows + pad)) : Matrix();
}
inline Piece piece_of(const Matrix& m, const Block& b) {
  return b.held ? Piece::block(m.cview(), b.row0, b.col0) : Piece{};
}

// C as the multiply must find it: the generated C0 when beta != 0, else NaN
// (which beta == 0 must not read, so it must vanish).
inline void restore_host_c(MatView c, const RunSetup& s, int64_t row0, int64_t col0) {
  if (s.beta == 0.0) {
    for (int64_t j = 0; j < c.cols; ++j) std::fill_n(&c(0, j), c.rows, std::numeric_limits<double>::quiet_NaN());
  } else {
    fill_block(c, s.seeds.c, row0, col0);
  }
}

// Every rank's breakdown of the median call into the result (rank 0).
inline void finish_run(RunResult& r, const std::vector<Breakdown>& calls) {
  const Breakdown& median = calls[median_index(r.samples)];
  r.ranks = gather_breakdowns(median, r.grid);
}

inline RunResult run_host(const RunSetup& s, const Plan& plan) {
  RunResult r;
  r.grid = plan.grid();
  Matrix a = host_block(plan.a_block(), s.pad), b = host_block(plan.b_block(), s.pad),
         c = host_block(plan.c_block(), s.pad);
  if (plan.a_block().held) fill_block(a.view(), s.seeds.a, plan.a_block().row0, plan.a_block().col0);
  if (plan.b_block().held) fill_block(b.view(), s.seeds.b, plan.b_block().row0, plan.b_block().col0);
  auto restore_c = [&] {
    if (plan.c_block().held) restore_host_c(c.view(), s, plan.c_block().row0, plan.c_block().col0);
  };
  restore_c();
  Options o;
  o.local = s.local;
  o.threads = s.threads;
  o.bcasts_at_once = s.bcasts_at_once;
  Breakdown bd;
  o.breakdown = &bd;
  std::vector<Breakdown> calls;
  r.samples = time_calls(
      s,
      [&] {
        bd = Breakdown{};
        const double t0 = MPI_Wtime();
        multiply(plan, s.alpha, a.cview(), b.cview(), s.beta, c.view(), o);
        return MPI_Wtime() - t0;
      },
      [&] {},
      [&](size_t) { calls.push_back(bd); });
  finish_run(r, calls);
  // The last call computed from the C of before it; give the check that C.
  if (s.beta != 0.0) {
    restore_c();
    multiply(plan, s.alpha, a.cview(), b.cview(), s.beta, c.view(), o);
  }
  r.check = check_distributed(MPI_COMM_WORLD, s.m, s.n, s.k, s.alpha, s.beta, s.seeds, piece_of(a, plan.a_block()),
                              piece_of(b, plan.b_block()), piece_of(c, plan.c_block()));
  return r;
}

#if LAB_STEP08_HAVE_CUDA
inline RunResult run_device(const RunSetup& s, const Plan& plan) {
  RunResult r;
  r.grid = plan.grid();
  std::optional<DeviceContext> dev;
  dev.emplace(plan.cube(), static_cast<Transfer>(s.transfer));
  r.note = dev->describe();
  void* stream = dev->stream();
  std::optional<DeviceBlock> a, b, c;
  all_or_none(plan.cube().cart.get(), [&] {
    a.emplace(plan.a_block(), s.pad);
    b.emplace(plan.b_block(), s.pad);
    c.emplace(plan.c_block(), s.pad);
    fill_device(a->view, s.seeds.a, plan.a_block().row0, plan.a_block().col0, stream);
    fill_device(b->view, s.seeds.b, plan.b_block().row0, plan.b_block().col0, stream);
    LAB_CUDA_CHECK(cudaStreamSynchronize(static_cast<cudaStream_t>(stream)));
  });
  auto restore_c = [&] {
    if (!plan.c_block().held) return;
    if (s.beta != 0.0) {
      fill_device(c->view, s.seeds.c, plan.c_block().row0, plan.c_block().col0, stream);
    } else if (c->view.rows > 0 && c->view.cols > 0) {  // all bits set: NaN, which beta == 0 must not read
      LAB_CUDA_CHECK(cudaMemset2DAsync(c->view.data, sizeof(double) * c->view.ld, 0xff,
                                       sizeof(double) * c->view.rows, c->view.cols, static_cast<cudaStream_t>(stream)));
    }
    LAB_CUDA_CHECK(cudaStreamSynchronize(static_cast<cudaStream_t>(stream)));
  };
  restore_c();
  Breakdown bd;
  std::vector<Breakdown> calls;
  auto multiply_once = [&] {
    multiply_device(plan, *dev, s.alpha, a->view, b->view, s.beta, c->view, &bd);
  };
  r.samples = time_calls(
      s,
      [&] {
        bd = Breakdown{};
        const double t0 = MPI_Wtime();
        multiply_once();
        return MPI_Wtime() - t0;
      },
      [&] {},
      [&](size_t) { calls.push_back(bd); });
  finish_run(r, calls);
  if (plan.size() == 1) {
    // The device-resident local product alone, on the same blocks: what p = 1 must be level with.
    const Product<double> product = cublas_product(*dev, s.alpha, s.beta);
    RunSetup alone = s;
    alone.warmup = 0;
    const std::vector<double> t = time_calls(
        alone,
        [&] {
          const double t0 = MPI_Wtime();
          product.run(a->view, b->view, c->view, true, stream);
          LAB_CUDA_CHECK(cudaStreamSynchronize(static_cast<cudaStream_t>(stream)));
          return MPI_Wtime() - t0;
        },
        [&] {}, [](size_t) {});
    r.local_alone_s = t[median_index(t)];
  }
  restore_c();
  multiply_once();
  LAB_CUDA_CHECK(cudaStreamSynchronize(static_cast<cudaStream_t>(stream)));
  const Matrix ha = a->to_host(), hb = b->to_host(), hc = c->to_host();
  r.check = check_distributed(MPI_COMM_WORLD, s.m, s.n, s.k, s.alpha, s.beta, s.seeds, piece_of(ha, plan.a_block()),
                              piece_of(hb, plan.b_block()), piece_of(hc, plan.c_block()));
  return r;
}
#endif

// The rank-0 entry: the full matrices on rank 0, scatter and gather in the timed
// call. --local cuda runs the given GPU entry (dgemm_device_root: pinned staging,
// NCCL, blocks multiplied where they arrive; its Plan and DeviceContext made once,
// outside the timed calls), the CPU kernels the implementation's dgemm(comm, ...).
inline RunResult run_on_root(const RunSetup& s) {
  RunResult r;
  const bool root = world_rank() == 0;
  Matrix A, B, C;
  all_or_none(MPI_COMM_WORLD, [&] {
    if (!root) return;
    A = Matrix(s.m, s.k, std::max<int64_t>(1, s.m + s.pad));
    B = Matrix(s.k, s.n, std::max<int64_t>(1, s.k + s.pad));
    C = Matrix(s.m, s.n, std::max<int64_t>(1, s.m + s.pad));
    fill_block(A.view(), s.seeds.a, 0, 0);
    fill_block(B.view(), s.seeds.b, 0, 0);
  });
  auto restore_c = [&] {
    if (root) restore_host_c(C.view(), s, 0, 0);
  };
  restore_c();
  const MatView none{nullptr, 0, 0, 1};
  Options o;
  o.grid = s.grid;
  o.local = s.local;
  o.threads = s.threads;
  o.bcasts_at_once = s.bcasts_at_once;
  Breakdown bd;
  o.breakdown = &bd;
  std::function<void()> call = [&] {
    dgemm(MPI_COMM_WORLD, s.alpha, root ? A.cview() : none, root ? B.cview() : none, s.beta, root ? C.view() : none,
          o);
  };
#if LAB_STEP08_HAVE_CUDA
  std::optional<Plan> plan;
  std::optional<DeviceContext> dev;
  std::vector<std::shared_ptr<void>> pins;  // --host-memory pinned: rank 0's matrices page-locked until the run ends
  if (s.local == LocalKernel::cuda) {
    plan.emplace(MPI_COMM_WORLD, s.m, s.n, s.k, s.grid);
    dev.emplace(plan->cube(), static_cast<Transfer>(s.transfer));
    dev->set_root_copy(static_cast<RootCopy>(s.root_copy));
    all_or_none(MPI_COMM_WORLD, [&] {
      if (root && s.pinned_host)
        for (Matrix* mat : {&A, &B, &C})
          if (mat->size() > 0) pins.push_back(lab::cuda::pin_host(mat->data(), sizeof(double) * size_t(mat->size())));
    });
    call = [&] {
      dgemm_device_root(*plan, *dev, s.alpha, root ? A.cview() : none, root ? B.cview() : none, s.beta,
                        root ? C.view() : none, o);
    };
  }
#endif
  std::vector<Breakdown> calls;
  r.samples = time_calls(
      s,
      [&] {
        const double t0 = MPI_Wtime();
        call();
        return MPI_Wtime() - t0;
      },
      restore_c, [&](size_t) { calls.push_back(bd); });
  r.grid = bd.grid;
  finish_run(r, calls);
#if LAB_STEP08_HAVE_CUDA
  if (dev)
    r.note = dev->describe() + "; rank 0's matrices (" + (s.pinned_host ? "pinned" : "pageable") + ") " +
             dev->root_route();
#endif
  restore_c();
  call();
  r.check = check_distributed(MPI_COMM_WORLD, s.m, s.n, s.k, s.alpha, s.beta, s.seeds,
                              root ? Piece::block(A.cview(), 0, 0) : Piece{},
                              root ? Piece::block(B.cview(), 0, 0) : Piece{},
                              root ? Piece::block(C.cview(), 0, 0) : Piece{});
  return r;
}

inline RunResult run(const RunSetup& s) {
  RunResult r;
  if (s.data_on_root) {
    r = run_on_root(s);
  } else {
    const Plan plan(MPI_COMM_WORLD, s.m, s.n, s.k, s.grid);
    if (s.local == LocalKernel::cuda) {
#if LAB_STEP08_HAVE_CUDA
      r = run_device(s, plan);
#else
      require_local_kernel(s.local);
#endif
    } else {
      r = run_host(s, plan);
    }
  }
  r.impl = LAB_IMPL_NAME;
  r.local = local_kernel_name(s.local);
  r.layout = r.grid.str();
  return r;
}

}  // namespace bench
}  // namespace LAB_IMPL_NS
}  // namespace lab::step08
