// engine.hpp — where the distance matrix lives, apart from what the algorithms do with it.
//
// The algorithms (algorithms.hpp) are written once against this interface; an
// engine holds the n x n distance matrix D somewhere (host memory, one GPU's
// memory, blocks spread over MPI ranks) and does the few operations they need
// there. D(i, j) is the lightest path found so far from i to j, D(i, i) <= 0.
//
// For the diagonal block K = [k0, k0 + b) of blocked Floyd-Warshall, with I, J
// the vertices outside K:
//   close_diagonal_block   D(K, K) <- its closure: Floyd-Warshall within the block
//   update_panels          D(K, J) <- min(D(K, J), D(K, K) (x) D(K, J))
//                          D(I, K) <- min(D(I, K), D(I, K) (x) D(K, K))
//   update_rest            D(I, J) <- min(D(I, J), D(I, K) (x) D(K, J))
// (x) the min-plus product; the panel and rest updates are min-plus GEMMs with
// accumulate = true. Work is queued and may run asynchronously; the calls that
// return a value, finish() and take_result() wait for it.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "lab/matrix.hpp"
#include "minplus_gemm.hpp"

namespace lab::step09::apsp {

class Engine {
 public:
  virtual ~Engine() = default;
  virtual int64_t n() const = 0;
  /// What it runs on: "cpu, 2 threads" or the GPU's name.
  virtual std::string device() const = 0;
  /// The min-plus GEMM it was given.
  virtual std::string gemm_name() const = 0;

  /// D <- D (x) D. Returns whether any entry changed.
  virtual bool square() = 0;

  virtual void close_diagonal_block(int64_t k0, int64_t b) = 0;
  virtual void update_panels(int64_t k0, int64_t b) = 0;
  virtual void update_rest(int64_t k0, int64_t b) = 0;

  /// The smallest v whose D(v, v) is negative (or NaN, which only an overflow
  /// around a negative cycle makes), or -1 when there is none.
  virtual int64_t first_negative_diagonal() = 0;
  /// Waits for all queued work (the algorithms time their phases with it).
  virtual void finish() = 0;
  /// D on the host; the engine is spent afterwards.
  virtual Matrix take_result() = 0;
};

/// D0 (n x n, from distance_matrix) in host memory, worked on by `gemm` and
/// OpenMP threads (as many as omp_get_max_threads when called).
std::unique_ptr<Engine> make_cpu_engine(Matrix D0, HostMinPlusGemm gemm, const std::string& gemm_name);

/// Whether make_gpu_engine can work here: built with CUDA and a device visible.
/// When not, `why` says which is missing.
bool gpu_engine_available(std::string* why);
/// D0 uploaded to the current GPU (and freed on the host) and kept there for
/// the whole run; `gemm` gets device views and the engine's stream. Throws
/// std::runtime_error when the device has too little memory, or in a build
/// without CUDA.
std::unique_ptr<Engine> make_gpu_engine(Matrix D0, DeviceMinPlusGemm gemm, const std::string& gemm_name);

}  // namespace lab::step09::apsp
