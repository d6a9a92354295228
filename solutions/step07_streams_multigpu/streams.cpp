// Variant 2 of step07: streams and events on one GPU.
//
// opts.streams_per_gpu workers on the first GPU of opts.gpus, each with its
// own C tile on the device and three CUDA streams: copies in (h2d), products
// (compute), copies out (d2h). Within a tile the loop order is
//   for each k panel p:  A(i, p), B(p, j) -> device;  C(i, j) += A(i, p) B(p, j)
// so the C tile stays on the device across the whole k loop (it crosses PCIe
// once each way) while the panels are double-buffered: panel p + 1 travels
// while the product of panel p runs. Events carry the dependencies:
//   panel_ready[b]  recorded on h2d after panel buffer b is filled;  compute waits for it
//   panel_free[b]   recorded on compute after the product that read buffer b;  h2d waits for it
//   c_loaded        a block of the C tile in (h2d);  compute waits before multiplying into it
//   c_done          a block's last product (compute);  d2h waits before copying it back
//   c_stored[j]     block j of the tile copied back (d2h);  the next tile's load of
//                   its block j and its first product into it wait for it
// Waiting on an event never recorded yet returns at once (CUDA's rule), so
// the first tile needs no special case.
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
  // between them The first and the last panel's products run in column blocks of C: the first block's product
  // starts once that block of C is in (not the whole tile), and the first block goes back while the others
  // are multiplied, so only one block's copy in and one block's copy out are left unhidden.
  // Eight blocks: a block of a 16384-wide tile (2048 columns) is still a
  // product cuBLAS runs at full speed, and what is left unhidden is an eighth
  // of the tile's C each way. Their width comes from the plan, not this tile,
  // so block j is the same part of the C buffer in every tile and the next
  // tile waits only for the copy back of the block it overwrites (the end of
  // one tile overlaps the start of the next).
  const int64_t bw = (plan.shape.tn + w.kCBlocks - 1) / w.kCBlocks;
  int b = 0;
  for (int64_t p = 0; p < plan.panels && !w.stopped(); ++p) {
    b = w.next_panel_buffer();
    const int64_t p0 = plan.panel_start(p), d = plan.panel_depth(p);
    const MatView dA = w.a_panel(b, r.rows, d), dB = w.b_panel(b, d, r.cols);
    // Buffer b is free once the product two panels back has read it.
    LAB_CUDA_CHECK(cudaStreamWaitEvent(w.h2d(), w.panel_free[b].get()));
    w.load(dA, c.A.block(r.i0, p0, r.rows, d), w.h2d());
    w.load(dB, c.B.block(p0, r.j0, d, r.cols), w.h2d());
    w.panel_ready[b].record(w.h2d());
    const bool first = p == 0, last = p == plan.panels - 1;
    LAB_CUDA_CHECK(cudaStreamWaitEvent(w.compute(), w.panel_ready[b].get()));
    if (!first && !last) {
      w.gemm(c.alpha, dA, dB, 1.0, dC);
    } else {
      for (int64_t j = 0; j < r.cols; j += bw) {
        const int64_t cw = std::min(bw, r.cols - j);
        const MatView dCj = dC.block(0, j, r.rows, cw);
        cuda::Event& stored = w.c_stored[j / bw];
        // Block j of the C buffer is free once the previous tile's copy back
        // has read it (the first panels above may arrive before that).
        if (first) LAB_CUDA_CHECK(cudaStreamWaitEvent(w.compute(), stored.get()));
        if (first && c.beta != 0) {  // beta == 0: C is never read
          LAB_CUDA_CHECK(cudaStreamWaitEvent(w.h2d(), stored.get()));
          w.load(dCj, hC.block(0, j, r.rows, cw), w.h2d());
          w.c_loaded.record(w.h2d());
          LAB_CUDA_CHECK(cudaStreamWaitEvent(w.compute(), w.c_loaded.get()));
        }
        // beta scales C once, with the first panel; the others add to it.
        w.gemm(c.alpha, dA, dB.block(0, j, d, cw), first ? c.beta : 1.0, dCj);
        if (last) {
          w.c_done.record(w.compute());
          LAB_CUDA_CHECK(cudaStreamWaitEvent(w.d2h(), w.c_done.get()));
          w.store(hC.block(0, j, r.rows, cw), dCj, w.d2h());
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
