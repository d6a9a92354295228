// The tile plan and the option checks of step07 (see plan.hpp).
#include "plan.hpp"

#include <algorithm>
#include <cstdio>
#include <map>
#include <stdexcept>

namespace lab::step07 {
namespace {

// Tiles beyond this gain little: at 16384 a tile already does 2048 flops per
// byte it brings (the handout's table) and the first and last tile, whose
// copies nothing hides, get longer.
constexpr int64_t kMaxTile = 16384;
// Below this the balancing stops halving tiles (cuBLAS runs small products slowly).
constexpr int64_t kMinBalancedTile = 256;

int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }

std::string bytes_text(double b) {
  char s[32];
  if (b >= double(1 << 30))
    std::snprintf(s, sizeof s, "%.2f GiB", b / double(1 << 30));
  else if (b >= double(1 << 20))
    std::snprintf(s, sizeof s, "%.1f MiB", b / double(1 << 20));
  else if (b >= double(1 << 10))
    std::snprintf(s, sizeof s, "%.1f KiB", b / double(1 << 10));
  else
    std::snprintf(s, sizeof s, "%.0f B", b);
  return s;
}

// The k depth that goes with a square tile T: deep enough that one product is
// large for cuBLAS, shallow enough that the first panels arrive soon.
int64_t depth_for(int64_t T) { return std::max(T / 8, std::min<int64_t>(T, 256)); }
// Twice as deep where the memory holds it. On an H200, cublasDgemm of a 16384 x
// 16384 tile (beta = 1) runs at 54.4 TFLOP/s with panels 2048 deep and at 55.2,
// its square rate, from 3072 on (step07_probe --depths); step07 on one GPU gained
// 2-3 % from it at n = 16384 and 32768. Where memory is short, a larger tile
// saves more host traffic than a deeper panel saves product time.
int64_t deep_depth_for(int64_t T) { return std::max(T / 4, depth_for(T)); }

TileShape clip(TileShape t, int64_t m, int64_t n, int64_t k) {
  t.tm = std::max<int64_t>(1, std::min(t.tm, m));
  t.tn = std::max<int64_t>(1, std::min(t.tn, n));
  t.tk = std::max<int64_t>(1, std::min(t.tk, k));
  return t;
}

// The square tiles the plan tries, largest first: T = kMaxTile, then a
// quarter smaller at a time (multiples of 32) down to 128, then halves down to 1.
int64_t next_tile(int64_t T) { return T > 128 ? (T * 3 / 4) / 32 * 32 : T / 2; }
TileShape square(int64_t T, int64_t m, int64_t n, int64_t k) { return clip({T, T, depth_for(T)}, m, n, k); }

int64_t products_of(const TileShape& t, int64_t m, int64_t n, int64_t k) {
  return ceil_div(m, t.tm) * ceil_div(n, t.tn) * ceil_div(k, t.tk);
}

// The smallest square tile whose plan stays within kMaxProducts.
TileShape smallest_square(int64_t m, int64_t n, int64_t k) {
  TileShape best = square(kMaxTile, m, n, k);
  for (int64_t T = kMaxTile; T >= 1; T = next_tile(T)) {
    const TileShape t = square(T, m, n, k);
    if (products_of(t, m, n, k) > kMaxProducts) break;
    best = t;
  }
  return best;
}

// "2K", "130M": a --device-mem-limit value of at least b bytes.
std::string cap_text(int64_t b) {
  const char* unit = b <= (int64_t(1) << 20) ? "K" : b <= (int64_t(1) << 30) ? "M" : "G";
  const int shift = *unit == 'K' ? 10 : *unit == 'M' ? 20 : 30;
  return std::to_string((b + (int64_t(1) << shift) - 1) >> shift) + unit;
}

std::string dims(int64_t a, int64_t b, int64_t c) {
  return std::to_string(a) + "x" + std::to_string(b) + "x" + std::to_string(c);
}

}  // namespace

int64_t c_block_width(const TileShape& t) { return ceil_div(t.tn, kCBlocks); }

int64_t stream_device_bytes(const TileShape& t) {
  return int64_t(sizeof(double)) * (t.tm * t.tn + 2 * t.tm * t.tk + 2 * t.tk * t.tn + t.tm * c_block_width(t));
}

TileRange Plan::tile(int64_t index) const {
  const int64_t ti = index % tiles_m, tj = index / tiles_m;
  const int64_t i0 = ti * shape.tm, j0 = tj * shape.tn;
  return {i0, j0, std::min(shape.tm, m - i0), std::min(shape.tn, n - j0)};
}

int64_t Plan::device_bytes() const {
  return stream_device_bytes(shape) + (c_buffers - 1) * int64_t(sizeof(double)) * shape.tm * shape.tn;
}

int64_t Plan::panel_depth(int64_t p) const { return std::min(shape.tk, k - p * shape.tk); }

