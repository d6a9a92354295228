// step09 — given: the plain reference product of any semiring, and the
// checks the tests and the benchmark hold every kernel to.
//
// For MinPlus and MaxPlus the check is exact equality: each term A(i,q) + B(q,j)
// is rounded once whatever the order, and min / max of numbers is exact, so a
// kernel that differs from the reference in any bit (up to the sign of a zero)
// has a bug. PlusTimes is checked with the harness's error bound (lab/check.hpp).
#pragma once

#include <cstdint>
#include <cstdio>
#include <limits>
#include <random>
#include <string>
#include <type_traits>
#include <vector>

#include "lab/check.hpp"
#include "lab/matrix.hpp"
#include "semiring.hpp"

namespace lab::step09 {

/// C <- A (x) B, or C (+) (A (x) B): one column of C at a time, terms added in
/// the order q = 0, 1, ..., k-1; OpenMP over the columns. Keeps the special
/// values of semiring.hpp because it uses nothing but S::add and S::mul.
template <class S>
void reference_gemm(View<const typename S::value_type> A, View<const typename S::value_type> B,
                    View<typename S::value_type> C, bool accumulate) {
  using T = typename S::value_type;
  const int64_t m = C.rows, n = C.cols, k = A.cols;
#pragma omp parallel
  {
    std::vector<T> acc(size_t(m > 0 ? m : 0));
#pragma omp for schedule(static)
    for (int64_t j = 0; j < n; ++j) {
      for (auto& x : acc) x = S::zero();
      for (int64_t q = 0; q < k; ++q) {
        const T b = B(q, j);
        for (int64_t i = 0; i < m; ++i) acc[i] = S::add(acc[i], S::mul(A(i, q), b));
      }
      for (int64_t i = 0; i < m; ++i) C(i, j) = accumulate ? S::add(C(i, j), acc[i]) : acc[i];
    }
  }
}

/// Exact comparison of C with C_ref (== on values: +0 equals -0, a NaN never
/// matches); the report lists the first few differences. Where C is a part of
/// a bigger matrix, `rows` and `cols` (if not empty) map its indices to that one's.
template <class T>
CheckResult compare_exact(View<const T> C, View<const T> C_ref, const std::vector<int64_t>& rows = {},
                          const std::vector<int64_t>& cols = {}) {
  CheckResult r;
  std::vector<char> bad(size_t(C.rows > 0 && C.cols > 0 ? C.rows * C.cols : 0), 0);
  for (int64_t j = 0; j < C.cols; ++j) {
    for (int64_t i = 0; i < C.rows; ++i) {
      ++r.checked;
      const T got = C(i, j), want = C_ref(i, j);
      if (got == want) continue;
      bad[size_t(i + j * C.rows)] = got != got ? 'N' : 'X';
      if (++r.mismatches <= 8) {
        char line[200];
        std::snprintf(line, sizeof line, "  C(%lld, %lld) = %.17g, want %.17g exactly\n",
                      (long long)(rows.empty() ? i : rows[i]), (long long)(cols.empty() ? j : cols[j]),
                      double(got), double(want));
        r.report += line;
      }
    }
  }
  r.ok = r.mismatches == 0;
  if (!r.ok) {
    r.worst_ratio = std::numeric_limits<double>::infinity();
    r.report = std::to_string(r.mismatches) + " of " + std::to_string(r.checked) + " elements differ (mismatch):\n" +
               r.report + block_map(C.rows, C.cols, bad);
  }
  return r;
}

namespace detail {

// A copy of the rows (or columns) of `src` listed in `pick`, as a matrix of its own.
template <class T>
std::vector<T> gather(View<const T> src, const std::vector<int64_t>& pick, bool rows) {
  const int64_t r = rows ? int64_t(pick.size()) : src.rows, c = rows ? src.cols : int64_t(pick.size());
  std::vector<T> out(size_t(r * c));
  for (int64_t j = 0; j < c; ++j)
    for (int64_t i = 0; i < r; ++i) out[size_t(i + j * r)] = rows ? src(pick[i], j) : src(i, pick[j]);
  return out;
}

}  // namespace detail

/// Checks C (computed from C0 by gemm<S>(A, B, C, accumulate)) against the
/// reference. `full`: every element; otherwise whole rows and columns of C: the
/// first and the last (where edge tiles are) and `samples` random ones of
/// each, which costs (2 + samples) (m + n) k instead of m n k.
template <class S>
CheckResult check_semiring(View<const typename S::value_type> A, View<const typename S::value_type> B,
                           View<const typename S::value_type> C0, View<const typename S::value_type> C,
                           bool accumulate, bool full = true, int samples = 6, uint64_t seed = 1) {
  using T = typename S::value_type;
  const int64_t m = C.rows, n = C.cols, k = A.cols;
  if constexpr (std::is_same_v<S, PlusTimes>) {
    const double beta = accumulate ? 1.0 : 0.0;
    return full ? check_against_reference(1.0, A, B, beta, C0, C) : freivalds_check(1.0, A, B, beta, C0, C);
  } else {
    if (full || m * n == 0) {
      std::vector<T> ref(size_t(m * n));
      View<T> R{ref.data(), m, n, m > 0 ? m : 1};
      for (int64_t j = 0; j < n; ++j)
        for (int64_t i = 0; i < m; ++i) R(i, j) = C0(i, j);
      reference_gemm<S>(A, B, R, accumulate);
      return compare_exact<T>(C, R);
    }
    std::mt19937_64 rng(seed);
    auto pick = [&](int64_t extent) {
      std::vector<int64_t> p{0, extent - 1};
      for (int s = 0; s < samples; ++s) p.push_back(int64_t(rng() % uint64_t(extent)));
      return p;
    };
    CheckResult total;
    for (const bool rows : {true, false}) {
      const std::vector<int64_t> p = pick(rows ? m : n);
      const int64_t s = int64_t(p.size());
      // rows: the picked rows of A against all of B; columns: all of A against the picked columns of B
      const std::vector<T> a = rows ? detail::gather(A, p, true) : std::vector<T>{};
      const std::vector<T> b = rows ? std::vector<T>{} : detail::gather(B, p, false);
      std::vector<T> ref = detail::gather(C0, p, rows);
      const std::vector<T> got = detail::gather(C, p, rows);
      const int64_t rr = rows ? s : m, rc = rows ? n : s;
      const View<const T> As = rows ? View<const T>{a.data(), s, k, s} : A;
      const View<const T> Bs = rows ? B : View<const T>{b.data(), k, s, k > 0 ? k : 1};
      reference_gemm<S>(As, Bs, View<T>{ref.data(), rr, rc, rr}, accumulate);
      const CheckResult part = compare_exact<T>(View<const T>{got.data(), rr, rc, rr},
                                                View<const T>{ref.data(), rr, rc, rr}, rows ? p : std::vector<int64_t>{},
                                                rows ? std::vector<int64_t>{} : p);
      total.checked += part.checked;
      total.mismatches += part.mismatches;
      total.report += part.report;
    }
    total.ok = total.mismatches == 0;
    if (!total.ok) total.worst_ratio = std::numeric_limits<double>::infinity();
    return total;
  }
}

}  // namespace lab::step09
