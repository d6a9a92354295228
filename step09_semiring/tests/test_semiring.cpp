// step09 tests (CPU): gemm<S> for the three semirings on every shape of the
// contract cases, accumulating and not, with the default kernel and blocks and
// with every kernel this CPU runs on blocks far smaller than the defaults (so
// every loop takes several passes and every edge is hit); min-plus and
// max-plus compared for exact equality. Then infinities, NaN and -inf, the
// reference itself on a worked example, bad arguments, threads. First of all,
// what step09 takes from the student's step04 (its micro-kernels, its pack_a
// and pack_b), so that a fault there is the first failure shown, as step04's.
#include <omp.h>

#include <array>
#include <cmath>
#include <cstring>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include "lab/first_exception.hpp"
#include "microkernel.hpp"  // step04: pack_a, pack_b
#include "semiring_kernel.hpp"
#include "semiring_testing.hpp"
#include "ways.hpp"  // step04: force_ways

using lab::step04::Blocking;
using lab::step04::Isa;
using step09_testing::HostGemm;
using step09_testing::Shape;
namespace s9 = lab::step09;

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

enum class Ring { minplus, maxplus, plustimes };
const char* ring_name(Ring r) { return r == Ring::minplus ? "minplus" : r == Ring::maxplus ? "maxplus" : "plustimes"; }

// Which kernel: the default (gemm<S>: widest kernel, default blocks) or an
// instruction set with tiny or odd blocks.
enum class Blocks { defaults, tiny, odd };
const Blocking kTinyBlocks{1, 1, 5};    // one MR x NR tile per block, k in slices of 5
const Blocking kOddBlocks{37, 45, 19};  // rounded up to multiples of MR and NR

struct Case {
  Ring ring;
  Isa isa;
  Blocks blocks;
  Shape shape;
};

template <class S>
HostGemm<S> product(Isa isa, Blocks blocks) {
  if (blocks == Blocks::defaults) return [](auto A, auto B, auto C, bool acc) { s9::gemm<S>(A, B, C, acc); };
  const Blocking b = blocks == Blocks::tiny ? kTinyBlocks : kOddBlocks;
  return [isa, b](auto A, auto B, auto C, bool acc) { s9::gemm_with<S>(A, B, C, acc, isa, b); };
}

template <class S>
void run_both(const Case& c) {
  for (bool accumulate : {false, true})
    step09_testing::run_shape<S>(product<S>(c.isa, c.blocks), c.shape, accumulate, lab::testing::fresh_seed());
}

std::vector<Case> cases() {
  std::vector<Case> out;
  for (Ring r : {Ring::minplus, Ring::maxplus, Ring::plustimes}) {
    for (const Shape& s : step09_testing::contract_shapes()) {
      out.push_back({r, lab::step04::best_isa(), Blocks::defaults, s});
      for (Isa isa : lab::step04::kBuiltIsas)
        for (Blocks b : {Blocks::tiny, Blocks::odd}) out.push_back({r, isa, b, s});
    }
  }
  return out;
}

std::string case_name(const ::testing::TestParamInfo<Case>& info) {
  const Case& c = info.param;
  const std::string kernel = c.blocks == Blocks::defaults ? "default"
                                                           : std::string(lab::step04::isa_name(c.isa)) +
                                                                 (c.blocks == Blocks::tiny ? "_tiny" : "_odd");
  return std::string(ring_name(c.ring)) + "_" + kernel + "_" + step09_testing::shape_name(c.shape) + "_" +
         std::to_string(info.index);
}

// How GoogleTest prints a case (instead of its bytes).
[[maybe_unused]] void PrintTo(const Case& c, std::ostream* os) {
  *os << ring_name(c.ring) << " " << lab::step04::isa_name(c.isa) << " " << step09_testing::shape_name(c.shape);
}

class Step09Contract : public ::testing::TestWithParam<Case> {};

}  // namespace

