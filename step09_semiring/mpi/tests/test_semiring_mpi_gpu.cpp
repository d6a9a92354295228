// step09 MPI device tests: the semiring product with each rank's blocks on its
// GPU (step08's DeviceContext: one GPU per rank by node-local rank), the local
// product step09's gemm_device<S>, the z-reduction ncclMin / ncclMax with NCCL
// (one GPU per rank) or MPI_MIN / MPI_MAX through host buffers (ranks may share
// a GPU). The C blocks come back to the host and are compared exactly with the
// plain reference (min-plus, max-plus). Without a GPU (or NCCL) they skip;
// ctest runs the two paths as separate tests (--gtest_filter), so that a path
// that cannot run here is reported skipped (its run ends with LAB-SKIP) instead
// of being a "[  SKIPPED ]" line inside the other path's run.
#include <gtest/gtest.h>
#include <mpi.h>

#include <cstdio>
#include <limits>
#include <string>

#include "mpi_testing.hpp"
#include "semiring_mpi.hpp"
#if LAB_STEP09_MPI_DEVICE
#include <cuda_runtime_api.h>

#include "contract.hpp"  // lab::testing::fresh_seed
#include "lab/cuda.hpp"
#include "semiring_mpi_testing.hpp"
#endif

namespace {

using namespace lab::step08::testing;

#if !LAB_STEP09_MPI_DEVICE
TEST(Step09MpiDeviceMpi, BlocksOnTheGpu) {
  if (skip_unless(false, "step09 MPI device tests: this build has no CUDA")) GTEST_SKIP();
}
TEST(Step09MpiDeviceNccl, BlocksOnTheGpu) {
  if (skip_unless(false, "step09 MPI device tests: this build has no CUDA")) GTEST_SKIP();
}
#else

using lab::step08::DeviceBlock;
using lab::step08::Grid;
using lab::step08::Plan;
using lab::step08::Transfer;
using namespace step09_mpi_testing;
namespace s9m = lab::step09::mpi;

void to_device(const Matrix* src, const lab::step08::Block& b, DeviceBlock& d) {
  if (!b.held || b.rows == 0 || b.cols == 0) return;
  if (src == nullptr) {  // all bits set: NaN, which accumulate == false must not read
    LAB_CUDA_CHECK(cudaMemset2D(d.view.data, sizeof(double) * d.view.ld, 0xff, sizeof(double) * b.rows, b.cols));
    return;
  }
  LAB_CUDA_CHECK(cudaMemcpy2D(d.view.data, sizeof(double) * d.view.ld, src->cview().data + b.row0 + b.col0 * src->ld(),
                              sizeof(double) * src->ld(), sizeof(double) * b.rows, b.cols, cudaMemcpyHostToDevice));
}

template <class S>
std::string run_case(const Grid& g, const Case& c, Transfer how, bool user_op) {
  const Plan plan(MPI_COMM_WORLD, c.m, c.n, c.k, g);
  lab::step08::DeviceContext dev(plan.cube(), how);
  const uint64_t seed = lab::testing::fresh_seed();
  const auto seeds = lab::step08::Seeds::from(seed);
  const Problem pb = make_problem<S>(c, seeds);
  const Matrix &A = pb.A, &B = pb.B, &C0 = pb.C0, &ref = pb.ref;
  DeviceBlock a(plan.a_block(), c.pad), b(plan.b_block(), c.pad), cc(plan.c_block(), c.pad);
  to_device(&A, plan.a_block(), a);
  to_device(&B, plan.b_block(), b);
  to_device(c.accumulate ? &C0 : nullptr, plan.c_block(), cc);
  s9m::Options o;
  o.user_op = user_op;
  s9m::gemm_device<S>(plan, dev, a.view, b.view, cc.view, c.accumulate, o);
  LAB_CUDA_CHECK(cudaStreamSynchronize(static_cast<cudaStream_t>(dev.stream())));
  const Matrix hc = cc.to_host();
  const std::string mine =
      check_block<S>(plan.c_block(), plan.c_block().held ? hc.cview() : lab::ConstMatView{nullptr, 0, 0, 1}, A, B,
                     C0, ref, c.accumulate, plan.rank());
  const std::string found = first_finding(mine);
  return found.empty() ? "" : dev.describe() + ", " + describe(plan.grid(), c) + ":\n" + found;
}

const Case kCases[] = {{37, 23, 51, 3, false, true}, {64, 1, 33, 2, true, true}, {29, 31, 40, 0, true, false},
                       {130, 70, 300, 1, false, true}};

void run_all(Transfer how, bool user_op) {
  for (const Grid& g : explicit_grids())
    for (const Case& c : kCases) {
      std::string found = run_case<s9::MinPlus>(g, c, how, user_op);
      EXPECT_TRUE(found.empty()) << "minplus: " << found;
      found = run_case<s9::MaxPlus>(g, c, how, user_op);
      EXPECT_TRUE(found.empty()) << "maxplus: " << found;
    }
}

TEST(Step09MpiDeviceMpi, BlocksOnTheGpuReducedThroughHostBuffers) {
  std::string why;
  const bool gpu = lab::cuda::device_available(&why);  // before why is read: argument order is unspecified
  if (skip_unless(gpu, "step09 MPI device tests: " + why)) GTEST_SKIP();
  run_all(Transfer::mpi, false);
  run_all(Transfer::mpi, true);  // the user-defined MPI_Op on the staged blocks
}

TEST(Step09MpiDeviceNccl, BlocksOnTheGpuReducedWithNcclMinMax) {
  std::string why;
  const bool gpu = lab::cuda::device_available(&why);  // before why is read: argument order is unspecified
  if (skip_unless(gpu, "step09 MPI NCCL tests: " + why)) GTEST_SKIP();
  if (skip_unless(LAB_STEP08_HAVE_NCCL, "step09 MPI NCCL tests: this build has no NCCL (nccl.h, libnccl)"))
    GTEST_SKIP();
  int gpus = 0;
  LAB_CUDA_CHECK(cudaGetDeviceCount(&gpus));
  if (skip_unless(world_size() <= gpus, "step09 MPI NCCL tests: NCCL needs one GPU per rank, " +
                                            std::to_string(world_size()) + " ranks share " + std::to_string(gpus)))
    GTEST_SKIP();
  run_all(Transfer::nccl, false);
  // A user-defined op has no NCCL form: refused on every rank alike, before any work.
  const Plan plan(MPI_COMM_WORLD, 8, 8, 8);
  lab::step08::DeviceContext dev(plan.cube(), Transfer::nccl);
  s9m::Options o;
  o.user_op = true;
  const lab::View<const double> none{nullptr, 0, 0, 1};
  bool threw = false;
  try {
    s9m::gemm_device<s9::MinPlus>(plan, dev, none, none, lab::View<double>{nullptr, 0, 0, 1}, false, o);
  } catch (const std::invalid_argument&) {
    threw = true;
  }
  EXPECT_TRUE(threw);
}

#endif

}  // namespace
