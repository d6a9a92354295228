// step04_simd — the packing buffers, kept by each calling thread from call to
// call. Nothing to do here.
//
// Allocating them on every call (two or three aligned allocations, and the
// page faults of touching fresh memory) costs more than a whole small product:
// a 16 x 16 x 16 call is 8192 flops, a fraction of a microsecond. So they live
// as long as the thread that calls dgemm, and only grow.
#include "microkernel.hpp"

namespace {

// Each buffer starts on a page of its own (4 KiB): no two threads write the
// same cache line, and the first thread to pack a buffer places all its pages.
constexpr int64_t kPage = 4096 / sizeof(double);

int64_t round_to_page(int64_t doubles) { return (doubles + kPage - 1) / kPage * kPage; }

}  // namespace

lab::step04::PackBuffers lab::step04::pack_buffers(int64_t b_doubles, int b_count, int64_t a_doubles,
                                                   int a_count) {
  // One allocation, never written here (Matrix does not clear its memory):
  // B's panels, then the blocks of A.
  thread_local Matrix buffer;
  const int64_t b_stride = round_to_page(b_doubles), a_stride = round_to_page(a_doubles);
  const int64_t need = b_stride * b_count + a_stride * a_count;
  if (buffer.size() < need) {
    buffer = Matrix();  // the old one goes first: the two need not fit together
    buffer = Matrix(need, 1);
  }
  return {buffer.data(), buffer.data() + b_stride * b_count, b_stride, a_stride};
}
