// plan.hpp — how step07 cuts C into tiles and deals them (plain C++: the
// logic is tested on any machine, with or without a GPU).
//
// A stream (a worker) owns one tm x tn tile of C on the device and two
// buffers each for a tm x tk panel of A and a tk x tn panel of B (double
// buffering: the next panel arrives while the product runs on the current),
// and one column block of C on its way in (see c_block_width).
// For a C tile resident across the k loop, A crosses PCIe once per column of
// tiles and B once per row of tiles:
//   bytes H2D = 8 (ceil(n/tn) m k + ceil(m/tm) k n + m n [beta != 0]),  D2H = 8 m n,
// so the plan takes the largest tiles the memory cap allows (and no fewer
// tiles than GPUs, or some would idle).
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "streams.hpp"

namespace lab::step07 {

struct TileShape {
  int64_t tm = 0, tn = 0, tk = 0;
};

/// The first and last panel's products run in up to kCBlocks column blocks of
/// the C tile, each c_block_width(t) = ceil(tn / kCBlocks) wide, so that block
/// j covers the same buffer columns in every tile; C comes in one such block
/// at a time.
constexpr int kCBlocks = 8;
int64_t c_block_width(const TileShape& t);

/// Device bytes one stream needs: its C tile, two panels each of A and B, and
/// one block of C on its way in.
int64_t stream_device_bytes(const TileShape& t);

/// One tile of C: rows [i0, i0 + rows), columns [j0, j0 + cols).
struct TileRange {
  int64_t i0, j0, rows, cols;
};

struct Plan {
  int64_t m = 0, n = 0, k = 0;
  TileShape shape;
  int64_t tiles_m = 0, tiles_n = 0, panels = 0;
  /// C tiles on the device per stream: 1, or 2 where a stream computes
  /// several tiles one after the other and the memory holds a second
  /// (make_share_plan): then one tile's C goes back while the next tile's
  /// products run in the other buffer, instead of the next tile's first
  /// products waiting for the copy back.
  int c_buffers = 1;

  int64_t tiles() const { return tiles_m * tiles_n; }
  /// Products (cublasDgemm launches) in one call: one per tile and k panel,
  /// each after two panel copies.
  int64_t products() const { return tiles() * panels; }
  /// Tiles are numbered down the columns of the tile grid (column-major, like C).
  TileRange tile(int64_t index) const;
  /// k range [p0, p0 + depth) of panel p.
  int64_t panel_start(int64_t p) const { return p * shape.tk; }
  int64_t panel_depth(int64_t p) const;
  /// Device bytes one stream needs: stream_device_bytes and its second C tile.
  int64_t device_bytes() const;
  /// What crosses PCIe in one call (the formula above).
  double h2d_bytes(bool load_c) const;
  double d2h_bytes() const;
  /// One line: tiles, panels, bytes per stream, bytes moved.
  std::string describe(bool load_c) const;
};

/// The most products (tiles x panels) a plan may take: beyond this the calls'
/// launch and copy overheads alone run for minutes (a cap of 1K for 1G, or
/// --tile 7 at 2048, would take tens of millions), so such a plan is refused.
constexpr int64_t kMaxProducts = 1000000;

/// The smallest device memory (bytes per device, shared by
/// `streams_per_device` streams) that holds a plan of chosen tiles for an
/// m x n x k product within kMaxProducts.
int64_t min_device_mem(int64_t m, int64_t n, int64_t k, int streams_per_device);

/// Throws std::invalid_argument naming the option unless it is usable:
/// a non-empty list of non-negative GPU ids, streams >= 1, tiles >= 0 (0 =
/// chosen), host_threads >= 0. Does not ask whether the ids exist.
void check_options(const Options& o);

/// Streams that share one device (the most over all devices): the entries of
/// `gpus` with its id share streams_per_gpu streams, with at least one each.
int streams_on_busiest_device(const Options& o);

/// The tiles for an m x n x k product. `cap` is the device bytes the streams
/// of one device share, `streams_per_device` how many share it. Requested
/// sizes (opts.tm/tn/tk > 0; tn, tk default to tm) are kept, clipped to the
/// matrix; otherwise the largest tiles that fit, no fewer than `min_tiles` of
/// them where the matrix allows. The variants ask for one per stream when the
/// streams span several GPUs (the first round deals tile i to stream i, GPU
/// by GPU, and no GPU may idle) and for one on a single GPU: one stream keeps
/// it busy on a large tile (its panels double-buffered), while splitting a
/// tile for an idle stream sends A or B over PCIe once more (at n = 16384,
/// 4 n^2 doubles instead of 3). Throws std::invalid_argument when `cap_given` and the cap cannot
/// hold one tile set of a plan within kMaxProducts (naming the smallest cap that can),
/// std::runtime_error when a cap read from the device cannot, and std::invalid_argument
/// when requested tiles make more than kMaxProducts products.
Plan make_plan(int64_t m, int64_t n, int64_t k, const Options& opts, size_t cap, int streams_per_device,
               int min_tiles, bool cap_given);

/// The work split of dgemm_multigpu: tiles handed out one at a time from a
/// shared counter, so a faster (or less loaded) GPU simply takes more of them
/// and all finish within about one tile of each other. Thread-safe.
class TileQueue {
 public:
  /// Tiles 0 .. dealt_up_front - 1 are handed out by the caller (a first
  /// round: stream i starts with tile i); next() deals the rest.
  explicit TileQueue(int64_t tiles, int64_t dealt_up_front = 0) : tiles_(tiles), next_(dealt_up_front) {}
  /// The next tile, or -1 when all are taken or stop() was called.
  int64_t next() {
    if (stopped_.load(std::memory_order_relaxed)) return -1;
    const int64_t t = next_.fetch_add(1, std::memory_order_relaxed);
    return t < tiles_ ? t : -1;
  }
  /// Ends the dealing (an error on one GPU): every next() from now on returns -1.
  void stop() { stopped_.store(true, std::memory_order_relaxed); }
  bool stopped() const { return stopped_.load(std::memory_order_relaxed); }

