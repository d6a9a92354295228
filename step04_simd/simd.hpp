// step04_simd — the BLIS/GotoBLAS structure: five loops around a SIMD micro-kernel.
#pragma once

#include <cstdint>
#include <string>

#include "lab/machine.hpp"
#include "lab/matrix.hpp"
#include "lab/registry.hpp"

namespace lab::step04 {
inline namespace LAB_IMPL_NS {

/// The instruction sets a micro-kernel is written for: AVX2 and AVX-512 on
/// x86-64, NEON (Advanced SIMD) on 64-bit Arm. `generic` is plain C++ that the
/// compiler vectorizes as well as it can; it runs everywhere.
enum class Isa { generic, avx2, avx512, neon };
/// Every one, in the order they are tried and listed: the widest first, generic last.
inline constexpr Isa kIsas[] = {Isa::avx512, Isa::avx2, Isa::neon, Isa::generic};
/// The SIMD ones: those a CPU (or a build for another architecture) may lack.
inline constexpr Isa kSimdIsas[] = {Isa::avx512, Isa::avx2, Isa::neon};
/// Those whose kernels a build for this architecture has (the others' are not
/// compiled in: microkernel(isa).fn is nullptr); the tests run these.
#if defined(__x86_64__) || defined(_M_X64)
inline constexpr Isa kBuiltIsas[] = {Isa::avx512, Isa::avx2, Isa::generic};
#elif defined(__aarch64__)
inline constexpr Isa kBuiltIsas[] = {Isa::neon, Isa::generic};
#else
inline constexpr Isa kBuiltIsas[] = {Isa::generic};
#endif

const char* isa_name(Isa isa);  ///< "generic", "avx2", "avx512", "neon"
/// True when this CPU runs the kernel (checked at run time, whatever the compiler flags).
bool isa_supported(Isa isa);

/// The kernel dgemm uses, and why. Decided once per process, on first use:
/// LAB_STEP04_KERNEL=avx512|avx2|neon|generic in the environment wins; otherwise each
/// kernel this CPU runs is timed for a few milliseconds on packed panels in L1
/// (the work dgemm spends its time in) and the fastest is kept, the widest where
/// the widest is within 3 % of it (see the handout: a CPU may run 512-bit FMAs
/// at half the rate, and then AVX-512 buys nothing).
struct KernelChoice {
  Isa isa;
  std::string why;  ///< e.g. "measured avx512 112.1, avx2 60.3, generic 66.0 GFLOP/s on one core"
};
/// Throws std::invalid_argument when LAB_STEP04_KERNEL names a kernel this CPU cannot run.
const KernelChoice& kernel_choice();
/// kernel_choice().isa
Isa best_isa();

/// Cache blocks of the five loops: a kc x nc panel of B and an mc x kc block of A
/// are packed per pass. The micro-kernel shape (MR x NR) belongs to the Isa.
struct Blocking {
  int64_t mc, nc, kc;  ///< the order of --tile mc,nc,kc (as in step03)
};
/// The blocks for the kernel of `isa` on caches of these sizes (the handout
/// derives them): the kc x NR micro-panel of B fills half of L1d, the mc x kc
/// block of A half of L2, the kc x nc panel of B half of L3 (nc at most 4096).
Blocking blocking_for(Isa isa, const CacheInfo& caches);
/// The deeper blocks for where each pass of kc streams C from memory: kc twice
/// as deep (the micro-panel of B in all of L1d), mc from 7/8 of L2.
Blocking deep_blocking_for(Isa isa, const CacheInfo& caches);
/// blocking_for(isa, lab::cache_info()): the sizes this machine reports.
Blocking default_blocking(Isa isa);
/// The blocks an m x n x k product on `threads` threads (threads_for's count)
/// runs with: blocking_for's, unless the layout they give (layout_for) sweeps
/// more C per pass of kc (c_per_pass) than half of L3 holds; then
/// deep_blocking_for's.
Blocking blocking_for_call(Isa isa, const CacheInfo& caches, int threads, int64_t m, int64_t n, int64_t k);
/// blocking_for_call on this machine's caches, for a product that gets
/// threads_for(m, n, k, available) threads.
Blocking default_blocking(Isa isa, int available, int64_t m, int64_t n, int64_t k);
/// The same for a call made from here (one thread inside a parallel region,
/// else omp_get_max_threads()): what dgemm_isa runs with.
Blocking default_blocking(Isa isa, int64_t m, int64_t n, int64_t k);
/// Both sets of defaults, for a banner: "mc 448, nc 4088, kc 144; where a pass
/// of kc sweeps over 16 MiB of C: mc 384, nc 4088, kc 288".
std::string describe_default_blocking(Isa isa);

/// C <- alpha * A * B + beta * C (column-major, BLAS "NN") with the kernel of `isa`
/// and the given blocks (any sizes >= 1; they are rounded up to the kernel's MR / NR).
/// Threads: OpenMP (OMP_NUM_THREADS, omp_set_num_threads); one thread when called
/// from inside a parallel region. Throws std::invalid_argument when the CPU cannot
/// run `isa` or a block size is < 1.
void dgemm_with(double alpha, ConstMatView A, ConstMatView B, double beta, MatView C, Isa isa,
                Blocking blocking);

/// dgemm_with(isa, default_blocking(isa, m, n, k)); a small product
/// (up to 160 x 160 x 160, when it gets one thread) takes the short path
/// instead: no packing, no blocks (small.cpp). Throws std::invalid_argument
/// as dgemm_with does.
void dgemm_isa(double alpha, ConstMatView A, ConstMatView B, double beta, MatView C, Isa isa);

/// dgemm_isa(best_isa()): the product with the kernel chosen for this CPU.
void dgemm(double alpha, ConstMatView A, ConstMatView B, double beta, MatView C);

}  // namespace LAB_IMPL_NS
}  // namespace lab::step04
