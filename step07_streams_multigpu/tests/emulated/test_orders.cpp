// The CUDA emulation's own check of step07 (built only against the emulation,
// tests/emulated/): every variant under twenty orders of the streams, each
// drawn from a seed, on pageable and pinned matrices, and dgemm_multigpu's
// shared panels on one and two emulated devices. No order may find a race or
// change a result; a copy back left unforced would leave NaN in C.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <stdexcept>
#include <string>
#include <vector>

#include "contract.hpp"
#include "engine.hpp"
#include "lab/check.hpp"
#include "lab/cuda.hpp"
#include "streams.hpp"

namespace {

using lab::ConstMatView;
using lab::Matrix;
using lab::MatView;
using lab::step07::Options;
using Fn = void (*)(double, ConstMatView, ConstMatView, double, MatView, const Options&);

// A pinned copy of a matrix's whole strided span (guard cells included).
struct PinnedCopy {
  double* p = nullptr;
  MatView v{};
  explicit PinnedCopy(const Matrix& m) {
    const size_t count = size_t(m.ld() * m.cols());
    LAB_CUDA_CHECK(cudaMallocHost(reinterpret_cast<void**>(&p), sizeof(double) * count));
    std::memcpy(p, m.data(), sizeof(double) * count);
    v = {p, m.rows(), m.cols(), m.ld()};
  }
  ~PinnedCopy() { cudaFreeHost(p); }
  PinnedCopy(const PinnedCopy&) = delete;
  PinnedCopy& operator=(const PinnedCopy&) = delete;
};

}  // namespace

TEST(Step07Emulation, EveryVariantIsRightUnderTwentyOrdersOfTheStreams) {
  const int64_t m = 45, n = 38, k = 50;
  const uint64_t seed = lab::testing::fresh_seed();
  Matrix A(m, k), B(k, n), C0(m, n);
  A.fill_random(seed);
  B.fill_random(seed + 1);
  C0.fill_random(seed + 2);
  const struct {
    Fn f;
    const char* name;
  } variants[] = {{&lab::step07::dgemm_sync, "dgemm_sync"},
                  {&lab::step07::dgemm_streams, "dgemm_streams"},
                  {&lab::step07::dgemm_multigpu, "dgemm_multigpu"}};
  Options o;
  o.tm = 16, o.tn = 16, o.tk = 8;  // 3 x 3 tiles, 7 panels: every stage, C late
  o.gpus = {0, 0};
  o.streams_per_gpu = 2;
  for (uint64_t order = 1; order <= 20; ++order) {
    lab_emulated::reseed(order);
    for (const auto& v : variants)
      for (const bool pinned : {false, true})
        for (const double beta : {0.0, -1.5}) {
          SCOPED_TRACE(std::string(v.name) + (pinned ? ", pinned C" : ", pageable C") +
                       ", beta = " + std::to_string(beta) + ", LAB_EMULATION_SEED order " + std::to_string(order));
          Matrix C(m, n);
          std::memcpy(C.data(), C0.data(), sizeof(double) * size_t(C0.ld() * C0.cols()));
          if (pinned) {
            PinnedCopy c(C);
            v.f(0.75, A.cview(), B.cview(), beta, c.v, o);
            std::memcpy(C.data(), c.p, sizeof(double) * size_t(C.ld() * C.cols()));
          } else {
            v.f(0.75, A.cview(), B.cview(), beta, C.view(), o);
          }
          const auto r = lab::check_against_reference(0.75, A.cview(), B.cview(), beta, C0.cview(), C.cview());
          ASSERT_TRUE(r.ok) << r.report;
        }
  }
}

