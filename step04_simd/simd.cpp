// step04_simd — TODO for the student: the five loops around the micro-kernel.
//
// What to do: fill in the marked place in five_loops below: the JC, PC, IC,
// JR and IR loops, the packing calls and the OpenMP split of the IC loop. The
// pieces it calls are in pack.cpp and kernel_<isa>.cpp (TODOs too); the block
// sizes (make_plan), chunk() and the edge tiles (run_tile) are done for you
// here. Read the handout first.
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

namespace {

using lab::step04::MicroKernel;
using lab::step04::pack_a;
using lab::step04::pack_b;

int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }
int64_t round_up(int64_t a, int64_t b) { return ceil_div(a, b) * b; }

// The size of the blocks that cut `extent` into as few blocks of at most
// `block` as possible, all about equally big (and multiples of `multiple`): a
// thin last block (n = 4096 in blocks of 4088 would leave 8 columns) would cost
// a whole pass of packing for little work.
int64_t balanced(int64_t extent, int64_t block, int64_t multiple) {
  const int64_t blocks = ceil_div(extent, block);
  return round_up(ceil_div(extent, blocks), multiple);
}

// How the work is cut. The threads share the IC loop: its blocks of mc rows are
// handed out one at a time (schedule(dynamic)), and each thread packs its own A
// block into a private buffer; a thread slowed down by something else on the
// machine then simply takes fewer blocks. There are at least as many blocks as
// threads where the rows allow (a multiple of the thread count, so that equally
// fast threads finish together); when C has fewer MR-row panels than there are
// threads, each IC block is also cut into jr_chunks parts of the JR loop.
// The kc x nc panel of B is packed by all threads together and read by all.
// A small product runs on the calling thread alone (threads_for: a team costs
// more than it saves there).
struct Plan {
  MicroKernel uk;
  int threads;
  int64_t mc, nc, kc;  // block sizes for this problem
  int64_t ic_blocks, jr_chunks;
};

Plan make_plan(const MicroKernel& uk, lab::step04::Blocking blk, int64_t m, int64_t n, int64_t k) {
  Plan p{uk, 1, 0, 0, 0, 0, 1};
  // nested: this thread's share is the job; a small product: the calling thread alone
  p.threads = omp_in_parallel() ? 1 : lab::step04::threads_for(m, n, k, omp_get_max_threads());
  p.kc = balanced(k, blk.kc, 1);
  p.nc = balanced(n, round_up(blk.nc, uk.nr), uk.nr);
  const int64_t blocks =
      std::min(ceil_div(m, uk.mr), round_up(ceil_div(m, round_up(blk.mc, uk.mr)), p.threads));
  p.mc = round_up(ceil_div(m, blocks), uk.mr);
  p.ic_blocks = ceil_div(m, p.mc);
  p.jr_chunks = std::max<int64_t>(1, p.threads / p.ic_blocks);
  return p;
}

// Part `part` of `parts` nearly equal parts of 0..count-1: [first, last).
// (chunk and run_tile are maybe_unused: in the skeleton only the student's
// loops call them.)
[[maybe_unused]] std::pair<int64_t, int64_t> chunk(int64_t count, int64_t part, int64_t parts) {
  const int64_t per = ceil_div(count, parts);
  return {std::min(count, part * per), std::min(count, (part + 1) * per)};
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

// The five loops, run by every thread of the team: each thread comes through
// here, the `omp for` loops share the work out among them (outside a parallel
// region they run whole on the calling thread). a_buf is this thread's block of
// A, b_buf the B panel all threads share. `error` catches what the calls throw:
// an exception must not leave a parallel region.
void five_loops(const Plan& plan, double alpha, lab::ConstMatView A, lab::ConstMatView B, double beta,
                lab::MatView C, double* b_buf, double* a_buf, lab::FirstException& error) {
  const int64_t m = C.rows, n = C.cols, k = A.cols;
  // TODO: JC, PC (omp for: pack_b), IC (omp for dynamic: pack_a), JR, IR: run_tile
  (void)plan, (void)alpha, (void)A, (void)B, (void)beta, (void)b_buf, (void)a_buf, (void)error;
  (void)m, (void)n, (void)k;
  LAB_TODO("step04 five_loops: JC, PC + pack B (omp for), IC + pack A (omp for dynamic), JR, IR");
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

  // The packing buffers, had here and not inside the parallel region (an
  // allocation failure there could not be reported): one B panel for all, one
  // A block per thread. The calling thread keeps them for its next call
  // (pack_buffers.cpp), so a call allocates nothing.
  const PackBuffers buffers = pack_buffers(plan.kc * plan.nc, plan.mc * plan.kc, plan.threads);
  FirstException error;
  if (plan.threads == 1 && !omp_in_parallel()) {
    // One thread: no parallel region. Starting a team and its barriers costs
    // microseconds (a system call each on some machines), more than a whole
    // 16 x 16 product; outside a region the `omp for` loops just run.
    five_loops(plan, alpha, A, B, beta, C, buffers.b, buffers.a_block(0), error);
  } else {
    // (Called from inside a parallel region, the loops still get a team of
    // their own, of one thread: an `omp for` there would otherwise share its
    // iterations out among the caller's team.)
#pragma omp parallel num_threads(plan.threads)
    error.run([&] {  // (what five_loops throws outside its own error.run: a LAB_TODO)
      five_loops(plan, alpha, A, B, beta, C, buffers.b, buffers.a_block(omp_get_thread_num()), error);
    });
  }
  error.rethrow();
}

void lab::step04::dgemm_isa(double alpha, ConstMatView A, ConstMatView B, double beta, MatView C, Isa isa) {
  check_gemm_args(A, B, C);
  if (gemm_quick_return(alpha, A, B, beta, C)) return;
  // A small product skips the packing (small.cpp, given): it would cost as much
  // as the product. Everything else runs the five loops.
  if (small_product(alpha, A, B, beta, C, isa)) return;
  dgemm_with(alpha, A, B, beta, C, isa, default_blocking(isa));
}

void lab::step04::dgemm(double alpha, ConstMatView A, ConstMatView B, double beta, MatView C) {
  dgemm_isa(alpha, A, B, beta, C, best_isa());
}
