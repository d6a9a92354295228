// step04 tests: the shared kernel contract for dgemm (widest kernel, default
// blocks) and for every kernel this CPU runs with small odd blocks (so every
// loop takes several passes and every edge is hit), default blocks crossed on
// a bigger shape, the thread split, nested calls, bad arguments, dispatch.
#include <omp.h>

#include <algorithm>
#include <array>
#include <cstring>
#include <iterator>
#include <stdexcept>
#include <string>
#include <vector>

#include "contract.hpp"
#include "lab/first_exception.hpp"
#include "lab/check.hpp"
#include "lab/machine.hpp"
#include "microkernel.hpp"
#include "simd.hpp"
#include "ways.hpp"

using lab::step04::Blocking;
using lab::step04::Isa;

LAB_CONTRACT_SUITE(Step04Simd, ::lab::testing::Subject{&lab::step04::dgemm});

namespace {

struct Problem {
  lab::Matrix A, B, C0;
  Problem(int64_t m, int64_t n, int64_t k, uint64_t seed) : A(m, k, m + 1), B(k, n, k + 2), C0(m, n, m + 3) {
    A.fill_random(seed);
    B.fill_random(seed + 1);
    C0.fill_random(seed + 2);
  }
};

// ---- the contract for every kernel, with blocks far smaller than the defaults
struct KernelCase {
  Isa isa;
  Blocking blocking;
  lab::testing::Case c;
};

const Blocking kTinyBlocks{1, 1, 5};    // one MR x NR tile per block, k in slices of 5
const Blocking kOddBlocks{37, 45, 19};  // rounded up to multiples of MR and NR

std::vector<KernelCase> kernel_cases() {
  std::vector<KernelCase> out;
  for (Isa isa : lab::step04::kBuiltIsas) {
    for (const Blocking& b : {kTinyBlocks, kOddBlocks}) {
      for (const auto& c : lab::testing::contract_cases()) out.push_back({isa, b, c});
    }
  }
  return out;
}

std::string kernel_case_name(const ::testing::TestParamInfo<KernelCase>& info) {
  const KernelCase& k = info.param;
  return std::string(lab::step04::isa_name(k.isa)) + (k.blocking.kc == kTinyBlocks.kc ? "_tiny_" : "_odd_") +
         lab::testing::case_name(::testing::TestParamInfo<lab::testing::Case>(k.c, info.index));
}

// How GoogleTest prints a case in reports (instead of its bytes).
[[maybe_unused]] void PrintTo(const KernelCase& k, std::ostream* os) {
  *os << lab::step04::isa_name(k.isa) << " blocks " << k.blocking.mc << "x" << k.blocking.nc << "x" << k.blocking.kc
      << ", " << lab::testing::describe(k.c);
}

class Step04Kernels : public ::testing::TestWithParam<KernelCase> {};

}  // namespace

TEST_P(Step04Kernels, MatchReference) {
  const KernelCase& k = GetParam();
  // A plain skip: the other kernels still run, so the whole test is not "skipped".
  if (!lab::step04::isa_supported(k.isa))
    GTEST_SKIP() << "this CPU cannot run " << lab::step04::isa_name(k.isa);
  const lab::testing::Subject s{
      [&](double alpha, lab::ConstMatView A, lab::ConstMatView B, double beta, lab::MatView C) {
        lab::step04::dgemm_with(alpha, A, B, beta, C, k.isa, k.blocking);
      }};
  lab::testing::run_contract_case(s, k.c, lab::testing::fresh_seed());
}

INSTANTIATE_TEST_SUITE_P(Contract, Step04Kernels, ::testing::ValuesIn(kernel_cases()), kernel_case_name);

