// The variants of step07, as the benchmark CLI and the ladder know them.
// They take the host matrices as they are (Backend::gpu_host) and read
// --gpus, --streams, --tile, --device-mem-limit, --share and --trace.
#include <cuda_runtime_api.h>

#include <algorithm>
#include <cstdio>
#include <functional>
#include <map>
#include <set>
#include <stdexcept>
#include <string>
#include <vector>

#include "engine.hpp"
#include "lab/cuda.hpp"
#include "streams.hpp"
#include "trace_file.hpp"

namespace {
using lab::GemmCall;
using lab::step07::Options;

// --tile T (T x T tiles, T-deep panels), T,tk or tm,tn,tk.
void set_tile(Options& o, const std::vector<int64_t>& t) {
  if (t.empty()) return;
  if (t.size() == 1)
    o.tm = o.tn = o.tk = t[0];
  else if (t.size() == 2)
    o.tm = o.tn = t[0], o.tk = t[1];
  else if (t.size() == 3)
    o.tm = t[0], o.tn = t[1], o.tk = t[2];
  else
    throw std::invalid_argument("--tile takes T, T,tk or tm,tn,tk for step07");
}

std::vector<int> all_gpus() {
  int count = 0;
  LAB_CUDA_CHECK(cudaGetDeviceCount(&count));
  std::vector<int> ids;
  for (int g = 0; g < count; ++g) ids.push_back(g);
  return ids;
}

// The options a variant runs with. No --gpus: the first GPU, or with
// `every_gpu` every visible one (which asks the CUDA runtime).
Options options_of(const lab::Params& p, bool every_gpu) {
  Options o;
  if (!p.gpu_list.empty()) {
    // A GPU id this machine lacks is a usage error, found before any device is
    // touched (where there is no GPU at all, the run says skipped instead).
    int count = 0;
    if (cudaGetDeviceCount(&count) != cudaSuccess) {
      cudaGetLastError();
    } else {
      for (int g : p.gpu_list)
        if (g >= count)
          throw std::invalid_argument("--gpus: GPU id " + std::to_string(g) + " does not exist (this machine has " +
                                      std::to_string(count) + " GPU" + (count == 1 ? "" : "s") + ")");
    }
    o.gpus = p.gpu_list;
  } else if (every_gpu) {
    o.gpus = all_gpus();
  }
  if (p.streams > 0) o.streams_per_gpu = p.streams;
  set_tile(o, p.tile);
  o.device_mem_limit = size_t(p.device_mem_limit);
  // (the CLI accepts only these three; empty: not given)
  o.share = p.share == "off" ? Options::Share::off : p.share == "on" ? Options::Share::on : Options::Share::automatic;
  return o;
}

enum class Kind { sync, streams, multigpu };

// Streams per device as each variant lays them out (see its dgemm): sync one,
// streams --streams on the first GPU, multigpu --streams on each device (at
// least one per entry of a device listed more than once).
std::map<int, int> streams_per_device(const Options& o, Kind kind) {
  if (kind != Kind::multigpu) return {{o.gpus.front(), kind == Kind::sync ? 1 : o.streams_per_gpu}};
  std::map<int, int> entries;
  for (int g : o.gpus) ++entries[g];
  for (auto& [dev, e] : entries) e = std::max(e, o.streams_per_gpu);
  return entries;
}

// The tile plan a variant will make, before any copy: with --device-mem-limit
// from the arguments alone (a cap no plan fits is refused before a GPU is
// looked for); without, from the free memory of the devices where there are
// some (a --tile that makes too many products is refused either way).
std::function<std::string(const lab::Params&, int64_t, int64_t, int64_t)> plan_of(Kind kind) {
  return [kind](const lab::Params& p, int64_t m, int64_t n, int64_t k) -> std::string {
    Options o = options_of(p, false);
    lab::step07::check_options(o);
    if (m == 0 || n == 0 || k == 0) return "";
    auto per_device = streams_per_device(o, kind);
    int busiest = 0;
    for (const auto& [dev, s] : per_device) busiest = std::max(busiest, s);
    size_t cap = o.device_mem_limit;
    if (cap > 0 || o.tm > 0)  // refused here on any machine, or the plan checked
      lab::step07::make_plan(m, n, k, o, cap > 0 ? cap : size_t(1) << 60, busiest, 1, cap > 0);
    std::string origin = "--device-mem-limit";
    if (cap == 0) {
      try {
        if (kind == Kind::multigpu && p.gpu_list.empty()) {
          o.gpus = all_gpus();
          per_device = streams_per_device(o, kind);
        }
        cap = lab::step07::detail::usable_device_memory(per_device);
        origin = "the free device memory";
      } catch (const std::exception&) {  // no device: the call itself reports that
        return "tiles chosen from the free device memory when the call starts";
      }
    }
    int total = 0;
    for (const auto& [dev, s] : per_device) total += s;
    const int min_tiles = per_device.size() > 1 ? total : 1;
    const auto plan = lab::step07::make_plan(m, n, k, o, cap, busiest, min_tiles, p.device_mem_limit > 0);
    std::string text = plan.describe(true) + "; " + std::to_string(busiest) + " stream(s) on the busiest device use " +
                       std::to_string((busiest * lab::step07::stream_device_bytes(plan.shape)) >> 20) + " MiB of " +
                       std::to_string(cap >> 20) + " MiB (" + origin + ")";
    // Pinned matrices on several GPU entries take the plan that shares the panels
    // (share.cpp) where the GPUs reach each other: say what it would be.
    if (kind == Kind::multigpu && o.gpus.size() > 1 && o.share != Options::Share::off) {
      int per_device = 0;
      for (int g : o.gpus) per_device = std::max(per_device, int(std::count(o.gpus.begin(), o.gpus.end(), g)));
      lab::step07::SharePlan sp;
      try {
        sp = lab::step07::make_share_plan(m, n, k, o, cap, per_device, int(o.gpus.size()), p.device_mem_limit > 0);
      } catch (const std::exception&) {
        return text;  // (the call itself says why, if it comes to sharing)
      }
      char line[256];
      std::snprintf(line, sizeof line,
                    "; with pinned matrices and GPUs that reach each other, shared panels instead: team %dx%d, "
                    "C tiles %lldx%lld (%lld of them), H2D %.2f GiB and P2P %.2f GiB per GPU entry",
                    sp.grid.rows, sp.grid.cols, (long long)sp.plan.shape.tm, (long long)sp.plan.shape.tn,
                    (long long)sp.plan.tiles(), sp.bytes(0, true).host / double(1 << 30),
                    sp.bytes(0, true).peer / double(1 << 30));
      text += line;
    }
    return text;
  };
}

// --tile as the banner shows it: the numbers given, or the rule that picks them.
const lab::TileSpec kTiles{{"tm", "tn", "tk"}, 1, [](const lab::Params& p) -> std::string {
                             if (p.tile.empty())
                               return "tm, tn, tk chosen from the device memory (--device-mem-limit)";
                             Options o;
                             set_tile(o, p.tile);
                             return lab::format_tiles({"tm", "tn", "tk"}, {o.tm, o.tn, o.tk});
                           }};

using Fn = void (*)(double, lab::ConstMatView, lab::ConstMatView, double, lab::MatView, const Options&);

std::function<void(const GemmCall&)> runner(Fn f, const char* name, bool every_gpu) {
  return [f, name, every_gpu](const GemmCall& c) {
    Options o = options_of(*c.params, every_gpu);
    std::vector<lab::step07::TraceEvent> trace;
    if (!c.params->trace.empty()) o.trace = &trace;
    f(c.alpha, c.A, c.B, c.beta, c.C, o);
    if (o.trace) lab::step07::write_trace(c.params->trace, name, LAB_IMPL_NAME, trace);
  };
}

// What the benchmark prints above its table besides the tiles: the GPUs,
// streams and device memory a variant runs with.
std::function<std::string(const lab::Params&)> describe(bool every_gpu, bool one_stream) {
  return [every_gpu, one_stream](const lab::Params& p) {
    Options o = options_of(p, every_gpu);
    if (!every_gpu) o.gpus.resize(1);
    if (one_stream) o.streams_per_gpu = 1;
    std::string gpus;
    for (int g : o.gpus) gpus += (gpus.empty() ? "" : ",") + std::to_string(g);
    const std::string cap =
        p.device_mem_limit > 0 ? std::to_string(p.device_mem_limit >> 20) + " MiB" : "what the GPU has free";
    const bool repeated = std::set<int>(o.gpus.begin(), o.gpus.end()).size() < o.gpus.size();
    return "GPUs " + gpus + ", " + std::to_string(o.streams_per_gpu) + " stream(s) per device" +
           (repeated ? " (shared by the entries of a device listed more than once)" : "") +
           ", device memory " + cap;
  };
}

LAB_REGISTER_VARIANT(
    {"step07", "sync", LAB_IMPL_NAME, lab::Backend::gpu_host, runner(&lab::step07::dgemm_sync, "sync", false),
     "the lecture's loop: one stream, tiles staged through pinned buffers, every copy waited for",
     describe(false, true), nullptr, kTiles, plan_of(Kind::sync)});
LAB_REGISTER_VARIANT(
    {"step07", "streams", LAB_IMPL_NAME, lab::Backend::gpu_host,
     runner(&lab::step07::dgemm_streams, "streams", false),
     "one GPU, --streams S (default 2): double-buffered panels, events, C tile kept across k",
     describe(false, false), nullptr, kTiles, plan_of(Kind::streams)});
LAB_REGISTER_VARIANT({"step07", "multigpu", LAB_IMPL_NAME, lab::Backend::gpu_host,
                      runner(&lab::step07::dgemm_multigpu, "multigpu", true),
                      "every GPU of --gpus (default all; 0,0 = one GPU twice), tiles from one shared queue; "
                      "pinned matrices: the GPUs share the panels (--share)",
                      describe(true, false), nullptr, kTiles, plan_of(Kind::multigpu)});

}  // namespace
