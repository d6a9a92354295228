// Variant 1 of step07: the lecture's synchronous loop.
//
// One stream on the first GPU of opts.gpus. For every tile of C: bring the
// tile in (unless beta == 0: then C is never read), then for every k panel
// bring the panels of A and B and let cublasDgemm accumulate (beta = 1 after
// the first panel), waiting for each step before the next; finally copy the
// tile back. Nothing overlaps: the timeline shows copies and products one
// after the other, and the time is the sum of both.
//
// Worker (engine.hpp) gives the buffers and the traced copies and products:
//   w.c_tile(r, c), w.a_panel(0, r, c), w.b_panel(0, r, c)   device views
//   w.load(dev, host, s), w.store(host, dev, s), w.gemm(alpha, dA, dB, beta, dC)
//
// Test:   ./lab test step07
#include "engine.hpp"
#include "lab/todo.hpp"

namespace lab::step07 {
inline namespace LAB_IMPL_NS {

void dgemm_sync(double alpha, ConstMatView A, ConstMatView B, double beta, MatView C, const Options& opts) {
  check_options(opts);
  const std::vector<StreamSlot> slots{{0, opts.gpus.front(), 0}};
  auto call = detail::prepare(alpha, A, B, beta, C, opts, slots);
  if (!call) return;
  detail::run_streams(*call, slots, [](detail::Worker& w) {
    const detail::Call& c = w.call();
    const Plan& plan = c.plan;
    const cudaStream_t s = w.compute();  // the only stream
    for (int64_t t = 0; t < plan.tiles() && !w.stopped(); ++t) {
      const TileRange r = plan.tile(t);
      const MatView hC = c.C.block(r.i0, r.j0, r.rows, r.cols);
      const MatView dC = w.c_tile(r.rows, r.cols);
      if (c.beta != 0) w.load(dC, hC, s);
      // LAB:SOLUTION-BEGIN  for each k panel: load the panels of A and B, multiply-accumulate into dC, wait
      for (int64_t p = 0; p < plan.panels; ++p) {
        const int64_t p0 = plan.panel_start(p), d = plan.panel_depth(p);
        const MatView dA = w.a_panel(0, r.rows, d), dB = w.b_panel(0, d, r.cols);
        w.load(dA, c.A.block(r.i0, p0, r.rows, d), s);
        w.load(dB, c.B.block(p0, r.j0, d, r.cols), s);
        // beta scales C once, with the first panel; the others add to it.
        w.gemm(c.alpha, dA, dB, p == 0 ? c.beta : 1.0, dC);
        LAB_CUDA_CHECK(cudaStreamSynchronize(s));
      }
      // LAB:SKELETON
      LAB_TODO(
          "step07 sync: for each k panel, load the panels of A and B into w.a_panel(0, ...) and "
          "w.b_panel(0, ...), multiply with w.gemm (beta for the first panel, 1 after), and wait");
      // LAB:SOLUTION-END
      w.store(hC, dC, s);
      w.finish();  // waits for the copy back (and, for pageable C, copies it out of the staging buffer)
    }
  });
}

}  // namespace LAB_IMPL_NS
}  // namespace lab::step07
