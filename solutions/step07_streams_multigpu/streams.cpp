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
  // LAB:SOLUTION-BEGIN  queue the tile's copies and products on w.h2d(), w.compute(), w.d2h() with events
  // LAB:HINT  between them
  // The first and the last panel's products run in column blocks of C (plan.hpp's kCBlocks,
  // each c_block_width wide, the same columns of the buffer in every tile): the first panel's product into
  // block j waits only for the previous tile's copy back of block j, not for the whole tile, and block j
  // goes back while the others are multiplied, so the end of one tile overlaps the start of the next.
  // Eight blocks: a block of a 16384-wide tile (2048 columns) is still a product cuBLAS runs at full speed.
  const int64_t bw = c_block_width(plan.shape);
  const int64_t blocks = (r.cols + bw - 1) / bw, P = plan.panels;
  // With two panels or more, C comes in late, after the first panel's product into it (beta = 0) and
  // before its last one: one block after each middle panel's product, spread over them when there are
  // enough (the h2d stream then never waits for a product), the blocks left over in the last panel,
  // each just before its product there. With one panel it must come first.
  const bool late_c = c.beta != 0 && P > 1;
  const int64_t middle = P - 2;
  auto c_panel = [&](int64_t j) {
    if (middle >= blocks) return 1 + j * middle / blocks;
    return j < middle ? 1 + j : P - 1;
  };
  auto add_c = [&](int64_t j) {  // dC block j += beta * (host C block j), through the c_in buffer
    const int64_t cw = std::min(bw, r.cols - j * bw);
    const MatView in = w.c_in(r.rows, cw);
    LAB_CUDA_CHECK(cudaStreamWaitEvent(w.h2d(), w.c_in_free.get()));
    w.load(in, hC.block(0, j * bw, r.rows, cw), w.h2d());
    w.c_in_ready.record(w.h2d());
    LAB_CUDA_CHECK(cudaStreamWaitEvent(w.compute(), w.c_in_ready.get()));
    w.add(c.beta, in, dC.block(0, j * bw, r.rows, cw));
    w.c_in_free.record(w.compute());
  };
  int b = 0;
  for (int64_t p = 0; p < P && !w.stopped(); ++p) {
    b = w.next_panel_buffer();
    const int64_t p0 = plan.panel_start(p), d = plan.panel_depth(p);
    const MatView dA = w.a_panel(b, r.rows, d), dB = w.b_panel(b, d, r.cols);
    // Buffer b is free once the product two panels back has read it.
    LAB_CUDA_CHECK(cudaStreamWaitEvent(w.h2d(), w.panel_free[b].get()));
    w.load(dA, c.A.block(r.i0, p0, r.rows, d), w.h2d());
    w.load(dB, c.B.block(p0, r.j0, d, r.cols), w.h2d());
    w.panel_ready[b].record(w.h2d());
    const bool first = p == 0, last = p == P - 1;
    LAB_CUDA_CHECK(cudaStreamWaitEvent(w.compute(), w.panel_ready[b].get()));
    if (!first && !last) {
      w.gemm(c.alpha, dA, dB, 1.0, dC);
      for (int64_t j = 0; j < blocks && late_c; ++j)
        if (c_panel(j) == p) add_c(j);
    } else {
      for (int64_t j = 0; j < blocks; ++j) {
        const int64_t cw = std::min(bw, r.cols - j * bw);
        const MatView dCj = dC.block(0, j * bw, r.rows, cw);
        cuda::Event& stored = w.c_stored[j];
        // Block j of the C buffer is free once the previous tile's copy back
        // has read it (the first panels above may arrive before that).
        if (first) LAB_CUDA_CHECK(cudaStreamWaitEvent(w.compute(), stored.get()));
        if (first && c.beta != 0 && !late_c) {
          LAB_CUDA_CHECK(cudaStreamWaitEvent(w.h2d(), stored.get()));
          w.load(dCj, hC.block(0, j * bw, r.rows, cw), w.h2d());
          w.c_loaded.record(w.h2d());
          LAB_CUDA_CHECK(cudaStreamWaitEvent(w.compute(), w.c_loaded.get()));
        }
        if (last && late_c && c_panel(j) == p) add_c(j);
        // The first panel's product scales the C it was given by beta, or, when C
        // comes late, overwrites the buffer (beta = 0; add_c adds beta C later).
        w.gemm(c.alpha, dA, dB.block(0, j * bw, d, cw), first ? (late_c ? 0.0 : c.beta) : 1.0, dCj);
        if (last) {
          w.c_done.record(w.compute());
          LAB_CUDA_CHECK(cudaStreamWaitEvent(w.d2h(), w.c_done.get()));
          w.store(hC.block(0, j * bw, r.rows, cw), dCj, w.d2h());
          stored.record(w.d2h());
        }
      }
    }
    w.panel_free[b].record(w.compute());
  }
  // Pinned copies return at once: without this the host would queue every
  // tile up front and the work split would be decided before the GPU starts.
  // Taking the next tile once this one's last panel is in keeps one panel of
  // look-ahead.
  w.panel_ready[b].sync();
  // LAB:SKELETON
  (void)hC, (void)dC;
  LAB_TODO(
      "step07 streams: queue the tile's panel copies (w.h2d), products (w.compute) and copy back "
      "(w.d2h) with events between them (see the comment at the top of streams.cpp)");
  // LAB:SOLUTION-END
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