// dgemm_multigpu with pinned A and B shares its panels (share.cpp): on one
// emulated device listed two and four times, and on the two emulated devices
// (peer copies between them), with tiles asked for and tiles chosen under a
// small cap; edges, C late and beta = 0, under two orders each (the race
// check does not depend on the order; the results are checked in both).
TEST(Step07Emulation, SharedPanelsAreRightUnderManyOrders) {
  const uint64_t seed = lab::testing::fresh_seed();
  for (const auto& mnk : {std::vector<int64_t>{45, 38, 50}, {70, 33, 17}}) {
    const int64_t m = mnk[0], n = mnk[1], k = mnk[2];
    Matrix A(m, k), B(k, n), C0(m, n);
    A.fill_random(seed);
    B.fill_random(seed + 1);
    C0.fill_random(seed + 2);
    const PinnedCopy a(A), b(B);
    for (const std::vector<int>& gpus : {std::vector<int>{0, 0}, {0, 0, 0, 0}, {0, 1}, {0, 1, 1, 0}})
      for (const bool chosen : {false, true})
        for (uint64_t order = 1; order <= 2; ++order) {
          lab_emulated::reseed(order);
          Options o;
          o.gpus = gpus;
          if (chosen)
            o.device_mem_limit = size_t(40) << 10;  // tiles of about 16 x 16
          else
            o.tm = 16, o.tn = 12, o.tk = 8;
          for (const double beta : {0.0, -1.5}) {
            std::string list;
            for (int g : gpus) list += (list.empty() ? "" : ",") + std::to_string(g);
            SCOPED_TRACE(std::to_string(m) + "x" + std::to_string(n) + "x" + std::to_string(k) + ", gpus " + list +
                         (chosen ? ", tiles chosen" : ", tiles 16x12x8") + ", beta = " + std::to_string(beta) +
                         ", LAB_EMULATION_SEED order " + std::to_string(order));
            std::vector<lab::step07::TraceEvent> trace;
            o.trace = &trace;
            Matrix C(m, n);
            std::memcpy(C.data(), C0.data(), sizeof(double) * size_t(C0.ld() * C0.cols()));
            PinnedCopy c(C);
            lab::step07::dgemm_multigpu(0.75, a.v, b.v, beta, c.v, o);
            std::memcpy(C.data(), c.p, sizeof(double) * size_t(C.ld() * C.cols()));
            const auto r = lab::check_against_reference(0.75, A.cview(), B.cview(), beta, C0.cview(), C.cview());
            ASSERT_TRUE(r.ok) << r.report;
            ASSERT_TRUE(std::any_of(trace.begin(), trace.end(), [](const auto& e) { return e.kind == "P2P"; }))
                << "no peer copy: the panels were not shared";
          }
        }
  }
}

// GPUs that cannot reach each other: automatic keeps the plan without
// sharing, Share::on is an error that says why.
TEST(Step07Emulation, GpusThatCannotReachEachOtherDoNotShare) {
  Matrix A(30, 20), B(20, 25), C0(30, 25);
  A.fill_random(5);
  B.fill_random(6);
  C0.fill_random(7);
  const PinnedCopy a(A), b(B);
  setenv("LAB_EMULATION_NO_PEER", "1", 1);
  Options o;
  o.gpus = {0, 1};
  o.tm = o.tn = o.tk = 8;
  std::vector<lab::step07::TraceEvent> trace;
  o.trace = &trace;
  Matrix C(30, 25);
  std::memcpy(C.data(), C0.data(), sizeof(double) * size_t(C0.ld() * C0.cols()));
  lab::step07::dgemm_multigpu(1.0, a.v, b.v, 0.5, C.view(), o);
  EXPECT_TRUE(lab::check_against_reference(1.0, A.cview(), B.cview(), 0.5, C0.cview(), C.cview()).ok);
  EXPECT_TRUE(std::none_of(trace.begin(), trace.end(), [](const auto& e) { return e.kind == "P2P"; }));
  o.share = Options::Share::on;
  try {
    lab::step07::dgemm_multigpu(1.0, a.v, b.v, 0.5, C.view(), o);
    ADD_FAILURE() << "share on between GPUs that cannot reach each other was accepted";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("share: GPU 0 cannot reach the memory of GPU 1"), std::string::npos)
        << e.what();
  }
  unsetenv("LAB_EMULATION_NO_PEER");
}