TEST(Step04Blocks, DefaultBlocksCrossedInEveryLoop) {
  const uint64_t seed = lab::testing::fresh_seed();
  SCOPED_TRACE(lab::testing::seed_note(seed));
  const Isa isa = lab::step04::best_isa();
  const Blocking d = lab::step04::default_blocking(isa);
  // One more than a block in each dimension, plus a ragged edge.
  const Problem p(d.mc + 7, d.nc + 5, d.kc + 3, seed);
  lab::Matrix C = p.C0.clone();
  lab::step04::dgemm(2.5, p.A.cview(), p.B.cview(), -1.0, C.view());
  const auto r = lab::check_against_reference(2.5, p.A.cview(), p.B.cview(), -1.0, p.C0.cview(), C.cview());
  EXPECT_TRUE(r.ok) << r.report;
  // The deeper blocks of a C too big for L3, crossed the same way.
  const lab::CacheInfo caches = lab::cache_info();
  const Blocking deep = lab::step04::deep_blocking_for(isa, caches);
  const Problem q(deep.mc + 7, deep.nc + 5, deep.kc + 3, seed + 1);
  lab::Matrix D = q.C0.clone();
  lab::step04::dgemm_with(2.5, q.A.cview(), q.B.cview(), -1.0, D.view(), isa, deep);
  const auto rd = lab::check_against_reference(2.5, q.A.cview(), q.B.cview(), -1.0, q.C0.cview(), D.cview());
  EXPECT_TRUE(rd.ok) << "deep blocks mc " << deep.mc << ", nc " << deep.nc << ", kc " << deep.kc << ": "
                     << rd.report;
}

TEST(Step04Threads, SameBitsForAnyThreadCount) {
  const uint64_t seed = lab::testing::fresh_seed();
  SCOPED_TRACE(lab::testing::seed_note(seed));
  const Blocking blocks{32, 42, 40};
  // A tall shape (threads split the rows) and a flat one with fewer row panels
  // than threads (threads split the columns too, some stay idle).
  // Each is 18 MFLOP or more, so that up to 8 threads take part (threads_for).
  for (auto [m, n, k] : {std::array<int64_t, 3>{300, 340, 90}, {20, 1200, 400}}) {
    SCOPED_TRACE("m " + std::to_string(m) + ", n " + std::to_string(n) + ", k " + std::to_string(k));
    const Problem p(m, n, k, seed);
    const int saved = omp_get_max_threads();
    omp_set_num_threads(1);
    lab::Matrix one = p.C0.clone();
    lab::step04::dgemm_with(1.0, p.A.cview(), p.B.cview(), 0.5, one.view(), lab::step04::best_isa(), blocks);
    const auto r =
        lab::check_against_reference(1.0, p.A.cview(), p.B.cview(), 0.5, p.C0.cview(), one.cview());
    EXPECT_TRUE(r.ok) << r.report;
    for (int threads : {2, 3, 5, 8}) {
      omp_set_num_threads(threads);
      lab::Matrix many = p.C0.clone();
      lab::step04::dgemm_with(1.0, p.A.cview(), p.B.cview(), 0.5, many.view(), lab::step04::best_isa(),
                              blocks);
      EXPECT_EQ(0, std::memcmp(one.data(), many.data(), sizeof(double) * one.size()))
          << threads << " threads give other bits than one thread: a race, or a tile computed twice?";
    }
    omp_set_num_threads(saved);
  }
}

TEST(Step04Threads, CalledFromInsideAParallelRegion) {
  // As the MPI step and other callers with threads of their own do: each thread
  // computes its own product, and dgemm must not start threads of its own.
  const uint64_t seed = lab::testing::fresh_seed();
  SCOPED_TRACE(lab::testing::seed_note(seed));
  constexpr int kCallers = 3;
  std::vector<Problem> problems;
  std::vector<lab::Matrix> results;
  for (int t = 0; t < kCallers; ++t) {
    problems.emplace_back(40 + 9 * t, 33 + 5 * t, 29 + 3 * t, seed + 10 * t);
    results.push_back(problems.back().C0.clone());
  }
  lab::FirstException error;
#pragma omp parallel for num_threads(kCallers)
  for (int t = 0; t < kCallers; ++t) {
    error.run([&] {
      lab::step04::dgemm(1.0, problems[t].A.cview(), problems[t].B.cview(), 1.0, results[t].view());
    });
  }
  error.rethrow();
  for (int t = 0; t < kCallers; ++t) {
    const Problem& p = problems[t];
    const auto r =
        lab::check_against_reference(1.0, p.A.cview(), p.B.cview(), 1.0, p.C0.cview(), results[t].cview());
    EXPECT_TRUE(r.ok) << "caller " << t << ":\n" << r.report;
  }
}

