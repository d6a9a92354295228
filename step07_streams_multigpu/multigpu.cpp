// Variant 3 of step07: every GPU of opts.gpus, several streams each.
//
// The streams are listed GPU by GPU ("first fill all streams of a GPU, then
// move to the next GPU"), so the first tiles go out in that order. After
// that no stream is given a fixed share: each takes the next tile from one
// shared queue (plan.hpp's TileQueue) when it is ready for one, so a GPU that
// runs faster, or has more streams, simply takes more tiles, and all finish
// within about one tile of each other. A GPU id listed twice (`0,0`) is two
// entries on one device that share its streams: the same code, tested on
// one GPU, at the speed of dgemm_streams there. The rule: a device listed E
// times gets max(E, streams_per_gpu) streams (not E times as many), dealt
// round-robin to its entries: stream s is StreamSlot{entry s mod E, device, s / E}
// (entry = the position in opts.gpus). With pinned A and B on several GPUs
// that reach each other, the given detail::share_panels (share.cpp) runs the
// call instead: the GPUs share the panels of A and B over NVLink.
//
// Test:   ./lab test step07
#include <algorithm>

#include "engine.hpp"
#include "lab/todo.hpp"

namespace lab::step07 {
inline namespace LAB_IMPL_NS {

void dgemm_multigpu(double alpha, ConstMatView A, ConstMatView B, double beta, MatView C,
                    const Options& opts) {
  check_options(opts);
  std::vector<StreamSlot> slots;
  // TODO: list the streams device by device (the entries of one device share its
  //       streams_per_gpu streams), then let every stream take tiles from one shared TileQueue
  (void)alpha, (void)A, (void)B, (void)beta, (void)C;
  LAB_TODO(
      "step07 multigpu: first hand the call to detail::share_panels(alpha, A, B, beta, C, opts, "
      "{&multiply_block, &add_c}) (pinned A and B on several GPUs: it runs the call and returns true); then "
      "list the streams device by device (a device listed E times gets "
      "max(E, streams_per_gpu) streams, dealt round-robin to its entries: StreamSlot), prepare the call, and let each "
      "stream take tiles from one shared TileQueue until it is empty (run_streams, run_tile)");
}

}  // namespace LAB_IMPL_NS
}  // namespace lab::step07
