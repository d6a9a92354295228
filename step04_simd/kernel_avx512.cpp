// step04_simd — TODO for the student: the AVX-512 micro-kernel.
//
// What to do: fill in the marked place below (the contract is in
// step04_simd/microkernel.hpp, the register budget in the handout).
// Test:   ./lab test step04
//
// The tile is 16 x 14: a column of 16 doubles is two zmm registers, so the
// tile of C takes 2 * 14 = 28 of the 32 zmm registers; of the other four, two
// hold A and one a broadcast value of B. Each step of p loads 2 vectors of A
// and 14 values of B for 28 multiply-adds, which take 14 cycles on two FMA
// units: 16 loads in 14 cycles is within what the core can issue, and 28
// independent accumulators hide the 4-cycle FMA latency.
#include "lab/todo.hpp"
#include "microkernel.hpp"

#if defined(__x86_64__) || defined(_M_X64)
#include <immintrin.h>

namespace {

constexpr int kMr = 16, kNr = 14;
static_assert(kMr <= lab::step04::kMaxMr && kNr <= lab::step04::kMaxNr,
              "edge tiles need a buffer of kMaxMr x kMaxNr");

// The target attribute lets the compiler use AVX-512 here whatever the flags of
// the rest of the build; dispatch.cpp calls this only on a CPU that has it.
__attribute__((target("avx512f"))) void kernel(int64_t kc, const double* a, const double* b, double beta,
                                               double* c, int64_t ldc) {
  // TODO: 28 zmm accumulators; per p: 2 loads of A, 14 broadcasts of B, 28 FMAs
  LAB_TODO("step04 AVX-512 micro-kernel: 16 x 14 tile in 28 zmm registers");
}

}  // namespace

lab::step04::MicroKernel lab::step04::microkernel_avx512() { return {Isa::avx512, kMr, kNr, &kernel}; }

#else

lab::step04::MicroKernel lab::step04::microkernel_avx512() { return {Isa::avx512, 16, 14, nullptr}; }

#endif
