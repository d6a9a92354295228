// run_on_host_views: a device dgemm on host matrices, for the contract suite.
#include <stdexcept>

#include "lab/cuda.hpp"

namespace lab::cuda {
namespace {

bool valid_on_its_own(ConstMatView v) {
  return v.rows >= 0 && v.cols >= 0 && v.ld >= (v.rows > 1 ? v.rows : 1) &&
         (v.data != nullptr || v.rows == 0 || v.cols == 0);
}

// Elements from the first to the last element of the matrix: ld * (cols - 1) + rows.
size_t span(ConstMatView v) { return v.rows > 0 && v.cols > 0 ? size_t(v.ld * (v.cols - 1) + v.rows) : 0; }

// A device copy of one operand's span, shaped like the host view.
struct Mirror {
  DeviceBuffer<double> buf;
  ConstMatView host;
  MatView dev;

  Mirror(ConstMatView h, cudaStream_t s) : host(h), dev{nullptr, h.rows, h.cols, h.ld} {
    if (!valid_on_its_own(h)) return;  // the dgemm's own check must throw for it
    buf = DeviceBuffer<double>(span(h));
    dev.data = buf.data();
    if (buf.size() > 0)
      LAB_CUDA_CHECK(
          cudaMemcpyAsync(buf.data(), h.data, sizeof(double) * buf.size(), cudaMemcpyHostToDevice, s));
  }
};

}  // namespace

void run_on_host_views(const DeviceGemm& gemm, double alpha, ConstMatView A, ConstMatView B, double beta,
                       MatView C) {
  std::string why;
  if (!device_available(&why)) throw std::runtime_error(why);
  Stream stream;
  Mirror a(A, stream.get()), b(B, stream.get()), c(C, stream.get());
  stream.sync();
  gemm(alpha, a.dev, b.dev, beta, c.dev, stream.get());
  LAB_CUDA_CHECK(cudaGetLastError());
  stream.sync();
  if (c.buf.size() > 0) {
    LAB_CUDA_CHECK(cudaMemcpyAsync(C.data, c.buf.data(), sizeof(double) * c.buf.size(),
                                   cudaMemcpyDeviceToHost, stream.get()));
    stream.sync();
  }
}

}  // namespace lab::cuda
