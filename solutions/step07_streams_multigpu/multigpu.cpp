// Variant 3 of step07: every GPU of opts.gpus, several streams each.
//
// The streams are listed GPU by GPU ("first fill all streams of a GPU, then
// move to the next GPU"), so the first tiles go out in that order. After
// that no stream is given a fixed share: each takes the next tile from one
// shared queue (plan.hpp's TileQueue) when it is ready for one, so a GPU that
// runs faster, or has more streams, simply takes more tiles, and all finish
// within about one tile of each other. A GPU id listed twice (`0,0`) is two
// entries on one device: the same code, tested on one GPU.
#include <algorithm>

#include "engine.hpp"
#include "lab/todo.hpp"

namespace lab::step07 {
inline namespace LAB_IMPL_NS {

void dgemm_multigpu(double alpha, ConstMatView A, ConstMatView B, double beta, MatView C, const Options& opts) {
  check_options(opts);
  std::vector<StreamSlot> slots;
  // LAB:SOLUTION-BEGIN  list the streams GPU by GPU, then let every stream take tiles from one shared TileQueue
  for (int g = 0; g < int(opts.gpus.size()); ++g)
    for (int s = 0; s < opts.streams_per_gpu; ++s) slots.push_back({g, opts.gpus[size_t(g)], s});
  auto call = detail::prepare(alpha, A, B, beta, C, opts, slots);
  if (!call) return;
  // First round: stream i (in the order above) starts with tile i, so GPU 0's
  // streams are filled first; from then on whoever is free takes the next.
  const int64_t tiles = call->plan.tiles(), first_round = std::min<int64_t>(tiles, int64_t(slots.size()));
  TileQueue queue(tiles, first_round);
  const int per_gpu = opts.streams_per_gpu;
  detail::run_streams(*call, slots, [&](detail::Worker& w) {
    const int64_t i = int64_t(w.slot().gpu) * per_gpu + w.slot().stream;
    for (int64_t t = i < first_round ? i : queue.next(); t >= 0 && !w.stopped(); t = queue.next()) run_tile(w, t);
  });
  // LAB:SKELETON
  (void)alpha, (void)A, (void)B, (void)beta, (void)C;
  LAB_TODO("step07 multigpu: list the streams GPU by GPU (StreamSlot), prepare the call, and let each "
           "stream take tiles from one shared TileQueue until it is empty (run_streams, run_tile)");
  // LAB:SOLUTION-END
}

}  // namespace LAB_IMPL_NS
}  // namespace lab::step07