TEST_P(Step09Contract, MatchesReference) {
  const Case& c = GetParam();
  // A plain skip: the other kernels still run, so the whole test is not "skipped".
  if (c.blocks != Blocks::defaults && !lab::step04::isa_supported(c.isa))
    GTEST_SKIP() << "this CPU cannot run " << lab::step04::isa_name(c.isa);
  switch (c.ring) {
    case Ring::minplus:
      return run_both<s9::MinPlus>(c);
    case Ring::maxplus:
      return run_both<s9::MaxPlus>(c);
    case Ring::plustimes:
      return run_both<s9::PlusTimes>(c);
  }
}

INSTANTIATE_TEST_SUITE_P(Shapes, Step09Contract, ::testing::ValuesIn(cases()), case_name);

// gemm<S> runs the instruction set step04 chose for its DGEMM: a step04 kernel
// still a TODO leaves min-plus on a narrower kernel (generic at worst), and the
// summary says this step waits for step04 (its TODO's message names it).
TEST(Step09FromStep04, KernelsWritten) {
  for (const s9::Step04Todo& t : s9::step04_kernels_todo())
    ADD_FAILURE() << t.message << "\n(step09 runs the instruction set step04 chose for DGEMM: until step04's "
                  << lab::step04::isa_name(t.isa) << " kernel is written, step09's is never used; ./lab test step04)";
}

// step04's pack_a (alpha = 1) and pack_b, as step09 calls them, against their
// layout (step04_simd/microkernel.hpp): value t of step p of panel q at
// dst[(q * kb + p) * width + t], zero past the block's edge.
TEST(Step09FromStep04, PackingAsStep09CallsIt) {
  const uint64_t seed = lab::testing::fresh_seed();
  SCOPED_TRACE(lab::testing::seed_note(seed));
  lab::Matrix M(45, 45);
  M.fill_random(seed);
  // A block of `extent` rows of A (columns of B) by kb, packed in panels `width` wide
  auto check = [&](bool is_a, int width, int64_t extent, int64_t kb) {
    const lab::ConstMatView block = is_a ? M.cview().block(1, 2, extent, kb) : M.cview().block(2, 1, kb, extent);
    const int64_t panels = (extent + width - 1) / width;
    std::vector<double> dst(size_t(panels * width * kb + 16), kNaN);  // (+16: step04's tests check the end)
    try {
      if (is_a) lab::step04::pack_a(1.0, block, width, dst.data());
      else lab::step04::pack_b(block, width, dst.data());
    } catch (const lab::Todo& e) {
      FAIL() << e.what();
    }
    for (int64_t q = 0; q < panels; ++q)
      for (int64_t p = 0; p < kb; ++p)
        for (int64_t t = 0; t < width; ++t) {
          const int64_t index = q * width + t;
          const double want = index >= extent ? 0.0 : is_a ? block(index, p) : block(p, index);
          const double got = dst[size_t((q * kb + p) * width + t)];
          ASSERT_EQ(want, got)
              << "step04's " << (is_a ? "pack_a" : "pack_b") << " (step09 packs every panel with it) is wrong: "
              << "fix step04 first (./lab test step04), then run these tests again\n"
              << (is_a ? "A block " : "B block ") << block.rows << " x " << block.cols << ", "
              << (is_a ? "mr " : "nr ") << width << ": panel " << q << ", p " << p << ", position " << t
              << " holds " << got << ", want " << want << (index >= extent ? " (past the edge)" : "");
        }
  };
  for (auto [mr, nr] : {std::pair{8, 6}, {16, 14}}) {  // the tiles of step09's kernels
    for (auto [extent, kb] : {std::pair<int64_t, int64_t>{1, 1}, {23, 5}, {37, 9}}) {
      check(true, mr, extent, kb);
      check(false, nr, extent, kb);
      if (HasFatalFailure()) return;
    }
  }
}

