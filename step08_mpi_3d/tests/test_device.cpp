// step08 device tests: blocks born on each rank's GPU, multiplied there, moved
// with MPI through host buffers (several ranks may share one GPU) or with NCCL
// (one GPU per rank); and the rank-0 entry on GPUs (dgemm_device_root), whose
// matrices live whole in rank 0's host memory, on the same two paths. Without a GPU, or in a build without CUDA or NCCL, they
// skip, the run ends with LAB-SKIP and ctest reports it skipped. ctest runs the
// two paths as separate tests (--gtest_filter), so that a path that cannot run
// here is reported skipped instead of being a "[  SKIPPED ]" line inside the
// other path's run.
#include <gtest/gtest.h>
#include <mpi.h>

#include <cstdint>
#include <cstring>
#include <initializer_list>
#include <memory>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "mpi3d.hpp"
#include "mpi_testing.hpp"
#if LAB_STEP08_HAVE_CUDA
#include <cuda_runtime_api.h>

#include "contract.hpp"
#include "device.hpp"
#include "generate.hpp"
#include "lab/check.hpp"
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
using lab::step08::Breakdown;
using lab::step08::Grid;
using lab::step08::Plan;
using lab::step08::RootCopy;
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

// The rank-0 entry on GPUs: what the breakdown of one call must hold on this rank.
// Every phase ran (its time is there), and the bytes are the algorithm's: the
// scatter sends every other rank's A and B blocks (and C's when beta != 0) from
// rank 0, the gather brings every other rank's C block back, and the broadcasts
// and the reduction move the formula's words.
std::string breakdown_finding(const Breakdown& bd, const Plan& plan, const Shape& s) {
  using namespace lab::step08;
  const Layout& lay = plan.layout();
  const int me = plan.rank();
  std::string out;
  if (!(bd.grid == plan.grid())) out += "breakdown: grid " + bd.grid.str() + ", the plan's is " + plan.grid().str() + "\n";
  for (int ph : {kSetup, kScatter, kProduct, kGather})
    if (!(bd.seconds[ph] > 0.0) || !(bd.own[ph] > 0.0))
      out += std::string("breakdown: phase ") + phase_name(ph) + " has no time\n";
  auto bytes = [](const Block& b) { return b.held ? b.rows * b.cols * int64_t(sizeof(double)) : int64_t(0); };
  int64_t scatter = 0, gather = 0;
  for (int r = 1; r < plan.size(); ++r) {
    if (me != 0 && me != r) continue;
    scatter += bytes(lay.a_block(r)) + bytes(lay.b_block(r)) + (s.beta != 0.0 ? bytes(lay.c_block(r)) : 0);
    gather += bytes(lay.c_block(r));
  }
  const Traffic& ts = bd.traffic[kScatter];
  const Traffic& tg = bd.traffic[kGather];
  if ((me == 0 ? ts.sent : ts.recv) != scatter || (me == 0 ? ts.recv : ts.sent) != 0)
    out += "breakdown: scatter moved " + std::to_string(ts.sent) + " / " + std::to_string(ts.recv) +
           " bytes (sent / received), expected " + std::to_string(scatter) + "\n";
  if ((me == 0 ? tg.recv : tg.sent) != gather || (me == 0 ? tg.sent : tg.recv) != 0)
    out += "breakdown: gather moved " + std::to_string(tg.sent) + " / " + std::to_string(tg.recv) +
           " bytes (sent / received), expected " + std::to_string(gather) + "\n";
  const Traffic& tb = bd.traffic[kBroadcast];
  const Traffic& tr = bd.traffic[kReduce];
  const int64_t words = (tb.sent + tb.recv + tr.sent + tr.recv) / int64_t(sizeof(double));
  const Coords c = lay.coords(me);
  const int64_t formula = rank_words(plan.grid(), s.m, s.n, s.k, c.x, c.y, c.z);
  if (words != formula)
    out += "breakdown: broadcasts and reduction moved " + std::to_string(words) + " words, the formula says " +
           std::to_string(formula) + "\n";
  return out;
}

