// contract.hpp — the kernel contract as one value-parameterized GoogleTest suite.
//
// Every step instantiates it with its dgemm:
//
//   #include "contract.hpp"
//   LAB_CONTRACT_SUITE(Step01Naive, ::lab::testing::Subject{&lab::step01::dgemm});
//
// GPU steps wrap a device dgemm with lab::cuda::host_subject(...) (see
// lab/cuda.hpp), whose `available` makes the suite SKIP when no GPU is visible.
//
// The cases: square sizes {0,1,2,3,7,16,17,31,33,64,65,127,129}, rectangular
// shapes (m != n != k, k = 1, k >> m, n), every alpha x beta in
// {0, 1, -1, 0.5, 2.5}^2, ld > rows with guard cells around C, a NaN-poisoned C
// with beta = 0, NaN in A and B with alpha = 0, and bad arguments. Each case
// draws fresh random data; its name says m, n, k, alpha, beta and the lds.
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "lab/matrix.hpp"

namespace lab::testing {

using HostGemm = std::function<void(double alpha, ConstMatView A, ConstMatView B, double beta, MatView C)>;

/// What the suite tests: a dgemm on host views, and whether it can run here.
struct Subject {
  HostGemm gemm;
  std::function<bool(std::string* why)> available = nullptr;  ///< nullptr: always
};

enum class Poison { none, nan_c, nan_ab };

struct Case {
  int64_t m, n, k;
  double alpha, beta;
  int64_t pad = 0;  ///< extra rows in every ld (0: ld == rows)
  Poison poison = Poison::none;
};

std::vector<Case> contract_cases();
/// How GoogleTest prints a case (instead of its bytes).
void PrintTo(const Case& c, std::ostream* os);
std::string case_name(const ::testing::TestParamInfo<Case>& info);
std::string describe(const Case& c);

/// Runs one case against the reference; reports through gtest assertions.
void run_contract_case(const Subject& s, const Case& c, uint64_t seed);
/// The bad-argument checks (each must throw std::invalid_argument and leave C alone).
void run_bad_argument_checks(const Subject& s);

/// Calls `call` on a copy of C0 and expects std::invalid_argument whose message
/// names `name`, with the copy of C left exactly as it was.
void expect_invalid_argument(const std::function<void(MatView C)>& call, const Matrix& C0, const std::string& name);

/// The first line of every test of a subject that may not run here:
///   if (lab::testing::skip_if_unavailable(s)) return;
/// True when the test must end at once: skipped (say_skipped says why) where
/// the subject cannot run on this machine, or failed with
/// "not run: the GPU context was lost in <test> (<error>)" once an earlier test
/// of this program lost the GPU context (lab/lost_context.hpp): nothing can
/// run on the GPU any more, and a skip would hide the failure.
bool skip_if_unavailable(const Subject& s);

/// Prints "skipped: <why>" for the running test, which the caller then ends
/// with GTEST_SKIP(). The program's last line is "LAB-SKIP: <first reason>",
/// which makes ctest report the whole program skipped, only when every test
/// that ran was skipped; where others passed or failed, the exit status counts
/// and the skipped ones stay listed as GoogleTest's "[  SKIPPED ]". Printed by
/// the process that prints GoogleTest's report (rank 0 under MPI) only.
void say_skipped(const std::string& why);

/// A seed that differs on every run (time and a counter) and is printed on
/// failure, so that data is fresh yet failures are reproducible with LAB_SEED=...
uint64_t fresh_seed();

/// "seed N (rerun with LAB_SEED=N)": the SCOPED_TRACE of a test that draws from fresh_seed().
std::string seed_note(uint64_t seed);

}  // namespace lab::testing

#define LAB_CONTRACT_SUITE(Name, ...)                                                          \
  static ::lab::testing::Subject Name##ContractSubject() { return __VA_ARGS__; }               \
  class Name##Contract : public ::testing::TestWithParam<::lab::testing::Case> {};             \
  TEST_P(Name##Contract, MatchesReference) {                                                   \
    auto s = Name##ContractSubject();                                                          \
    if (::lab::testing::skip_if_unavailable(s)) return;                                        \
    ::lab::testing::run_contract_case(s, GetParam(), ::lab::testing::fresh_seed());            \
  }                                                                                            \
  INSTANTIATE_TEST_SUITE_P(Contract, Name##Contract,                                           \
                           ::testing::ValuesIn(::lab::testing::contract_cases()),              \
                           ::lab::testing::case_name);                                         \
  TEST(Name##ContractArgs, BadArgumentsThrow) {                                                \
    auto s = Name##ContractSubject();                                                          \
    if (::lab::testing::skip_if_unavailable(s)) return;                                        \
    ::lab::testing::run_bad_argument_checks(s);                                                \
  }                                                                                            \
  static_assert(true, "LAB_CONTRACT_SUITE needs a semicolon")
