// step03_tiling — TODO for the student: the 2 x 2 dot-product kernel and the
// three block loops around it.
//
// What to do: fill in the two marked places below.
//   1. dot_2x2: four dot products at once, each loaded value used twice.
//   2. tiled_loops: loop over nc blocks of columns, kc slices of k and mc
//      blocks of rows, and call block() (given: pairs of rows and columns).
// The transposed, alpha-scaled copy of A is made as in step02 (given here).
// Read the handout (step03_tiling/README.md) first: it derives the tile sizes.
// Test:   ./lab test step03
// Time:   build/student/bin/step03_tiling --n 1024 --threads 1 --impl student,baseline [--tile mc,nc,kc]
#include "tiling.hpp"

#include <omp.h>

#include <algorithm>
#include <stdexcept>
#include <string>
#include <vector>

#include "lab/first_exception.hpp"
#include "lab/gemm_args.hpp"
#include "lab/machine.hpp"
#include "lab/todo.hpp"

namespace {

// At <- alpha * A^T, as in step02. Repeated here (it is three lines) so that
// this step's tests depend on nothing but this step's code.
void transpose_scaled(double alpha, lab::ConstMatView A, lab::MatView At) {
  for (int64_t p = 0; p < A.cols; ++p) {
    for (int64_t i = 0; i < A.rows; ++i) At(p, i) = alpha * A(i, p);
  }
}

// The first k-slice of a block scales C by beta (beta == 0: C is not read, it
// may hold NaN); every later slice adds to what the earlier ones left in C.
inline void accumulate(double& c, double sum, double beta) { c = beta == 0.0 ? sum : sum + beta * c; }

// One dot product of length kc: the remainders (an odd last row or column).
inline double dot_1x1(const double* a, const double* b, int64_t kc) {
  double sum = 0.0;
#pragma omp simd reduction(+ : sum)
  for (int64_t p = 0; p < kc; ++p) sum += a[p] * b[p];
  return sum;
}

// C(i..i+1, j..j+1) gets the four dot products of columns a0, a1 of the
// transposed A with columns b0, b1 of B. c0 and c1 point at C(i, j) and
// C(i, j+1).
void dot_2x2(const double* a0, const double* a1, const double* b0, const double* b1, int64_t kc, double* c0,
             double* c1, double beta) {
  // LAB:SOLUTION-BEGIN  four sums in one `omp simd reduction` loop over p; then accumulate() each into C
  // Per step of p: four loads feed four multiply-adds, where four separate
  // dot products would need eight loads. The four sums are independent, so
  // the multiply-adds of one step do not wait for each other either.
  double s00 = 0.0, s10 = 0.0, s01 = 0.0, s11 = 0.0;
#pragma omp simd reduction(+ : s00, s10, s01, s11)
  for (int64_t p = 0; p < kc; ++p) {
    const double x0 = a0[p], x1 = a1[p], y0 = b0[p], y1 = b1[p];
    s00 += x0 * y0;
    s10 += x1 * y0;
    s01 += x0 * y1;
    s11 += x1 * y1;
  }
  accumulate(c0[0], s00, beta);
  accumulate(c0[1], s10, beta);
  accumulate(c1[0], s01, beta);
  accumulate(c1[1], s11, beta);
  // LAB:SKELETON
  LAB_TODO("step03 dot_2x2: four dot products at once, then accumulate() them into C");
  // LAB:SOLUTION-END
}

// One mc x nc block of C, one kc slice of k: At holds columns i0.. of the
// transposed A (rows p0.. of them), B the matching rows p0.. of B.
// (maybe_unused: the skeleton calls it only once the student's loops exist.)
[[maybe_unused]] void block(lab::ConstMatView At, lab::ConstMatView B, lab::MatView C, int64_t i0, int64_t j0,
                            int64_t p0, int64_t mb, int64_t nb, int64_t kb, double beta) {
  const int64_t i_end = i0 + mb, j_end = j0 + nb;
  const int64_t i_pairs_end = i0 + (mb & ~int64_t{1}), j_pairs_end = j0 + (nb & ~int64_t{1});
  for (int64_t j = j0; j < j_pairs_end; j += 2) {
    const double* b0 = &B(p0, j);
    const double* b1 = &B(p0, j + 1);
    for (int64_t i = i0; i < i_pairs_end; i += 2) {
      dot_2x2(&At(p0, i), &At(p0, i + 1), b0, b1, kb, &C(i, j), &C(i, j + 1), beta);
    }
    if (i_pairs_end < i_end) {  // an odd last row
      const double* a = &At(p0, i_pairs_end);
      accumulate(C(i_pairs_end, j), dot_1x1(a, b0, kb), beta);
      accumulate(C(i_pairs_end, j + 1), dot_1x1(a, b1, kb), beta);
    }
  }
  if (j_pairs_end < j_end) {  // an odd last column: mb dot products, against mb * nb in the pairs
    const double* b = &B(p0, j_pairs_end);
    for (int64_t i = i0; i < i_end; ++i) accumulate(C(i, j_pairs_end), dot_1x1(&At(p0, i), b, kb), beta);
  }
}

// C <- At^T * B + beta * C, one thread, block by block.
void tiled_loops(lab::ConstMatView At, lab::ConstMatView B, lab::MatView C, lab::step03::Tiles tiles,
                 double beta) {
  const int64_t m = C.rows, n = C.cols, k = B.rows;
  // LAB:SOLUTION-BEGIN  jc over n by nc, pc over k by kc, ic over m by mc: block() (beta only if pc == 0)
  // The order of the block loops decides what stays in cache: for one kc slice
  // of B's columns jc.., every mc block of At's columns is swept once; inside
  // block() a pair of B's columns stays in L1 while the rows go by, and the
  // kc x mc block of At stays in L2 for the next pair of columns.
  for (int64_t jc = 0; jc < n; jc += tiles.nc) {
    const int64_t nb = std::min(tiles.nc, n - jc);
    for (int64_t pc = 0; pc < k; pc += tiles.kc) {
      const int64_t kb = std::min(tiles.kc, k - pc);
      const double beta_slice = pc == 0 ? beta : 1.0;
      for (int64_t ic = 0; ic < m; ic += tiles.mc) {
        block(At, B, C, ic, jc, pc, std::min(tiles.mc, m - ic), nb, kb, beta_slice);
      }
    }
  }
  // LAB:SKELETON
  (void)m, (void)n, (void)k;
  LAB_TODO("step03 tiled_loops: the jc, pc, ic block loops around block()");
  // LAB:SOLUTION-END
}

int64_t round_down_even(int64_t x) { return std::max<int64_t>(2, x & ~int64_t{1}); }

}  // namespace

