// The main() of step08's tests: GoogleTest under MPI.
//
// Every rank runs every test, because the tests call a collective dgemm. Rank 0
// prints the usual report; the other ranks print only their first failures, marked
// with their rank. Every rank exits with the same status: failed when any rank failed.
// All ranks draw their random matrices from one seed (rank 0's, or LAB_SEED), so
// that the contract suite can run collectively (test_cube.cpp). A watchdog ends a
// test that makes no progress for LAB_MPI_WATCHDOG_S seconds (default 300): a rank
// waiting in a collective that another rank never entered would otherwise hang
// until ctest gives up.
#include <gtest/gtest.h>
#include <mpi.h>
#include <unistd.h>

#include <csignal>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "contract.hpp"

namespace {

int g_rank = 0;

extern "C" void on_watchdog(int) {
  static const char msg[] =
      "\nstep08 tests: the watchdog fired: this test made no progress, probably a rank waiting in a "
      "collective that another rank never entered (a deadlock)\n";
  const ssize_t ignored = write(STDERR_FILENO, msg, sizeof msg - 1);
  (void)ignored;
  _exit(124);
}

class Watchdog : public ::testing::EmptyTestEventListener {
 public:
  explicit Watchdog(unsigned seconds) : seconds_(seconds) {}
  void OnTestStart(const ::testing::TestInfo&) override { alarm(seconds_); }
  void OnTestEnd(const ::testing::TestInfo&) override { alarm(0); }

 private:
  unsigned seconds_;
};

// The first few failures of a rank other than 0 (rank 0 prints them all; most
// failures are seen alike on every rank, and p copies of them help nobody).
class RankFailurePrinter : public ::testing::EmptyTestEventListener {
 public:
  void OnTestPartResult(const ::testing::TestPartResult& r) override {
    if (!r.failed() || ++shown_ > kMaxShown) return;
    if (r.file_name())
      std::fprintf(stderr, "[rank %d] %s:%d: Failure\n%s\n", g_rank, r.file_name(), r.line_number(),
                   r.summary());
    else
      std::fprintf(stderr, "[rank %d] Failure: %s\n", g_rank, r.summary());
    if (shown_ == kMaxShown)
      std::fprintf(stderr, "[rank %d] (further failures of this rank not shown)\n", g_rank);
  }

 private:
  static constexpr int kMaxShown = 5;
  int shown_ = 0;
};

}  // namespace

int main(int argc, char** argv) {
  int provided = 0;
  // The local kernel may run OpenMP threads; only the main thread calls MPI.
  MPI_Init_thread(&argc, &argv, MPI_THREAD_FUNNELED, &provided);
  MPI_Comm_rank(MPI_COMM_WORLD, &g_rank);
  ::testing::InitGoogleTest(&argc, argv);
  if (!std::getenv("LAB_SEED")) {
    uint64_t seed = g_rank == 0 ? lab::testing::fresh_seed() : 0;
    MPI_Bcast(&seed, 1, MPI_UINT64_T, 0, MPI_COMM_WORLD);
    setenv("LAB_SEED", std::to_string(seed).c_str(), 1);
  }

  auto& listeners = ::testing::UnitTest::GetInstance()->listeners();
  if (g_rank != 0) {
    delete listeners.Release(listeners.default_result_printer());
    listeners.Append(new RankFailurePrinter);
  }
  const char* env = std::getenv("LAB_MPI_WATCHDOG_S");
  const unsigned seconds = env ? static_cast<unsigned>(std::strtoul(env, nullptr, 10)) : 300u;
  if (seconds > 0) {
    std::signal(SIGALRM, on_watchdog);
    listeners.Append(new Watchdog(seconds));
  }

  const int failed = RUN_ALL_TESTS() != 0 ? 1 : 0;
  int any_failed = 0;
  MPI_Allreduce(&failed, &any_failed, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  MPI_Finalize();
  return any_failed;
}
