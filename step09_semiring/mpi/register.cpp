// Adds this build's implementation (student or solution) to step09's MPI
// benchmark: its runs on host blocks (step09's gemm<S> on each rank's cores)
// and on device blocks (gemm_device<S> on each rank's GPU). Compiled once per
// implementation, like step08's register.cpp, whose run it follows.
#include <mpi.h>

#include <optional>
#include <stdexcept>

#include "bench_run.hpp"  // step08's: host_block, restore_host_c, finish_run
#include "mpi_bench.hpp"
#include "semiring_mpi.hpp"
#if LAB_STEP09_MPI_DEVICE
#include <cuda_runtime_api.h>

#include "lab/cuda.hpp"
#include "semiring_cuda.hpp"
#endif

namespace {

namespace s9 = lab::step09;
namespace s9m = lab::step09::mpi;
namespace b8 = lab::step08::bench;
using lab::step08::Plan;
using lab::step08::RunResult;
using lab::step08::RunSetup;

// The timed calls of a run, each with its breakdown (every phase of every
// call, collected by the multiply through o.breakdown); C is restored between
// calls when it is read (accumulate), and the run's figures are finished from
// the calls as step08's are.
template <class Once, class Restore>
void time_with_breakdown(const RunSetup& s, const s9m::Job& job, s9m::Options& o, Once& once, Restore& restore_c,
                         RunResult& r) {
  lab::step08::Breakdown bd;
  o.breakdown = &bd;
  std::vector<lab::step08::Breakdown> calls;
  r.samples = lab::step08::time_calls(
      s,
      [&] {
        bd = lab::step08::Breakdown{};
        const double t0 = MPI_Wtime();
        once();
        return MPI_Wtime() - t0;
      },
      [&] { if (job.accumulate) restore_c(); }, [&](size_t) { calls.push_back(bd); });
  b8::finish_run(r, calls);
  o.breakdown = nullptr;  // bd ends here
}

template <class S>
RunResult run_host(const RunSetup& s, const s9m::Job& job, const Plan& plan) {
  RunResult r;
  r.grid = plan.grid();
  lab::Matrix a = b8::host_block(plan.a_block(), s.pad), b = b8::host_block(plan.b_block(), s.pad),
              c = b8::host_block(plan.c_block(), s.pad);
  if (plan.a_block().held) lab::step08::fill_block(a.view(), s.seeds.a, plan.a_block().row0, plan.a_block().col0);
  if (plan.b_block().held) lab::step08::fill_block(b.view(), s.seeds.b, plan.b_block().row0, plan.b_block().col0);
  auto restore_c = [&] {  // C0 when accumulating, else NaN (which must vanish)
    if (plan.c_block().held) b8::restore_host_c(c.view(), s, plan.c_block().row0, plan.c_block().col0);
  };
  restore_c();
  s9m::Options o;
  o.threads = s.threads;
  o.user_op = job.user_op;
  auto once = [&] { s9m::gemm<S>(plan, a.cview(), b.cview(), c.view(), job.accumulate, o); };
  time_with_breakdown(s, job, o, once, restore_c, r);
  restore_c();
  once();
  r.check = s9m::check_sampled<S>(plan.c_block(), plan.rank(), plan.layout().k, c.cview(), s.seeds, job.accumulate);
  return r;
}

#if LAB_STEP09_MPI_DEVICE
template <class S>
RunResult run_device(const RunSetup& s, const s9m::Job& job, const Plan& plan) {
  RunResult r;
  r.grid = plan.grid();
  std::optional<lab::step08::DeviceContext> dev;
  dev.emplace(plan.cube(), static_cast<lab::step08::Transfer>(s.transfer));
  r.note = dev->describe();
  void* stream = dev->stream();
  const auto cs = static_cast<cudaStream_t>(stream);
  std::optional<lab::step08::DeviceBlock> a, b, c;
  lab::step08::all_or_none(plan.cube().cart.get(), [&] {
    a.emplace(plan.a_block(), s.pad);
    b.emplace(plan.b_block(), s.pad);
    c.emplace(plan.c_block(), s.pad);
    lab::step08::fill_device(a->view, s.seeds.a, plan.a_block().row0, plan.a_block().col0, stream);
    lab::step08::fill_device(b->view, s.seeds.b, plan.b_block().row0, plan.b_block().col0, stream);
    LAB_CUDA_CHECK(cudaStreamSynchronize(cs));
  });
  auto restore_c = [&] {
    if (!plan.c_block().held) return;
    if (job.accumulate) {
      lab::step08::fill_device(c->view, s.seeds.c, plan.c_block().row0, plan.c_block().col0, stream);
    } else if (c->view.rows > 0 && c->view.cols > 0) {  // all bits set: NaN, which must vanish
      LAB_CUDA_CHECK(cudaMemset2DAsync(c->view.data, sizeof(double) * c->view.ld, 0xff,
                                       sizeof(double) * c->view.rows, c->view.cols, cs));
    }
    LAB_CUDA_CHECK(cudaStreamSynchronize(cs));
  };
  restore_c();
  s9m::Options o;
  o.user_op = job.user_op;
  auto once = [&] { s9m::gemm_device<S>(plan, *dev, a->view, b->view, c->view, job.accumulate, o); };
  time_with_breakdown(s, job, o, once, restore_c, r);
  if (plan.size() == 1) {
    // The device-resident local product alone, on the same blocks: what p = 1 must be level with.
    RunSetup alone = s;
    alone.warmup = 0;
    const std::vector<double> t = lab::step08::time_calls(
        alone,
        [&] {
          const double t0 = MPI_Wtime();
          s9::gemm_device<S>(a->view, b->view, c->view, job.accumulate, cs);
          LAB_CUDA_CHECK(cudaStreamSynchronize(cs));
          return MPI_Wtime() - t0;
        },
        [&] {}, [](size_t) {});
    r.local_alone_s = t[lab::step08::median_index(t)];
  }
  restore_c();
  once();
  LAB_CUDA_CHECK(cudaStreamSynchronize(cs));
  const lab::Matrix hc = c->to_host();
  r.check = s9m::check_sampled<S>(plan.c_block(), plan.rank(), plan.layout().k, hc.cview(), s.seeds, job.accumulate);
  return r;
}
#endif

template <class S>
RunResult run_semiring(const RunSetup& s, const s9m::Job& job) {
  const Plan plan(MPI_COMM_WORLD, s.m, s.n, s.k, s.grid);
  if (!job.cuda) return run_host<S>(s, job, plan);
#if LAB_STEP09_MPI_DEVICE
  return run_device<S>(s, job, plan);
#else
  throw std::invalid_argument("--local cuda: this build has no CUDA (it was built without the CUDA Toolkit)");
#endif
}

RunResult run(const RunSetup& setup, const s9m::Job& job) {
  RunSetup s = setup;
  s.beta = job.accumulate ? 1.0 : 0.0;  // step08's restore_host_c: C0, or NaN that must vanish
  RunResult r;
  if (job.semiring == "minplus") r = run_semiring<s9::MinPlus>(s, job);
  else if (job.semiring == "maxplus") r = run_semiring<s9::MaxPlus>(s, job);
  else if (job.semiring == "plustimes") r = run_semiring<s9::PlusTimes>(s, job);
  else throw std::invalid_argument("--semiring takes minplus, maxplus or plustimes, got '" + job.semiring + "'");
  r.step = "step09";
  r.variant = job.semiring;
  r.impl = LAB_IMPL_NAME;
  // the breakdown plot keys its bars on (impl, local): the semiring goes into the label
  r.local = job.semiring + "/" + (job.cuda ? "cuda" : "cpu");
  r.layout = r.grid.str();
  return r;
}

[[maybe_unused]] const int registered = [] {
  s9m::bench_implementations().push_back({LAB_IMPL_NAME, &run});
  return 0;
}();

}  // namespace
