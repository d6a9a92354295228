// step04_simd — TODO for the student: packing A and B into micro-panels.
//
// What to do: fill in the two marked places below (the layouts are in
// step04_simd/microkernel.hpp and drawn in the handout).
// Test:   ./lab test step04
//
// Why pack: the micro-kernel then reads A and B strictly in order, at unit
// stride, from a few contiguous pages, whatever the leading dimensions are, and
// the zeros past the edge of the matrix let it run full tiles everywhere.
#include <algorithm>

#include "lab/todo.hpp"
#include "microkernel.hpp"

void lab::step04::pack_a(double alpha, ConstMatView A, int mr, double* dst) {
  // TODO: for each panel and p: the mr values alpha * A(i0.., p), zeros past A.rows
  LAB_TODO("step04 pack_a: mr x kb panels of alpha * A, zero-padded");
}

void lab::step04::pack_b(ConstMatView B, int nr, double* dst) {
  // TODO: for each panel and p: the nr values B(p, j0..), zeros past B.cols
  LAB_TODO("step04 pack_b: kb x nr panels of B, zero-padded");
}
