// share.cpp — dgemm_multigpu with the panels of A and B shared between the
// GPU entries, so that each panel crosses the host link once per super tile
// instead of once per GPU that needs it (plan.hpp's SharePlan: the team
// grid, the super tiles, the slices and the bytes).
//
// Per k panel p, in panel buffer b (the panels so far mod 2, alike in every
// entry), three steps, each for every entry that has a tile:
//   1. on its h2d stream: wait panel_free[b] (its products of panel p - 2 are
//      done) and sent[b] (its slices of panel p - 2 have left for its peers),
//      load its own slices of the A and B panels from the host, record
//      panel_ready[b];
//   2. on its p2p stream: wait panel_ready[b]; for each peer of its grid row
//      (its A slice) and of its grid column (its B slice): wait the peer's
//      panel_free[b] (the peer's products still reading buffer b), copy the
//      slice into the same place of the peer's buffer b; then record sent[b];
//   3. on its compute stream: wait panel_ready[b] and the sent[b] of every
//      peer that sent it a slice, then the products of run_tile (streams.cpp:
//      multiply_block and add_c bring C in, late or first, and send it back,
//      as without sharing), and record panel_free[b].
//
// One host thread drives the whole team. A cudaStreamWaitEvent binds to the
// event's latest record at the time of the call, so a peer's wait in step 2
// must come after the peer's step 3 of panel p - 2 and before its step 3 of
// panel p on the host: one thread that queues the steps in this order gets
// that with no barrier (a thread per entry would need one per panel). Pinned
// copies, peer copies and products all return at once, so one thread queues
// for every GPU faster than they run. (Pageable matrices, shared only with
// Options::Share::on, are staged by this thread alone: right, but slow.)
//
// One worker (one set of streams and buffers) per entry: its double-buffered
// panels already overlap the copies of panel p + 1 with the products of
// panel p, while a second worker per entry would halve the tile under the
// same memory (more bytes per flop: the handout's formula) and make a
// second team to keep in step.
#include <algorithm>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "engine.hpp"
#include "lab/gemm_args.hpp"

namespace lab::step07::detail {
namespace {

// One GPU entry of the team: its worker, a stream for the slices it sends
// (so that they leave while its next slices come in from the host), the
// events recorded after them, and its tile in the current super tile.
struct Entry {
  Entry(Call& call, StreamSlot slot) : w(call, slot) {
    const std::string of = " of entry " + std::to_string(slot.gpu);
    LAB_EMULATION(name_stream(w.h2d(), "h2d" + of));
    LAB_EMULATION(name_stream(w.compute(), "compute" + of));
    LAB_EMULATION(name_stream(w.d2h(), "d2h" + of));
    LAB_EMULATION(name_stream(p2p.get(), "p2p" + of));
    for (int b = 0; b < 2; ++b) {
      LAB_EMULATION(name_memory(w.a_panel(b, 1, 1).data, "buffer slot " + std::to_string(b) + of));
      LAB_EMULATION(name_memory(w.b_panel(b, 1, 1).data, "buffer slot " + std::to_string(b) + of));
    }
    (void)of;
  }
  void use() const { LAB_CUDA_CHECK(cudaSetDevice(w.slot().device)); }

  Worker w;           // first: it makes its device current, where the stream and events below are made
  cuda::Stream p2p;
  cuda::Event sent[2];
  std::optional<Tile> tile;
  int64_t a0 = 0, a_cols = 0, b0 = 0, b_cols = 0;  ///< its slices of the current panel (columns of A, of B)
};

// The entries; the peer copies into one entry's buffers run on the others'
// streams, so every p2p stream is waited for before any buffer goes.
struct Team {
  std::vector<std::unique_ptr<Entry>> entries;
  ~Team() {
    for (auto& x : entries) {
      cudaSetDevice(x->w.slot().device);
      cudaStreamSynchronize(x->p2p.get());
    }
    cudaGetLastError();
  }
};

class Run {
 public:
  Run(Call& call, const SharePlan& sp, const TileStages& stages) : call_(call), sp_(sp), stages_(stages) {}