TEST(Step04Arguments, BadBlocksThrowAndWriteNothing) {
  const Problem p(9, 8, 7, 1);
  const struct {
    Blocking blocking;
    const char* name;
  } bads[] = {{{0, 4, 4}, "blocking.mc"}, {{4, -1, 4}, "blocking.nc"}, {{4, 4, 0}, "blocking.kc"}};
  for (const auto& bad : bads)
    lab::testing::expect_invalid_argument(
        [&](lab::MatView C) {
          lab::step04::dgemm_with(1.0, p.A.cview(), p.B.cview(), 0.0, C, Isa::generic, bad.blocking);
        },
        p.C0, bad.name);
}

TEST(Step04Arguments, KernelTheCpuLacksThrows) {
  const Problem p(9, 8, 7, 1);
  bool any = false;
  for (Isa isa : lab::step04::kSimdIsas) {
    if (lab::step04::isa_supported(isa)) continue;
    any = true;
    lab::Matrix C = p.C0.clone();
    EXPECT_THROW(lab::step04::dgemm_with(1.0, p.A.cview(), p.B.cview(), 0.0, C.view(), isa, {8, 8, 8}),
                 std::invalid_argument);
    EXPECT_EQ(0, std::memcmp(C.data(), p.C0.data(), sizeof(double) * C.size()));
  }
  if (!any) GTEST_SKIP() << "this CPU runs every kernel";
}

// kBuiltIsas (what the tests run) names exactly the kernels this build has.
TEST(Step04Dispatch, BuiltIsasAreTheKernelsBuilt) {
  for (Isa isa : lab::step04::kIsas) {
    const auto& built = lab::step04::kBuiltIsas;
    const bool listed = std::find(std::begin(built), std::end(built), isa) != std::end(built);
    EXPECT_EQ(listed, lab::step04::microkernel(isa).fn != nullptr) << lab::step04::isa_name(isa);
  }
}

TEST(Step04Dispatch, ChosenKernelRunsHere) {
  const auto& choice = lab::step04::kernel_choice();
  SCOPED_TRACE(choice.why);
  EXPECT_TRUE(lab::step04::isa_supported(Isa::generic));
  EXPECT_TRUE(lab::step04::isa_supported(choice.isa));
  EXPECT_EQ(lab::step04::best_isa(), choice.isa);
  EXPECT_FALSE(choice.why.empty());
  // The harness reads the widest SIMD level on its own; a kernel that level
  // lacks would not run (the choice may be narrower: it is measured).
  if (lab::cpu_simd_level() != "avx512") {
    EXPECT_NE(choice.isa, Isa::avx512);
  }
  if (lab::cpu_simd_level() == "generic") {
    EXPECT_EQ(choice.isa, Isa::generic);
  }
}

