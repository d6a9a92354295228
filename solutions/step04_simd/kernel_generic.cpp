// step04_simd — the portable micro-kernel: plain C++, the reference for the
// SIMD kernels and the one every CPU (x86 or not) can run. Nothing to do here.
//
// The same register-blocking idea as the SIMD kernels, left to the compiler:
// the tile of C is a small local array, and the innermost loop over its rows is
// contiguous in both the packed A and the tile, so it vectorizes at whatever
// width the build allows.
#include "microkernel.hpp"

namespace {

constexpr int kMr = 8, kNr = 6;
static_assert(kMr <= lab::step04::kMaxMr && kNr <= lab::step04::kMaxNr,
              "edge tiles need a buffer of kMaxMr x kMaxNr");

void kernel(int64_t kc, const double* a, const double* b, double beta, double* c, int64_t ldc) {
  double tile[kNr][kMr] = {};
  for (int64_t p = 0; p < kc; ++p, a += kMr, b += kNr) {
    for (int j = 0; j < kNr; ++j) {
      for (int i = 0; i < kMr; ++i) tile[j][i] += a[i] * b[j];
    }
  }
  for (int j = 0; j < kNr; ++j) {
    double* cj = c + j * ldc;
    for (int i = 0; i < kMr; ++i) cj[i] = beta == 0.0 ? tile[j][i] : tile[j][i] + beta * cj[i];
  }
}

}  // namespace

lab::step04::MicroKernel lab::step04::microkernel_generic() { return {Isa::generic, kMr, kNr, &kernel}; }
