// step04_simd — TODO for the student on 64-bit Arm: the NEON micro-kernel.
//
// What to do: fill in the marked place below (the contract is in
// step04_simd/microkernel.hpp). Its test runs on any 64-bit Arm CPU (Grace,
// Graviton, Ampere, Apple silicon under Linux); a build for x86-64 leaves it
// out, and there the AVX2 and AVX-512 kernels are yours instead.
// Test:   ./lab test step04
//
// The tile is 8 x 6, as the AVX2 kernel's: a NEON register (float64x2_t)
// holds 2 doubles, so a column of 8 is four registers and the tile of C takes
// 4 * 6 = 24 of the 32 vector registers; four more hold A and three hold the
// 6 values of B. Arm's multiply-add "by element", vfmaq_laneq_f64(acc, a, v,
// lane), multiplies by one lane of a register: B needs no broadcast, so a step
// of p is 4 + 3 loads for 24 multiply-adds. 24 independent accumulators cover
// the FMA latency (4 cycles) times the vector pipes of a big core (2 to 4).
#include "lab/todo.hpp"
#include "microkernel.hpp"

#if defined(__aarch64__)
#include <arm_neon.h>

namespace {

constexpr int kMr = 8, kNr = 6;
static_assert(kMr <= lab::step04::kMaxMr && kNr <= lab::step04::kMaxNr,
              "edge tiles need a buffer of kMaxMr x kMaxNr");

void kernel(int64_t kc, const double* a, const double* b, double beta, double* c, int64_t ldc) {
  // TODO: 24 accumulators; per p: 4 loads of A, 3 of B, 24 vfmaq_laneq_f64
  //       vfmaq_laneq_f64(acc, a, v, lane) is acc + a * v[lane], and lane must be a literal (0 or 1):
  //       write the 6 columns out. Zeros: vdupq_n_f64(0.0); acc + beta * C: vfmaq_n_f64(acc, c, beta).
  //       Loops over the tile: #pragma GCC unroll, else the tile lives on the stack (objdump -d shows it).
  LAB_TODO("step04 NEON micro-kernel: 8 x 6 tile in 24 registers");
}

}  // namespace

lab::step04::MicroKernel lab::step04::microkernel_neon() { return {Isa::neon, kMr, kNr, &kernel}; }

#else

lab::step04::MicroKernel lab::step04::microkernel_neon() { return {Isa::neon, 8, 6, nullptr}; }

#endif
