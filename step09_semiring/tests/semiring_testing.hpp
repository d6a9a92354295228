// step09 tests — what the CPU and the GPU tests share: the shapes of the
// lab's contract cases, operands framed by guard cells, and one checked run.
//
// The guards around A and B hold a value that would WIN if a kernel read it
// (-1e300 for min-plus, +1e300 for max-plus, NaN for plus-times): a NaN guard
// would not do for min/max, which skip NaN. The guards around C hold a value
// no kernel writes, compared bit for bit afterwards.
#pragma once

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <functional>
#include <limits>
#include <random>
#include <set>
#include <string>
#include <tuple>
#include <type_traits>
#include <vector>

#include "contract.hpp"
#include "lab/todo.hpp"
#include "reference.hpp"
#include "semiring.hpp"

namespace step09_testing {

namespace s9 = lab::step09;

/// A product on host views: gemm<S> itself, or a device version through a copy.
template <class S>
using HostGemm = std::function<void(lab::View<const typename S::value_type>, lab::View<const typename S::value_type>,
                                    lab::View<typename S::value_type>, bool accumulate)>;

/// m, n, k, ld padding, and whether C holds NaN (or A and B do) at the start.
struct Shape {
  int64_t m, n, k, pad;
  bool nan_c = false, nan_ab = false;
};

/// Every shape of the lab's contract cases (lab::testing::contract_cases),
/// without their alpha and beta: sizes 0..129 around the tiles, rectangles,
/// k = 1 and k >> m, n, padded leading dimensions, poisoned operands.
inline std::vector<Shape> contract_shapes() {
  std::vector<Shape> out;
  std::set<std::tuple<int64_t, int64_t, int64_t, int64_t, int>> seen;
  for (const auto& c : lab::testing::contract_cases()) {
    const int poison = int(c.poison);
    if (!seen.insert({c.m, c.n, c.k, c.pad, poison}).second) continue;
    out.push_back({c.m, c.n, c.k, c.pad, c.poison == lab::testing::Poison::nan_c,
                   c.poison == lab::testing::Poison::nan_ab});
  }
  return out;
}

inline std::string shape_name(const Shape& s) {
  return "m" + std::to_string(s.m) + "_n" + std::to_string(s.n) + "_k" + std::to_string(s.k) + "_pad" +
         std::to_string(s.pad) + (s.nan_c ? "_nanC" : "") + (s.nan_ab ? "_nanAB" : "");
}

template <class S>
typename S::value_type winning_guard() {
  if constexpr (std::is_same_v<S, s9::MinPlus>) return -1e300;
  else if constexpr (std::is_same_v<S, s9::MaxPlus>) return 1e300;
  else if constexpr (std::is_same_v<S, s9::MinPlusI32>) return -s9::MinPlusI32::kMax;
  else return std::numeric_limits<double>::quiet_NaN();
}

template <class T>
T c_guard() {
  if constexpr (std::is_same_v<T, double>) {
    const uint64_t bits = 0x7ff4dead0000beefULL;  // a NaN payload no arithmetic produces
    double d;
    std::memcpy(&d, &bits, sizeof d);
    return d;
  } else {
    return T(0x5eadbeef);
  }
}

/// A rows x cols operand inside a frame of guard cells (one cell around it,
/// `pad` more rows in its leading dimension).
template <class T>
struct Framed {
  std::vector<T> full;
  int64_t rows, cols, ld;
  Framed(int64_t r, int64_t c, int64_t pad, T guard)
      : full(size_t((r + 2 + pad) * (c + 2)), guard), rows(r), cols(c), ld(r + 2 + pad) {}
  lab::View<T> view() { return {full.data() + 1 + ld, rows, cols, ld}; }
  lab::View<const T> cview() const { return {full.data() + 1 + ld, rows, cols, ld}; }
};

/// Random operands: doubles uniform in [lo, hi); integers in [-1000, 1000]
/// with about one in 20 infinite.
template <class T>
void fill(lab::View<T> v, std::mt19937_64& rng, double lo, double hi) {
  std::uniform_real_distribution<double> real(lo, hi);
  std::uniform_int_distribution<int> small(-1000, 1000), one_in(0, 19);
  for (int64_t j = 0; j < v.cols; ++j)
    for (int64_t i = 0; i < v.rows; ++i) {
      if constexpr (std::is_same_v<T, double>) v(i, j) = real(rng);
      else v(i, j) = one_in(rng) == 0 ? s9::MinPlusI32::kInf : small(rng);
    }
}

/// Runs `gemm` once on fresh random data of `shape` and checks everything the
/// contract asks: the result (exact for min/max), the guard cells around C,
/// A and B unchanged. `tweak` may change A and B before the run.
template <class S>
void run_shape(const HostGemm<S>& gemm, const Shape& shape, bool accumulate, uint64_t seed,
               const std::function<void(lab::View<typename S::value_type>, lab::View<typename S::value_type>)>&
                   tweak = nullptr) {
  using T = typename S::value_type;
  SCOPED_TRACE(std::string(S::name) + " " + shape_name(shape) + (accumulate ? " accumulate" : " overwrite") +
               ", seed " + std::to_string(seed) + " (rerun with LAB_SEED=" + std::to_string(seed) + ")");
  std::mt19937_64 rng(seed);
  Framed<T> A(shape.m, shape.k, shape.pad, winning_guard<S>()), B(shape.k, shape.n, shape.pad, winning_guard<S>());
  Framed<T> C(shape.m, shape.n, shape.pad, c_guard<T>());
  fill(A.view(), rng, -1.0, 1.0);
  fill(B.view(), rng, -1.0, 1.0);
  // C in a range where its old values and the new sums both win somewhere
  fill(C.view(), rng, std::is_same_v<S, s9::MaxPlus> ? 0.0 : -2.0, std::is_same_v<S, s9::MaxPlus> ? 2.0 : 0.0);
  if constexpr (std::is_same_v<T, double>) {
    const double nan = std::numeric_limits<double>::quiet_NaN();
    auto poison = [&](lab::View<double> v) {
      for (int64_t j = 0; j < v.cols; ++j)
        for (int64_t i = 0; i < v.rows; ++i) v(i, j) = nan;
    };
    if (shape.nan_c && !accumulate) poison(C.view());  // never read: must vanish
    if (shape.nan_ab && !std::is_same_v<S, s9::PlusTimes>) {  // NaN reads as the zero
      poison(A.view());
      poison(B.view());
    }
  }
  if (tweak) tweak(A.view(), B.view());
  const Framed<T> A0 = A, B0 = B, C0 = C;
  try {
    gemm(A.cview(), B.cview(), C.view(), accumulate);
  } catch (const lab::Todo& e) {
    FAIL() << e.what();
  } catch (const std::exception& e) {
    FAIL() << "threw for a valid call: " << e.what();
  }
  const lab::CheckResult r = s9::check_semiring<S>(A0.cview(), B0.cview(), C0.cview(), C.cview(), accumulate);
  EXPECT_TRUE(r.ok) << "wrong result:\n" << r.report;
  if constexpr (!std::is_same_v<S, s9::PlusTimes> && std::is_same_v<T, double>) {
    for (int64_t j = 0; j < shape.n; ++j)
      for (int64_t i = 0; i < shape.m; ++i)
        ASSERT_FALSE(std::isnan(C.cview()(i, j)))
            << "NaN at C(" << i << ", " << j << "): min/max never make one; a NaN sum must lose to the "
            << "accumulator (the handout's NaN rule: vminpd/vmaxpd return their second operand when either is "
            << "NaN, so the sum goes first, min(a + b, acc); on Arm vminnmq_f64/vmaxnmq_f64 skip a NaN, "
            << "vminq_f64/vmaxq_f64 return it; on the GPU a NaN sum must fail the comparison)";
  }
  // Guards of C: every cell of the frame outside the m x n block, bit for bit.
  for (int64_t j = 0; j < shape.n + 2; ++j)
    for (int64_t i = 0; i < C.ld; ++i) {
      const bool inside = i >= 1 && i <= shape.m && j >= 1 && j <= shape.n;
      if (inside) continue;
      const T got = C.full[size_t(i + j * C.ld)];
      ASSERT_EQ(0, std::memcmp(&got, &C0.full[size_t(i + j * C.ld)], sizeof(T)))
          << "wrote outside C, at frame cell (" << i << ", " << j << ")";
    }
  EXPECT_EQ(0, std::memcmp(A.full.data(), A0.full.data(), sizeof(T) * A.full.size())) << "changed A";
  EXPECT_EQ(0, std::memcmp(B.full.data(), B0.full.data(), sizeof(T) * B.full.size())) << "changed B";
}

/// Changes A and B before a run: NaN, -inf and +inf in about one entry in ten
/// (seeded, so that two back-ends see the same matrices).
inline std::function<void(lab::MatView, lab::MatView)> scatter_specials(uint64_t seed) {
  return [seed](lab::MatView A, lab::MatView B) {
    std::mt19937_64 rng(seed ^ 0xabcdef);
    const double specials[] = {std::numeric_limits<double>::quiet_NaN(), -std::numeric_limits<double>::infinity(),
                               std::numeric_limits<double>::infinity()};
    for (lab::MatView v : {A, B})
      for (int64_t j = 0; j < v.cols; ++j)
        for (int64_t i = 0; i < v.rows; ++i)
          if (rng() % 10 == 0) v(i, j) = specials[rng() % 3];
  };
}

/// Changes A and B before a run: row 3 of A and column 5 of B all `inf` (no
/// path through them), and a block of `inf` in each, scaled to the shape.
template <class T>
void cut_paths(lab::View<T> A, lab::View<T> B, T inf) {
  for (int64_t q = 0; q < A.cols; ++q) A(3, q) = inf;
  for (int64_t q = 0; q < B.rows; ++q) B(q, 5) = inf;
  for (int64_t i = A.rows / 4; i < 3 * A.rows / 4; ++i)
    for (int64_t q = A.cols / 8; q < A.cols / 2; ++q) A(i, q) = inf;
  for (int64_t q = 0; q < 3 * B.rows / 4; ++q)
    for (int64_t j = B.cols / 2; j < B.cols; ++j) B(q, j) = inf;
}

/// The lab's bad-argument checks (shapes, ld, null data: std::invalid_argument
/// naming the argument, C untouched) on a FP64 semiring product.
template <class S>
void bad_arguments(const HostGemm<S>& gemm) {
  lab::testing::run_bad_argument_checks(lab::testing::Subject{
      [gemm](double, lab::ConstMatView A, lab::ConstMatView B, double beta, lab::MatView C) {
        gemm(A, B, C, beta != 0.0);
      }});
}

}  // namespace step09_testing
