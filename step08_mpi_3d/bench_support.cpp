// Small pieces of the benchmark shared by the implementations' runs and ScaLAPACK's.
#include <malloc.h>
#include <mpi.h>

#include <algorithm>
#include <cstdio>
#include <exception>
#include <numeric>
#include <stdexcept>

#include "bench_main.hpp"
#include "implementations.hpp"
#include "lab/bench.hpp"
#include "lab/todo.hpp"

namespace lab::step08 {

size_t median_index(const std::vector<double>& samples) {
  std::vector<size_t> order(samples.size());
  std::iota(order.begin(), order.end(), size_t(0));
  std::sort(order.begin(), order.end(), [&](size_t a, size_t b) { return samples[a] < samples[b]; });
  return order.empty() ? 0 : order[(order.size() - 1) / 2];
}

std::vector<Breakdown> gather_breakdowns(const Breakdown& mine, const Grid& grid) {
  // seconds, own seconds, then sent and received bytes, per phase
  constexpr int kPacked = 4 * kPhases;
  double packed[kPacked];
  for (int p = 0; p < kPhases; ++p) {
    packed[p] = mine.seconds[p];
    packed[kPhases + p] = mine.own[p];
    packed[2 * kPhases + p] = double(mine.traffic[p].sent);
    packed[3 * kPhases + p] = double(mine.traffic[p].recv);
  }
  int rank = 0, size = 1;
  LAB_MPI_CHECK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
  LAB_MPI_CHECK(MPI_Comm_size(MPI_COMM_WORLD, &size));
  std::vector<double> all(rank == 0 ? size_t(kPacked) * size : 0);
  LAB_MPI_CHECK(MPI_Gather(packed, kPacked, MPI_DOUBLE, all.data(), kPacked, MPI_DOUBLE, 0, MPI_COMM_WORLD));
  std::vector<Breakdown> out;
  for (int q = 0; rank == 0 && q < size; ++q) {
    const double* in = &all[size_t(q) * kPacked];
    Breakdown b;
    b.grid = grid;
    for (int p = 0; p < kPhases; ++p) {
      b.seconds[p] = in[p];
      b.own[p] = in[kPhases + p];
      b.traffic[p].sent = int64_t(in[2 * kPhases + p]);
      b.traffic[p].recv = int64_t(in[3 * kPhases + p]);
    }
    out.push_back(b);
  }
  return out;
}

}  // namespace lab::step08

namespace lab::step08 {

int collective_main(int argc, char** argv, const char* program, int (*run)(int, char**)) {
  // Keep freed memory in the process: blocks of hundreds of MB come and go, and
  // fresh pages cost a page fault on first touch (on the 2-core lab machine a copy
  // into fresh memory ran at 1.3 GB/s, into reused memory at 4 GB/s).
  mallopt(M_MMAP_MAX, 0);
  mallopt(M_TRIM_THRESHOLD, -1);
  int provided = 0;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_FUNNELED, &provided);
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  int status = kExitOk;
  try {
    status = run(argc, argv);
  } catch (const Todo& e) {
    if (rank == 0) std::fprintf(stderr, "%s: %s\n", program, e.what());
    status = kExitTodo;
  } catch (const std::invalid_argument& e) {
    if (rank == 0) std::fprintf(stderr, "%s: error: %s\n", program, e.what());
    status = kExitUsage;
  } catch (const std::exception& e) {
    if (rank == 0) std::fprintf(stderr, "%s: error: %s\n", program, e.what());
    status = kExitError;
  }
  // Every path above is taken alike on every rank; the maximum makes sure of it.
  int worst = status;
  MPI_Allreduce(&status, &worst, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  MPI_Finalize();
  return worst;
}

}  // namespace lab::step08
