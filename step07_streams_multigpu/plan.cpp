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
  else
    std::snprintf(s, sizeof s, "%.0f B", b);
  return s;
}

// The k depth that goes with a square tile T: deep enough that one product is
// large for cuBLAS, shallow enough that the first panels arrive soon.
int64_t depth_for(int64_t T) { return std::max(T / 8, std::min<int64_t>(T, 256)); }

TileShape clip(TileShape t, int64_t m, int64_t n, int64_t k) {
  t.tm = std::max<int64_t>(1, std::min(t.tm, m));
  t.tn = std::max<int64_t>(1, std::min(t.tn, n));
  t.tk = std::max<int64_t>(1, std::min(t.tk, k));
  return t;
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

int64_t Plan::panel_depth(int64_t p) const { return std::min(shape.tk, k - p * shape.tk); }

double Plan::h2d_bytes(bool load_c) const {
  return 8.0 * (double(tiles_n) * double(m) * double(k) + double(tiles_m) * double(k) * double(n) +
                (load_c ? double(m) * double(n) : 0.0));
}
double Plan::d2h_bytes() const { return 8.0 * double(m) * double(n); }

std::string Plan::describe(bool load_c) const {
  char s[256];
  std::snprintf(s, sizeof s,
                "C tiles %lldx%lld (%lld of them), k panels of %lld (%lld), %s per stream; "
                "H2D %s, D2H %s per call",
                (long long)shape.tm, (long long)shape.tn, (long long)tiles(), (long long)shape.tk,
                (long long)panels, bytes_text(double(stream_device_bytes(shape))).c_str(),
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
    if (stream_device_bytes(t) > per_stream) fail(t);
  } else {
    // Largest square tile that fits, shrinking by a quarter at a time.
    int64_t T = kMaxTile;
    t = clip({T, T, depth_for(T)}, m, n, k);
    while (stream_device_bytes(t) > per_stream) {
      if (T == 1) fail(t);
      T = T > 128 ? (T * 3 / 4) / 32 * 32 : T / 2;
      t = clip({T, T, depth_for(T)}, m, n, k);
    }
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

}  // namespace lab::step07
