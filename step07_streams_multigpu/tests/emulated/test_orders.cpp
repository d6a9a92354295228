// The CUDA emulation's own check of step07 (built only against the emulation,
// tests/emulated/): every variant under twenty orders of the streams, each
// drawn from a seed, on pageable and pinned matrices. No order may find a
// race or change a result; a copy back left unforced would leave NaN in C.
#include <gtest/gtest.h>

#include <cstring>
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