TEST(Step09Reference, WorkedExamples) {
  // A = [1 2 inf; 0 -1 5], B = [0 3; 1 inf; -2 0]: min-plus C(0,0) = min(1+0, 2+1, inf-2) = 1, ...
  const std::vector<double> a{1, 0, 2, -1, kInf, 5}, b{0, 1, -2, 3, kInf, 0};
  const lab::View<const double> A{a.data(), 2, 3, 2}, B{b.data(), 3, 2, 3};
  std::vector<double> c(4, kNaN);
  s9::reference_gemm<s9::MinPlus>(A, B, lab::View<double>{c.data(), 2, 2, 2}, false);
  EXPECT_EQ(c, (std::vector<double>{1, 0, 4, 3}));
  s9::reference_gemm<s9::MaxPlus>(A, B, lab::View<double>{c.data(), 2, 2, 2}, false);
  EXPECT_EQ(c, (std::vector<double>{kInf, 3, kInf, kInf}));
  std::vector<double> c0{0.5, 7, -9, kNaN};  // accumulate: min with C, a NaN in C reads as the zero
  s9::reference_gemm<s9::MinPlus>(A, B, lab::View<double>{c0.data(), 2, 2, 2}, true);
  EXPECT_EQ(c0, (std::vector<double>{0.5, 0, -9, 3}));
}

// Row 3 of A and column 5 of B all +inf, and a block of +inf in each: rows and
// columns of C with no path are +inf, the rest as the reference says.
TEST(Step09Infinity, InfiniteRowsColumnsAndBlocks) {
  const Shape shape{37, 41, 29, 2};
  auto tweak = [](lab::MatView A, lab::MatView B) { step09_testing::cut_paths(A, B, kInf); };
  for (Isa isa : lab::step04::kIsas) {
    if (!lab::step04::isa_supported(isa)) continue;
    SCOPED_TRACE(lab::step04::isa_name(isa));
    const HostGemm<s9::MinPlus> g = product<s9::MinPlus>(isa, Blocks::odd);
    for (bool accumulate : {false, true})
      step09_testing::run_shape<s9::MinPlus>(g, shape, accumulate, lab::testing::fresh_seed(), tweak);
    // and independently of the reference: no path through row 3 or column 5
    lab::Matrix A(37, 29), B(29, 41), C(37, 41);
    A.fill_random(lab::testing::fresh_seed());
    B.fill_random(lab::testing::fresh_seed());
    tweak(A.view(), B.view());
    g(A.cview(), B.cview(), C.view(), false);
    for (int64_t j = 0; j < 41; ++j) EXPECT_EQ(C(3, j), kInf) << "C(3, " << j << ")";
    for (int64_t i = 0; i < 37; ++i) EXPECT_EQ(C(i, 5), kInf) << "C(" << i << ", 5)";
  }
}

// A signalling NaN in C, accumulating: read as the zero, as a quiet one is.
// (Arm's FMINNM skips only a quiet NaN: a kernel's fold must not rest on it.)
template <class S>
void snan_in_c(Isa isa, uint64_t seed) {
  lab::Matrix A(19, 23), B(23, 17), C(19, 17);
  A.fill_random(seed);
  B.fill_random(seed + 1);
  C.fill_random(seed + 2);
  for (int64_t j = 0; j < C.cols(); ++j)
    for (int64_t i = 0; i < C.rows(); ++i)
      if ((i + j) % 3 == 0) C(i, j) = std::numeric_limits<double>::signaling_NaN();
  lab::Matrix want = C.clone();
  s9::reference_gemm<S>(A.cview(), B.cview(), want.view(), true);
  product<S>(isa, Blocks::odd)(A.cview(), B.cview(), C.view(), true);
  for (int64_t j = 0; j < C.cols(); ++j)
    for (int64_t i = 0; i < C.rows(); ++i)
      ASSERT_EQ(C(i, j), want(i, j)) << S::name << ": C(" << i << ", " << j << ")"
                                     << ((i + j) % 3 == 0 ? ", a signalling NaN before" : "");
}

