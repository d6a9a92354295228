// The variants of step07, as the benchmark CLI and the ladder know them.
// They take the host matrices as they are (Backend::gpu_host) and read
// --gpus, --streams, --tile, --device-mem-limit and --trace.
#include <cuda_runtime_api.h>

#include <functional>
#include <set>
#include <stdexcept>
#include <string>
#include <vector>

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

Options options_of(const GemmCall& c, bool every_gpu_by_default) {
  Options o;
  const lab::Params& p = *c.params;
  if (!p.gpu_list.empty())
    o.gpus = p.gpu_list;
  else if (every_gpu_by_default)
    o.gpus = all_gpus();
  if (p.streams > 0) o.streams_per_gpu = p.streams;
  set_tile(o, p.tile);
  o.device_mem_limit = size_t(p.device_mem_limit);
  return o;
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
    Options o = options_of(c, every_gpu);
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
    Options o;
    if (!p.gpu_list.empty())
      o.gpus = p.gpu_list;
    else if (every_gpu)
      o.gpus = all_gpus();
    if (!every_gpu) o.gpus.resize(1);
    if (p.streams > 0) o.streams_per_gpu = p.streams;
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
     describe(false, true), nullptr, kTiles});
LAB_REGISTER_VARIANT(
    {"step07", "streams", LAB_IMPL_NAME, lab::Backend::gpu_host,
     runner(&lab::step07::dgemm_streams, "streams", false),
     "one GPU, --streams S (default 2): double-buffered panels, events, C tile kept across k",
     describe(false, false), nullptr, kTiles});
LAB_REGISTER_VARIANT({"step07", "multigpu", LAB_IMPL_NAME, lab::Backend::gpu_host,
                      runner(&lab::step07::dgemm_multigpu, "multigpu", true),
                      "every GPU of --gpus (default all; 0,0 = one GPU twice), tiles from one shared queue",
                      describe(true, false), nullptr, kTiles});

}  // namespace