TEST(Step04Blocks, FromTheCacheSizes) {
  // The handout's arithmetic, on the caches of the lab's CPUs (sysfs sizes).
  const lab::CacheInfo xeon{48 << 10, 2 << 20, 105 << 20, 64};  // Xeon (Sapphire Rapids): L1d 48 KiB, L2 2 MiB
  const lab::CacheInfo zen4{32 << 10, 1 << 20, 32 << 20, 64};   // EPYC Zen 4: L1d 32 KiB, L2 1 MiB
  const lab::CacheInfo zen5{48 << 10, 1 << 20, 32 << 20, 64};   // EPYC Zen 5: L1d 48 KiB, L2 1 MiB
  struct Want {
    lab::CacheInfo caches;
    Isa isa;
    Blocking blocks;
  };
  const Want wants[] = {
      {xeon, Isa::avx512, {592, 4088, 216}}, {zen4, Isa::avx512, {448, 4088, 144}},
      {zen5, Isa::avx512, {288, 4088, 216}}, {zen4, Isa::avx2, {192, 4092, 336}},
      {xeon, Isa::avx2, {256, 4092, 512}},
  };
  for (const Want& w : wants) {
    const Blocking b = lab::step04::blocking_for(w.isa, w.caches);
    EXPECT_EQ(b.mc, w.blocks.mc) << lab::step04::isa_name(w.isa) << " L1d " << w.caches.l1d;
    EXPECT_EQ(b.nc, w.blocks.nc) << lab::step04::isa_name(w.isa) << " L1d " << w.caches.l1d;
    EXPECT_EQ(b.kc, w.blocks.kc) << lab::step04::isa_name(w.isa) << " L1d " << w.caches.l1d;
  }
  // The deeper blocks: kc doubles, mc comes from 7/8 of L2.
  const Want deep[] = {
      {xeon, Isa::avx512, {528, 4088, 432}},
      {zen4, Isa::avx512, {384, 4088, 288}},
      {zen4, Isa::avx2, {168, 3084, 680}},
  };
  for (const Want& w : deep) {
    const Blocking b = lab::step04::deep_blocking_for(w.isa, w.caches);
    EXPECT_EQ(b.mc, w.blocks.mc) << lab::step04::isa_name(w.isa) << " L1d " << w.caches.l1d << ", deep";
    EXPECT_EQ(b.nc, w.blocks.nc) << lab::step04::isa_name(w.isa) << " L1d " << w.caches.l1d << ", deep";
    EXPECT_EQ(b.kc, w.blocks.kc) << lab::step04::isa_name(w.isa) << " L1d " << w.caches.l1d << ", deep";
    EXPECT_LE(b.mc * b.kc * 8, w.caches.l2) << "the block of A fits in L2";
  }
  // Tiny or unreported caches still give usable blocks.
  for (Isa isa : lab::step04::kIsas) {
    const lab::CacheInfo tiny{1024, 4096, 8192, 64};
    for (const Blocking& b : {lab::step04::blocking_for(isa, tiny), lab::step04::deep_blocking_for(isa, tiny)}) {
      EXPECT_GE(b.kc, 32);
      EXPECT_GE(b.mc, lab::step04::microkernel(isa).mr);
      EXPECT_GE(b.nc, lab::step04::microkernel(isa).nr);
    }
  }
}

TEST(Step04Blocks, DeeperWhereAPassSweepsMoreCThanL3Holds) {
  // The deeper blocks go to a call exactly where the layout of the usual ones
  // sweeps more C per pass of kc than half of L3 holds.
  const lab::CacheInfo zen4{32 << 10, 1 << 20, 32 << 20, 64};    // the Zen 4 VM
  const lab::CacheInfo xeon{48 << 10, 2 << 20, 300 << 20, 64};   // the GPU hosts' Xeon
  const Isa isa = Isa::avx512;
  const auto mk = lab::step04::microkernel(isa);
  auto deep = [&](const lab::CacheInfo& caches, int threads, int64_t n) {
    const Blocking b = lab::step04::blocking_for_call(isa, caches, threads, n, n, n);
    const Blocking base = lab::step04::blocking_for(isa, caches), d = lab::step04::deep_blocking_for(isa, caches);
    const auto l = lab::step04::layout_for(threads, n, n, n, mk.mr, mk.nr, base, caches.l3);
    const bool swept_over = double(lab::step04::c_per_pass(l, n, n)) * 8 > double(caches.l3) / 2;
    EXPECT_EQ(b.kc, swept_over ? d.kc : base.kc) << threads << " threads, n " << n;
    EXPECT_EQ(b.mc, swept_over ? d.mc : base.mc) << threads << " threads, n " << n;
    return b.kc == d.kc && b.mc == d.mc;
  };
  EXPECT_TRUE(deep(zen4, 1, 2048));    // one pass sweeps all 32 MiB of C
  EXPECT_TRUE(deep(zen4, 2, 4096));
  EXPECT_FALSE(deep(zen4, 1, 1024));   // 8 MiB
  EXPECT_FALSE(deep(xeon, 1, 4096));   // 128 MiB: in L3's half
  EXPECT_TRUE(deep(xeon, 1, 8192));    // m x nc = 8192 x 4088
  EXPECT_FALSE(deep(xeon, 16, 8192));  // dealt blocks: 16 of mc x nc at a time
  for (int threads : {2, 4, 8, 32, 64})
    for (int64_t n : {1000, 3000, 6000, 9000}) {
      deep(zen4, threads, n);
      deep(xeon, threads, n);
    }
  // C per pass, as the layouts sweep it.
  const lab::step04::Layout ways{{2, 4, 1}, 512, 1000, 200};
  EXPECT_EQ(lab::step04::c_per_pass(ways, 3000, 5000), 3000 * 2000);
  EXPECT_EQ(lab::step04::c_per_pass(ways, 3000, 1500), 3000 * 1500);
  lab::step04::Layout dealt{{16, 1, 1}, 512, 600, 200};
  dealt.dealt = true;
  EXPECT_EQ(lab::step04::c_per_pass(dealt, 8192, 8192), 16 * 512 * 600);
  EXPECT_EQ(lab::step04::c_per_pass(dealt, 1000, 1000), 1000 * 1000);
}

