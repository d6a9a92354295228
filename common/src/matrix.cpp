#include "lab/matrix.hpp"

#include <cstdlib>
#include <limits>
#include <new>
#include <random>
#include <stdexcept>
#include <string>

#include "lab/random.hpp"

namespace lab {

int64_t matrix_bytes(int64_t rows, int64_t cols, int64_t ld, const char* what) {
  if (rows < 0) throw std::invalid_argument(std::string(what) + ": rows must be >= 0 (got " + std::to_string(rows) + ")");
  if (cols < 0) throw std::invalid_argument(std::string(what) + ": cols must be >= 0 (got " + std::to_string(cols) + ")");
  if (ld < (rows > 1 ? rows : 1))
    throw std::invalid_argument(std::string(what) + ": ld must be >= max(1, rows) (got ld " + std::to_string(ld) +
                                " for " + std::to_string(rows) + " rows)");
  constexpr int64_t kMax = std::numeric_limits<int64_t>::max() / int64_t(sizeof(double));
  if (cols != 0 && ld > kMax / cols)
    throw std::invalid_argument(std::string(what) + ": " + std::to_string(ld) + " x " + std::to_string(cols) +
                                " elements overflow a 64-bit size");
  return ld * cols * int64_t(sizeof(double));
}

void Matrix::Free::operator()(double* p) const { std::free(p); }

Matrix::Matrix(int64_t rows, int64_t cols, int64_t ld) : rows_(rows), cols_(cols) {
  ld_ = ld == 0 ? (rows > 1 ? rows : 1) : ld;
  int64_t bytes = matrix_bytes(rows, cols, ld_, "Matrix");
  // aligned_alloc wants a multiple of the alignment; keep at least one line.
  int64_t rounded = ((bytes + 63) / 64) * 64;
  if (rounded == 0) rounded = 64;
  void* p = std::aligned_alloc(64, static_cast<size_t>(rounded));
  if (!p) throw std::bad_alloc();
  data_.reset(static_cast<double*>(p));
}

void Matrix::fill_random(uint64_t seed, double lo, double hi) {
  // Counter-based (lab/random.hpp): element (i, j) depends on the seed and (i, j)
  // only, so the columns are filled in parallel and the matrix is the same for
  // any number of threads and any ld. A sequential generator filled 40-80
  // million doubles a second: a minute for the three matrices of n = 32768,
  // longer than the products it prepares.
  const int64_t rows = rows_, cols = cols_;
#pragma omp parallel for schedule(static) if (rows * cols > (int64_t(1) << 20))
  for (int64_t j = 0; j < cols; ++j) {
    double* col = data_.get() + j * ld_;
    for (int64_t i = 0; i < rows; ++i) {
      const double v = lo + (hi - lo) * random_unit(seed, i, j);
      col[i] = v < hi ? v : lo;  // rounding may reach hi: keep [lo, hi)
    }
  }
}

void Matrix::fill_integers(uint64_t seed, int lo, int hi) {
  std::mt19937_64 gen(seed);
  std::uniform_int_distribution<int> dist(lo, hi);
  for (int64_t j = 0; j < cols_; ++j)
    for (int64_t i = 0; i < rows_; ++i) (*this)(i, j) = dist(gen);
}

void Matrix::fill_identity() {
  for (int64_t j = 0; j < cols_; ++j)
    for (int64_t i = 0; i < rows_; ++i) (*this)(i, j) = i == j ? 1.0 : 0.0;
}

void Matrix::fill(double value) {
  for (int64_t j = 0; j < cols_; ++j)
    for (int64_t i = 0; i < rows_; ++i) (*this)(i, j) = value;
}

void Matrix::fill_all(double value) {
  for (int64_t e = 0; e < size(); ++e) data_[e] = value;
}

void Matrix::fill_nan() { fill_all(std::numeric_limits<double>::quiet_NaN()); }

Matrix Matrix::clone() const {
  Matrix out(rows_, cols_, ld_);
  for (int64_t e = 0; e < size(); ++e) out.data_[e] = data_[e];
  return out;
}

}  // namespace lab
