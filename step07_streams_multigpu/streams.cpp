// Variant 2 of step07: streams and events on one GPU.
//
// opts.streams_per_gpu workers on the first GPU of opts.gpus, each with its
// own C tile on the device and three CUDA streams: copies in (h2d), products
// (compute), copies out (d2h). Within a tile the loop order is
//   for each k panel p:  A(i, p), B(p, j) -> device;  C(i, j) += A(i, p) B(p, j)
// so the C tile stays on the device across the whole k loop (it crosses PCIe
// once each way) while the panels are double-buffered: panel p + 1 travels
// while the product of panel p runs. The host's C is not needed to start:
// the first panel multiplies with beta = 0, and C comes in later, one column
// block at a time through a buffer of its own, while the middle panels' products
// run (the copy engine has time to spare there), and is added as beta C.
// Events carry the dependencies:
//   panel_ready[b]  recorded on h2d after panel buffer b is filled;  compute waits for it
//   panel_free[b]   recorded on compute after the product that read buffer b;  h2d waits for it
//   c_in_ready      a block of the host's C is in the c_in buffer (h2d);  compute waits, then adds it
//   c_in_free       that addition is done (compute);  h2d waits before the next block comes in
//   c_loaded        (one panel only: no middle to hide C in) a block of C loaded into the tile
//   c_done          a block's last product (compute);  d2h waits before copying it back
//   c_stored[j]     block j of the tile copied back (d2h);  the next tile's first
//                   product into block j waits for it
// Waiting on an event never recorded yet returns at once (CUDA's rule), so
// the first tile needs no special case.
//
// Test:   ./lab test step07
#include <algorithm>

#include "engine.hpp"
#include "lab/todo.hpp"

namespace lab::step07 {
inline namespace LAB_IMPL_NS {

void run_tile(detail::Worker& w, int64_t index) {
  const detail::Call& c = w.call();
  const Plan& plan = c.plan;
  const TileRange r = plan.tile(index);
  const MatView hC = c.C.block(r.i0, r.j0, r.rows, r.cols);
  const MatView dC = w.c_tile(r.rows, r.cols);
  // TODO: queue the tile's copies and products on w.h2d(), w.compute(), w.d2h() with events
  //       between them
  (void)hC, (void)dC;
  LAB_TODO(
      "step07 streams: queue the tile's panel copies (w.h2d), products (w.compute) and copy back "
      "(w.d2h) with events between them (see the comment at the top of streams.cpp)");
}

void dgemm_streams(double alpha, ConstMatView A, ConstMatView B, double beta, MatView C,
                   const Options& opts) {
  check_options(opts);
  std::vector<StreamSlot> slots;
  for (int s = 0; s < opts.streams_per_gpu; ++s) slots.push_back({0, opts.gpus.front(), s});
  auto call = detail::prepare(alpha, A, B, beta, C, opts, slots);
  if (!call) return;
  // One GPU, equal streams: tile t goes to stream t mod S, decided up front.
  const int64_t S = int64_t(slots.size());
  detail::run_streams(*call, slots, [S](detail::Worker& w) {
    for (int64_t t = w.slot().stream; t < w.call().plan.tiles() && !w.stopped(); t += S) run_tile(w, t);
  });
}

}  // namespace LAB_IMPL_NS
}  // namespace lab::step07
