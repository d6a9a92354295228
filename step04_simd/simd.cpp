// step04_simd — TODO for the student: the five loops around the micro-kernel.
//
// What to do: fill in the marked place in five_loops below: the JC, PC, IC,
// JR and IR loops, the packing calls and the waits of the threads that share
// a packed panel. The pieces it calls are in pack.cpp and kernel_<isa>.cpp
// (TODOs too); how the threads share the loops (ways.hpp: each thread's
// columns, rows, part of the packing and barriers), the block sizes and the
// edge tiles (run_tile) are done for you. Read the handout first.
// Test:   ./lab test step04
// Time:   build/student/bin/step04_simd --n 2048 --threads 1 --impl student,baseline
#include <omp.h>

#include <algorithm>
#include <stdexcept>
#include <string>
#include <utility>

#include "lab/first_exception.hpp"
#include "lab/gemm_args.hpp"
#include "lab/todo.hpp"
#include "microkernel.hpp"
#include "ways.hpp"

namespace {

using lab::step04::MicroKernel;
using lab::step04::pack_a;
using lab::step04::pack_b;

// (ceil_div and run_tile are maybe_unused: in the skeleton only the student's
// loops call them.)
[[maybe_unused]] int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }

// How the work is cut: the blocks and the ways of the threads (ways.hpp), for
// the threads this product gets: one for a small product (threads_for: a team
// costs more than it saves there), and one when called from inside a parallel
// region (this thread's share is the job).
struct Plan {
  MicroKernel uk;
  lab::step04::Layout layout;
};

Plan make_plan(const MicroKernel& uk, lab::step04::Blocking blk, int64_t m, int64_t n, int64_t k) {
  const int available = omp_in_parallel() ? 1 : omp_get_max_threads();
  return {uk, lab::step04::layout_for_call(available, m, n, k, uk.mr, uk.nr, blk)};
}

// One MR x NR tile of C (or less, at the bottom and right edges).
[[maybe_unused]] void run_tile(const MicroKernel& uk, int64_t kb, const double* a, const double* b,
                               double beta, lab::MatView C) {
  if (C.rows == uk.mr && C.cols == uk.nr) {
    uk.fn(kb, a, b, beta, C.data, C.ld);
    return;
  }
  // An edge tile: the kernel fills a whole tile in a buffer (the zeros of the
  // packing make its extra rows and columns zero) and only the part inside C is
  // copied out. At most one row and one column of tiles take this path.
  alignas(64) double tile[lab::step04::kMaxMr * lab::step04::kMaxNr];
  uk.fn(kb, a, b, 0.0, tile, uk.mr);
  for (int64_t j = 0; j < C.cols; ++j) {
    for (int64_t i = 0; i < C.rows; ++i) {
      const double t = tile[i + j * uk.mr];
      C(i, j) = beta == 0.0 ? t : t + beta * C(i, j);
    }
  }
}

// The five loops, run by every thread of the team, each on its seat (ways.hpp):
// its group's columns, its ic way's rows, its part of the packing and of the
// JR loop. The threads of a group share one B panel, the jr threads of an ic
// way one A block: each packs its part, and waits (Barrier) until the others
// have packed theirs before reading, and until all have read before packing
// over it. `error` catches what the calls throw: an exception must not leave
// a parallel region (and every thread must still reach every wait).
void five_loops(const Plan& plan, const lab::step04::Seat& me, double alpha, lab::ConstMatView A,
                lab::ConstMatView B, double beta, lab::MatView C, lab::FirstException& error) {
  const int64_t k = A.cols;
  // TODO: JC (me.cols), PC (pack my share of B, me.group->wait()), IC (me.rows: pack my share
  //       of A, me.block->wait()), JR (my share), IR: run_tile; end of IC: me.block->wait(), end of PC:
  //       me.group->wait() (no one packs over a panel that others still read)
  (void)plan, (void)me, (void)alpha, (void)A, (void)B, (void)beta, (void)C, (void)error, (void)k;
  LAB_TODO("step04 five_loops: JC, PC + pack B (my share, wait), IC + pack A (my share, wait), JR, IR");
}

}  // namespace

void lab::step04::dgemm_with(double alpha, ConstMatView A, ConstMatView B, double beta, MatView C, Isa isa,
                             Blocking blk) {
  check_gemm_args(A, B, C);
  if (!isa_supported(isa)) {
    throw std::invalid_argument(std::string("isa: this CPU (or build) cannot run the ") + isa_name(isa) +
                                " micro-kernel");
  }
  for (auto [value, name] :
       {std::pair{blk.mc, "blocking.mc"}, {blk.nc, "blocking.nc"}, {blk.kc, "blocking.kc"}}) {
    if (value < 1)
      throw std::invalid_argument(std::string(name) + " must be >= 1, got " + std::to_string(value));
  }
  if (gemm_quick_return(alpha, A, B, beta, C)) return;
  const Plan plan = make_plan(microkernel(isa), blk, C.rows, C.cols, A.cols);

  // The seats, barriers and packing buffers, had here and not inside the
  // parallel region (an allocation failure there could not be reported). The
  // calling thread keeps the buffers for its next call (pack_buffers.cpp), so
  // a call allocates nothing once its sizes have been seen.
  const lab::step04::Team team(plan.layout, plan.uk.mr, plan.uk.nr, C.rows, C.cols);
  FirstException error;
  // Thread t's work (Team::run): the loops on its seat, or with dealt blocks
  // (ways.hpp) on each block it takes, until none is left.
  const auto work = [&](int t) {
    team.run(t, [&](const lab::step04::Seat& me) { five_loops(plan, me, alpha, A, B, beta, C, error); });
  };
  const int threads = plan.layout.ways.threads();
  if (threads == 1) {
    // One thread: no parallel region. Starting a team costs microseconds (a
    // system call on some machines), more than a whole 16 x 16 product.
    work(0);
  } else {
#pragma omp parallel num_threads(threads)
    {
      if (omp_get_num_threads() == threads) {
        // (error.run here: what five_loops throws outside its own, a LAB_TODO)
        error.run([&] { work(omp_get_thread_num()); });
      } else if (omp_get_thread_num() == 0) {
        // OpenMP gave fewer threads than asked (OMP_THREAD_LIMIT, OMP_DYNAMIC):
        // the others' seats would wait for threads that never come. The
        // calling thread does all of it, with the same blocks in its buffers.
        const Plan alone{plan.uk, {{1, 1, 1}, plan.layout.mc, plan.layout.nc, plan.layout.kc}};
        const lab::step04::Team one(alone.layout, alone.uk.mr, alone.uk.nr, C.rows, C.cols);
        error.run([&] { five_loops(alone, one.seat(0), alpha, A, B, beta, C, error); });
      }
    }
  }
  error.rethrow();
}

void lab::step04::dgemm_isa(double alpha, ConstMatView A, ConstMatView B, double beta, MatView C, Isa isa) {
  check_gemm_args(A, B, C);
  if (gemm_quick_return(alpha, A, B, beta, C)) return;
  // A small product skips the packing (small.cpp, given): it would cost as much
  // as the product. Everything else runs the five loops.
  if (small_product(alpha, A, B, beta, C, isa)) return;
  dgemm_with(alpha, A, B, beta, C, isa, default_blocking(isa, C.rows, C.cols, A.cols));
}

void lab::step04::dgemm(double alpha, ConstMatView A, ConstMatView B, double beta, MatView C) {
  dgemm_isa(alpha, A, B, beta, C, best_isa());
}
