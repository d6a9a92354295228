// skip_if_unavailable (contract.hpp), and the watch over a lost GPU context
// (lab/lost_context.hpp) in every test program that calls it.
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

// Installed before GoogleTest's main runs (both are owned by GoogleTest). A
// static library's file is linked only where something in it is called: hence
// skip_if_unavailable, which every GPU test calls, lives in this file.
[[maybe_unused]] const bool installed = [] {
  ::testing::UnitTest::GetInstance()->listeners().Append(new NameTheRunningTest);
  ::testing::AddGlobalTestEnvironment(new SumUpTheLoss);
  return true;
}();

// GTEST_SKIP ends the function it is written in: this one, so that the caller
// can return for a skip and a failure alike. (The LAB-SKIP line says why.)
void skip() { GTEST_SKIP(); }

}  // namespace

bool skip_if_unavailable(const Subject& s) {
  // Checked first: after the loss, `available` would still say yes (it is
  // cached), and a LAB-SKIP here would make ctest report the program skipped.
  if (const auto lost = lost_context()) {
    ++not_run;
    ADD_FAILURE() << "not run: the GPU context was lost " << where(*lost) << " (" << lost->error << ")";
    return true;
  }
  std::string why;
  if (!s.available || s.available(&why)) return false;
  std::printf("LAB-SKIP: %s\n", why.c_str());
  std::fflush(stdout);
  skip();
  return true;
}

}  // namespace lab::testing
