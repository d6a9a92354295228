// step04_simd — the BLIS/GotoBLAS structure: five loops around a SIMD micro-kernel.
#pragma once

#include <cstdint>

#include "lab/matrix.hpp"
#include "lab/registry.hpp"

namespace lab::step04 {
inline namespace LAB_IMPL_NS {

/// The instruction sets a micro-kernel is written for. `generic` is plain C++
/// that the compiler vectorizes as well as it can; it runs everywhere.
enum class Isa { generic, avx2, avx512 };

const char* isa_name(Isa isa);  ///< "generic", "avx2", "avx512"
/// True when this CPU runs the kernel (checked at run time, whatever the compiler flags).
bool isa_supported(Isa isa);
/// The widest kernel this CPU runs; dgemm uses it.
Isa best_isa();

/// Cache blocks of the five loops: a kc x nc panel of B and an mc x kc block of A
/// are packed per pass. The micro-kernel shape (MR x NR) belongs to the Isa.
struct Blocking {
  int64_t mc, nc, kc;  ///< the order of --tile mc,nc,kc (as in step03)
};
/// Block sizes that suit the kernel of `isa` (the handout derives them).
Blocking default_blocking(Isa isa);

/// C <- alpha * A * B + beta * C (column-major, BLAS "NN") with the kernel of `isa`
/// and the given blocks (any sizes >= 1; they are rounded up to the kernel's MR / NR).
/// Threads: OpenMP (OMP_NUM_THREADS, omp_set_num_threads); one thread when called
/// from inside a parallel region. Throws std::invalid_argument when the CPU cannot
/// run `isa` or a block size is < 1.
void dgemm_with(double alpha, ConstMatView A, ConstMatView B, double beta, MatView C, Isa isa,
                Blocking blocking);

/// dgemm_with(best_isa(), default_blocking(best_isa())).
void dgemm(double alpha, ConstMatView A, ConstMatView B, double beta, MatView C);

}  // namespace LAB_IMPL_NS
}  // namespace lab::step04
