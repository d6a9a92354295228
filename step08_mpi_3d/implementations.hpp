// implementations.hpp — the step08 implementations built into the benchmark.
//
// lab's variant registry (lab/registry.hpp) holds host calls on one process; the
// dgemm of this step is collective and its multiply takes a Plan, so the benchmark
// finds them here instead. register.cpp is compiled once per implementation
// (student, solution) and adds that implementation's entry points: the only list.
// The ScaLAPACK baseline (scalapack.cpp) has the same kind of run.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "generate.hpp"
#include "mpi3d.hpp"

namespace lab::step08 {

/// One benchmark run: what to multiply, how, and how often.
struct RunSetup {
  int64_t m = 0, n = 0, k = 0;
  double alpha = 1.0, beta = 0.0;
  Seeds seeds;
  Grid grid;                  ///< all zero: the implementation's choose_grid
  LocalKernel local = LocalKernel::step04;
  int threads = 1;
  int reps = 3, warmup = 1;
  double min_time_s = 0.3;
  int64_t pad = 0;            ///< ld = rows + pad for the blocks born on the ranks
  bool data_on_root = false;  ///< the rank-0 dgemm (scatter, multiply, gather) instead
  int transfer = 0;           ///< device blocks: Transfer (0 automatic, 1 nccl, 2 mpi)
  int root_copy = 0;          ///< the rank-0 entry on GPUs: RootCopy (0 automatic, 1 direct, 2 relay)
  bool pinned_host = false;   ///< the rank-0 entry on GPUs: rank 0's matrices page-locked (cudaHostRegister)
  int nb = 256;               ///< ScaLAPACK's block size
  bool bcasts_at_once = true; ///< host blocks: Options::bcasts_at_once
};

/// What a run measured. Every rank gets the samples and the check; rank 0 also
/// every rank's breakdown of the median call.
struct RunResult {
  std::string impl, local, layout;  ///< layout: "2x2x2" (the cube) or "2x4 nb 256" (ScaLAPACK)
  std::string step = "step08";      ///< the rows' step (step09 runs its semiring product on this cube)
  std::string variant;              ///< the rows' variant; empty: "cube", or "pdgemm" for the baseline
  Grid grid;
  std::vector<double> samples;      ///< each call's wall time (its slowest rank)
  std::vector<Breakdown> ranks;     ///< rank 0: every rank's breakdown of the median call
  double local_alone_s = 0;         ///< the local product alone on the same blocks (p = 1 on a GPU), 0: not timed
  CheckResult check;
  std::string note;
};

struct Implementation {
  std::string name;  ///< "student", "solution", or "baseline" (ScaLAPACK)
  void (*gemm)(MPI_Comm, double, ConstMatView, ConstMatView, double, MatView, const Options&) = nullptr;
  Grid (*choose_grid)(int, int64_t, int64_t, int64_t) = nullptr;
  RunResult (*run)(const RunSetup&) = nullptr;
};

inline std::vector<Implementation>& implementations() {
  static std::vector<Implementation> list;
  return list;
}

inline int register_implementation(Implementation impl) {
  implementations().push_back(std::move(impl));
  return static_cast<int>(implementations().size());
}

/// Times `call` (which returns this rank's seconds) as the benchmark does: warm-up
/// calls, then calls until setup.reps and setup.min_time_s are both reached; each
/// sample is the slowest rank's time. `after` runs untimed after every call (e.g.
/// to restore C when beta != 0), `keep` receives each timed call's index.
template <class Call, class After, class Keep>
std::vector<double> time_calls(const RunSetup& setup, Call&& call, After&& after, Keep&& keep) {
  for (int w = 0; w < setup.warmup; ++w) {
    call();
    after();
  }
  std::vector<double> samples;
  double total = 0;
  while (int(samples.size()) < setup.reps || (total < setup.min_time_s && samples.size() < 1000)) {
    LAB_MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD));
    double mine = call(), slowest = 0;
    LAB_MPI_CHECK(MPI_Allreduce(&mine, &slowest, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD));
    keep(samples.size());
    samples.push_back(slowest);
    total += slowest;
    after();
  }
  return samples;
}

/// The index of the median sample (the lower middle one for an even count): the
/// same on every rank, since the samples are.
size_t median_index(const std::vector<double>& samples);

/// Rank 0 gets every rank's breakdown (the others an empty list).
std::vector<Breakdown> gather_breakdowns(const Breakdown& mine, const Grid& grid);

}  // namespace lab::step08
