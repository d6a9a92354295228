// The closing "LAB-SKIP: <why>" line, without a GPU: each suite below is a test
// program of its own (ctest runs it with --gtest_filter=<suite>.*, through
// common/cmake/ExpectSkipMarker.cmake, which checks the output and the exit
// status). ctest reports a program skipped as soon as one line says LAB-SKIP,
// so the line must come only where every test that ran was skipped: a program
// whose other tests passed or failed is judged by its exit status. Two suites
// must FAIL, as a student's would.
#include <gtest/gtest.h>

#include <string>

#include "contract.hpp"
#include "lab/lost_context.hpp"

namespace {

// A subject this machine cannot run, as a GPU kernel without a GPU.
lab::testing::Subject unavailable() {
  lab::testing::Subject s;
  s.available = [](std::string* why) {
    *why = "no device for this subject here";
    return false;
  };
  return s;
}

// Runs, as a GPU test of a subject it can run would.
lab::testing::Subject available() {
  lab::testing::Subject s;
  s.available = [](std::string*) { return true; };
  return s;
}

// The SIMT tests run on a GPU without FP64 tensor cores, the DMMA tests skip:
// the program passed, no marker.
TEST(PartlySkipped, Runs) {
  if (lab::testing::skip_if_unavailable(available())) return;
  SUCCEED();
}
TEST(PartlySkipped, CannotRunHere) {
  if (lab::testing::skip_if_unavailable(unavailable())) return;
  ADD_FAILURE() << "ran a test its subject cannot run";
}

// No GPU at all: one marker, with the first reason.
TEST(AllSkipped, CannotRunHere) {
  if (lab::testing::skip_if_unavailable(unavailable())) return;
  ADD_FAILURE() << "ran a test its subject cannot run";
}
TEST(AllSkipped, SkipsWithItsOwnReason) { GTEST_SKIP() << "this CPU cannot run the kernel"; }

// A plain GoogleTest skip's reason is the marker's when it comes first.
TEST(AllSkippedPlainly, SkipsWithItsOwnReason) { GTEST_SKIP() << "this CPU cannot run the kernel"; }

// A wrong result beside a skip: the program failed, no marker.
TEST(SkippedAndFailed, CannotRunHere) {
  if (lab::testing::skip_if_unavailable(unavailable())) return;
  ADD_FAILURE() << "ran a test its subject cannot run";
}
TEST(SkippedAndFailed, Fails) { ADD_FAILURE() << "wrong result (on purpose)"; }

// A test loses the GPU context and then skips, and so does the other: a lost
// context is a failure (the closing one of the loss), never the marker.
TEST(LostThenSkipped, LosesTheContextAndSkips) {
  lab::record_lost_context("cudaErrorIllegalAddress");
  GTEST_SKIP() << "this CPU cannot run the kernel";
}
TEST(LostThenSkipped, SkipsWithItsOwnReason) { GTEST_SKIP() << "this CPU cannot run the kernel"; }

}  // namespace
