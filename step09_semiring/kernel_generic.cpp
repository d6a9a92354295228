// step09_semiring — the portable micro-kernel: plain C++ with the semiring's
// own scalar operations, the one every CPU runs. Nothing to do here.
//
// The accumulators start at the zero and take S::add(acc, a (x) b) in the
// order of p, so this kernel computes exactly what the reference does.
#include "semiring_kernel.hpp"

namespace {

constexpr int kMr = 8, kNr = 6;
static_assert(kMr <= lab::step09::kMaxMr && kNr <= lab::step09::kMaxNr,
              "edge tiles need a buffer of kMaxMr x kMaxNr");

template <class S>
void kernel(int64_t kc, const double* a, const double* b, bool accumulate, double* c, int64_t ldc) {
  double tile[kNr][kMr];
  for (auto& column : tile)
    for (double& x : column) x = S::zero();
  for (int64_t p = 0; p < kc; ++p, a += kMr, b += kNr) {
    for (int j = 0; j < kNr; ++j) {
      for (int i = 0; i < kMr; ++i) tile[j][i] = S::add(tile[j][i], S::mul(a[i], b[j]));
    }
  }
  for (int j = 0; j < kNr; ++j) {
    double* cj = c + j * ldc;
    for (int i = 0; i < kMr; ++i) cj[i] = accumulate ? S::add(cj[i], tile[j][i]) : tile[j][i];
  }
}

}  // namespace

namespace lab::step09 {
inline namespace LAB_IMPL_NS {
template <class S>
MicroKernel microkernel_generic() {
  return {step04::Isa::generic, kMr, kNr, &kernel<S>};
}
template MicroKernel microkernel_generic<PlusTimes>();
template MicroKernel microkernel_generic<MinPlus>();
template MicroKernel microkernel_generic<MaxPlus>();
}  // namespace LAB_IMPL_NS
}  // namespace lab::step09
