// step04_simd — TODO for the student: the AVX2 + FMA micro-kernel.
//
// What to do: fill in the marked place below (the contract is in
// step04_simd/microkernel.hpp). Its test runs on any CPU with AVX2 and FMA.
// Test:   ./lab test step04
//
// The tile is 8 x 6: a column of 8 doubles is two ymm registers, so the tile
// of C takes 2 * 6 = 12 of the 16 ymm registers, two more hold A and one a
// broadcast value of B. Per p: 2 loads and 6 broadcasts feed 12 FMAs, and 12
// independent accumulators cover the FMA latency (2 units x 4 cycles = 8).
#include "lab/todo.hpp"
#include "microkernel.hpp"

#if defined(__x86_64__) || defined(_M_X64)
#include <immintrin.h>

namespace {

constexpr int kMr = 8, kNr = 6;
static_assert(kMr <= lab::step04::kMaxMr && kNr <= lab::step04::kMaxNr,
              "edge tiles need a buffer of kMaxMr x kMaxNr");

__attribute__((target("avx2,fma"))) void kernel(int64_t kc, const double* a, const double* b, double beta,
                                                double* c, int64_t ldc) {
  // TODO: 12 ymm accumulators; per p: 2 loads of A, 6 broadcasts of B, 12 FMAs
  LAB_TODO("step04 AVX2 micro-kernel: 8 x 6 tile in 12 ymm registers");
}

}  // namespace

lab::step04::MicroKernel lab::step04::microkernel_avx2() { return {Isa::avx2, kMr, kNr, &kernel}; }

#else

lab::step04::MicroKernel lab::step04::microkernel_avx2() { return {Isa::avx2, 8, 6, nullptr}; }

#endif