double Plan::h2d_bytes(bool load_c) const {
  return 8.0 * (double(tiles_n) * double(m) * double(k) + double(tiles_m) * double(k) * double(n) +
                (load_c ? double(m) * double(n) : 0.0));
}
double Plan::d2h_bytes() const { return 8.0 * double(m) * double(n); }

std::string Plan::describe(bool load_c) const {
  char s[256];
  std::snprintf(s, sizeof s,
                "C tiles %lldx%lld (%lld of them), k panels of %lld (%lld), %lld products, %s per stream%s; "
                "H2D %s, D2H %s per call",
                (long long)shape.tm, (long long)shape.tn, (long long)tiles(), (long long)shape.tk,
                (long long)panels, (long long)products(), bytes_text(double(device_bytes())).c_str(),
                c_buffers > 1 ? " (two C tiles)" : "",
                bytes_text(h2d_bytes(load_c)).c_str(), bytes_text(d2h_bytes()).c_str());
  return s;
}

void check_options(const Options& o) {
  if (o.gpus.empty()) throw std::invalid_argument("gpus: the list of GPUs is empty");
  for (int g : o.gpus)
    if (g < 0) throw std::invalid_argument("gpus: GPU id " + std::to_string(g) + " is negative");
  if (o.streams_per_gpu < 1)
    throw std::invalid_argument("streams_per_gpu must be at least 1, got " +
                                std::to_string(o.streams_per_gpu));
  if (o.tm < 0 || o.tn < 0 || o.tk < 0)
    throw std::invalid_argument("tile: sizes must be positive (0 = chosen), got " + std::to_string(o.tm) +
                                "x" + std::to_string(o.tn) + "x" + std::to_string(o.tk));
  if (o.host_threads < 0)
    throw std::invalid_argument("host_threads must be 0 (chosen) or more, got " +
                                std::to_string(o.host_threads));
}

int streams_on_busiest_device(const Options& o) {
  std::map<int, int> count;
  int most = 0;
  for (int g : o.gpus) most = std::max(most, ++count[g]);
  return std::max(most, o.streams_per_gpu);
}

int64_t min_device_mem(int64_t m, int64_t n, int64_t k, int streams_per_device) {
  return int64_t(std::max(1, streams_per_device)) * stream_device_bytes(smallest_square(m, n, k));
}

Plan make_plan(int64_t m, int64_t n, int64_t k, const Options& o, size_t cap, int streams_per_device,
               int min_tiles, bool cap_given) {
  const int64_t per_stream = int64_t(cap / size_t(std::max(1, streams_per_device)));
  auto too_small = [&](const TileShape& t) -> std::string {
    return "device_mem_limit: " + bytes_text(double(cap)) + " per device shared by " +
           std::to_string(streams_per_device) + " streams is too small for one tile set (" +
           std::to_string(t.tm) + "x" + std::to_string(t.tn) + " of C, panels of " + std::to_string(t.tk) +
           " need " + bytes_text(double(stream_device_bytes(t))) + " per stream)";
  };
  auto fail = [&](const TileShape& t) {
    if (cap_given) throw std::invalid_argument(too_small(t));
    throw std::runtime_error(too_small(t) + " (free memory of the device)");
  };
  Plan p;
  p.m = m, p.n = n, p.k = k;
  TileShape t;
  if (o.tm > 0) {
    t = clip({o.tm, o.tn > 0 ? o.tn : o.tm, o.tk > 0 ? o.tk : o.tm}, m, n, k);
    const int64_t products = products_of(t, m, n, k);
    if (products > kMaxProducts)
      throw std::invalid_argument("tile: " + dims(t.tm, t.tn, t.tk) + " tiles on " + dims(m, n, k) + " make " +
                                  std::to_string(products) + " products (tiles x k panels), more than the " +
                                  std::to_string(kMaxProducts) + " a plan may take; ask for larger tiles");
    if (stream_device_bytes(t) > per_stream) fail(t);
  } else {
    // Largest square tile that fits, shrinking by a quarter at a time, but
    // never so small that the plan takes more than kMaxProducts products.
    const TileShape smallest = smallest_square(m, n, k);
    int64_t T = kMaxTile;
    t = square(T, m, n, k);
    while (stream_device_bytes(t) > per_stream) {
      if (T == 1 || (t.tm == smallest.tm && t.tn == smallest.tn && t.tk == smallest.tk)) {
        const int64_t need = min_device_mem(m, n, k, streams_per_device);
        const std::string why = "device_mem_limit: " + bytes_text(double(cap)) + " per device is too small for " +
                                dims(m, n, k) + " with " + std::to_string(streams_per_device) +
                                " stream(s) per device: the smallest plan within " +
                                std::to_string(kMaxProducts) + " products (" + dims(smallest.tm, smallest.tn, smallest.tk) +
                                " tiles) needs at least " + bytes_text(double(need)) + " (" + cap_text(need) + ")";
        if (cap_given) throw std::invalid_argument(why);
        throw std::runtime_error(why + " (free memory of the device)");
      }
      T = next_tile(T);
      t = square(T, m, n, k);
    }
    const TileShape deep = clip({t.tm, t.tn, deep_depth_for(T)}, m, n, k);
    if (stream_device_bytes(deep) <= per_stream) t = deep;
    // No fewer tiles than asked: halve the longer side (more bytes, but no idle GPU).
    while (ceil_div(m, t.tm) * ceil_div(n, t.tn) < min_tiles && std::max(t.tm, t.tn) > kMinBalancedTile) {
      if (t.tm >= t.tn)
        t.tm = ceil_div(t.tm, 2);
      else
        t.tn = ceil_div(t.tn, 2);
    }
  }
  p.shape = t;
  p.tiles_m = ceil_div(m, t.tm);
  p.tiles_n = ceil_div(n, t.tn);
  p.panels = ceil_div(k, t.tk);
  return p;
}

