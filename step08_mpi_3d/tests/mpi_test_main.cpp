// The main() of step08's tests: GoogleTest under MPI.
//
// Every rank runs every test, because the tests call a collective dgemm. What a
// student (and the grader) reads is rank 0's report, once:
// - no colour: under mpiexec the output is a terminal to GoogleTest, and colour
//   codes would hide its summary from the tools that read the log;
// - the other ranks print nothing themselves: at the end of each test they send
//   their failures to rank 0, which prints those it did not see itself, marked
//   with the ranks that saw them (most failures are seen alike on every rank);
// - a watchdog ends a deadlock (a rank waiting in a collective that another rank
//   never entered) when no rank of this process made progress for
//   LAB_MPI_WATCHDOG_S seconds (default 30; it looks every few seconds, so it
//   fires within a few seconds of that), and says which test, grid and phase
//   each rank was in.
// Every rank exits with the same status: failed when any rank failed. All ranks
// draw their random matrices from one seed (rank 0's, or LAB_SEED), so that the
// contract suite can run collectively (test_cube.cpp).
#include <gtest/gtest.h>
#include <mpi.h>
#include <unistd.h>

#include <atomic>
#include <csignal>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <map>
#include <string>
#include <vector>

#include "comm.hpp"
#include "contract.hpp"

namespace {

int g_rank = 0;
unsigned g_watchdog_s = 30;
char g_test[160] = "(before the first test)";
unsigned g_ticks_seen = 0;
std::atomic<double> g_seen_at{0};  // when the progress count last changed (or the test began)

unsigned look_every_s() { return g_watchdog_s < 5 ? 1 : 5; }

double now_s() {  // (clock_gettime is async-signal-safe)
  timespec t{};
  clock_gettime(CLOCK_MONOTONIC, &t);
  return double(t.tv_sec) + 1e-9 * double(t.tv_nsec);
}

void write_all(const char* s) {
  const ssize_t ignored = write(STDERR_FILENO, s, std::strlen(s));
  (void)ignored;
}

// Async-signal-safe: reads the progress note (comm.hpp) and calls write/alarm/_exit only.
extern "C" void on_alarm(int) {
  const lab::step08::Progress& p = lab::step08::progress();
  const unsigned now = p.ticks.load(std::memory_order_acquire);
  if (now != g_ticks_seen) {  // progress since the last look: look again later
    g_ticks_seen = now;
    g_seen_at = now_s();
    alarm(look_every_s());
    return;
  }
  if (now_s() - g_seen_at < double(g_watchdog_s)) {  // no progress yet, but not for long
    alarm(look_every_s());
    return;
  }
  char line[512];
  std::snprintf(line, sizeof line,
                "\nstep08 tests: rank %d made no progress for %u s in %s, last in %s: a deadlock? (a rank "
                "waiting in a collective that another rank never entered)\n",
                g_rank, g_watchdog_s, g_test,
                now ? lab::step08::progress_note() : "no call of dgemm yet");
  write_all(line);
  _exit(124);
}

class Watchdog : public ::testing::EmptyTestEventListener {
 public:
  void OnTestStart(const ::testing::TestInfo& t) override {
    std::snprintf(g_test, sizeof g_test, "test %s.%s", t.test_suite_name(), t.name());
    g_ticks_seen = lab::step08::progress().ticks.load();
    g_seen_at = now_s();
    alarm(look_every_s());
  }
  void OnTestEnd(const ::testing::TestInfo&) override { alarm(0); }
};

// Each rank's failures of the current test, gathered at its end; rank 0 prints
// those that differ from its own, once per distinct text.
class OneReport : public ::testing::EmptyTestEventListener {
 public:
  void OnTestPartResult(const ::testing::TestPartResult& r) override {
    if (!r.failed()) return;
    if (r.file_name()) mine_ += std::string(r.file_name()) + ":" + std::to_string(r.line_number()) + ": ";
    mine_ += std::string(r.summary()) + "\n";
  }
  void OnTestEnd(const ::testing::TestInfo&) override {
    int p = 1;
    MPI_Comm_size(MPI_COMM_WORLD, &p);
    const int len = static_cast<int>(mine_.size());
    std::vector<int> lens(g_rank == 0 ? p : 0), offsets(g_rank == 0 ? p : 0);
    MPI_Gather(&len, 1, MPI_INT, lens.data(), 1, MPI_INT, 0, MPI_COMM_WORLD);
    std::string all;
    if (g_rank == 0) {
      int total = 0;
      for (int r = 0; r < p; ++r) {
        offsets[r] = total;
        total += lens[r];
      }
      all.resize(total);
    }
    MPI_Gatherv(mine_.data(), len, MPI_CHAR, all.data(), lens.data(), offsets.data(), MPI_CHAR, 0,
                MPI_COMM_WORLD);
    if (g_rank == 0) {
      std::map<std::string, std::string> ranks_of;  // text -> "1, 3, 5"
      for (int r = 1; r < p; ++r) {
        const std::string text = all.substr(offsets[r], lens[r]);
        if (text.empty() || text == mine_) continue;
        std::string& who = ranks_of[text];
        who += (who.empty() ? "" : ", ") + std::to_string(r);
      }
      for (const auto& [text, who] : ranks_of)
        std::printf("[rank%s %s] failed where rank 0 did not (or differently):\n%s",
                    who.find(',') == std::string::npos ? "" : "s", who.c_str(), text.c_str());
      std::fflush(stdout);
    }
    mine_.clear();
  }