// Pieces of at most 512 bytes (a piece is at least one column): every block
// travels in many, so the rings of pinned and device buffers wrap around and,
// on the direct path, pieces take other GPUs' links and NVLink, as the pieces
// of large matrices do.
constexpr size_t kPieceBytes = 512;

// Where rank 0's matrices live: in pageable memory (lab::Matrix), or in pinned
// copies of them (cudaMallocHost: whole pages of their own, so that they are
// page-locked entire, which the direct path copies straight from and into).
class HostMatrices {
 public:
  HostMatrices(std::initializer_list<Matrix*> mats, bool pinned) {
    for (Matrix* m : mats) {
      double* p = m->data();
      if (pinned && m->size() > 0) {
        void* q = nullptr;
        LAB_CUDA_CHECK(cudaMallocHost(&q, sizeof(double) * size_t(m->size())));
        pins_.emplace_back(q, [](void* x) { cudaFreeHost(x); });
        p = static_cast<double*>(q);
      }
      mats_.push_back({m, p});
    }
    to_pinned();
  }
  /// The view of `m` where the call reads and writes it.
  MatView view(const Matrix& m, int64_t i0 = 0, int64_t j0 = 0, int64_t rows = -1, int64_t cols = -1) const {
    for (const auto& [mat, p] : mats_)
      if (mat == &m) return {p + i0 + j0 * m.ld(), rows < 0 ? m.rows() : rows, cols < 0 ? m.cols() : cols, m.ld()};
    throw std::logic_error("HostMatrices: not one of mine");
  }
  void to_pinned() const {
    for (const auto& [mat, p] : mats_)
      if (p != mat->data()) std::memcpy(p, mat->data(), sizeof(double) * size_t(mat->size()));
  }
  void from_pinned() const {
    for (const auto& [mat, p] : mats_)
      if (p != mat->data()) std::memcpy(mat->data(), p, sizeof(double) * size_t(mat->size()));
  }

 private:
  std::vector<std::pair<Matrix*, double*>> mats_;
  std::vector<std::shared_ptr<void>> pins_;
};

// A, B and C whole on rank 0 (ld = rows + pad; C inside a frame of guard cells,
// full of NaN when beta == 0, which must vanish), pageable or pinned. Two calls
// on one plan and context (the second reuses the staging, the IPC mappings and
// the NCCL communicator), each checked on rank 0 against the reference with the
// harness's bound, and the second's breakdown on every rank.
std::string root_entry_on_gpus(const Grid& g, const Shape& s, Transfer how, RootCopy path, bool pinned) {
  const bool root = world_rank() == 0;
  const uint64_t seed = lab::testing::fresh_seed();
  Matrix a, b, c0, framed;
  if (root) {
    a = Matrix(s.m, s.k, s.m + s.pad);
    b = Matrix(s.k, s.n, s.k + s.pad);
    c0 = Matrix(s.m, s.n);
    framed = Matrix(s.m + 3 + s.pad, s.n + 2);  // C at (1, 1)
    a.fill_random(seed);
    b.fill_random(seed + 1);
    c0.fill_random(seed + 2);
    if (s.beta == 0.0) c0.fill_nan();
  }
  const HostMatrices host({&a, &b, &framed}, root && pinned);
  const MatView C = root ? host.view(framed, 1, 1, s.m, s.n) : MatView{nullptr, 0, 0, 1};
  const Plan plan(MPI_COMM_WORLD, s.m, s.n, s.k, g);
  lab::step08::DeviceContext dev(plan.cube(), how);
  dev.set_root_copy(path, kPieceBytes);
  const MatView none{nullptr, 0, 0, 1};
  Breakdown bd;
  lab::step08::Options o;
  o.breakdown = &bd;
  std::string finding;
  for (int call = 0; call < 2; ++call) {
    if (root) {
      framed.fill_all(guard_value());
      for (int64_t j = 0; j < s.n; ++j)
        for (int64_t i = 0; i < s.m; ++i) framed(1 + i, 1 + j) = c0(i, j);
      host.to_pinned();
    }
    lab::step08::dgemm_device_root(plan, dev, s.alpha, root ? host.view(a) : none, root ? host.view(b) : none,
                                   s.beta, C, o);
    if (!root) continue;
    host.from_pinned();
    Matrix out(s.m, s.n);
    for (int64_t j = 0; j < s.n; ++j)
      for (int64_t i = 0; i < s.m; ++i) out(i, j) = framed(1 + i, 1 + j);
    const lab::CheckResult r = lab::check_against_reference(s.alpha, a.cview(), b.cview(), s.beta, c0.cview(),
                                                            out.cview());
    if (!r.ok) finding += "call " + std::to_string(call + 1) + ": " + r.report;
    std::string where;
    if (!lab::guards_intact(framed, 1, 1, s.m, s.n, guard_value(), &where))
      finding += "call " + std::to_string(call + 1) + " wrote outside C: " + where + "\n";
  }
  if (!finding.empty()) finding += "(seed " + std::to_string(seed) + ", rerun with LAB_SEED=" + std::to_string(seed) + ")\n";
  finding += breakdown_finding(bd, plan, s);
  return finding.empty() ? "" : dev.describe() + ", " + dev.root_route() + (pinned ? ", pinned" : ", pageable") +
                                    ": " + finding;
}

