// step08 device tests: blocks born on each rank's GPU, multiplied there, moved
// with MPI through host buffers (several ranks may share one GPU) or with NCCL
// (one GPU per rank). Without a GPU, or in a build without CUDA or NCCL, they
// skip, the run ends with LAB-SKIP and ctest reports it skipped. ctest runs the
// two paths as separate tests (--gtest_filter), so that a path that cannot run
// here is reported skipped instead of being a "[  SKIPPED ]" line inside the
// other path's run.
#include <gtest/gtest.h>
#include <mpi.h>

#include <string>

#include "mpi3d.hpp"
#include "mpi_testing.hpp"
#if LAB_STEP08_HAVE_CUDA
#include <cuda_runtime_api.h>

#include "contract.hpp"
#include "device.hpp"
#include "generate.hpp"
#include "lab/cuda.hpp"
#endif

namespace {

using namespace lab::step08::testing;

#if !LAB_STEP08_HAVE_CUDA
TEST(Step08DeviceMpi, BlocksOnTheGpu) {
  if (skip_unless(false, "step08 device tests: this build has no CUDA")) GTEST_SKIP();
}
TEST(Step08DeviceNccl, BlocksOnTheGpu) {
  if (skip_unless(false, "step08 device tests: this build has no CUDA")) GTEST_SKIP();
}
#else

using lab::ConstMatView;
using lab::Matrix;
using lab::MatView;
using lab::step08::Block;
using lab::step08::Grid;
using lab::step08::Plan;
using lab::step08::Transfer;


struct Shape {
  int64_t m, n, k;
  double alpha, beta;
  int64_t pad;
};

// Blocks born on the GPUs, multiplied there; the distributed check on host copies.
std::string multiply_on_gpus(const Grid& g, const Shape& s, Transfer how) {
  const Plan plan(MPI_COMM_WORLD, s.m, s.n, s.k, g);
  lab::step08::DeviceContext dev(plan.cube(), how);
  const auto seeds = lab::step08::Seeds::from(lab::testing::fresh_seed());
  lab::step08::DeviceBlock a(plan.a_block(), s.pad), b(plan.b_block(), s.pad), c(plan.c_block(), s.pad);
  const Block ab = plan.a_block(), bb = plan.b_block(), cb = plan.c_block();
  lab::step08::fill_device(a.view, seeds.a, ab.row0, ab.col0, dev.stream());
  lab::step08::fill_device(b.view, seeds.b, bb.row0, bb.col0, dev.stream());
  if (s.beta != 0) {
    lab::step08::fill_device(c.view, seeds.c, cb.row0, cb.col0, dev.stream());
  } else if (cb.held && cb.rows > 0 && cb.cols > 0) {  // all bits set: NaN, which beta == 0 must not read
    LAB_CUDA_CHECK(cudaMemset2DAsync(c.view.data, sizeof(double) * c.view.ld, 0xff, sizeof(double) * cb.rows,
                                     cb.cols, static_cast<cudaStream_t>(dev.stream())));
  }
  LAB_CUDA_CHECK(cudaStreamSynchronize(static_cast<cudaStream_t>(dev.stream())));
  lab::step08::multiply_device(plan, dev, s.alpha, a.view, b.view, s.beta, c.view);
  const Matrix ha = a.to_host(), hb = b.to_host(), hc = c.to_host();
  auto piece = [](const Matrix& h, const Block& blk) {
    return blk.held ? lab::step08::Piece::block(h.cview(), blk.row0, blk.col0) : lab::step08::Piece{};
  };
  const lab::CheckResult r = lab::step08::check_distributed(MPI_COMM_WORLD, s.m, s.n, s.k, s.alpha, s.beta, seeds,
                                                            piece(ha, ab), piece(hb, bb), piece(hc, cb));
  return r.ok ? "" : dev.describe() + ": " + r.report;
}

const Shape kShapes[] = {{37, 23, 51, 1.5, -0.5, 3}, {64, 1, 33, 1.0, 0.0, 2}, {29, 31, 40, 2.5, 0.0, 0}};

bool have_gpu(std::string* why) { return lab::cuda::device_available(why); }

TEST(Step08DeviceMpi, BlocksOnTheGpuMovedThroughHostBuffers) {
  std::string why;
  const bool gpu = have_gpu(&why);  // before why is read: argument order is unspecified
  if (skip_unless(gpu, "step08 device tests: " + why)) GTEST_SKIP();
  for (const Grid& g : explicit_grids())
    for (const Shape& s : kShapes) {
      SCOPED_TRACE("grid " + g.str() + " m=" + std::to_string(s.m) + " n=" + std::to_string(s.n) +
                   " k=" + std::to_string(s.k) + " beta=" + std::to_string(s.beta));
      const std::string finding = first_finding(multiply_on_gpus(g, s, Transfer::mpi));
      EXPECT_TRUE(finding.empty()) << finding;
    }
}

TEST(Step08DeviceNccl, BlocksOnTheGpuMovedWithNccl) {
  std::string why;
  const bool gpu = have_gpu(&why);  // before why is read: argument order is unspecified
  if (skip_unless(gpu, "step08 NCCL tests: " + why)) GTEST_SKIP();
  if (skip_unless(LAB_STEP08_HAVE_NCCL, "step08 NCCL tests: this build has no NCCL (nccl.h, libnccl)")) GTEST_SKIP();
  int gpus = 0;
  LAB_CUDA_CHECK(cudaGetDeviceCount(&gpus));
  if (skip_unless(world_size() <= gpus, "step08 NCCL tests: NCCL needs one GPU per rank, " +
                                            std::to_string(world_size()) + " ranks share " + std::to_string(gpus)))
    GTEST_SKIP();
  for (const Grid& g : explicit_grids())
    for (const Shape& s : kShapes) {
      SCOPED_TRACE("grid " + g.str() + " m=" + std::to_string(s.m) + " beta=" + std::to_string(s.beta));
      const std::string finding = first_finding(multiply_on_gpus(g, s, Transfer::nccl));
      EXPECT_TRUE(finding.empty()) << finding;
    }
}

#endif

}  // namespace
