// A deadlock on purpose, for the ctest step08_mpi_3d.solution.watchdog.np2: the
// test program's watchdog (mpi_test_main.cpp) must end it within its limit, naming
// this test, the grid and the phase noted last, on every rank. Disabled, so that
// only that ctest runs it (--gtest_also_run_disabled_tests); built into the
// solution's test program only (it tests no student code).
#include <gtest/gtest.h>
#include <mpi.h>

#include "comm.hpp"
#include "grid.hpp"

TEST(Step08Watchdog, DISABLED_NamesTheTestGridAndPhaseOfADeadlock) {
  int rank = 0, size = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  lab::step08::note_progress("broadcast", lab::step08::Grid{size, 1, 1}, rank, 0, 0);
  // Every rank waits for a message that no rank sends: a deadlock.
  int nothing = 0;
  MPI_Recv(&nothing, 1, MPI_INT, MPI_ANY_SOURCE, /*tag=*/4242, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  FAIL() << "a message came that no rank sent";
}
