// step04 tests of the pieces: every micro-kernel against its contract
// (microkernel.hpp), and the two packing routines against their layouts.
#include <gtest/gtest.h>

#include <functional>
#include <limits>
#include <string>

#include "contract.hpp"
#include "lab/check.hpp"
#include "microkernel.hpp"

using lab::step04::Isa;

// How GoogleTest prints the parameter in reports ("avx2", not its number). In
// the enum's own namespace, where GoogleTest's lookup finds it.
namespace lab::step04 {
[[maybe_unused]] void PrintTo(Isa isa, std::ostream* os) { *os << isa_name(isa); }
}  // namespace lab::step04

namespace {

constexpr double kGuard = 777.0;

class Step04MicroKernel : public ::testing::TestWithParam<Isa> {};

std::string isa_param_name(const ::testing::TestParamInfo<Isa>& info) {
  return lab::step04::isa_name(info.param);
}

}  // namespace

TEST_P(Step04MicroKernel, KeepsItsContract) {
  const Isa isa = GetParam();
  if (!lab::step04::isa_supported(isa)) GTEST_SKIP() << "this CPU cannot run " << lab::step04::isa_name(isa);
  const lab::step04::MicroKernel uk = lab::step04::microkernel(isa);
  const int mr = uk.mr, nr = uk.nr;
  const uint64_t seed = lab::testing::fresh_seed();
  SCOPED_TRACE(lab::testing::seed_note(seed));
  // 223 and 224: either side of where the AVX-512 kernel starts to spread its
  // prefetches of C over the loop's last steps.
  for (int64_t kc : {1, 2, 7, 64, 223, 224, 257}) {
    for (double beta : {0.0, 1.0, -0.5}) {
      SCOPED_TRACE("kc " + std::to_string(kc) + ", beta " + std::to_string(beta));
      // The operands as matrices (mr x kc and kc x nr) and as the packed panels.
      lab::Matrix A(mr, kc), B(kc, nr), C0(mr, nr);
      A.fill_random(seed);
      B.fill_random(seed + 1);
      C0.fill_random(seed + 2);
      if (beta == 0.0) C0.fill(std::numeric_limits<double>::quiet_NaN());  // must not be read
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
      uk.fn(kc, a_panel.data(), b_panel.data(), beta, frame.data(), frame.ld());

      lab::Matrix C(mr, nr);
      for (int j = 0; j < nr; ++j)
        for (int i = 0; i < mr; ++i) C(i, j) = frame(i, j);
      const auto r = lab::check_against_reference(1.0, A.cview(), B.cview(), beta, C0.cview(), C.cview());
      EXPECT_TRUE(r.ok) << r.report;
      std::string where;
      EXPECT_TRUE(lab::guards_intact(frame, 0, 0, mr, nr, kGuard, &where))
          << "wrote outside the tile: " << where;
    }
  }
}

INSTANTIATE_TEST_SUITE_P(EveryIsa, Step04MicroKernel, ::testing::ValuesIn(lab::step04::kBuiltIsas),
                         isa_param_name);

namespace {

// Packs a block of `extent` rows (A) or columns (B) with `pack`, then checks the
// layout: value t of step p of panel q sits at dst[(q * kb + p) * width + t]
// and equals want(q * width + t, p), zero past `extent`; the cells after the
// last panel keep their guard value.
void expect_panels(int64_t extent, int64_t kb, int width, const std::function<void(double*)>& pack,
                   const std::function<double(int64_t index, int64_t p)>& want) {
  const int64_t panels = (extent + width - 1) / width;
  lab::Matrix dst(panels * width * kb + 8, 1);
  dst.fill_all(kGuard);
  pack(dst.data());
  for (int64_t q = 0; q < panels; ++q) {
    for (int64_t p = 0; p < kb; ++p) {
      for (int t = 0; t < width; ++t) {
        const int64_t index = q * width + t;
        ASSERT_EQ(index < extent ? want(index, p) : 0.0, dst.data()[(q * kb + p) * width + t])
            << "panel " << q << ", p " << p << ", position " << t;
      }
    }
  }
  for (int64_t e = panels * width * kb; e < dst.size(); ++e)
    ASSERT_EQ(kGuard, dst.data()[e]) << "wrote past the panels";
}

}  // namespace

TEST(Step04Pack, PanelsOfAScaledAndZeroPadded) {
  const uint64_t seed = lab::testing::fresh_seed();
  SCOPED_TRACE(lab::testing::seed_note(seed));
  for (int mr : {8, 16}) {
    for (auto [mb, kb] : {std::pair<int64_t, int64_t>{1, 1}, {16, 5}, {37, 9}}) {
      SCOPED_TRACE("mr " + std::to_string(mr) + ", block " + std::to_string(mb) + " x " + std::to_string(kb));
      lab::Matrix A(mb + 4, kb + 1, mb + 6);  // the block sits at (2, 1) of a bigger matrix
      A.fill_random(seed);
      const lab::ConstMatView block = A.cview().block(2, 1, mb, kb);
      expect_panels(
          mb, kb, mr, [&](double* dst) { lab::step04::pack_a(-2.0, block, mr, dst); },
          [&](int64_t i, int64_t p) { return -2.0 * block(i, p); });
    }
  }
}

TEST(Step04Pack, PanelsOfBZeroPadded) {
  const uint64_t seed = lab::testing::fresh_seed();
  SCOPED_TRACE(lab::testing::seed_note(seed));
  for (int nr : {6, 14}) {
    for (auto [kb, nb] : {std::pair<int64_t, int64_t>{1, 1}, {5, 14}, {9, 31}}) {
      SCOPED_TRACE("nr " + std::to_string(nr) + ", block " + std::to_string(kb) + " x " + std::to_string(nb));
      lab::Matrix B(kb + 3, nb + 2, kb + 5);  // the block sits at (1, 2) of a bigger matrix
      B.fill_random(seed);
      const lab::ConstMatView block = B.cview().block(1, 2, kb, nb);
      expect_panels(
          nb, kb, nr, [&](double* dst) { lab::step04::pack_b(block, nr, dst); },
          [&](int64_t j, int64_t p) { return block(p, j); });
    }
  }
}