// engine.cpp keeps a call's device buffers for the next call of the same plan
// (cudaFree waits for the whole device): the second call allocates nothing
// more, its result is right although the buffers hold the first call's data,
// and a plan of another size after it is right too.
TEST(Step07Emulation, ASecondCallReusesTheFirstCallsDeviceBuffers) {
  Matrix A(40, 24), B(24, 36), C0(40, 36);
  A.fill_random(11);
  B.fill_random(12);
  C0.fill_random(13);
  Options o;
  o.gpus = {0, 1};
  o.streams_per_gpu = 1;  // one worker a device: how many buffers are alive at once does not hang on timing
  o.tm = o.tn = 16, o.tk = 8;
  auto allocations = [] {
    std::lock_guard<std::mutex> lock(lab_emulated::state().mu);
    return lab_emulated::state().device.size();
  };
  for (int call = 0; call < 3; ++call) {
    SCOPED_TRACE("call " + std::to_string(call));
    const size_t before = allocations();
    Matrix C(40, 36);
    std::memcpy(C.data(), C0.data(), sizeof(double) * size_t(C0.ld() * C0.cols()));
    lab::step07::dgemm_multigpu(0.5, A.cview(), B.cview(), 2.0, C.view(), o);
    const auto r = lab::check_against_reference(0.5, A.cview(), B.cview(), 2.0, C0.cview(), C.cview());
    ASSERT_TRUE(r.ok) << r.report;
    if (call > 0) {
      EXPECT_EQ(allocations(), before) << "the call allocated device memory again";
    }
  }
  o.tm = o.tn = 8;  // another plan
  Matrix C(40, 36);
  std::memcpy(C.data(), C0.data(), sizeof(double) * size_t(C0.ld() * C0.cols()));
  lab::step07::dgemm_multigpu(0.5, A.cview(), B.cview(), 2.0, C.view(), o);
  EXPECT_TRUE(lab::check_against_reference(0.5, A.cview(), B.cview(), 2.0, C0.cview(), C.cview()).ok);
}

// A wait that misses its copy, in each of its three forms (no wait, a wait on an
// event never recorded, or on one recorded before the copy: both return at
// once), is found, and the message names all three, since which was meant
// cannot be told.
TEST(Step07Emulation, AWaitThatMissesItsCopyIsFoundInEachForm) {
  const size_t bytes = 8 * sizeof(double);
  double *host = nullptr, *back = nullptr, *dev = nullptr;
  LAB_CUDA_CHECK(cudaMallocHost(reinterpret_cast<void**>(&host), bytes));
  LAB_CUDA_CHECK(cudaMallocHost(reinterpret_cast<void**>(&back), bytes));
  const std::string says =
      "compute read panel 0 of buffer slot 0 before its copy completed: no wait on its event panel_ready[0] (or "
      "one recorded before it, or never: such a wait returns at once)";
  for (const int form : {0, 1, 2}) {  // no wait; a wait on an event never recorded; recorded before the copy
    SCOPED_TRACE("form " + std::to_string(form));
    LAB_CUDA_CHECK(cudaMalloc(reinterpret_cast<void**>(&dev), bytes));
    lab_emulated::name_memory(dev, "buffer slot 0");
    cudaStream_t h2d, compute;
    cudaEvent_t ready;
    LAB_CUDA_CHECK(cudaStreamCreateWithFlags(&h2d, cudaStreamNonBlocking));
    LAB_CUDA_CHECK(cudaStreamCreateWithFlags(&compute, cudaStreamNonBlocking));
    lab_emulated::name_stream(h2d, "h2d");
    lab_emulated::name_stream(compute, "compute");
    LAB_CUDA_CHECK(cudaEventCreate(&ready));
    if (form == 2) LAB_CUDA_CHECK(cudaEventRecord(ready, h2d));
    lab_emulated::describe("copy", "panel 0");
    ASSERT_EQ(cudaMemcpy2DAsync(dev, bytes, host, bytes, bytes, 1, cudaMemcpyHostToDevice, h2d), cudaSuccess);
    if (form > 0) LAB_CUDA_CHECK(cudaStreamWaitEvent(compute, ready));
    EXPECT_NE(cudaMemcpy2DAsync(back, bytes, dev, bytes, bytes, 1, cudaMemcpyDeviceToHost, compute), cudaSuccess);
    EXPECT_NE(lab_emulated::last_error().find(says), std::string::npos) << lab_emulated::last_error();
    LAB_CUDA_CHECK(cudaStreamSynchronize(h2d));
    LAB_CUDA_CHECK(cudaStreamSynchronize(compute));
    LAB_CUDA_CHECK(cudaEventDestroy(ready));
    LAB_CUDA_CHECK(cudaStreamDestroy(h2d));
    LAB_CUDA_CHECK(cudaStreamDestroy(compute));
    LAB_CUDA_CHECK(cudaFree(dev));
  }
  LAB_CUDA_CHECK(cudaFreeHost(host));
  LAB_CUDA_CHECK(cudaFreeHost(back));
}
