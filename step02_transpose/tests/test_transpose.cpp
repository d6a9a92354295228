// step02 tests: the shared kernel contract, the transpose on its own, and the
// thread split (any thread count gives the same bits: no two threads share an
// element of C).
#include <omp.h>

#include <cstring>

#include "contract.hpp"
#include "lab/check.hpp"
#include "transpose.hpp"

LAB_CONTRACT_SUITE(Step02Transpose, ::lab::testing::Subject{&lab::step02::dgemm});

namespace {

constexpr double kGuard = 777.0;

// Sets the OpenMP thread count for one scope.
class Threads {
 public:
  explicit Threads(int n) : saved_(omp_get_max_threads()) { omp_set_num_threads(n); }
  ~Threads() { omp_set_num_threads(saved_); }

 private:
  int saved_;
};

}  // namespace

TEST(Step02TransposeScaled, EveryElementMovesAndIsScaled) {
  const uint64_t seed = lab::testing::fresh_seed();
  SCOPED_TRACE(lab::testing::seed_note(seed));
  const int64_t shapes[][2] = {{1, 1}, {7, 3}, {3, 7}, {33, 17}, {64, 65}};
  for (auto [m, k] : shapes) {
    for (double alpha : {1.0, -2.5}) {
      SCOPED_TRACE("A is " + std::to_string(m) + " x " + std::to_string(k) + ", alpha " +
                   std::to_string(alpha));
      lab::Matrix A(m, k, m + 3);
      A.fill_random(seed);
      lab::Matrix At(k, m, k + 2);  // padded, so a write past column end shows in the guard cells
      At.fill_all(kGuard);
      lab::step02::transpose_scaled(alpha, A.cview(), At.view());
      for (int64_t i = 0; i < m; ++i) {
        for (int64_t p = 0; p < k; ++p)
          ASSERT_EQ(At(p, i), alpha * A(i, p)) << "At(" << p << ", " << i << ")";
      }
      std::string where;
      EXPECT_TRUE(lab::guards_intact(At, 0, 0, k, m, kGuard, &where)) << "wrote outside At: " << where;
    }
  }
}

TEST(Step02Threads, SameBitsForAnyThreadCount) {
  const uint64_t seed = lab::testing::fresh_seed();
  SCOPED_TRACE(lab::testing::seed_note(seed));
  const int64_t m = 97, n = 61, k = 83;
  lab::Matrix A(m, k), B(k, n), C0(m, n);
  A.fill_random(seed);
  B.fill_random(seed + 1);
  C0.fill_random(seed + 2);
  lab::Matrix one = C0.clone();
  {
    Threads t(1);
    lab::step02::dgemm(1.5, A.cview(), B.cview(), 0.5, one.view());
  }
  const lab::CheckResult r =
      lab::check_against_reference(1.5, A.cview(), B.cview(), 0.5, C0.cview(), one.cview());
  ASSERT_TRUE(r.ok) << r.report;
  for (int threads : {2, 3, 5}) {
    Threads t(threads);
    lab::Matrix many = C0.clone();
    lab::step02::dgemm(1.5, A.cview(), B.cview(), 0.5, many.view());
    EXPECT_EQ(0, std::memcmp(one.data(), many.data(), sizeof(double) * one.size()))
        << threads << " threads give other bits than one thread: do threads share elements of C, or a variable (a sum "
           "declared outside the parallel loop)?";
  }
}