 private:
  int64_t tiles_;
  std::atomic<int64_t> next_;
  std::atomic<bool> stopped_{false};
};

/// A stream of a GPU entry: which entry of Options::gpus, its device id, its index there.
struct StreamSlot {
  int gpu = 0, device = 0, stream = 0;
};

// ---- Panels shared between the GPUs (dgemm_multigpu, pinned A and B) --------
//
// Without sharing every GPU loads from the host all the panels its tiles
// need; the GPUs that compute tiles of one row of C load the same A panels,
// those of one column the same B panels. With G GPU entries in a team grid
// of rows x cols (rows = the largest divisor of G not above sqrt(G): 2 -> 1x2,
// 3 -> 1x3, 4 -> 2x2, 6 -> 2x3, 8 -> 2x4; entry e of Options::gpus is grid
// position (r, c) = (e / cols, e % cols)), the tiles are dealt in super tiles
// of rows x cols tiles, in column-major order of the super tiles: entry
// (r, c) computes tile (R rows + r, S cols + c) of super tile (R, S). For
// every k panel, entry (r, c) loads from the host only slice c (of cols,
// along k) of its A panel and slice r (of rows, along n) of its B panel, and
// copies them into the same panel buffer of the other entries of its grid
// row (A) and grid column (B), GPU to GPU. Per GPU entry and tile (all k
// panels), for a tm x tn tile:
//
//   host (H2D) bytes = 8 (tm k / cols + k tn / rows)
//   peer bytes       = 8 ((cols - 1) tm k / cols + (rows - 1) k tn / rows)
//                      sent, and as many received
//
// against 8 (tm k + k tn) from the host without sharing (C as before: 8 tm tn
// in when beta != 0, 8 tm tn out). share_bytes() is this formula; it holds
// where the slices divide evenly and no entry idles. In a super tile at the
// edge of C an entry whose tile lies outside idles, and the slices are split
// among the entries of the row or column that have a tile (SharePlan::bytes
// counts that exactly).

/// The team grid of `entries` GPU entries (rows x cols, rows <= cols).
struct TeamGrid {
  int rows = 1, cols = 1;
  int size() const { return rows * cols; }
};
TeamGrid team_grid(int entries);

/// Bytes that cross the host link (H2D) and the links between GPUs (sent).
struct ShareBytes {
  double host = 0, peer = 0;
};
/// The formula above: one GPU entry's bytes for one tm x tn tile over depth k
/// (panel slices only; C adds 8 tm tn in when beta != 0).
ShareBytes share_bytes(int64_t tm, int64_t tn, int64_t k, TeamGrid g);

/// Part `part` of `parts` near-equal parts of [0, extent): the first
/// extent % parts parts are one longer.
struct Slice {
  int64_t start = 0, size = 0;
};
Slice slice_of(int64_t extent, int part, int parts);

struct SharePlan {
  Plan plan;
  TeamGrid grid;
  int64_t super_rows = 0, super_cols = 0;  ///< super tiles down and across

  int64_t supers() const { return super_rows * super_cols; }
  /// The tile (Plan::tile's index) entry e computes in super tile s, or -1
  /// when that tile lies outside C (the entry idles in this super tile).
  int64_t tile_of(int64_t s, int e) const;
  /// Entries of e's grid row (they share its A panels) and of its grid column
  /// (B panels) that have a tile in super tile s; 0 when e idles.
  int row_sharers(int64_t s, int e) const;
  int col_sharers(int64_t s, int e) const;
  /// What entry e moves in the whole call: host = its slices of the panels
  /// (and its C tiles when load_c), peer = the slices it sends.
  ShareBytes bytes(int e, bool load_c) const;
};

/// The sharing plan for `entries` GPU entries: make_plan's tiles (the largest
/// that fit `cap` shared by `entries_per_device` streams, or the requested
/// ones), then, for chosen tiles, halved until there is a whole super tile
/// (tiles_m >= rows, tiles_n >= cols, so no fewer tiles than entries, down to
/// make_plan's smallest balanced tile), with two C tiles per entry where there
/// are several super tiles and the cap holds the second. Throws as make_plan does.
SharePlan make_share_plan(int64_t m, int64_t n, int64_t k, const Options& opts, size_t cap,
                          int entries_per_device, int entries, bool cap_given);

}  // namespace lab::step07
