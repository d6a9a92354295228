// Elementwise and randomized checks with the bound derived in lab/check.hpp.
#include "lab/check.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <sstream>
#include <vector>

#include "lab/gemm_args.hpp"

#ifdef _OPENMP
#include <omp.h>
#endif

namespace lab {
namespace {

constexpr double kEps = std::numeric_limits<double>::epsilon();  // 2^-52
constexpr int kShowMismatches = 8;
constexpr int64_t kMapCells = 16;  // the block map is at most 16 x 16 characters

// |alpha| (|A||B|) + |beta| |C0|, the magnitude the rounding error scales with.
Matrix magnitude(double alpha, ConstMatView A, ConstMatView B, double beta, ConstMatView C0) {
  const int64_t m = C0.rows, n = C0.cols, k = A.cols;
  Matrix mag(m, n);
#pragma omp parallel for schedule(static)
  for (int64_t j = 0; j < n; ++j) {
    double* g = mag.data() + j * mag.ld();
    for (int64_t i = 0; i < m; ++i) g[i] = beta == 0.0 ? 0.0 : std::fabs(beta) * std::fabs(C0(i, j));
    if (alpha == 0.0) continue;
    for (int64_t p = 0; p < k; ++p) {
      const double b = std::fabs(alpha) * std::fabs(B(p, j));
      const double* a = A.data + p * A.ld;
      for (int64_t i = 0; i < m; ++i) g[i] += std::fabs(a[i]) * b;
    }
  }
  return mag;
}

}  // namespace

std::string block_map(int64_t m, int64_t n, const std::vector<char>& bad) {
  const int64_t bm = std::max<int64_t>(1, (m + kMapCells - 1) / kMapCells);
  const int64_t bn = std::max<int64_t>(1, (n + kMapCells - 1) / kMapCells);
  std::ostringstream out;
  out << "block map (" << bm << " x " << bn << " elements per character; '.' right, 'X' wrong, 'N' NaN/Inf):\n";
  for (int64_t bi = 0; bi * bm < m; ++bi) {
    out << "  ";
    for (int64_t bj = 0; bj * bn < n; ++bj) {
      char c = '.';
      for (int64_t j = bj * bn; j < std::min(n, (bj + 1) * bn); ++j)
        for (int64_t i = bi * bm; i < std::min(m, (bi + 1) * bm); ++i) {
          const char v = bad[i + j * m];
          if (v == 'N') c = 'N';
          else if (v == 'X' && c == '.') c = 'X';
        }
      out << c;
    }
    out << '\n';
  }
  return out.str();
}

CheckResult check_gemm(double alpha, ConstMatView A, ConstMatView B, double beta, ConstMatView C0,
                       ConstMatView C, ConstMatView C_ref) {
  check_gemm_args(A, B, C0);
  const int64_t m = C.rows, n = C.cols, k = A.cols;
  CheckResult r;
  if (m == 0 || n == 0) return r;
  const Matrix mag = magnitude(alpha, A, B, beta, C0);
  const double scale = kBoundConstant * double(k + 2) * kEps;
  std::vector<char> bad(static_cast<size_t>(m * n), 0);
  std::ostringstream first;
  int64_t unchanged = 0;  // wrong elements that still hold C's value from before the call
  for (int64_t j = 0; j < n; ++j) {
    for (int64_t i = 0; i < m; ++i) {
      const double got = C(i, j), want = C_ref(i, j);
      const double bound = scale * mag(i, j);
      const double err = std::fabs(got - want);
      bool wrong;
      char kind = 'X';
      if (!std::isfinite(got) && std::isfinite(want)) {
        wrong = true;
        kind = 'N';
      } else if (std::isnan(want)) {
        wrong = !std::isnan(got);  // the reference itself is NaN (NaN/Inf inputs): so must C be
      } else if (!std::isfinite(want)) {
        wrong = got != want;
      } else {
        wrong = !(err <= bound);
        if (bound > 0) r.worst_ratio = std::max(r.worst_ratio, err / bound);
        else if (err > 0) r.worst_ratio = std::numeric_limits<double>::infinity();
      }
      ++r.checked;
      if (wrong) {
        bad[i + j * m] = kind;
        const double was = C0(i, j);
        if (got == was && std::isfinite(got)) ++unchanged;  // (a NaN from 0 * NaN is written, not kept)
        if (r.mismatches < kShowMismatches)
          first << "  C(" << i << "," << j << ") = " << got << ", want " << want << " (|diff| " << err
                << " > bound " << bound << ")\n";
        ++r.mismatches;
      }
    }
  }
  if (r.mismatches) {
    r.ok = false;
    std::ostringstream rep;
    rep.precision(17);
    rep << r.mismatches << " of " << r.checked << " elements of C (" << m << " x " << n
        << ") are outside the bound " << kBoundConstant << " * (k+2) * eps * (|alpha||A||B| + |beta||C0|)"
        << ", k = " << k << ":\n";
    if (unchanged == r.mismatches)
      rep << "  (each of them still holds C's value from before the call: nothing was written there;"
             " a block skipped, or C not copied back?)\n";
    else if (unchanged > 0)
      rep << "  (" << unchanged << " of them still hold C's value from before the call: not written)\n";
    rep << first.str();
    if (r.mismatches > kShowMismatches) rep << "  ...\n";
    rep << block_map(m, n, bad);
    r.report = rep.str();
  }
  return r;
}

CheckResult check_against_reference(double alpha, ConstMatView A, ConstMatView B, double beta, ConstMatView C0,
                                    ConstMatView C) {
  Matrix ref(C0.rows, C0.cols);
  for (int64_t j = 0; j < C0.cols; ++j)
    for (int64_t i = 0; i < C0.rows; ++i) ref(i, j) = C0(i, j);
  reference_gemm(alpha, A, B, beta, ref.view());
  return check_gemm(alpha, A, B, beta, C0, C, ref.view());
}

CheckResult freivalds_verdict(int64_t m, int64_t n, int64_t k, int trials, double alpha, double beta,
                              const double* cx, const double* acx, const double* abx, const double* aabx,
                              const double* c0x, const double* ac0x) {
  CheckResult r;
  // Each of C x, A (B x) and C0 x is a sum of at most n + k products; the
  // bound covers the rounding of all three (see check.hpp for the form).
  const double scale = kBoundConstant * double(n + k + 2) * kEps;
  std::ostringstream first;
  for (int t = 0; t < trials; ++t) {
    for (int64_t i = 0; i < m; ++i) {
      const int64_t e = t * m + i;
      const double want = (alpha == 0.0 ? 0.0 : alpha * abx[e]) + (beta == 0.0 ? 0.0 : beta * c0x[e]);
      const double bound = scale * ((alpha == 0.0 ? 0.0 : std::fabs(alpha) * aabx[e]) +
                                    (beta == 0.0 ? 0.0 : std::fabs(beta) * ac0x[e]) + acx[e]);
      const double err = std::fabs(cx[e] - want);
      ++r.checked;
      if (!(err <= bound) && std::isfinite(want)) {
        if (r.mismatches < kShowMismatches && !std::isfinite(cx[e]))  // (its |diff| and bound would read nan)
          first << "  trial " << t << ": (C x)(" << i << ") = " << cx[e] << ", want " << want << " (row " << i
                << " of C holds NaN or Inf)\n";
        else if (r.mismatches < kShowMismatches)
          first << "  trial " << t << ": (C x)(" << i << ") = " << cx[e] << ", want " << want << " (|diff| " << err
                << " > bound " << bound << ")\n";
        ++r.mismatches;
      } else if (bound > 0) {
        r.worst_ratio = std::max(r.worst_ratio, err / bound);
      }
    }
  }
  if (r.mismatches) {
    r.ok = false;
    std::ostringstream rep;
    rep.precision(17);
    rep << "randomized check (Freivalds, " << trials << " trials): " << r.mismatches << " of " << r.checked
        << " rows of C x disagree with alpha A (B x) + beta C0 x; the rows hold the wrong elements:\n"
        << first.str();
    r.report = rep.str();
  }
  return r;
}

CheckResult freivalds_check(double alpha, ConstMatView A, ConstMatView B, double beta, ConstMatView C0,
                            ConstMatView C, int trials, uint64_t seed) {
  check_gemm_args(A, B, C0);
  const int64_t m = C.rows, n = C.cols, k = A.cols;
  if (m == 0 || n == 0) return CheckResult{};
  std::mt19937_64 gen(seed);
  std::uniform_real_distribution<double> dist(-1.0, 1.0);
  std::vector<double> x(n), y(k), ya(k);
  const size_t all = size_t(m) * trials;
  std::vector<double> ay(all), aay(all), cx(all), acx(all), c0x(all), ac0x(all);
  // The matrices are column-major: each thread takes a block of rows and runs
  // down every column's part of it (contiguous), accumulating in column order,
  // so each element's sum is the same as a row-by-row loop's, while memory is
  // read in lines and pages rather than one element per line (at n = 32768 a
  // row-wise walk touched a new page at every element).
  auto row_block = [](int64_t rows, int64_t* lo, int64_t* hi) {
    int t = 0, nt = 1;
#ifdef _OPENMP
    t = omp_get_thread_num();
    nt = omp_get_num_threads();
#endif
    const int64_t per = (rows + nt - 1) / nt;
    *lo = std::min(rows, per * t);
    *hi = std::min(rows, *lo + per);
  };
  for (int t = 0; t < trials; ++t) {
    for (auto& v : x) v = dist(gen);
    const int64_t o = t * m;
#pragma omp parallel
    {
      int64_t lo = 0, hi = 0;
      // y = B x, ya = |B| |x|
      row_block(k, &lo, &hi);
      for (int64_t p = lo; p < hi; ++p) y[p] = ya[p] = 0;
      for (int64_t j = 0; j < n; ++j) {
        const double xj = x[j], axj = std::fabs(x[j]);
        for (int64_t p = lo; p < hi; ++p) {
          y[p] += B(p, j) * xj;
          ya[p] += std::fabs(B(p, j)) * axj;
        }
      }
#pragma omp barrier
      // alpha A y, and C x, C0 x (C0 only where beta != 0: it may hold NaN)
      row_block(m, &lo, &hi);
      for (int64_t i = lo; i < hi; ++i) ay[o + i] = aay[o + i] = cx[o + i] = acx[o + i] = c0x[o + i] = ac0x[o + i] = 0;
      if (alpha != 0.0)
        for (int64_t p = 0; p < k; ++p) {
          const double yp = y[p], ayp = ya[p];
          for (int64_t i = lo; i < hi; ++i) {
            ay[o + i] += A(i, p) * yp;
            aay[o + i] += std::fabs(A(i, p)) * ayp;
          }
        }
      for (int64_t j = 0; j < n; ++j) {
        const double xj = x[j], axj = std::fabs(x[j]);
        for (int64_t i = lo; i < hi; ++i) {
          cx[o + i] += C(i, j) * xj;
          acx[o + i] += std::fabs(C(i, j)) * axj;
        }
        if (beta != 0.0)
          for (int64_t i = lo; i < hi; ++i) {
            c0x[o + i] += C0(i, j) * xj;
            ac0x[o + i] += std::fabs(C0(i, j)) * axj;
          }
      }
    }
  }
  return freivalds_verdict(m, n, k, trials, alpha, beta, cx.data(), acx.data(), ay.data(), aay.data(), c0x.data(),
                           ac0x.data());
}

bool guards_intact(const Matrix& full, int64_t i0, int64_t j0, int64_t m, int64_t n, double guard,
                   std::string* where) {
  for (int64_t j = 0; j < full.cols(); ++j) {
    for (int64_t i = 0; i < full.ld(); ++i) {
      const bool inside = i >= i0 && i < i0 + m && j >= j0 && j < j0 + n;
      if (inside) continue;
      const double v = full.data()[i + j * full.ld()];
      if (std::memcmp(&v, &guard, sizeof v) != 0) {
        if (where) {
          std::ostringstream o;
          o << "guard cell (" << i << "," << j << ") of the " << full.ld() << " x " << full.cols()
            << " buffer around C (C is at (" << i0 << "," << j0 << "), " << m << " x " << n << ") was changed to " << v;
          *where = o.str();
        }
        return false;
      }
    }
  }
  return true;
}

}  // namespace lab