void root_entry_on_every_grid(Transfer how, RootCopy path, bool pinned) {
  for (const Grid& g : explicit_grids())
    for (const Shape& s : kShapes) {
      SCOPED_TRACE("rank-0 entry, grid " + g.str() + " m=" + std::to_string(s.m) + " n=" + std::to_string(s.n) +
                   " k=" + std::to_string(s.k) + " beta=" + std::to_string(s.beta) + " pad=" + std::to_string(s.pad));
      const std::string finding = first_finding(root_entry_on_gpus(g, s, how, path, pinned));
      EXPECT_TRUE(finding.empty()) << finding;
    }
}

bool have_gpu(std::string* why) { return lab::cuda::device_available(why); }

// Whether the NCCL tests cannot run here (said once, by rank 0): no NCCL in the
// build, or fewer GPUs than ranks (NCCL needs one GPU per rank).
bool skip_without_nccl() {
  if (skip_unless(LAB_STEP08_HAVE_NCCL, "step08 NCCL tests: this build has no NCCL (nccl.h, libnccl)")) return true;
  int gpus = 0;
  LAB_CUDA_CHECK(cudaGetDeviceCount(&gpus));
  return skip_unless(world_size() <= gpus, "step08 NCCL tests: NCCL needs one GPU per rank, " +
                                               std::to_string(world_size()) + " ranks share " + std::to_string(gpus));
}

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

TEST(Step08DeviceMpi, RootEntryThroughPinnedBuffersAndMpi) {
  std::string why;
  const bool gpu = have_gpu(&why);
  if (skip_unless(gpu, "step08 device tests: " + why)) GTEST_SKIP();
  root_entry_on_every_grid(Transfer::mpi, RootCopy::relay, /*pinned=*/false);
}

// Every rank of this test is on rank 0's node: rank 0 copies into every rank's
// GPU itself (CUDA IPC; several ranks may share one GPU), from pageable
// matrices through its pinned pieces and from pinned ones straight.
TEST(Step08DeviceMpi, RootEntryDirectIntoEveryGpu) {
  std::string why;
  const bool gpu = have_gpu(&why);
  if (skip_unless(gpu, "step08 device tests: " + why)) GTEST_SKIP();
  {
    SCOPED_TRACE("pageable");
    root_entry_on_every_grid(Transfer::mpi, RootCopy::direct, /*pinned=*/false);
  }
  SCOPED_TRACE("pinned");
  root_entry_on_every_grid(Transfer::mpi, RootCopy::direct, /*pinned=*/true);
}

