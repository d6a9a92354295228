// step09_semiring — given: step04's five loops, templated on the semiring.
// Nothing to do here; read it beside step04_simd/simd.cpp.
//
// What carried over unchanged: the argument rules, the packing (step04's own
// pack_a, pack_b and pack_buffers: a packed panel does not care what the
// kernel does with it), the cache blocks, the instruction-set dispatch, the
// thread split. What changed: the micro-kernel (semiring_kernel.hpp) and the
// three places where step04 wrote "beta": the first slice of k stores or folds
// into C depending on `accumulate` (later slices always fold), edge tiles fold
// with S::add, and k == 0 gives the zero instead of beta * C.
#include <omp.h>

#include <algorithm>
#include <stdexcept>
#include <string>
#include <utility>

#include "lab/first_exception.hpp"
#include "lab/gemm_args.hpp"
#include "microkernel.hpp"  // step04: pack_a, pack_b
#include "semiring_kernel.hpp"

namespace {

using lab::MatView;
using lab::step09::MicroKernel;

int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }
int64_t round_up(int64_t a, int64_t b) { return ceil_div(a, b) * b; }

// How the work is cut: as in step04 (its make_plan explains each choice).
// kc and nc are the blocks evened out over the extent (no thin last block);
// the IC loop is handed out in blocks of mc rows, at least as many as threads
// where C has the rows; when it has fewer MR-row panels than threads, each IC
// block is cut into jr_parts pieces of the JR loop as well.
struct Cut {
  int threads;
  int64_t mc, nc, kc, ic_blocks, jr_parts;
};

Cut cut_for(const MicroKernel& uk, lab::step04::Blocking blk, int64_t m, int64_t n, int64_t k) {
  Cut c{};
  c.threads = omp_in_parallel() ? 1 : lab::step04::threads_for(m, n, k, omp_get_max_threads());
  c.kc = ceil_div(k, ceil_div(k, blk.kc));
  const int64_t nc_max = round_up(blk.nc, uk.nr);
  c.nc = round_up(ceil_div(n, ceil_div(n, nc_max)), uk.nr);
  const int64_t wanted = round_up(ceil_div(m, round_up(blk.mc, uk.mr)), c.threads);
  c.mc = round_up(ceil_div(m, std::min(ceil_div(m, uk.mr), wanted)), uk.mr);
  c.ic_blocks = ceil_div(m, c.mc);
  c.jr_parts = std::max<int64_t>(1, c.threads / c.ic_blocks);
  return c;
}

// One MR x NR tile of C, or less at the bottom and right edges: there the
// kernel fills a whole tile in a buffer and only the part inside C is folded
// in (the packing's padding only reaches rows and columns that are dropped).
template <class S>
void run_tile(const MicroKernel& uk, int64_t kb, const double* a, const double* b, bool accumulate, MatView C) {
  if (C.rows == uk.mr && C.cols == uk.nr) {
    uk.fn(kb, a, b, accumulate, C.data, C.ld);
    return;
  }
  alignas(64) double tile[lab::step09::kMaxMr * lab::step09::kMaxNr];
  uk.fn(kb, a, b, false, tile, uk.mr);
  for (int64_t j = 0; j < C.cols; ++j) {
    for (int64_t i = 0; i < C.rows; ++i) {
      const double t = tile[i + j * uk.mr];
      C(i, j) = accumulate ? S::add(C(i, j), t) : t;
    }
  }
}

