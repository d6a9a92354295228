// The CPU engine: the distance matrix in host memory, OpenMP for the small operations.
#include <omp.h>

#include <algorithm>

#include "local_engine.hpp"
#include "reference.hpp"

namespace lab::step09::apsp {
namespace {

class HostSpace {
 public:
  using Buffer = Matrix;

  explicit HostSpace(HostMinPlusGemm gemm) : gemm_(std::move(gemm)), threads_(omp_get_max_threads()) {}

  Buffer upload(Matrix&& host) { return std::move(host); }
  Buffer allocate(int64_t rows, int64_t cols) { return Matrix(rows, cols); }
  void gemm(ConstMatView A, ConstMatView B, MatView C, bool accumulate) { gemm_(A, B, C, accumulate); }

  void copy(ConstMatView from, MatView to) {
#pragma omp parallel for schedule(static)
    for (int64_t j = 0; j < from.cols; ++j) std::copy_n(&from(0, j), from.rows, &to(0, j));
  }

  // The diagonal block is a small part of the work (n b^2 of n^3): one thread.
  void close(MatView block) { plain_floyd_warshall(block); }

  bool differ(ConstMatView a, ConstMatView b) {
    int any = 0;
#pragma omp parallel for schedule(static) reduction(| : any)
    for (int64_t j = 0; j < a.cols; ++j)
      for (int64_t i = 0; i < a.rows; ++i) any |= a(i, j) != b(i, j);
    return any != 0;
  }

  int64_t first_negative_diagonal(ConstMatView d) {
    for (int64_t v = 0; v < d.rows; ++v)
      if (!(d(v, v) >= 0)) return v;
    return -1;
  }

  void finish() {}
  Matrix download(Buffer&& d) { return std::move(d); }
  std::string device() const {
    return "cpu, " + std::to_string(threads_) + (threads_ == 1 ? " thread" : " threads");
  }

 private:
  HostMinPlusGemm gemm_;
  int threads_;
};

}  // namespace

std::unique_ptr<Engine> make_cpu_engine(Matrix D0, HostMinPlusGemm gemm, const std::string& gemm_name) {
  return std::make_unique<LocalEngine<HostSpace>>(std::move(D0), gemm_name, std::move(gemm));
}

}  // namespace lab::step09::apsp