// The one-call form (rank 0 alone knows the sizes; NCCL where it can), and a bad
// argument on rank 0: every rank throws the same std::invalid_argument, and the
// context serves the next call.
TEST(Step08DeviceMpi, RootEntryInOneCallAndItsErrors) {
  std::string why;
  const bool gpu = have_gpu(&why);
  if (skip_unless(gpu, "step08 device tests: " + why)) GTEST_SKIP();
  const bool root = world_rank() == 0;
  const int64_t m = 33, n = 17, k = 29;
  const uint64_t seed = lab::testing::fresh_seed();
  Matrix a(m, k), b(k, n), c0(m, n), c(m, n + 1);
  a.fill_random(seed);
  b.fill_random(seed + 1);
  c0.fill_random(seed + 2);
  for (int64_t j = 0; j < n; ++j)
    for (int64_t i = 0; i < m; ++i) c(i, j) = c0(i, j);
  const MatView none{nullptr, 0, 0, 1};
  const MatView C{c.data(), m, n, c.ld()};
  lab::step08::dgemm_device_root(MPI_COMM_WORLD, -1.5, root ? a.cview() : none, root ? b.cview() : none, 0.5,
                                 root ? C : none);
  lab::CheckResult r;
  if (root) r = lab::check_against_reference(-1.5, a.cview(), b.cview(), 0.5, c0.cview(), C);
  r = share_from_root(r);
  EXPECT_TRUE(r.ok) << "the one-call form (checked on rank 0):\n" << r.report;

  const Plan plan(MPI_COMM_WORLD, m, n, k);
  lab::step08::DeviceContext dev(plan.cube());
  const MatView wrong{c.data(), m, n + 1, c.ld()};  // C with one column too many, on rank 0 only
  bool threw = false;
  try {
    lab::step08::dgemm_device_root(plan, dev, 1.0, root ? a.cview() : none, root ? b.cview() : none, 0.0,
                                   root ? wrong : none);
  } catch (const std::invalid_argument&) {
    threw = true;
  }
  EXPECT_TRUE(threw) << "a C of the wrong shape on rank 0 must throw std::invalid_argument on every rank";
  EXPECT_TRUE(same_on_every_rank(threw));
  lab::step08::dgemm_device_root(plan, dev, 1.0, root ? a.cview() : none, root ? b.cview() : none, 0.0,
                                 root ? C : none);
  if (root) r = lab::check_against_reference(1.0, a.cview(), b.cview(), 0.0, c0.cview(), C);
  r = share_from_root(r);
  EXPECT_TRUE(r.ok) << "the call after a failed one (checked on rank 0):\n" << r.report;
}

TEST(Step08DeviceNccl, BlocksOnTheGpuMovedWithNccl) {
  std::string why;
  const bool gpu = have_gpu(&why);  // before why is read: argument order is unspecified
  if (skip_unless(gpu, "step08 NCCL tests: " + why)) GTEST_SKIP();
  if (skip_without_nccl()) GTEST_SKIP();
  for (const Grid& g : explicit_grids())
    for (const Shape& s : kShapes) {
      SCOPED_TRACE("grid " + g.str() + " m=" + std::to_string(s.m) + " beta=" + std::to_string(s.beta));
      const std::string finding = first_finding(multiply_on_gpus(g, s, Transfer::nccl));
      EXPECT_TRUE(finding.empty()) << finding;
    }
}

TEST(Step08DeviceNccl, RootEntryThroughPinnedBuffersAndNccl) {
  std::string why;
  const bool gpu = have_gpu(&why);
  if (skip_unless(gpu, "step08 NCCL tests: " + why)) GTEST_SKIP();
  if (skip_without_nccl()) GTEST_SKIP();
  root_entry_on_every_grid(Transfer::nccl, RootCopy::relay, /*pinned=*/false);
}

TEST(Step08DeviceNccl, RootEntryDirectBesideNccl) {
  std::string why;
  const bool gpu = have_gpu(&why);
  if (skip_unless(gpu, "step08 NCCL tests: " + why)) GTEST_SKIP();
  if (skip_without_nccl()) GTEST_SKIP();
  root_entry_on_every_grid(Transfer::nccl, RootCopy::direct, /*pinned=*/true);
}

#endif

}  // namespace
