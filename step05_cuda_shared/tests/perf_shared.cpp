// step05 performance: ratios measured in one process on the same device
// buffers, with margins far below what the kernels reach (see the handout's
// table), so that they hold on any recent GPU.
//   LAB_PERF_N=4096            size of the tiled-vs-naive comparison (default 2048)
//   LAB_PERF_SIZES=1024,4096   sizes of the A^T A comparison (default 2048)
//   LAB_PERF_CSV=file.csv      also append the timings as benchmark rows
#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <functional>
#include <sstream>
#include <string>
#include <vector>

#include "contract.hpp"
#include "lab/bench.hpp"
#include "lab/cuda.hpp"
#include "lab/cuda_testing.hpp"
#include "shared.hpp"

namespace {

using lab::cuda::DeviceMatrix;

bool skip_without_gpu() {
  return lab::testing::skip_if_unavailable(lab::cuda::host_subject(&lab::step05::dgemm));
}

std::vector<int64_t> env_sizes(const char* name, int64_t fallback) {
  std::vector<int64_t> out;
  if (const char* s = std::getenv(name)) {
    std::stringstream in(s);
    std::string item;
    while (std::getline(in, item, ','))
      if (!item.empty()) out.push_back(std::stoll(item));
  }
  if (out.empty()) out.push_back(fallback);
  return out;
}

DeviceMatrix random_device_matrix(int64_t rows, int64_t cols, uint64_t seed, lab::Matrix* host = nullptr) {
  lab::Matrix h(rows, cols);
  h.fill_random(seed);
  DeviceMatrix d = DeviceMatrix::from_host(h.cview());
  if (host) *host = std::move(h);
  return d;
}

struct Row {
  const char* variant;
  const char* impl;
  double seconds;
};

void report(int64_t n, const std::vector<Row>& rows) {
  std::vector<lab::Record> records;
  for (const Row& r : rows) {
    const double tflops = lab::gflops(n, n, n, r.seconds) / 1e3;
    std::printf("  n=%-6lld %-16s %9.3f ms %8.2f TFLOP/s\n", (long long)n, r.variant, 1e3 * r.seconds,
                tflops);
    ::testing::Test::RecordProperty(std::string(r.variant) + "_n" + std::to_string(n) + "_ms",
                                    std::to_string(1e3 * r.seconds));
    lab::Record rec;
    rec.step = "step05";
    rec.variant = r.variant;
    rec.impl = r.impl;
    rec.m = rec.n = rec.k = n;
    rec.median_s = r.seconds;
    rec.gflops = lab::gflops(n, n, n, r.seconds);
    rec.check = "pass";  // every kernel timed here is checked by the correctness tests
    rec.device = lab::cuda::device_info().name;
    records.push_back(rec);
  }
  if (const char* csv = std::getenv("LAB_PERF_CSV")) lab::append_csv(csv, records);
}

TEST(Step05Perf, TiledBeatsNaive) {
  if (skip_without_gpu()) return;
  const int64_t n = env_sizes("LAB_PERF_N", 2048).front();
  lab::cuda::Stream s;
  const DeviceMatrix A = random_device_matrix(n, n, 1), B = random_device_matrix(n, n, 2);
  DeviceMatrix C = random_device_matrix(n, n, 3);
  auto time = [&](auto gemm) {
    return lab::cuda::time_device([&] { gemm(1.0, A.view(), B.view(), 0.5, C.view(), s.get()); }, s.get())
        .median_s;
  };
  const double naive = time(lab::step05::dgemm_naive);
  const double coalesced = time(lab::step05::dgemm_naive_coalesced);
  const double tiled = time(lab::step05::dgemm);
  report(n, {{"naive", "baseline", naive},
             {"naive_coalesced", "baseline", coalesced},
             {"tiled", "solution", tiled}});
  EXPECT_GT(naive / tiled, 2.0) << "the tiled kernel should be well ahead of the uncoalesced naive one";
  EXPECT_GT(coalesced / tiled, 1.1) << "shared-memory tiles should beat the coalesced global-memory kernel";
}

TEST(Step05Perf, AtaBeatsFullProduct) {
  if (skip_without_gpu()) return;
  lab::cuda::Stream s;
  const lab::cuda::CublasHandle blas;
  for (const int64_t n : env_sizes("LAB_PERF_SIZES", 2048)) {
    lab::Matrix a;
    const DeviceMatrix A = random_device_matrix(n, n, 4, &a);
    lab::Matrix at(n, n);  // the full product multiplies A^T (stored) by A
    for (int64_t j = 0; j < n; ++j)
      for (int64_t i = 0; i < n; ++i) at(i, j) = a(j, i);
    const DeviceMatrix At = DeviceMatrix::from_host(at.cview());
    DeviceMatrix C = random_device_matrix(n, n, 5);
    const double one = 1.0, half = 0.5;
    auto time = [&](const std::function<void()>& f) { return lab::cuda::time_device(f, s.get()).median_s; };
    const double full = time([&] { lab::step05::dgemm(1.0, At.view(), A.view(), 0.5, C.view(), s.get()); });
    const double ata = time([&] { lab::step05::ata(1.0, A.view(), 0.5, C.view(), s.get()); });
    const double syrk = time([&] {
      LAB_CUDA_CHECK(cublasDsyrk_64(blas.on(s.get()), CUBLAS_FILL_MODE_UPPER, CUBLAS_OP_T, n, n, &one,
                                    A.view().data, n, &half, C.view().data, n));
    });
    const double gemm_tn = time([&] {
      LAB_CUDA_CHECK(cublasDgemm_64(blas.on(s.get()), CUBLAS_OP_T, CUBLAS_OP_N, n, n, n, &one, A.view().data,
                                    n, A.view().data, n, &half, C.view().data, n));
    });
    // Rates count 2 n^3 flops for all rows (the full product's work), so a
    // ratio of rates is a ratio of times.
    report(n, {{"tiled_full", "solution", full},
               {"ata", "solution", ata},
               {"cublas_dsyrk", "baseline", syrk},
               {"cublas_dgemm_tn", "baseline", gemm_tn}});
    std::printf(
        "  n=%lld: A^T A is %.2fx faster than the full product; cublasDsyrk is %.2fx faster than A^T A\n",
        (long long)n, full / ata, ata / syrk);
    EXPECT_GT(full / ata, 1.3) << "n=" << n
                               << ": computing half the tiles should take well under the full time";
  }
}

}  // namespace