  void all(const std::vector<StreamSlot>& slots) {
    call_.running = 1;  // one host thread for the whole team
    Team team;
    for (const StreamSlot& s : slots) team.entries.push_back(std::make_unique<Entry>(call_, s));
    e_ = &team.entries;
    int64_t count = 0;
    for (int64_t s = 0; s < sp_.supers(); ++s) {
      std::vector<int> active;
      for (int e = 0; e < int(slots.size()); ++e) {
        Entry& x = entry(e);
        x.tile.reset();
        const int64_t t = sp_.tile_of(s, e);
        if (t < 0) continue;
        x.tile.emplace(x.w, t);
        active.push_back(e);
      }
      int b = 0;
      for (int64_t p = 0; p < call_.plan.panels; ++p) {
        b = int(count++ % 2);
        for (int e : active) load(s, e, p, b);
        for (int e : active) send(s, e, p, b);
        for (int e : active) multiply(s, e, p, b);
      }
      // As run_tile: the next super tile is queued once this one's last
      // panels are in, one panel of look-ahead rather than the whole call
      // queued up front (the queues stay short).
      for (int e : active) entry(e).w.panel_ready[b].sync();
    }
    for (auto& x : team.entries) {
      x->use();
      x->p2p.sync();
    }
    for (auto& x : team.entries) {
      x->use();
      x->w.finish();
    }
  }

 private:
  Entry& entry(int e) const { return *(*e_)[size_t(e)]; }
  // The peers of e in super tile s: the other entries with a tile in its grid
  // row (they share its A panel) or its grid column (its B panel).
  std::vector<int> row_peers(int64_t s, int e) const {
    std::vector<int> out;
    const int r = e / sp_.grid.cols;
    for (int c = 0; c < sp_.row_sharers(s, e); ++c)
      if (r * sp_.grid.cols + c != e) out.push_back(r * sp_.grid.cols + c);
    return out;
  }
  std::vector<int> col_peers(int64_t s, int e) const {
    std::vector<int> out;
    const int c = e % sp_.grid.cols;
    for (int r = 0; r < sp_.col_sharers(s, e); ++r)
      if (r * sp_.grid.cols + c != e) out.push_back(r * sp_.grid.cols + c);
    return out;
  }
  MatView a_panel(const Entry& x, int b, int64_t d) const { return x.w.a_panel(b, x.tile->r.rows, d); }
  MatView b_panel(const Entry& x, int b, int64_t d) const { return x.w.b_panel(b, d, x.tile->r.cols); }

  // Step 1: entry e's own slices from the host (A along k, B along n).
  void load(int64_t s, int e, int64_t p, int b) {
    Entry& x = entry(e);
    Worker& w = x.w;
    const TileRange& r = x.tile->r;
    const int64_t p0 = call_.plan.panel_start(p), d = call_.plan.panel_depth(p);
    const Slice a = slice_of(d, e % sp_.grid.cols, sp_.row_sharers(s, e));
    const Slice bs = slice_of(r.cols, e / sp_.grid.cols, sp_.col_sharers(s, e));
    x.a0 = a.start, x.a_cols = a.size, x.b0 = bs.start, x.b_cols = bs.size;
    x.use();
    w.name_panel(b, p);
    LAB_CUDA_CHECK(cudaStreamWaitEvent(w.h2d(), w.panel_free[b].get()));
    LAB_CUDA_CHECK(cudaStreamWaitEvent(w.h2d(), x.sent[b].get()));
    w.load(a_panel(x, b, d).block(0, a.start, r.rows, a.size), call_.A.block(r.i0, p0 + a.start, r.rows, a.size),
           w.h2d());
    w.load(b_panel(x, b, d).block(0, bs.start, d, bs.size), call_.B.block(p0, r.j0 + bs.start, d, bs.size), w.h2d());
    w.panel_ready[b].record(w.h2d());
  }

  // Step 2: entry e's slices into the same places of its peers' buffer b.
  void send(int64_t s, int e, int64_t p, int b) {
    Entry& x = entry(e);
    const int64_t d = call_.plan.panel_depth(p);
    x.use();
    LAB_CUDA_CHECK(cudaStreamWaitEvent(x.p2p.get(), x.w.panel_ready[b].get()));
    for (int f : row_peers(s, e)) {
      Entry& y = entry(f);
      LAB_CUDA_CHECK(cudaStreamWaitEvent(x.p2p.get(), y.w.panel_free[b].get()));
      x.w.send(a_panel(y, b, d).block(0, x.a0, x.tile->r.rows, x.a_cols),
               a_panel(x, b, d).block(0, x.a0, x.tile->r.rows, x.a_cols), x.p2p.get());
    }
    for (int f : col_peers(s, e)) {
      Entry& y = entry(f);
      LAB_CUDA_CHECK(cudaStreamWaitEvent(x.p2p.get(), y.w.panel_free[b].get()));
      x.w.send(b_panel(y, b, d).block(0, x.b0, d, x.b_cols), b_panel(x, b, d).block(0, x.b0, d, x.b_cols),
               x.p2p.get());
    }
    x.sent[b].record(x.p2p.get());
  }

