// local_cuda.cpp — the `cuda` local kernel: cuBLAS on one GPU per rank.
//
// Linked into the benchmark where the CUDA Toolkit is found; it plugs itself into
// lab::step08::cuda_kernel() (local_kernel.hpp) at start-up. Host blocks in, host
// block out: each call copies A, B (and C when beta != 0) to the GPU, runs
// cublasDgemm and copies C back, so the copies count in the compute phase of the
// breakdown. The device buffers are kept between calls.
#include <mpi.h>

#include <climits>
#include <memory>
#include <stdexcept>
#include <string>

#include "comm.hpp"
#include "lab/cuda.hpp"
#include "lab/gemm_args.hpp"
#include "local_kernel.hpp"

namespace {

using lab::cuda::DeviceBuffer;

// This process's GPU, its cuBLAS handle and its buffers.
struct Gpu {
  explicit Gpu(int dev) : device(dev) {}
  int device;
  lab::cuda::CublasHandle blas;  // made after cudaSetDevice, so it lives on `device`
  DeviceBuffer<double> a, b, c;
};

std::unique_ptr<Gpu>& the_gpu() {
  static std::unique_ptr<Gpu> gpu;
  return gpu;
}

void reserve(DeviceBuffer<double>& buf, int64_t count) {
  if (buf.size() < size_t(count)) buf = DeviceBuffer<double>(size_t(count));
}

int as_int(int64_t v, const char* what) {
  if (v > INT_MAX)
    throw std::invalid_argument(std::string(what) + ": " + std::to_string(v) + " is too large for cuBLAS");
  return static_cast<int>(v);
}

void to_device(lab::ConstMatView h, double* d) {
  LAB_CUDA_CHECK(cudaMemcpy2D(d, sizeof(double) * h.rows, h.data, sizeof(double) * h.ld,
                              sizeof(double) * h.rows, h.cols, cudaMemcpyHostToDevice));
}

void setup(MPI_Comm comm) {
  if (the_gpu()) return;  // every rank makes the same calls, so every rank returns here alike
  int rank = 0;
  LAB_MPI_CHECK(MPI_Comm_rank(comm, &rank));
  // The ranks that share a node (and its GPUs): rank i of a node takes GPU i mod count.
  MPI_Comm node_comm = MPI_COMM_NULL;
  LAB_MPI_CHECK(MPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, rank, MPI_INFO_NULL, &node_comm));
  const lab::step08::Comm node(node_comm);
  int count = 0;
  if (cudaGetDeviceCount(&count) != cudaSuccess || count == 0)
    throw std::runtime_error("--local cuda: no CUDA device is visible");
  const int device = node.rank() % count;
  LAB_CUDA_CHECK(cudaSetDevice(device));
  the_gpu() = std::make_unique<Gpu>(device);
}

void gemm(double alpha, lab::ConstMatView A, lab::ConstMatView B, double beta, lab::MatView C) {
  lab::check_gemm_args(A, B, C);
  if (lab::gemm_quick_return(alpha, A, B, beta, C)) return;
  if (!the_gpu()) throw std::logic_error("the cuda kernel ran before its setup");
  Gpu& g = *the_gpu();
  const int m = as_int(C.rows, "m"), n = as_int(C.cols, "n"), k = as_int(A.cols, "k");
  reserve(g.a, C.rows * A.cols);
  reserve(g.b, A.cols * C.cols);
  reserve(g.c, C.rows * C.cols);
  to_device(A, g.a.data());
  to_device(B, g.b.data());
  if (beta != 0.0) to_device(C, g.c.data());  // beta == 0: cuBLAS does not read C
  LAB_CUDA_CHECK(cublasDgemm(g.blas.get(), CUBLAS_OP_N, CUBLAS_OP_N, m, n, k, &alpha, g.a.data(), m,
                             g.b.data(), k, &beta, g.c.data(), m));
  LAB_CUDA_CHECK(cudaMemcpy2D(C.data, sizeof(double) * C.ld, g.c.data(), sizeof(double) * C.rows,
                              sizeof(double) * C.rows, C.cols, cudaMemcpyDeviceToHost));
}

[[maybe_unused]] const bool plugged_in = [] {
  lab::step08::cuda_kernel() = {&setup, &gemm};
  return true;
}();

}  // namespace