 private:
  std::string mine_;
};

}  // namespace

int main(int argc, char** argv) {
  int provided = 0;
  // The local kernel may run OpenMP threads; only the main thread calls MPI.
  MPI_Init_thread(&argc, &argv, MPI_THREAD_FUNNELED, &provided);
  MPI_Comm_rank(MPI_COMM_WORLD, &g_rank);
  // Before InitGoogleTest, so that --gtest_color=yes on the command line still wins.
  GTEST_FLAG_SET(color, "no");
  ::testing::InitGoogleTest(&argc, argv);
  if (!std::getenv("LAB_SEED")) {
    uint64_t seed = g_rank == 0 ? lab::testing::fresh_seed() : 0;
    MPI_Bcast(&seed, 1, MPI_UINT64_T, 0, MPI_COMM_WORLD);
    setenv("LAB_SEED", std::to_string(seed).c_str(), 1);
  }

  // The tests of test_grid.cpp (choose_grid, Split, the volume formulas) do not
  // depend on the rank count: they run once, in the one-rank run, instead of
  // printing the same failure once per rank count.
  int size = 1;
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  if (size > 1) {
    std::string once;
    const ::testing::UnitTest& all = *::testing::UnitTest::GetInstance();
    for (int i = 0; i < all.total_test_suite_count(); ++i) {
      const ::testing::TestSuite& suite = *all.GetTestSuite(i);
      for (int j = 0; j < suite.total_test_count(); ++j) {
        const ::testing::TestInfo& t = *suite.GetTestInfo(j);
        const std::string file = t.file() ? t.file() : "";
        if (file.size() >= 13 && file.compare(file.size() - 13, 13, "test_grid.cpp") == 0)
          once += std::string(once.empty() ? "" : ":") + t.test_suite_name() + "." + t.name();
      }
    }
    std::string filter = GTEST_FLAG_GET(filter);
    if (!once.empty()) GTEST_FLAG_SET(filter, filter + (filter.find('-') == std::string::npos ? "-" : ":") + once);
  }

  auto& listeners = ::testing::UnitTest::GetInstance()->listeners();
  if (g_rank != 0) delete listeners.Release(listeners.default_result_printer());
  listeners.Append(new OneReport);
  if (const char* env = std::getenv("LAB_MPI_WATCHDOG_S")) g_watchdog_s = std::strtoul(env, nullptr, 10);
  if (g_watchdog_s > 0) {
    std::signal(SIGALRM, on_alarm);
    listeners.Append(new Watchdog);
  }

  const int failed = RUN_ALL_TESTS() != 0 ? 1 : 0;
  int any_failed = 0;
  MPI_Allreduce(&failed, &any_failed, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  MPI_Finalize();
  return any_failed;
}
