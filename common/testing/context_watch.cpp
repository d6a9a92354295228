// skip_if_unavailable and say_skipped (contract.hpp), the program's closing
// LAB-SKIP line, and the watch over a lost GPU context (lab/lost_context.hpp) in
// every test program that calls them.
//
// ctest reports a whole program skipped as soon as one line says LAB-SKIP,
// whatever its exit status. So a test that cannot run here says why on a line
// of its own and ends as GoogleTest's skip, and the marker comes once, at the
// end, only when nothing in the program ran to a pass or a failure: where some
// tests ran (the SIMT kernel's on a GPU without FP64 tensor cores), the exit
// status decides, and the skipped ones stay listed as "[  SKIPPED ]".
//
// A listener tells the record which test is running and, at the end of the test
// in which the context was lost, says so in one line with the command that
// finds the bad access. A global environment then closes the program with one
// failure that sums the loss up: the reader of a long list of failed tests
// learns that all but the first few are one loss, and the exit status is
// non-zero even where the test that lost the context caught its exception.
#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
#include <string>
#include <system_error>

#include "contract.hpp"
#include "lab/lost_context.hpp"

namespace lab::testing {
namespace {

// GPU tests that did not run because of the loss, for the closing summary.
int not_run = 0;

// Why the first skipped test of this program could not run, for the closing marker.
std::string first_skip;

void keep_reason(const std::string& why) {
  if (first_skip.empty()) first_skip = why;
}

// The process that prints GoogleTest's report (under MPI only rank 0 keeps the
// default printer) is the one that says what was skipped.
bool prints_the_report() {
  return ::testing::UnitTest::GetInstance()->listeners().default_result_printer() != nullptr;
}

std::string full_name(const ::testing::TestInfo& t) {
  return std::string(t.test_suite_name()) + "." + t.name();
}

std::string where(const LostContext& lost) {
  return lost.test.empty() ? "outside any test" : "in " + lost.test;
}

// compute-sanitizer's memcheck stops at the bad access and names its line: the
// program and its one test, to run alone.
std::string memcheck_command(const LostContext& lost) {
  std::error_code ec;
  std::string self = std::filesystem::read_symlink("/proc/self/exe", ec).string();
  if (ec || self.empty()) self = "<this test program>";
  std::string cmd = "compute-sanitizer --tool memcheck " + self;
  if (!lost.test.empty()) cmd += " --gtest_filter='" + lost.test + "'";
  return cmd;
}

class NameTheRunningTest : public ::testing::EmptyTestEventListener {
  void OnTestStart(const ::testing::TestInfo& t) override { set_running_test(full_name(t)); }
  // (Listeners run their end events in reverse order: this line comes before
  // GoogleTest's own "[  FAILED  ]" line of the test.)
  void OnTestEnd(const ::testing::TestInfo& t) override {
    set_running_test("");
    const auto lost = lost_context();
    if (!lost || lost->test != full_name(t)) return;
    std::printf(
        "the GPU context is now lost (%s): the later GPU tests of this program cannot run. "
        "Find the bad access with: %s\n",
        lost->error.c_str(), memcheck_command(*lost).c_str());
    std::fflush(stdout);
  }
};

class SumUpTheLoss : public ::testing::Environment {
  void TearDown() override {
    const auto lost = lost_context();
    if (!lost) return;
    ADD_FAILURE() << "the GPU context was lost " << where(*lost) << " (" << lost->error << "): the "
                  << not_run << (not_run == 1 ? " GPU test" : " GPU tests")
                  << " after it did not run and count as failed; fix that test first: "
                  << memcheck_command(*lost);
  }
};

// "LAB-SKIP: <why>" after GoogleTest's summary, only when every test that ran
// was skipped. Never after a lost GPU context or a failure outside the tests:
// those are failures, and the marker would make ctest call them skipped.
class MarkAWholeSkip : public ::testing::EmptyTestEventListener {
  // A skip of the test's own (GTEST_SKIP() << why) has its reason in the message.
  void OnTestPartResult(const ::testing::TestPartResult& r) override {
    if (!r.skipped() || !r.message()) return;
    std::string why = r.message();
    why.erase(0, why.find_first_not_of(" \n"));
    if (!why.empty()) keep_reason(why.substr(0, why.find('\n')));
  }
  void OnTestProgramEnd(const ::testing::UnitTest& u) override {
    if (!prints_the_report() || lost_context() || u.ad_hoc_test_result().Failed()) return;
    if (u.successful_test_count() + u.failed_test_count() > 0 || u.skipped_test_count() == 0) return;
    std::printf("LAB-SKIP: %s\n",
                first_skip.empty() ? "every test of this program was skipped" : first_skip.c_str());
    std::fflush(stdout);
  }
};

// Installed before GoogleTest's main runs (all are owned by GoogleTest). A
// static library's file is linked only where something in it is called: hence
// skip_if_unavailable and say_skipped, which every skipping test calls, live in
// this file.
[[maybe_unused]] const bool installed = [] {
  auto& listeners = ::testing::UnitTest::GetInstance()->listeners();
  listeners.Append(new NameTheRunningTest);
  listeners.Append(new MarkAWholeSkip);
  ::testing::AddGlobalTestEnvironment(new SumUpTheLoss);
  return true;
}();

// GTEST_SKIP ends the function it is written in: this one, so that the caller
// can return for a skip and a failure alike. (The "skipped:" line says why.)
void skip() { GTEST_SKIP(); }

}  // namespace

void say_skipped(const std::string& why) {
  const std::string text = why.empty() ? "this test cannot run here" : why;
  keep_reason(text);
  if (!prints_the_report()) return;
  std::printf("skipped: %s\n", text.c_str());
  std::fflush(stdout);
}

bool skip_if_unavailable(const Subject& s) {
  // Checked first: after the loss, `available` would still say yes (it is
  // cached), and a skip here would hide the failure.
  if (const auto lost = lost_context()) {
    ++not_run;
    ADD_FAILURE() << "not run: the GPU context was lost " << where(*lost) << " (" << lost->error << ")";
    return true;
  }
  std::string why;
  if (!s.available || s.available(&why)) return false;
  say_skipped(why);
  skip();
  return true;
}

}  // namespace lab::testing