  // Step 3: once every slice is in, entry e's products of panel p (as run_tile's).
  void multiply(int64_t s, int e, int64_t p, int b) {
    Entry& x = entry(e);
    Worker& w = x.w;
    const Tile& t = *x.tile;
    const int64_t d = call_.plan.panel_depth(p);
    x.use();
    LAB_CUDA_CHECK(cudaStreamWaitEvent(w.compute(), w.panel_ready[b].get()));
    std::vector<int> peers = row_peers(s, e), more = col_peers(s, e);
    peers.insert(peers.end(), more.begin(), more.end());
    for (int f : peers) LAB_CUDA_CHECK(cudaStreamWaitEvent(w.compute(), entry(f).sent[b].get()));
    const Panels panel{b, p, a_panel(x, b, d), b_panel(x, b, d)};
    // As run_tile: a middle panel's product at once, an edge panel's block by
    // block (C left over for the last panel just before its block's product),
    // then the blocks of C due after this panel's products.
    const bool last = p == t.panels - 1;
    if (p != 0 && !last) {
      w.gemm(call_.alpha, panel.A, panel.B, 1.0, t.dC);
    } else {
      for (int64_t j = 0; j < t.blocks; ++j) {
        if (last && t.c_panel(j) == p) stages_.add_c(w, t, j);
        stages_.multiply_block(w, t, panel, j);
      }
    }
    for (int64_t j = 0; j < t.blocks && !last; ++j)
      if (t.c_panel(j) == p) stages_.add_c(w, t, j);
    w.panel_free[b].record(w.compute());
  }

  Call& call_;
  const SharePlan& sp_;
  const TileStages& stages_;
  std::vector<std::unique_ptr<Entry>>* e_ = nullptr;
};

}  // namespace

bool share_panels(double alpha, ConstMatView A, ConstMatView B, double beta, MatView C, const Options& opts,
                  const TileStages& stages) {
  using Share = Options::Share;
  if (opts.share == Share::off || (opts.share == Share::automatic && opts.gpus.size() < 2)) return false;
  check_gemm_args(A, B, C);
  check_options(opts);
  if (opts.gpus.size() < 2)
    throw std::invalid_argument("share: sharing the panels needs two GPU entries or more, got one");
  // Pageable matrices are bound by the host's staging copies, not by the host link: the plan without sharing.
  if (opts.share == Share::automatic && !(lab::cuda::pinned_view(A) && lab::cuda::pinned_view(B))) return false;
  int count = 0;
  if (cudaGetDeviceCount(&count) != cudaSuccess) {
    cudaGetLastError();
    return false;  // (the caller's plan reports it)
  }
  std::vector<int> devices;
  for (int g : opts.gpus) {
    if (g >= count) return false;  // (the caller's plan names it)
    if (std::find(devices.begin(), devices.end(), g) == devices.end()) devices.push_back(g);
  }
  const std::string gap = lab::cuda::unreachable(devices);
  if (!gap.empty()) {
    if (opts.share == Share::on) throw std::invalid_argument("share: " + gap);
    return false;
  }
  const lab::cuda::KeepDevice keep;
  // One worker per entry (see the top of this file); the entries of one device share its memory.
  std::vector<StreamSlot> slots;
  for (int e = 0; e < int(opts.gpus.size()); ++e) slots.push_back({e, opts.gpus[size_t(e)], 0});
  auto call = prepare(alpha, A, B, beta, C, opts, slots);
  if (!call) return true;
  const SharePlan sp = make_share_plan(C.rows, C.cols, A.cols, opts, call->cap, call->streams_per_device,
                                       int(slots.size()), opts.device_mem_limit > 0);
  call->plan = sp.plan;
  lab::cuda::enable_peers(devices);
  Run(*call, sp, stages).all(slots);
  return true;
}

}  // namespace lab::step07::detail
