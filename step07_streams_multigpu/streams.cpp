// Variant 2 of step07: streams and events on one GPU.
//
// opts.streams_per_gpu workers on the first GPU of opts.gpus, each with its
// own C tile on the device and three CUDA streams: copies in (h2d), products
// (compute), copies out (d2h). Within a tile the loop order is
//   for each k panel p:  A(i, p), B(p, j) -> device;  C(i, j) += A(i, p) B(p, j)
// so the C tile stays on the device across the whole k loop (it crosses PCIe
// once each way) while the panels are double-buffered: panel p + 1 travels
// while the product of panel p runs. run_tile (below, given) is that loop;
// you write its three stages, in this order, each with its own tests:
//
//   1. load_panels     panel p of A and B -> the next panel buffer, on h2d
//   2. multiply_block  the first and the last panel's products, one column
//                      block of C at a time; the last copies the block back
//   3. add_c           the host's C, brought in late: one block through its
//                      own buffer (w.c_in), added as beta C on compute
//
// The host's C is not needed to start: the first panel multiplies with
// beta = 0, and C comes in later, one block at a time, while the next
// panels' products run (the copy engine has time to spare there). Events
// carry the dependencies between the streams:
//   panel_ready[b]  recorded on h2d after panel buffer b is filled;  compute waits for it
//   panel_free[b]   recorded on compute after the product that read buffer b;  h2d waits for it
//   c_stored[j]     block j of the tile copied back (d2h);  the next tile's first
//                   product into block j (and a load of C into it) waits for it
//                   (where the plan gives a worker two C buffers, c_stored is
//                   the current buffer's set: the wait is for two tiles back)
//   c_loaded        (one panel only: no middle to hide C in) a block of C loaded into the tile
//   c_done          a block's last product (compute);  d2h waits before copying it back
//   c_in_ready      a block of the host's C is in the c_in buffer (h2d);  compute waits, then adds it
//   c_in_free       that addition is done (compute);  h2d waits before the next block comes in
// Waiting on an event never recorded yet returns at once (CUDA's rule), so
// the first tile needs no special case. A wait is
//   LAB_CUDA_CHECK(cudaStreamWaitEvent(stream, event.get()));   a record: event.record(stream)
//
// Test:   ./lab test step07
#include "engine.hpp"
#include "lab/todo.hpp"

namespace lab::step07 {
inline namespace LAB_IMPL_NS {

// Stage 1.
detail::Panels load_panels(detail::Worker& w, const detail::Tile& t, int64_t p) {
  // TODO: take the next panel buffer b; on w.h2d(): wait for panel_free[b], load the
  //       panels of A and B into w.a_panel(b, ...) and w.b_panel(b, ...), record panel_ready[b];
  //       then make w.compute() wait for panel_ready[b]
  (void)w, (void)t, (void)p;
  LAB_TODO(
      "step07 streams stage 1, load_panels: load panel p of A and B into the next panel buffer on "
      "w.h2d(), between the events panel_free[b] and panel_ready[b]");
}

// Stage 2. The first and the last panel's products run in column blocks of C
// (plan.hpp's kCBlocks, t.bw wide, the same columns of the buffer in every
// tile): the first panel's product into block j waits only for the previous
// tile's copy back of block j, not for the whole tile, and block j goes back
// while the others are multiplied, so the end of one tile overlaps the start
// of the next. Eight blocks: a block of a 16384-wide tile (2048 columns) is
// still a product cuBLAS runs at full speed.
void multiply_block(detail::Worker& w, const detail::Tile& t, const detail::Panels& s, int64_t j) {
  // TODO: first panel: compute waits for c_stored[j] (and, when beta != 0 but C is not
  //       late, h2d waits for it too and loads the block first, c_loaded); the product into the
  //       block (beta: t.call.beta on the first panel, 0 there when C is late, 1 after); last panel: c_done, then
  //       d2h copies the block back and records c_stored[j]
  (void)w, (void)t, (void)s, (void)j;
  LAB_TODO(
      "step07 streams stage 2, multiply_block: the first or last panel's product into column block j "
      "of the C tile; the first waits for c_stored[j], the last copies the block back (c_done, c_stored[j])");
}

// Stage 3.
void add_c(detail::Worker& w, const detail::Tile& t, int64_t j) {
  // TODO: on h2d: wait for c_in_free, load block j of the host's C into w.c_in(...),
  //       record c_in_ready; on compute: wait for it, w.add beta times it to the block, record c_in_free
  (void)w, (void)t, (void)j;
  LAB_TODO(
      "step07 streams stage 3, add_c: bring block j of the host's C in through w.c_in on w.h2d() and add "
      "beta times it to the C tile on w.compute(), between the events c_in_free and c_in_ready");
}

// One tile: the k loop around the three stages (given).
void run_tile(detail::Worker& w, int64_t index) {
  const detail::Tile t(w, index);
  const detail::Call& c = t.call;
  int b = 0;
  for (int64_t p = 0; p < t.panels && !w.stopped(); ++p) {
    const detail::Panels s = load_panels(w, t, p);
    b = s.b;
    const bool last = p == t.panels - 1;
    if (p != 0 && !last) {
      w.gemm(c.alpha, s.A, s.B, 1.0, t.dC);  // a middle panel: one product into the whole tile
    } else {
      // The first and the last panel, block by block (C left over for the
      // last panel joins its block just before the block's product).
      for (int64_t j = 0; j < t.blocks; ++j) {
        if (last && t.c_panel(j) == p) add_c(w, t, j);
        multiply_block(w, t, s, j);
      }
    }
    for (int64_t j = 0; j < t.blocks && !last; ++j)  // the blocks of C due after this panel's products
      if (t.c_panel(j) == p) add_c(w, t, j);
    // The products that read buffer b are queued: h2d refills it once they are done.
    w.panel_free[b].record(w.compute());
  }
  // Pinned copies return at once: without this the host would queue every
  // tile up front and the work split would be decided before the GPU starts.
  // Taking the next tile once this one's last panel is in keeps one panel of
  // look-ahead.
  w.panel_ready[b].sync();
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
