// lab/matrix.hpp — non-owning views and the owning, aligned lab::Matrix.
//
// Every kernel in the lab speaks column-major with a leading dimension, exactly
// like BLAS: element (i, j) of a view lives at data[i + j * ld], ld >= rows.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <type_traits>

namespace lab {

/// A strided column-major window onto memory owned by someone else.
template <class T>
struct View {
  T* data;
  int64_t rows, cols, ld;

  T& operator()(int64_t i, int64_t j) const { return data[i + j * ld]; }
  /// A view of the same memory that cannot write through it (only for
  /// non-const T: a View<const T> needs no conversion to itself).
  template <class U = T, class = std::enable_if_t<!std::is_const_v<U>>>
  operator View<const U>() const {
    return {data, rows, cols, ld};
  }
  /// The sub-block starting at (i, j) with the given shape (no bounds check).
  View block(int64_t i, int64_t j, int64_t r, int64_t c) const { return {data + i + j * ld, r, c, ld}; }
};

using MatView = View<double>;
using ConstMatView = View<const double>;

/// Owning column-major matrix of doubles, 64-byte aligned, with optional ld padding.
/// The buffer holds ld * cols elements; rows ld-rows+1 .. ld are "guard cells"
/// that tests poison to catch writes outside the logical matrix.
class Matrix {
 public:
  Matrix() = default;
  /// rows x cols; ld = 0 means ld = max(1, rows). Throws std::invalid_argument on
  /// negative sizes or ld < rows, std::bad_alloc when the buffer cannot be had.
  Matrix(int64_t rows, int64_t cols, int64_t ld = 0);

  int64_t rows() const { return rows_; }
  int64_t cols() const { return cols_; }
  int64_t ld() const { return ld_; }
  int64_t size() const { return ld_ * cols_; }  ///< elements in the buffer, guard cells included
  double* data() { return data_.get(); }
  const double* data() const { return data_.get(); }

  double& operator()(int64_t i, int64_t j) { return data_[i + j * ld_]; }
  double operator()(int64_t i, int64_t j) const { return data_[i + j * ld_]; }

  MatView view() { return {data(), rows_, cols_, ld_}; }
  ConstMatView view() const { return {data(), rows_, cols_, ld_}; }
  ConstMatView cview() const { return view(); }

  // Fills. The whole buffer (guard cells included) is written by fill_all();
  // the others touch only the rows x cols region.
  void fill_random(uint64_t seed, double lo = -1.0, double hi = 1.0);  ///< uniform in [lo, hi)
  void fill_integers(uint64_t seed, int lo = -4, int hi = 4);          ///< exact small integers
  void fill_identity();
  void fill(double value);
  void fill_all(double value);  ///< every element of the buffer, guard cells too
  void fill_nan();  ///< quiet NaN everywhere, guard cells too (poison)

  Matrix clone() const;

 private:
  struct Free {
    void operator()(double* p) const;
  };
  int64_t rows_ = 0, cols_ = 0, ld_ = 1;
  std::unique_ptr<double[], Free> data_;
};

/// Bytes needed for a rows x cols matrix with leading dimension ld, or throws
/// std::invalid_argument naming `what` when it overflows or is negative.
int64_t matrix_bytes(int64_t rows, int64_t cols, int64_t ld, const char* what);

}  // namespace lab