TEST(Step09Infinity, SignallingNanInCReadsAsTheZero) {
  const uint64_t seed = lab::testing::fresh_seed();
  SCOPED_TRACE(lab::testing::seed_note(seed));
  for (Isa isa : lab::step04::kIsas) {
    if (!lab::step04::isa_supported(isa)) continue;
    SCOPED_TRACE(lab::step04::isa_name(isa));
    snan_in_c<s9::MinPlus>(isa, seed);
    snan_in_c<s9::MaxPlus>(isa, seed);
  }
}

// NaN, -inf and +inf scattered through A and B: NaN and +inf + -inf read as
// the zero, so results match the reference and none is NaN.
TEST(Step09Infinity, NanAndMinusInfinityReadAsDocumented) {
  const Shape shape{45, 38, 70, 1};
  const uint64_t seed = lab::testing::fresh_seed();
  for (Isa isa : lab::step04::kIsas) {
    if (!lab::step04::isa_supported(isa)) continue;
    SCOPED_TRACE(lab::step04::isa_name(isa));
    SCOPED_TRACE(isa == Isa::neon
                     ? "a NaN sum must be skipped: vminnmq_f64 / vmaxnmq_f64 (minNum) skip it, vminq_f64 / vmaxq_f64 "
                       "return it (the handout's \"The kernels get the NaN rule for free\")"
                     : "a NaN sum must be skipped: vminpd / vmaxpd return their second operand when either is NaN, "
                       "so the sum goes first, min(sum, acc) (the handout's \"The kernels get the NaN rule for free\")");
    for (bool accumulate : {false, true}) {
      step09_testing::run_shape<s9::MinPlus>(product<s9::MinPlus>(isa, Blocks::odd), shape, accumulate, seed,
                                             step09_testing::scatter_specials(seed));
      step09_testing::run_shape<s9::MaxPlus>(product<s9::MaxPlus>(isa, Blocks::odd), shape, accumulate, seed,
                                             step09_testing::scatter_specials(seed));
    }
  }
  // The cases by hand: -inf (x) +inf is skipped; a NaN in A is skipped.
  const double a[] = {-kInf, 1, kNaN}, b[] = {kInf, 2, -5};
  double c = kNaN;
  s9::gemm<s9::MinPlus>({a, 1, 3, 1}, {b, 3, 1, 3}, {&c, 1, 1, 1}, false);
  EXPECT_EQ(c, 3.0);
  const double a2[] = {kInf, 1, kNaN}, b2[] = {-kInf, 2, 5};
  s9::gemm<s9::MaxPlus>({a2, 1, 3, 1}, {b2, 3, 1, 3}, {&c, 1, 1, 1}, false);
  EXPECT_EQ(c, 3.0);
}

TEST(Step09Blocks, DefaultBlocksCrossedInEveryLoop) {
  const Isa isa = lab::step04::best_isa();
  const Blocking d = lab::step04::default_blocking(isa);
  // One more than a block in each dimension, plus a ragged edge.
  const Shape shape{d.mc + 7, d.nc + 5, d.kc + 3, 1};
  const HostGemm<s9::MinPlus> g = [](auto A, auto B, auto C, bool acc) { s9::gemm<s9::MinPlus>(A, B, C, acc); };
  step09_testing::run_shape<s9::MinPlus>(g, shape, true, lab::testing::fresh_seed());
}

TEST(Step09Arguments, BadArgumentsThrow) {
  step09_testing::bad_arguments<s9::MinPlus>([](auto A, auto B, auto C, bool acc) { s9::gemm<s9::MinPlus>(A, B, C, acc); });
  step09_testing::bad_arguments<s9::MaxPlus>([](auto A, auto B, auto C, bool acc) { s9::gemm<s9::MaxPlus>(A, B, C, acc); });
  step09_testing::bad_arguments<s9::PlusTimes>(
      [](auto A, auto B, auto C, bool acc) { s9::gemm<s9::PlusTimes>(A, B, C, acc); });
}