lab::step03::Tiles lab::step03::default_tiles() {
  const CacheInfo cache = cache_info();
  constexpr int64_t d = sizeof(double);
  // L1: the two columns of At and the two of B that dot_2x2 streams, 4 * kc
  // doubles, take at most half of L1 (the other half for C and whatever else).
  const int64_t kc = std::max<int64_t>(64, cache.l1d / 2 / (4 * d));
  // L2: the kc x mc block of At is read again for every pair of columns of B.
  const int64_t mc = round_down_even(cache.l2 / 2 / (kc * d));
  // L3: the kc x nc block of B is read again for every mc block of rows.
  const int64_t nc = round_down_even(cache.l3 / 2 / (kc * d));
  return {mc, nc, kc};
}

lab::step03::Tiles lab::step03::tiles_with_overrides(Tiles defaults, const std::vector<int64_t>& tile) {
  if (tile.size() > 3) throw std::invalid_argument("--tile takes at most three sizes: mc,nc,kc");
  int64_t* fields[] = {&defaults.mc, &defaults.nc, &defaults.kc};
  for (size_t i = 0; i < tile.size(); ++i) *fields[i] = tile[i];
  return defaults;
}

void lab::step03::dgemm_tiled(double alpha, ConstMatView A, ConstMatView B, double beta, MatView C,
                              Tiles tiles) {
  check_gemm_args(A, B, C);
  for (auto [value, name] :
       {std::pair{tiles.mc, "tiles.mc"}, {tiles.nc, "tiles.nc"}, {tiles.kc, "tiles.kc"}}) {
    if (value < 1)
      throw std::invalid_argument(std::string(name) + " must be >= 1, got " + std::to_string(value));
  }
  if (gemm_quick_return(alpha, A, B, beta, C)) return;
  const int64_t m = C.rows, n = C.cols, k = A.cols;

  // The transposed copy of A lives as long as the calling thread and only
  // grows: allocating it on every call would cost more than a small product.
  thread_local std::vector<double> at_buffer;
  if (at_buffer.size() < static_cast<size_t>(k * m)) at_buffer.resize(static_cast<size_t>(k * m));
  const MatView At{at_buffer.data(), k, m, k};
  transpose_scaled(alpha, A, At);

  // Threads split the columns of C into shares of whole pairs, and each runs
  // the tiled loops on its share: no two threads write the same element, and
  // they never wait for each other. A small product runs on the calling thread
  // alone: starting a team costs microseconds (a system call on some machines),
  // more than the product. One thread joins per 2 MFLOP.
  constexpr double kFlopsPerThread = 2e6;
  const int threads = static_cast<int>(
      std::clamp(2.0 * double(m) * double(n) * double(k) / kFlopsPerThread, 1.0, double(omp_get_max_threads())));
  if (threads == 1) {
    tiled_loops(At, B, C, tiles, beta);
    return;
  }
  FirstException error;
#pragma omp parallel num_threads(threads)
  {
    const int64_t team = omp_get_num_threads(), pairs = (n + 1) / 2;
    const int64_t per_thread = (pairs + team - 1) / team;
    const int64_t j0 = std::min(n, 2 * per_thread * omp_get_thread_num());
    const int64_t j1 = std::min(n, j0 + 2 * per_thread);
    if (j0 < j1) {
      error.run(
          [&] { tiled_loops(At, B.block(0, j0, k, j1 - j0), C.block(0, j0, m, j1 - j0), tiles, beta); });
    }
  }
  error.rethrow();
}

void lab::step03::dgemm(double alpha, ConstMatView A, ConstMatView B, double beta, MatView C) {
  dgemm_tiled(alpha, A, B, beta, C, default_tiles());
}
