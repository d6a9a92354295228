// `mpiexec -n P step08_mpi_3d --serve dgemm|choose_grid`: one call of the
// student's step08 for the grader's checker (lab/grade_wire.hpp, ./lab grade).
//
// dgemm: rank 0 reads the request and A, B, C from its stdin (mpiexec hands it
// the checker's pipe), every rank calls the student's dgemm(MPI_COMM_WORLD, ...)
// with the matrices on rank 0, and rank 0 answers with C on the stdout it was
// started with. choose_grid: rank 0 alone asks the student's choose_grid(p, m,
// n, k) for p = the request's kb and answers with px, py, pz in C's first three
// elements. On every rank, whatever the student's code prints goes to stderr.
// The checker judges the answer itself; nothing else this process says counts.
#include <mpi.h>
#include <unistd.h>

#include <cstdio>
#include <stdexcept>
#include <string>
#include <vector>

#include "bench_main.hpp"
#include "implementations.hpp"
#include "lab/bench.hpp"
#include "lab/grade_wire.hpp"

namespace lab::step08 {

int serve_main(const std::string& what) {
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  // the answer's own channel (rank 0); fd 1 from here on is stderr
  const int out = ::dup(1);
  if (out < 0 || ::dup2(2, 1) < 0) return kExitError;
  const Implementation* impl = nullptr;
  for (const Implementation& i : implementations())
    if (i.name == "student") impl = &i;
  // rank 0 reads; every rank learns the request (or that there is none)
  wire::Request rq{};
  wire::Buffer a, b, c;
  int ok = 1;
  if (rank == 0) ok = wire::read_request(0, &rq, &a, &b, &c);
  MPI_Bcast(&ok, 1, MPI_INT, 0, MPI_COMM_WORLD);
  if (!ok) {
    if (rank == 0) std::fprintf(stderr, "--serve: no request on stdin (this mode is for ./lab grade)\n");
    return kExitUsage;
  }
  MPI_Bcast(&rq, sizeof rq, MPI_BYTE, 0, MPI_COMM_WORLD);
  std::string msg;
  wire::Status status = wire::kNoVariant;
  if (impl == nullptr) {
    msg = "this step08 program has no student implementation";
  } else if (what == "dgemm") {
    const bool root = rank == 0;
    const ConstMatView A = root ? ConstMatView{a.data(), rq.m, rq.k, rq.lda} : ConstMatView{nullptr, 0, 0, 1};
    const ConstMatView B = root ? ConstMatView{b.data(), rq.kb, rq.n, rq.ldb} : ConstMatView{nullptr, 0, 0, 1};
    const MatView C = root ? MatView{c.data(), rq.m, rq.n, rq.ldc} : MatView{nullptr, 0, 0, 1};
    Options opts;
    opts.threads = 1;
    status = wire::run_call([&] { impl->gemm(MPI_COMM_WORLD, rq.alpha, A, B, rq.beta, C, opts); }, &msg);
  } else if (what == "choose_grid") {
    status = wire::run_call(
        [&] {
          if (rank != 0) return;
          if (c.size() < 3) throw std::logic_error("--serve choose_grid: C has room for fewer than 3 numbers");
          const Grid g = impl->choose_grid(static_cast<int>(rq.kb), rq.m, rq.n, rq.k);
          c[0] = g.px, c[1] = g.py, c[2] = g.pz;
        },
        &msg);
  } else {
    msg = "step08 serves dgemm and choose_grid, not '" + what + "'";
  }
  if (rank != 0) return kExitOk;
  const bool sent = wire::send_reply(out, status, msg, c);
  ::close(out);
  return sent ? kExitOk : kExitError;
}

}  // namespace lab::step08
