// step09_semiring — given: step04's five loops, templated on the semiring.
// Nothing to do here; read it beside step04_simd/simd.cpp.
//
// What carried over unchanged: the argument rules, the packing (step04's own
// pack_a, pack_b and pack_buffers: a packed panel does not care what the
// kernel does with it), the cache blocks, the instruction-set dispatch, the
// ways of the threads (step04's ways.hpp). What changed: the micro-kernel (semiring_kernel.hpp) and the
// three places where step04 wrote "beta": the first slice of k stores or folds
// into C depending on `accumulate` (later slices always fold), edge tiles fold
// with S::add, and k == 0 gives the zero instead of beta * C.
#include <omp.h>

#include <algorithm>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "lab/first_exception.hpp"
#include "lab/gemm_args.hpp"
#include "lab/todo.hpp"
#include "microkernel.hpp"  // step04: pack_a, pack_b
#include "semiring_kernel.hpp"
#include "ways.hpp"  // step04: layout_for, Team, Seat

namespace {

using lab::MatView;
using lab::step09::MicroKernel;

int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }

// How the work is cut: as in step04 (its make_plan): the threads threads_for
// gives (one inside a parallel region), in the ways and blocks layout_for picks.
lab::step04::Layout layout_for(const MicroKernel& uk, lab::step04::Blocking blk, int64_t m, int64_t n, int64_t k) {
  return lab::step04::layout_for_call(omp_in_parallel() ? 1 : omp_get_max_threads(), m, n, k, uk.mr, uk.nr, blk);
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

// The loops, run by every thread of the team on its seat (step04's ways.hpp):
// its group's columns, its ic way's rows, its part of the packing and of the
// JR loop, and the waits of the threads that share a packed panel.
template <class S>
void five_loops(const MicroKernel& uk, const lab::step04::Layout& layout, const lab::step04::Seat& me,
                lab::ConstMatView A, lab::ConstMatView B, bool accumulate, MatView C, lab::FirstException& error) {
  const int64_t k = A.cols;
  const int64_t mr = uk.mr, nr = uk.nr, mc = layout.mc, nc = layout.nc, kc = layout.kc;
  const auto [col0, col1] = me.cols;
  const auto [row0, row1] = me.rows;
  for (int64_t jc = col0; jc < col1; jc += nc) {  // loop 5 (JC): nc of this group's columns of C and B
    const int64_t nb = std::min(nc, col1 - jc);
    const int64_t panels = ceil_div(nb, nr);
    for (int64_t pc = 0; pc < k; pc += kc) {  // loop 4 (PC): a kc slice of k; the group packs B(pc.., jc..)
      const int64_t kb = std::min(kc, k - pc);
      const auto [b0, b1] = lab::step04::share(panels, me.in_group, me.group_size);
      if (b1 > b0) {
        // (bindings named in the capture: clang before 16 cannot capture them by [&] alone)
        error.run([&, b0 = b0, b1 = b1] {
          lab::step04::pack_b(B.block(pc, jc + b0 * nr, kb, std::min(nb, b1 * nr) - b0 * nr), int(nr),
                              me.b + b0 * nr * kb);
        });
      }
      me.group->wait();  // the B panel is complete before anyone reads it
      // The first slice of k stores or folds as the caller asked; later ones fold.
      const bool fold = pc > 0 || accumulate;
      for (int64_t ic = row0; ic < row1; ic += mc) {  // loop 3 (IC): mc of this way's rows; pack A
        const int64_t mb = std::min(mc, row1 - ic);
        const auto [a0, a1] = lab::step04::share(ceil_div(mb, mr), me.in_block, me.block_size);
        if (a1 > a0) {
          // alpha = 1: step04's packing copies A exactly (1 * x == x for every double, inf and NaN too)
          error.run([&, a0 = a0, a1 = a1] {
            lab::step04::pack_a(1.0, A.block(ic + a0 * mr, pc, std::min(mb, a1 * mr) - a0 * mr, kb), int(mr),
                                me.a + a0 * mr * kb);
          });
        }
        me.block->wait();  // the A block is complete
        const auto [q0, q1] = lab::step04::share(panels, me.in_block, me.block_size);
        error.run([&, q0 = q0, q1 = q1] {
          for (int64_t q = q0; q < q1; ++q) {          // loop 2 (JR): one kb x NR panel of B
            for (int64_t ir = 0; ir < mb; ir += mr) {  // loop 1 (IR): one MR x kb panel of A
              run_tile<S>(uk, kb, me.a + ir * kb, me.b + q * nr * kb, fold,
                          C.block(ic + ir, jc + q * nr, std::min(mr, mb - ir), std::min(nr, nb - q * nr)));
            }
          }
        });
        me.block->wait();  // everyone is done with the A block before it is packed over
      }
      me.group->wait();  // everyone is done with the B panel before the next pass packs over it
    }
  }
}

// As step04's dgemm_with: the seats and step04's packing buffers (had outside
// the parallel region, where a failure can be reported; the calling thread
// keeps the buffers), and a team only where more than one thread works.
template <class S>
void run_loops(const MicroKernel& uk, const lab::step04::Layout& layout, lab::ConstMatView A, lab::ConstMatView B,
               bool accumulate, MatView C) {
  const lab::step04::Team team(layout, uk.mr, uk.nr, C.rows, C.cols);
  lab::FirstException error;
  // Thread t's work: its seat, or each dealt block it takes (step04's ways.hpp).
  const auto work = [&](int t) {
    team.run(t, [&](const lab::step04::Seat& me) { five_loops<S>(uk, layout, me, A, B, accumulate, C, error); });
  };
  const int threads = layout.ways.threads();
  if (threads == 1) {
    work(0);
  } else {
#pragma omp parallel num_threads(threads)
    {
      if (omp_get_num_threads() == threads) {
        work(omp_get_thread_num());
      } else if (omp_get_thread_num() == 0) {  // fewer threads than asked: the calling thread does it all
        const lab::step04::Layout alone{{1, 1, 1}, layout.mc, layout.nc, layout.kc};
        const lab::step04::Team one(alone, uk.mr, uk.nr, C.rows, C.cols);
        error.run([&] { five_loops<S>(uk, alone, one.seat(0), A, B, accumulate, C, error); });
      }
    }
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
  run_loops<S>(uk, layout_for(uk, blk, C.rows, C.cols, A.cols), A, B, accumulate, C);
}

template <class S>
void gemm(View<const typename S::value_type> A, View<const typename S::value_type> B, View<typename S::value_type> C,
          bool accumulate) {
  const step04::Isa isa = step04::best_isa();
  gemm_with<S>(A, B, C, accumulate, isa, step04::default_blocking(isa, C.rows, C.cols, A.cols));
}

std::vector<Step04Todo> step04_kernels_todo() {
  std::vector<Step04Todo> out;
  for (step04::Isa isa : step04::kSimdIsas) {
    if (!step04::isa_supported(isa)) continue;  // (a CPU without it: step04 never picks it)
    const step04::MicroKernel uk = step04::microkernel(isa);
    // (room past the one step: a kernel may read ahead)
    alignas(64) double a[4 * step04::kMaxMr] = {}, b[4 * step04::kMaxNr] = {}, c[step04::kMaxMr * step04::kMaxNr];
    try {
      uk.fn(1, a, b, 0.0, c, uk.mr);  // one step of k: what step04's dispatch runs to time it
    } catch (const Todo& e) {
      out.push_back({isa, e.what()});
    }
  }
  return out;
}

template void gemm<PlusTimes>(ConstMatView, ConstMatView, MatView, bool);
template void gemm<MinPlus>(ConstMatView, ConstMatView, MatView, bool);
template void gemm<MaxPlus>(ConstMatView, ConstMatView, MatView, bool);
template void gemm_with<PlusTimes>(ConstMatView, ConstMatView, MatView, bool, step04::Isa, step04::Blocking);
template void gemm_with<MinPlus>(ConstMatView, ConstMatView, MatView, bool, step04::Isa, step04::Blocking);
template void gemm_with<MaxPlus>(ConstMatView, ConstMatView, MatView, bool, step04::Isa, step04::Blocking);

}  // namespace LAB_IMPL_NS
}  // namespace lab::step09
