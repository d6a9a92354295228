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
  // LAB:SOLUTION-BEGIN  list the streams device by device (the entries of one device share its
  // LAB:HINT  streams_per_gpu streams), then let every stream take tiles from one shared TileQueue
  if (detail::share_panels(alpha, A, B, beta, C, opts, {&multiply_block, &add_c})) return;
  // A device listed more than once (`0,0`) is one GPU: its entries share
  // streams_per_gpu streams (at least one each), dealt round-robin, so it
  // runs as many streams, with tiles as large, as dgemm_streams would there.
  // Listing it twice must not split its memory into smaller tiles that move
  // more bytes over the same PCIe link, nor its host cores among more stagers.
  std::vector<int> seen;
  for (int d : opts.gpus) {
    if (std::find(seen.begin(), seen.end(), d) != seen.end()) continue;
    seen.push_back(d);
    std::vector<int> entries;
    for (int g = 0; g < int(opts.gpus.size()); ++g)
      if (opts.gpus[size_t(g)] == d) entries.push_back(g);
    const int E = int(entries.size()), count = std::max(opts.streams_per_gpu, E);
    for (int s = 0; s < count; ++s) slots.push_back({entries[size_t(s % E)], d, s / E});
  }
  auto call = detail::prepare(alpha, A, B, beta, C, opts, slots);
  if (!call) return;
  // First round: the stream at position i of the list above starts with
  // tile i, so the first GPU's streams are filled first; from then on
  // whoever is free takes the next.
  const int64_t tiles = call->plan.tiles(), first_round = std::min<int64_t>(tiles, int64_t(slots.size()));
  TileQueue queue(tiles, first_round);
  detail::run_streams(*call, slots, [&](detail::Worker& w) {
    int64_t i = 0;
    while (slots[size_t(i)].gpu != w.slot().gpu || slots[size_t(i)].stream != w.slot().stream) ++i;
    for (int64_t t = i < first_round ? i : queue.next(); t >= 0 && !w.stopped(); t = queue.next())
      run_tile(w, t);
  });
  // LAB:SKELETON
  (void)alpha, (void)A, (void)B, (void)beta, (void)C;
  LAB_TODO(
      "step07 multigpu: first hand the call to detail::share_panels(alpha, A, B, beta, C, opts, "
      "{&multiply_block, &add_c}) (pinned A and B on several GPUs: it runs the call and returns true); then "
      "list the streams device by device (a device listed E times gets "
      "max(E, streams_per_gpu) streams, dealt round-robin to its entries: StreamSlot), prepare the call, and let each "
      "stream take tiles from one shared TileQueue until it is empty (run_streams, run_tile)");
  // LAB:SOLUTION-END
}

}  // namespace LAB_IMPL_NS
}  // namespace lab::step07