// The loops, run by every thread of the team (the `omp for` loops share the
// work out; outside a parallel region they run whole on the calling thread).
template <class S>
void five_loops(const MicroKernel& uk, const Cut& cut, lab::ConstMatView A, lab::ConstMatView B, bool accumulate,
                MatView C, double* b_buf, double* a_buf, lab::FirstException& error) {
  const int64_t m = C.rows, n = C.cols, k = A.cols;
  const int64_t mr = uk.mr, nr = uk.nr, mc = cut.mc, nc = cut.nc, kc = cut.kc;
  for (int64_t jc = 0; jc < n; jc += nc) {  // loop 5 (JC): nc columns of C and of B
    const int64_t nb = std::min(nc, n - jc);
    const int64_t panels = ceil_div(nb, nr);
    for (int64_t pc = 0; pc < k; pc += kc) {  // loop 4 (PC): a kc slice of k; pack B(pc.., jc..)
      const int64_t kb = std::min(kc, k - pc);
#pragma omp for schedule(dynamic, 4)
      for (int64_t q = 0; q < panels; ++q) {
        error.run([&] {
          lab::step04::pack_b(B.block(pc, jc + q * nr, kb, std::min(nr, nb - q * nr)), int(nr), b_buf + q * nr * kb);
        });
      }
      // The first slice of k stores or folds as the caller asked; later ones fold.
      const bool fold = pc > 0 || accumulate;
#pragma omp for schedule(dynamic, 1)
      for (int64_t item = 0; item < cut.ic_blocks * cut.jr_parts; ++item) {  // loop 3 (IC): mc rows
        const int64_t ic = item / cut.jr_parts * mc, mb = std::min(mc, m - ic);
        const int64_t per = ceil_div(panels, cut.jr_parts), part = item % cut.jr_parts;
        const int64_t q0 = std::min(panels, part * per), q1 = std::min(panels, q0 + per);
        error.run([&] {
          // alpha = 1: step04's packing copies A exactly (1 * x == x for every double, inf and NaN too)
          lab::step04::pack_a(1.0, A.block(ic, pc, mb, kb), int(mr), a_buf);
          for (int64_t q = q0; q < q1; ++q) {          // loop 2 (JR): one kb x NR panel of B
            for (int64_t ir = 0; ir < mb; ir += mr) {  // loop 1 (IR): one MR x kb panel of A
              run_tile<S>(uk, kb, a_buf + ir * kb, b_buf + q * nr * kb, fold,
                          C.block(ic + ir, jc + q * nr, std::min(mr, mb - ir), std::min(nr, nb - q * nr)));
            }
          }
        });
      }
    }
  }
}

// As step04's dgemm_with: step04's packing buffers (had outside the parallel
// region, where a failure can be reported; the calling thread keeps them), and
// a team only where more than one thread works.
template <class S>
void run_loops(const MicroKernel& uk, const Cut& cut, lab::ConstMatView A, lab::ConstMatView B, bool accumulate,
               MatView C) {
  const lab::step04::PackBuffers buffers = lab::step04::pack_buffers(cut.kc * cut.nc, cut.mc * cut.kc, cut.threads);
  lab::FirstException error;
  if (cut.threads == 1 && !omp_in_parallel()) {
    five_loops<S>(uk, cut, A, B, accumulate, C, buffers.b, buffers.a_block(0), error);
  } else {
#pragma omp parallel num_threads(cut.threads)
    five_loops<S>(uk, cut, A, B, accumulate, C, buffers.b, buffers.a_block(omp_get_thread_num()), error);
  }
  error.rethrow();
}

}  // namespace

namespace lab::step09 {
inline namespace LAB_IMPL_NS {

template <class S>
void gemm_with(View<const typename S::value_type> A, View<const typename S::value_type> B,
               View<typename S::value_type> C, bool accumulate, step04::Isa isa, step04::Blocking blk) {
  check_gemm_args(A, B, C);
  if (!step04::isa_supported(isa)) {
    throw std::invalid_argument(std::string("isa: this CPU (or build) cannot run the ") + step04::isa_name(isa) +
                                " micro-kernel");
  }
  for (auto [value, name] :
       {std::pair{blk.mc, "blocking.mc"}, {blk.nc, "blocking.nc"}, {blk.kc, "blocking.kc"}}) {
    if (value < 1)
      throw std::invalid_argument(std::string(name) + " must be >= 1, got " + std::to_string(value));
  }
  if (C.rows == 0 || C.cols == 0) return;
  if (A.cols == 0) {  // no terms: the zero, folded into C when accumulating
    for (int64_t j = 0; j < C.cols; ++j)
      for (int64_t i = 0; i < C.rows; ++i) C(i, j) = accumulate ? S::add(C(i, j), S::zero()) : S::zero();
    return;
  }
  const MicroKernel uk = microkernel<S>(isa);
  run_loops<S>(uk, cut_for(uk, blk, C.rows, C.cols, A.cols), A, B, accumulate, C);
}

template <class S>
void gemm(View<const typename S::value_type> A, View<const typename S::value_type> B, View<typename S::value_type> C,
          bool accumulate) {
  const step04::Isa isa = step04::best_isa();
  gemm_with<S>(A, B, C, accumulate, isa, step04::default_blocking(isa));
}

template void gemm<PlusTimes>(ConstMatView, ConstMatView, MatView, bool);
template void gemm<MinPlus>(ConstMatView, ConstMatView, MatView, bool);
template void gemm<MaxPlus>(ConstMatView, ConstMatView, MatView, bool);
template void gemm_with<PlusTimes>(ConstMatView, ConstMatView, MatView, bool, step04::Isa, step04::Blocking);
template void gemm_with<MinPlus>(ConstMatView, ConstMatView, MatView, bool, step04::Isa, step04::Blocking);
template void gemm_with<MaxPlus>(ConstMatView, ConstMatView, MatView, bool, step04::Isa, step04::Blocking);

}  // namespace LAB_IMPL_NS
}  // namespace lab::step09
