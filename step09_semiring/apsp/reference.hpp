// reference.hpp — the plain kernels everything else is checked against.
//
// reference_minplus_gemm is the triple loop of the min-plus product (the
// contract of minplus_gemm.hpp), reference_minplus_gemm_device its one-thread-
// per-entry CUDA form; plain_floyd_warshall is the textbook algorithm. All are
// exact: every entry they produce is one sum of path weights, rounded once per
// addition in path order, and min itself never rounds.
#pragma once

#include "lab/matrix.hpp"

struct CUstream_st;

namespace lab::step09::apsp {

/// C <- A (x) B (accumulate false, C not read) or C <- min(C, A (x) B); OpenMP over
/// the columns of C. Bad shapes throw std::invalid_argument naming the argument.
/// C must not overlap A or B.
void reference_minplus_gemm(ConstMatView A, ConstMatView B, MatView C, bool accumulate);

/// The same on device views, queued on `stream` (built only with CUDA).
void reference_minplus_gemm_device(ConstMatView A, ConstMatView B, MatView C, bool accumulate,
                                   CUstream_st* stream);

/// Floyd-Warshall in place on the square matrix D (D(i, j): the lightest known
/// i -> j path; D(i, i) <= 0 on entry), one thread. On return D(i, j) is the
/// shortest distance when no negative cycle exists; otherwise some D(v, v) < 0
/// for every vertex v on a negative simple cycle.
void plain_floyd_warshall(MatView D);

/// c[i] <- min(c[i], a[i] + b) for i < n: the one inner loop of both kernels.
/// c and a must not overlap (that lets the compiler vectorize it).
void relax(double* __restrict c, const double* __restrict a, double b, int64_t n);

}  // namespace lab::step09::apsp
