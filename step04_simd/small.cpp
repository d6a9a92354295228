// step04_simd — the short path for small products. Nothing to do here.
//
// Below a few hundred thousand multiply-adds, packing A and B costs as much as
// the product: a 16 x 16 x 16 call packs 512 values for 4096 multiply-adds. So
// dgemm (not dgemm_with, which always runs the five loops) sends a small
// product here: tiles of C computed straight from A and B, with no copies, no
// blocks and no threads (it has too little work to share), the way vendor BLAS libraries treat small matrices
// (OpenBLAS's "small matrix" kernels). The tile is kept in registers as in the
// micro-kernel; the rows past the edge are masked, the columns past it are
// simply a narrower tile. Plain C++ has no such path: without SIMD, the five
// loops run.
#include <omp.h>

#include <algorithm>
#include <array>
#include <utility>

#include "microkernel.hpp"

#if defined(__x86_64__) || defined(_M_X64)
#include <immintrin.h>

#include "lab/isa_target.hpp"

LAB_ISA_BEGIN_AVX512
namespace {
namespace small_avx512 {

constexpr int kNr = 12;  // 2 x 12 = 24 of the 32 zmm registers hold the tile

struct V {
  using Reg = __m512d;
  using Mask = __mmask8;
  static constexpr int kWidth = 8;
  static Mask mask(int rows) { return rows >= 8 ? Mask(0xff) : rows <= 0 ? Mask(0) : Mask((1u << rows) - 1); }
  static Reg zero() { return _mm512_setzero_pd(); }
  static Reg load(const double* p, Mask m) { return _mm512_maskz_loadu_pd(m, p); }
  static void store(double* p, Reg v, Mask m) { _mm512_mask_storeu_pd(p, m, v); }
  static Reg broadcast(const double* p) { return _mm512_set1_pd(*p); }
  static Reg fma(Reg a, Reg b, Reg c) { return _mm512_fmadd_pd(a, b, c); }
  static Reg mul(Reg a, Reg b) { return _mm512_mul_pd(a, b); }
};

#include "small_tiles.inc"

}  // namespace small_avx512
}  // namespace
LAB_ISA_END

LAB_ISA_BEGIN_AVX2
namespace {
namespace small_avx2 {

constexpr int kNr = 6;  // 2 x 6 = 12 of the 16 ymm registers hold the tile

struct V {
  using Reg = __m256d;
  using Mask = __m256i;
  static constexpr int kWidth = 4;
  static Mask mask(int rows) {
    return _mm256_set_epi64x(rows > 3 ? -1 : 0, rows > 2 ? -1 : 0, rows > 1 ? -1 : 0, rows > 0 ? -1 : 0);
  }
  static Reg zero() { return _mm256_setzero_pd(); }
  static Reg load(const double* p, Mask m) { return _mm256_maskload_pd(p, m); }
  static void store(double* p, Reg v, Mask m) { _mm256_maskstore_pd(p, m, v); }
  static Reg broadcast(const double* p) { return _mm256_broadcast_sd(p); }
  static Reg fma(Reg a, Reg b, Reg c) { return _mm256_fmadd_pd(a, b, c); }
  static Reg mul(Reg a, Reg b) { return _mm256_mul_pd(a, b); }
};

#include "small_tiles.inc"

}  // namespace small_avx2
}  // namespace
LAB_ISA_END
#endif

bool lab::step04::small_product(double alpha, ConstMatView A, ConstMatView B, double beta, MatView C, Isa isa) {
  // Up to 160 x 160 x 160 on one thread. Measured on an AVX-512 Zen 5, one
  // thread: 1.1-1.2x the five loops from n = 96 to 160 and even at 192 (A
  // leaves L1 and is read again for every column of tiles, from L2); 3-5x at
  // n = 32 to 64. A product that threads_for gives several threads runs the
  // five loops with them instead.
  constexpr double kMaxWork = 160.0 * 160 * 160;
  if (!isa_supported(isa)) return false;  // dgemm_with then says why
  if (double(C.rows) * double(C.cols) * double(A.cols) > kMaxWork) return false;
  if (!omp_in_parallel() && threads_for(C.rows, C.cols, A.cols, omp_get_max_threads()) > 1) return false;
#if defined(__x86_64__) || defined(_M_X64)
  if (isa == Isa::avx512) {
    small_avx512::product(alpha, A, B, beta, C);
    return true;
  }
  if (isa == Isa::avx2) {
    small_avx2::product(alpha, A, B, beta, C);
    return true;
  }
#endif
  (void)alpha, (void)A, (void)B, (void)beta, (void)C, (void)isa;
  return false;
}
