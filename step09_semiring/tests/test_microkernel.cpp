// step09 tests of the pieces: every semiring micro-kernel against its contract
// (semiring_kernel.hpp): packed panels in, an MR x NR tile inside a bigger
// matrix out, C never read when not accumulating, nothing written beside it.
#include <gtest/gtest.h>

#include <limits>
#include <string>

#include "contract.hpp"
#include "lab/todo.hpp"
#include "reference.hpp"
#include "semiring_kernel.hpp"

using lab::step04::Isa;
namespace s9 = lab::step09;

// How GoogleTest prints the parameter in reports ("avx2", not its number). In
// the enum's own namespace, where GoogleTest's lookup finds it.
namespace lab::step04 {
[[maybe_unused]] void PrintTo(Isa isa, std::ostream* os) { *os << isa_name(isa); }
}  // namespace lab::step04

namespace {

constexpr double kGuard = 777.0;

template <class S>
void check_kernel(Isa isa) {
  const s9::MicroKernel uk = s9::microkernel<S>(isa);
  const int mr = uk.mr, nr = uk.nr;
  const uint64_t seed = lab::testing::fresh_seed();
  SCOPED_TRACE(std::string(S::name) + ", seed " + std::to_string(seed));
  for (int64_t kc : {1, 2, 7, 64, 257}) {
    for (bool accumulate : {false, true}) {
      SCOPED_TRACE("kc " + std::to_string(kc) + (accumulate ? ", accumulate" : ""));
      lab::Matrix A(mr, kc), B(kc, nr), C0(mr, nr);
      A.fill_random(seed);
      B.fill_random(seed + 1);
      C0.fill_random(seed + 2, -2.0, 0.0);
      if (!accumulate) C0.fill(std::numeric_limits<double>::quiet_NaN());  // must not be read
      lab::Matrix a_panel(mr * kc, 1), b_panel(kc * nr, 1);
      for (int64_t p = 0; p < kc; ++p) {
        for (int i = 0; i < mr; ++i) a_panel.data()[p * mr + i] = A(i, p);
        for (int j = 0; j < nr; ++j) b_panel.data()[p * nr + j] = B(p, j);
      }
      // The tile of C sits in a bigger matrix (ld > mr) whose other cells are guards.
      lab::Matrix frame(mr + 3, nr + 2);
      frame.fill_all(kGuard);
      for (int j = 0; j < nr; ++j)
        for (int i = 0; i < mr; ++i) frame(i, j) = C0(i, j);
      try {
        uk.fn(kc, a_panel.data(), b_panel.data(), accumulate, frame.data(), frame.ld());
      } catch (const lab::Todo& e) {
        FAIL() << e.what();
      }
      lab::Matrix C(mr, nr);
      for (int j = 0; j < nr; ++j)
        for (int i = 0; i < mr; ++i) C(i, j) = frame(i, j);
      const lab::CheckResult r = s9::check_semiring<S>(A.cview(), B.cview(), C0.cview(), C.cview(), accumulate);
      EXPECT_TRUE(r.ok) << r.report;
      std::string where;
      EXPECT_TRUE(lab::guards_intact(frame, 0, 0, mr, nr, kGuard, &where)) << "wrote outside the tile: " << where;
    }
  }
}

class Step09MicroKernel : public ::testing::TestWithParam<Isa> {};

std::string isa_param_name(const ::testing::TestParamInfo<Isa>& info) { return lab::step04::isa_name(info.param); }

}  // namespace

TEST_P(Step09MicroKernel, KeepsItsContract) {
  const Isa isa = GetParam();
  if (!lab::step04::isa_supported(isa)) GTEST_SKIP() << "this CPU cannot run " << lab::step04::isa_name(isa);
  check_kernel<s9::MinPlus>(isa);
  check_kernel<s9::MaxPlus>(isa);
  check_kernel<s9::PlusTimes>(isa);
}

INSTANTIATE_TEST_SUITE_P(EveryIsa, Step09MicroKernel, ::testing::ValuesIn(lab::step04::kBuiltIsas),
                         isa_param_name);
