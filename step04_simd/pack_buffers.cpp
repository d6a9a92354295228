// step04_simd — the packing buffers, kept by each calling thread from call to
// call. Nothing to do here.
//
// Allocating them on every call (two or three aligned allocations, and the
// page faults of touching fresh memory) costs more than a whole small product:
// a 16 x 16 x 16 call is 8192 flops, a fraction of a microsecond. So they live
// as long as the thread that calls dgemm, and only grow.
#include "microkernel.hpp"

namespace {

constexpr int64_t kLine = 64 / sizeof(double);  // doubles in a 64-byte cache line

int64_t round_to_line(int64_t doubles) { return (doubles + kLine - 1) / kLine * kLine; }

}  // namespace

lab::step04::PackBuffers lab::step04::pack_buffers(int64_t b_doubles, int64_t a_doubles, int threads) {
  // One allocation: B's panel, then the threads' blocks of A, each starting
  // on a cache line of its own (no two threads write the same line).
  thread_local Matrix buffer;
  const int64_t b_size = round_to_line(b_doubles), a_stride = round_to_line(a_doubles);
  const int64_t need = b_size + a_stride * threads;
  if (buffer.size() < need) {
    buffer = Matrix();  // the old one goes first: the two need not fit together
    buffer = Matrix(need, 1);
  }
  return {buffer.data(), buffer.data() + b_size, a_stride};
}
