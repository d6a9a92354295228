// What the CPU and GPU tests of step09's MPI back-end share: matrices made by
// global index (every rank builds the same whole matrices and its own blocks
// from them), the plain reference, and the exact comparison of a rank's block.
//
// Entries: uniform in [-1, 1) (step08's generator), with +inf and -inf at
// places chosen by a hash of the index for min-plus and max-plus, plus one
// whole row of A and one whole column of B at the semiring's zero, so that
// some results are the zero (+inf for min-plus) and must stay exactly that.
#pragma once

#include <cmath>
#include <limits>
#include <string>
#include <type_traits>
#include <vector>

#include "generate.hpp"  // step08: generated, mix64
#include "lab/check.hpp"
#include "lab/matrix.hpp"
#include "mpi3d.hpp"
#include "mpi_testing.hpp"  // step08's tests: guard_value
#include "reference.hpp"  // step09: reference_gemm, compare_exact
#include "semiring.hpp"

namespace step09_mpi_testing {

namespace s9 = lab::step09;
using lab::ConstMatView;
using lab::Matrix;
using lab::MatView;
using lab::step08::Block;
using lab::step08::testing::guard_value;

struct Case {
  int64_t m, n, k;
  int64_t pad;      ///< ld = rows + pad for every rank's blocks
  bool accumulate;  ///< false: C starts as NaN, which must vanish
  bool infinities;  ///< +inf / -inf entries (min-plus and max-plus only)
};

inline std::string describe(const lab::step08::Grid& g, const Case& c) {
  return "grid " + g.str() + ", m=" + std::to_string(c.m) + " n=" + std::to_string(c.n) + " k=" +
         std::to_string(c.k) + " ld=rows+" + std::to_string(c.pad) + (c.accumulate ? " accumulate" : " C <- A(x)B (C NaN)") +
         (c.infinities ? " with infinities" : "");
}

/// Element (i, j) of a test matrix with this seed, for semiring S.
template <class S>
double entry(uint64_t seed, int64_t i, int64_t j, bool infinities, bool zero_row, bool zero_col) {
  if constexpr (!std::is_same_v<S, s9::PlusTimes>) {
    if (infinities) {
      if ((zero_row && i == 1) || (zero_col && j == 1)) return S::zero();
      const uint64_t h = lab::step08::mix64(seed ^ (uint64_t(i) * 0x9e3779b97f4a7c15ULL + uint64_t(j)));
      if (h % 11 == 0) return std::numeric_limits<double>::infinity();
      if (h % 11 == 1) return -std::numeric_limits<double>::infinity();
    }
  }
  return lab::step08::generated(seed, i, j);
}

/// The whole matrix (rows x cols) of `seed`; zero_row / zero_col: row 1 / column 1 at S's zero.
template <class S>
Matrix whole(uint64_t seed, int64_t rows, int64_t cols, bool infinities, bool zero_row, bool zero_col) {
  Matrix m(rows, cols);
  for (int64_t j = 0; j < cols; ++j)
    for (int64_t i = 0; i < rows; ++i) m(i, j) = entry<S>(seed, i, j, infinities, zero_row, zero_col);
  return m;
}

/// The whole A, B, C0 of a case (every rank makes the same) and the plain reference result.
struct Problem {
  Matrix A, B, C0, ref;
};
template <class S>
Problem make_problem(const Case& c, const lab::step08::Seeds& seeds) {
  Problem p{whole<S>(seeds.a, c.m, c.k, c.infinities, true, false), whole<S>(seeds.b, c.k, c.n, c.infinities, false, true),
            whole<S>(seeds.c, c.m, c.n, c.infinities, false, false), Matrix(c.m, c.n)};
  for (int64_t j = 0; j < c.n; ++j)
    for (int64_t i = 0; i < c.m; ++i) p.ref(i, j) = p.C0(i, j);
  s9::reference_gemm<S>(p.A.cview(), p.B.cview(), p.ref.view(), c.accumulate);
  return p;
}

/// A rank's copy of its block of `src` inside a buffer with `pad` guard rows
/// and a guard column on each side. Empty where the rank holds no such block.
struct Framed {
  Matrix buf;
  int64_t pad = 0;
  Framed() = default;
  Framed(const Block& b, int64_t pad_rows, const Matrix* src) : pad(pad_rows) {
    if (!b.held) return;
    buf = Matrix(b.rows + pad, b.cols + 2);
    buf.fill_all(guard_value());
    const MatView v = view();
    if (src)
      for (int64_t j = 0; j < b.cols; ++j)
        for (int64_t i = 0; i < b.rows; ++i) v(i, j) = (*src)(b.row0 + i, b.col0 + j);
  }
  MatView view() {
    if (buf.data() == nullptr) return {nullptr, 0, 0, 1};
    return {buf.data() + buf.ld(), buf.rows() - pad, buf.cols() - 2, buf.ld()};
  }
  ConstMatView cview() { return view(); }
  bool guards_intact(std::string* where) const {
    return buf.data() == nullptr ||
           lab::guards_intact(buf, 0, 1, buf.rows() - pad, buf.cols() - 2, guard_value(), where);
  }
};

/// What a rank finds wrong with its C block (empty: nothing): exact equality
/// with the reference for min-plus and max-plus, the harness's bound for plus-times.
template <class S>
std::string check_block(const Block& cb, ConstMatView got, const Matrix& A, const Matrix& B, const Matrix& C0,
                        const Matrix& ref, bool accumulate, int rank) {
  if (!cb.held || cb.rows == 0 || cb.cols == 0) return "";
  lab::CheckResult r;
  if constexpr (std::is_same_v<S, s9::PlusTimes>) {
    r = lab::check_against_reference(1.0, A.cview().block(cb.row0, 0, cb.rows, A.cols()),
                                     B.cview().block(0, cb.col0, B.rows(), cb.cols), accumulate ? 1.0 : 0.0,
                                     C0.cview().block(cb.row0, cb.col0, cb.rows, cb.cols), got);
  } else {
    std::vector<int64_t> rows(size_t(cb.rows)), cols(size_t(cb.cols));
    for (int64_t i = 0; i < cb.rows; ++i) rows[size_t(i)] = cb.row0 + i;
    for (int64_t j = 0; j < cb.cols; ++j) cols[size_t(j)] = cb.col0 + j;
    r = s9::compare_exact<double>(got, ref.cview().block(cb.row0, cb.col0, cb.rows, cb.cols), rows, cols);
  }
  return r.ok ? "" : "rank " + std::to_string(rank) + ": " + r.report;
}

}  // namespace step09_mpi_testing
