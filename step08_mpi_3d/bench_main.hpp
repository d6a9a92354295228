// bench_main.hpp — the frame around an MPI benchmark's main (step08_mpi_3d and
// step09_semiring_mpi): MPI started with MPI_THREAD_FUNNELED (OpenMP threads
// compute, only the main thread calls MPI) and errors returned, freed memory
// kept in the process, the benchmark's exceptions turned into the lab's exit
// statuses (a TODO 3, bad usage 2, any other error 4; printed by rank 0, since
// every rank throws alike), and every rank exiting with the worst status of all
// (a rank that failed alone, e.g. writing a file, fails them all).
#pragma once

#include <string>

namespace lab::step08 {

/// Runs `run(argc, argv)` on every rank inside MPI_Init_thread / MPI_Finalize;
/// returns the status main should return. `program` names the messages.
int collective_main(int argc, char** argv, const char* program, int (*run)(int, char**));

/// `--serve dgemm|choose_grid`: one call of the student's step08 for the
/// grader's checker (serve.cpp); collective, returns the exit status.
int serve_main(const std::string& what);

}  // namespace lab::step08
