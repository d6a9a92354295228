// local_engine.hpp — an Engine whose whole distance matrix lives in one memory
// (host or one GPU), written once for both.
//
// A Space says how to do the basic operations in that memory:
//   using Buffer = ...;                       owns a rows x cols matrix; view() -> MatView
//   Buffer upload(Matrix&& host);             D0 into this memory
//   Buffer allocate(int64_t rows, int64_t cols);
//   void gemm(ConstMatView A, ConstMatView B, MatView C, bool accumulate);   the min-plus GEMM
//   void copy(ConstMatView from, MatView to);
//   void close(MatView block);                Floyd-Warshall within a square block
//   bool differ(ConstMatView a, ConstMatView b);
//   int64_t first_negative_diagonal(ConstMatView d);
//   void finish();
//   Matrix download(Buffer&& d);
//   std::string device() const;
#pragma once

#include <algorithm>
#include <utility>

#include "engine.hpp"

namespace lab::step09::apsp {

template <class Space>
class LocalEngine final : public Engine {
 public:
  using Buffer = typename Space::Buffer;

  template <class... SpaceArgs>
  LocalEngine(Matrix D0, std::string gemm_name, SpaceArgs&&... args)
      : space_(std::forward<SpaceArgs>(args)...),
        gemm_name_(std::move(gemm_name)),
        n_(D0.rows()),
        D_(space_.upload(std::move(D0))) {}

  int64_t n() const override { return n_; }
  std::string device() const override { return space_.device(); }
  std::string gemm_name() const override { return gemm_name_; }

  bool square() override {
    if (!have_next_) {
      next_ = space_.allocate(n_, n_);
      have_next_ = true;
    }
    // The product cannot be written over its own operands: it goes to the
    // second buffer, and the two swap roles.
    const MatView d = D_.view(), next = next_.view();
    space_.gemm(d, d, next, false);
    const bool changed = space_.differ(d, next);
    std::swap(D_, next_);
    return changed;
  }

  void close_diagonal_block(int64_t k0, int64_t b) override { space_.close(D_.view().block(k0, k0, b, b)); }

  void update_panels(int64_t k0, int64_t b) override {
    const MatView d = D_.view();
    const int64_t k1 = k0 + b, after = n_ - k1;
    const ConstMatView dkk = d.block(k0, k0, b, b);
    if (panel_rows_ < b) {
      row_ = space_.allocate(b, n_);
      col_ = space_.allocate(n_, b);
      panel_rows_ = b;
    }
    // D(K, J) is an operand of its own update, so the product reads a copy of
    // it; D(K, K) lies in other columns than the D(K, J) being written.
    const MatView row = row_.view().block(0, 0, b, n_);
    space_.copy(d.block(k0, 0, b, n_), row);
    if (k0 > 0) space_.gemm(dkk, row.block(0, 0, b, k0), d.block(k0, 0, b, k0), true);
    if (after > 0) space_.gemm(dkk, row.block(0, k1, b, after), d.block(k0, k1, b, after), true);
    // The same for D(I, K), whose rows D(K, K) does not share.
    const MatView col = col_.view().block(0, 0, n_, b);
    space_.copy(d.block(0, k0, n_, b), col);
    if (k0 > 0) space_.gemm(col.block(0, 0, k0, b), dkk, d.block(0, k0, k0, b), true);
    if (after > 0) space_.gemm(col.block(k1, 0, after, b), dkk, d.block(k1, k0, after, b), true);
  }

  void update_rest(int64_t k0, int64_t b) override {
    // The four quadrants around row and column block K. Their operands D(I, K)
    // and D(K, J) lie in the panels, which these products do not write, so
    // no copies are needed here: this is where the n^3 work is.
    const MatView d = D_.view();
    const int64_t start[2] = {0, k0 + b}, len[2] = {k0, n_ - k0 - b};
    for (int bi = 0; bi < 2; ++bi)
      for (int bj = 0; bj < 2; ++bj)
        if (len[bi] > 0 && len[bj] > 0)
          space_.gemm(d.block(start[bi], k0, len[bi], b), d.block(k0, start[bj], b, len[bj]),
                      d.block(start[bi], start[bj], len[bi], len[bj]), true);
  }

  int64_t first_negative_diagonal() override { return space_.first_negative_diagonal(D_.view()); }
  void finish() override { space_.finish(); }
  Matrix take_result() override {
    space_.finish();
    return space_.download(std::move(D_));
  }

 private:
  Space space_;
  std::string gemm_name_;
  int64_t n_;
  Buffer D_, next_, row_, col_;
  bool have_next_ = false;
  int64_t panel_rows_ = 0;
};

}  // namespace lab::step09::apsp