TeamGrid team_grid(int entries) {
  TeamGrid g;
  g.cols = std::max(1, entries);
  for (int r = 1; int64_t(r) * r <= entries; ++r)
    if (entries % r == 0) g.rows = r, g.cols = entries / r;
  return g;
}

ShareBytes share_bytes(int64_t tm, int64_t tn, int64_t k, TeamGrid g) {
  const double a = double(tm) * double(k), b = double(k) * double(tn);
  return {8.0 * (a / g.cols + b / g.rows), 8.0 * ((g.cols - 1) * a / g.cols + (g.rows - 1) * b / g.rows)};
}

Slice slice_of(int64_t extent, int part, int parts) {
  const int64_t base = extent / parts, extra = extent % parts;
  return {part * base + std::min<int64_t>(part, extra), base + (part < extra ? 1 : 0)};
}

int64_t SharePlan::tile_of(int64_t s, int e) const {
  const int64_t i = (s % super_rows) * grid.rows + e / grid.cols, j = (s / super_rows) * grid.cols + e % grid.cols;
  return i < plan.tiles_m && j < plan.tiles_n ? i + j * plan.tiles_m : -1;
}

int SharePlan::row_sharers(int64_t s, int e) const {
  if (tile_of(s, e) < 0) return 0;
  return int(std::min<int64_t>(grid.cols, plan.tiles_n - (s / super_rows) * grid.cols));
}

int SharePlan::col_sharers(int64_t s, int e) const {
  if (tile_of(s, e) < 0) return 0;
  return int(std::min<int64_t>(grid.rows, plan.tiles_m - (s % super_rows) * grid.rows));
}

ShareBytes SharePlan::bytes(int e, bool load_c) const {
  ShareBytes b;
  const int r = e / grid.cols, c = e % grid.cols;
  for (int64_t s = 0; s < supers(); ++s) {
    const int64_t t = tile_of(s, e);
    if (t < 0) continue;
    const TileRange tr = plan.tile(t);
    const int in_row = row_sharers(s, e), in_col = col_sharers(s, e);
    for (int64_t p = 0; p < plan.panels; ++p) {
      const int64_t d = plan.panel_depth(p);
      const double a = double(tr.rows * slice_of(d, c, in_row).size);
      const double bb = double(d * slice_of(tr.cols, r, in_col).size);
      b.host += 8.0 * (a + bb);
      b.peer += 8.0 * ((in_row - 1) * a + (in_col - 1) * bb);
    }
    if (load_c) b.host += 8.0 * double(tr.rows * tr.cols);
  }
  return b;
}

SharePlan make_share_plan(int64_t m, int64_t n, int64_t k, const Options& o, size_t cap, int entries_per_device,
                          int entries, bool cap_given) {
  SharePlan sp;
  sp.grid = team_grid(entries);
  sp.plan = make_plan(m, n, k, o, cap, entries_per_device, 1, cap_given);
  Plan& p = sp.plan;
  if (o.tm == 0) {
    // A whole super tile, or some entries would idle (smaller tiles fit the same cap).
    while (ceil_div(m, p.shape.tm) < sp.grid.rows && p.shape.tm > kMinBalancedTile) p.shape.tm = ceil_div(p.shape.tm, 2);
    while (ceil_div(n, p.shape.tn) < sp.grid.cols && p.shape.tn > kMinBalancedTile) p.shape.tn = ceil_div(p.shape.tn, 2);
    p.tiles_m = ceil_div(m, p.shape.tm);
    p.tiles_n = ceil_div(n, p.shape.tn);
  }
  sp.super_rows = ceil_div(p.tiles_m, sp.grid.rows);
  sp.super_cols = ceil_div(p.tiles_n, sp.grid.cols);
  // An entry computes one tile per super tile; with several, a second C tile
  // lets one go back while the next is computed (where the cap holds it).
  const int64_t per_entry = int64_t(cap / size_t(std::max(1, entries_per_device)));
  p.c_buffers = 2;
  if (sp.supers() < 2 || p.device_bytes() > per_entry) p.c_buffers = 1;
  return sp;
}

}  // namespace lab::step07