TEST(Step09Arguments, BadBlocksAndKernelsThrowAndWriteNothing) {
  lab::Matrix A(9, 7), B(7, 8), C0(9, 8);
  A.fill_random(1);
  B.fill_random(2);
  C0.fill_random(3);
  const struct {
    Blocking blocking;
    const char* name;
  } bads[] = {{{0, 4, 4}, "blocking.mc"}, {{4, -1, 4}, "blocking.nc"}, {{4, 4, 0}, "blocking.kc"}};
  for (const auto& bad : bads)
    lab::testing::expect_invalid_argument(
        [&](lab::MatView C) { s9::gemm_with<s9::MinPlus>(A.cview(), B.cview(), C, false, Isa::generic, bad.blocking); },
        C0, bad.name);
  for (Isa isa : lab::step04::kSimdIsas) {
    if (lab::step04::isa_supported(isa)) continue;
    lab::testing::expect_invalid_argument(
        [&](lab::MatView C) { s9::gemm_with<s9::MinPlus>(A.cview(), B.cview(), C, false, isa, {8, 8, 8}); }, C0,
        "isa");
  }
}

TEST(Step09Threads, SameBitsForAnyThreadCount) {
  const uint64_t seed = lab::testing::fresh_seed();
  SCOPED_TRACE(lab::testing::seed_note(seed));
  const Blocking blocks{32, 42, 40};
  // A tall shape (threads split the rows) and a flat one with fewer row panels
  // than threads (threads split the columns too).
  // Each is 18 MFLOP or more, so that up to 8 threads take part (threads_for).
  for (auto [m, n, k] : {std::array<int64_t, 3>{300, 340, 90}, {20, 1200, 400}}) {
    SCOPED_TRACE("m " + std::to_string(m) + ", n " + std::to_string(n) + ", k " + std::to_string(k));
    lab::Matrix A(m, k), B(k, n), C0(m, n);
    A.fill_random(seed);
    B.fill_random(seed + 1);
    C0.fill_random(seed + 2, -2.0, 0.0);
    const int saved = omp_get_max_threads();
    omp_set_num_threads(1);
    lab::Matrix one = C0.clone();
    s9::gemm_with<s9::MinPlus>(A.cview(), B.cview(), one.view(), true, lab::step04::best_isa(), blocks);
    const lab::CheckResult r = s9::check_semiring<s9::MinPlus>(A.cview(), B.cview(), C0.cview(), one.cview(), true);
    EXPECT_TRUE(r.ok) << r.report;
    for (int threads : {2, 3, 5, 8}) {
      omp_set_num_threads(threads);
      lab::Matrix many = C0.clone();
      s9::gemm_with<s9::MinPlus>(A.cview(), B.cview(), many.view(), true, lab::step04::best_isa(), blocks);
      EXPECT_EQ(0, std::memcmp(one.data(), many.data(), sizeof(double) * one.size()))
          << threads << " threads give other bits than one thread: a race, or a tile computed twice?";
    }
    omp_set_num_threads(saved);
  }
}

