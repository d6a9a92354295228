#include "lab/gemm_args.hpp"

#include <stdexcept>
#include <string>

namespace lab {
namespace {

void check_view(ConstMatView v, const char* name) {
  const std::string n(name);
  if (v.rows < 0) throw std::invalid_argument(n + ".rows is negative (" + std::to_string(v.rows) + ")");
  if (v.cols < 0) throw std::invalid_argument(n + ".cols is negative (" + std::to_string(v.cols) + ")");
  const int64_t min_ld = v.rows > 1 ? v.rows : 1;
  if (v.ld < min_ld)
    throw std::invalid_argument(n + ".ld (" + std::to_string(v.ld) + ") must be >= max(1, " + n +
                                ".rows) = " + std::to_string(min_ld));
  if (v.rows > 0 && v.cols > 0 && v.data == nullptr)
    throw std::invalid_argument(n + ".data is null for a " + std::to_string(v.rows) + " x " +
                                std::to_string(v.cols) + " matrix");
}

}  // namespace

void check_gemm_args(ConstMatView A, ConstMatView B, ConstMatView C) {
  check_view(A, "A");
  check_view(B, "B");
  check_view(C, "C");
  if (A.rows != C.rows)
    throw std::invalid_argument("A.rows (m = " + std::to_string(A.rows) + ") must equal C.rows (" +
                                std::to_string(C.rows) + ")");
  if (B.cols != C.cols)
    throw std::invalid_argument("B.cols (n = " + std::to_string(B.cols) + ") must equal C.cols (" +
                                std::to_string(C.cols) + ")");
  if (A.cols != B.rows)
    throw std::invalid_argument("A.cols (k = " + std::to_string(A.cols) + ") must equal B.rows (" +
                                std::to_string(B.rows) + ")");
}

void scale_c(double beta, MatView C) {
  for (int64_t j = 0; j < C.cols; ++j) {
    double* c = C.data + j * C.ld;
    if (beta == 0.0) {
      for (int64_t i = 0; i < C.rows; ++i) c[i] = 0.0;
    } else if (beta != 1.0) {
      for (int64_t i = 0; i < C.rows; ++i) c[i] *= beta;
    }
  }
}

bool gemm_quick_return(double alpha, ConstMatView A, ConstMatView, double beta, MatView C) {
  if (C.rows == 0 || C.cols == 0) return true;
  if (alpha == 0.0 || A.cols == 0) {
    scale_c(beta, C);
    return true;
  }
  return false;
}

}  // namespace lab