// ---- the short path for small products (small.cpp), with each instruction set
// this CPU runs: every width of tile up to the kernel's and past it, masked
// rows on both vectors, beta == 0 over NaN, guard cells around C. (x86 only:
// elsewhere small products take the five loops, tested with the contract.)
TEST(Step04Small, EveryEdgeWithEachKernel) {
#if !defined(__x86_64__) && !defined(_M_X64)
  GTEST_SKIP() << "the short path for small products is x86's (AVX2, AVX-512); here they take the five loops";
#endif
  const uint64_t seed = lab::testing::fresh_seed();
  SCOPED_TRACE(lab::testing::seed_note(seed));
  for (Isa isa : {Isa::avx512, Isa::avx2}) {
    if (!lab::step04::isa_supported(isa)) continue;
    SCOPED_TRACE(lab::step04::isa_name(isa));
    for (int64_t m : {1, 3, 4, 5, 8, 9, 15, 16, 17, 33})
      for (int64_t n : {1, 2, 5, 6, 7, 11, 12, 13, 25})
        for (int64_t k : {1, 2, 19}) {
          SCOPED_TRACE("m " + std::to_string(m) + ", n " + std::to_string(n) + ", k " + std::to_string(k));
          const Problem p(m, n, k, seed);
          for (double beta : {0.0, -0.5}) {
            lab::Matrix C = p.C0.clone();
            if (beta == 0.0) C.fill_nan();  // guard cells too: C must not be read
            for (int64_t j = 0; j < n; ++j)  // the guard cells below each column keep a known value
              for (int64_t i = m; i < C.ld(); ++i) C(i, j) = 7.0;
            const lab::Matrix before = C.clone();
            ASSERT_TRUE(lab::step04::small_product(1.5, p.A.cview(), p.B.cview(), beta, C.view(), isa));
            const auto r =
                lab::check_against_reference(1.5, p.A.cview(), p.B.cview(), beta, p.C0.cview(), C.cview());
            EXPECT_TRUE(r.ok) << "beta " << beta << "\n" << r.report;
            for (int64_t j = 0; j < n; ++j)
              for (int64_t i = m; i < C.ld(); ++i)
                ASSERT_EQ(C(i, j), before(i, j)) << "guard cell (" << i << ", " << j << ") written";
          }
        }
  }
  // Too big for the short path: it says so and leaves C alone.
  const Problem big(200, 200, 200, seed);
  lab::Matrix C = big.C0.clone();
  EXPECT_FALSE(lab::step04::small_product(1.0, big.A.cview(), big.B.cview(), 0.0, C.view(), Isa::avx2));
  EXPECT_EQ(0, std::memcmp(C.data(), big.C0.data(), sizeof(double) * C.size()));
  EXPECT_FALSE(lab::step04::small_product(1.0, big.A.cview(), big.B.cview(), 0.0, C.view(), Isa::generic));
}