// step04's ways of the threads (ways.hpp) with the semiring kernels: forced
// ways (a group's threads packing one B panel, jr threads sharing an A block)
// on small blocks, and the ways chosen for up to 128 threads on a product big
// enough for all of them: min-plus and plus-times give the bits of one thread.
TEST(Step09Threads, SameBitsForAnyWays) {
  const uint64_t seed = lab::testing::fresh_seed();
  SCOPED_TRACE(lab::testing::seed_note(seed));
  const Isa isa = lab::step04::best_isa();
  const int saved = omp_get_max_threads();
  auto same_bits = [&](int64_t m, int64_t n, int64_t k, const Blocking& blocks, const std::vector<int>& counts,
                       bool forced) {
    lab::Matrix A(m, k), B(k, n), C0(m, n);
    A.fill_random(seed);
    B.fill_random(seed + 1);
    C0.fill_random(seed + 2, -2.0, 0.0);
    const lab::step04::Ways ways[] = {{2, 1, 1}, {1, 3, 1}, {1, 1, 4}, {2, 3, 2}, {5, 1, 3}};
    for (bool plus_times : {false, true}) {
      auto run = [&](lab::Matrix& C) {
        if (plus_times) s9::gemm_with<s9::PlusTimes>(A.cview(), B.cview(), C.view(), true, isa, blocks);
        else s9::gemm_with<s9::MinPlus>(A.cview(), B.cview(), C.view(), true, isa, blocks);
      };
      omp_set_num_threads(1);
      lab::Matrix one = C0.clone();
      run(one);
      for (size_t i = 0; i < (forced ? std::size(ways) : counts.size()); ++i) {
        if (forced) {
          omp_set_num_threads(2);
          lab::step04::force_ways(ways[i]);
        } else {
          omp_set_num_threads(counts[i]);
        }
        lab::Matrix many = C0.clone();
        run(many);
        lab::step04::force_ways(std::nullopt);
        EXPECT_EQ(0, std::memcmp(one.data(), many.data(), sizeof(double) * one.size()))
            << (plus_times ? "plus-times, " : "min-plus, ")
            << (forced ? "ways " + std::to_string(ways[i].jc) + " x " + std::to_string(ways[i].ic) + " x " +
                             std::to_string(ways[i].jr)
                       : std::to_string(counts[i]) + " threads")
            << " give other bits than one thread: a race, or a tile computed twice?";
      }
      // step04's dealt blocks (each thread takes whole blocks of C from a counter)
      for (const auto d : {lab::step04::DealtBlocks{3, 40, 60}, lab::step04::DealtBlocks{5, 16, 14}}) {
        if (!forced) break;
        omp_set_num_threads(2);
        lab::step04::force_dealt(d);
        lab::Matrix many = C0.clone();
        run(many);
        lab::step04::force_dealt(std::nullopt);
        EXPECT_EQ(0, std::memcmp(one.data(), many.data(), sizeof(double) * one.size()))
            << (plus_times ? "plus-times, " : "min-plus, ") << d.threads << " threads on dealt blocks of " << d.mc
            << " x " << d.nc << " give other bits than one thread: a block skipped, computed twice, or a race?";
      }
    }
  };
  same_bits(301, 347, 131, Blocking{40, 60, 48}, {}, true);
  same_bits(700, 610, 320, lab::step04::default_blocking(isa), {2, 3, 16, 61, 64, 128}, false);
  same_bits(1100, 1100, 40, lab::step04::default_blocking(isa), {8, 16}, false);  // dealt blocks by default
  omp_set_num_threads(saved);
}

TEST(Step09Threads, CalledFromInsideAParallelRegion) {
  // As the APSP tool's blocked recursions and the MPI back-end do: each thread
  // computes its own product, and gemm must not start threads of its own.
  const uint64_t seed = lab::testing::fresh_seed();
  SCOPED_TRACE(lab::testing::seed_note(seed));
  constexpr int kCallers = 3;
  std::vector<lab::Matrix> as, bs, cs;
  for (int t = 0; t < kCallers; ++t) {
    as.emplace_back(40 + 9 * t, 29 + 3 * t);
    bs.emplace_back(29 + 3 * t, 33 + 5 * t);
    cs.emplace_back(40 + 9 * t, 33 + 5 * t);
    as.back().fill_random(seed + 10 * t);
    bs.back().fill_random(seed + 10 * t + 1);
  }
  lab::FirstException error;
#pragma omp parallel for num_threads(kCallers)
  for (int t = 0; t < kCallers; ++t)
    error.run([&] { s9::gemm<s9::MinPlus>(as[t].cview(), bs[t].cview(), cs[t].view(), false); });
  error.rethrow();
  for (int t = 0; t < kCallers; ++t) {
    const lab::CheckResult r =
        s9::check_semiring<s9::MinPlus>(as[t].cview(), bs[t].cview(), cs[t].cview(), cs[t].cview(), false);
    EXPECT_TRUE(r.ok) << "caller " << t << ":\n" << r.report;
  }
}
