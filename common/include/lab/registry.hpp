// lab/registry.hpp — the one list of kernel variants.
//
// Each step registers its variants once (stepNN/register.cpp); the shared
// benchmark CLI, `--list`, the ladder table and the plot labels all read this
// list, so there is never a second, hand-kept list to drift out of date.
#pragma once

#include <cstdint>
#include <functional>
#include <stdexcept>
#include <string>
#include <vector>

#include "lab/check.hpp"
#include "lab/matrix.hpp"

// The implementation a translation unit belongs to: CMake compiles every step
// source once per implementation with -DLAB_IMPL_NS=student or =solution, and
// each public step header wraps its API in `inline namespace LAB_IMPL_NS`, so the
// student's and the instructor's code can live in one executable.
#ifndef LAB_IMPL_NS
#define LAB_IMPL_NS unset
#endif
#define LAB_STRINGIFY_(x) #x
#define LAB_STRINGIFY(x) LAB_STRINGIFY_(x)
#define LAB_IMPL_NAME LAB_STRINGIFY(LAB_IMPL_NS)

namespace lab {

/// gpu: the variant takes device views (the benchmark copies the matrices
/// there and times with device events). gpu_host: it needs a GPU but takes
/// host views and moves the data itself (step07); timed on the host clock.
enum class Backend { cpu, gpu, gpu_host };

/// Knobs the shared CLI passes through to a variant (each variant reads the
/// ones it understands and ignores the rest).
struct Params {
  std::vector<int64_t> tile;  ///< --tile a,b,c (empty: the variant's default)
  int threads = 0;            ///< --threads (0: OpenMP's default)
  int gpus = 0;               ///< --gpus (0: all visible): how many GPU ids gpu_list has
  int streams = 0;            ///< --streams (0: the variant's default)
  std::vector<int> gpu_list;  ///< --gpus 0,1 or 0,0 (ids may repeat; empty: the variant's default)
  int64_t device_mem_limit = 0;  ///< --device-mem-limit: device bytes a variant may use (0: all)
  std::string trace;          ///< --trace FILE: variants that can write a timeline of their calls there
  std::string share;          ///< --share auto|off|on: step07's multi-GPU panel sharing (empty: auto)
};

/// One call of a variant. For Backend::gpu the views hold device pointers and
/// `stream` is the cudaStream_t to launch on.
struct GemmCall {
  double alpha;
  ConstMatView A, B;
  double beta;
  MatView C;
  const Params* params;
  void* stream;
};

/// What --tile means to a variant. The CLI checks --tile against it, the banner
/// prints the tiles each variant runs with, and a row is tagged with --tile only
/// where the variant took it.
struct TileSpec {
  /// The numbers --tile gives this variant, in order ({"mc", "nc", "kc"});
  /// empty: it takes no tiles.
  std::vector<std::string> names;
  /// The fewest numbers --tile may give (the rest keep their defaults);
  /// 0: all of `names`.
  size_t min_given = 0;
  /// The tiles it runs with under these params, its defaults where --tile left
  /// them out ("mc 64, nc 256, kc 128"). Empty: the --tile values alone.
  std::function<std::string(const Params&)> used = nullptr;
};

struct Variant {
  std::string step;     ///< "step03"
  std::string name;     ///< "tiled", "naive_global", "openblas", ...
  std::string impl;     ///< "student", "solution" or "baseline" (vendor BLAS, or code a step gives)
  Backend backend;
  std::function<void(const GemmCall&)> run;
  std::string about;    ///< one line: what this variant does (shown by --list and in plots)
  /// Optional: what this variant will run with these params, on this machine and why
  /// (e.g. the kernel and blocks it chose); the benchmark prints it above the table.
  std::function<std::string(const Params&)> describe = nullptr;
  /// How the benchmark checks this variant's C (computed from C0 with alpha and
  /// beta); `full` asks for an elementwise check, otherwise a cheaper sampled or
  /// randomized one will do. Empty: against alpha * A * B + beta * C0
  /// (lab/check.hpp). Variants of other products (step09's semirings) set it.
  std::function<CheckResult(double alpha, ConstMatView A, ConstMatView B, double beta, ConstMatView C0,
                            ConstMatView C, bool full)>
      check = nullptr;
  TileSpec tiles = {};  ///< what --tile means to it (nothing by default)
  /// Optional: the work it will do on an m x n x k product with these params,
  /// worked out from the params alone before any device is looked for (one
  /// line for the banner, e.g. step07's tiles and launches); throws
  /// std::invalid_argument naming the option for a request it refuses.
  std::function<std::string(const Params&, int64_t m, int64_t n, int64_t k)> plan = nullptr;
};

/// "mc 64, nc 256, kc 128": tile names with their values.
std::string format_tiles(const std::vector<std::string>& names, const std::vector<int64_t>& values);
/// Empty when `v` takes these --tile numbers; else one line saying why not.
std::string tile_error(const Variant& v, const std::vector<int64_t>& tile);
/// The banner's line of `v`: "tiles mc 64, nc 256, kc 128 (defaults)"; empty
/// for a variant that takes no tiles.
std::string tile_banner(const Variant& v, const Params& params);

/// What a variant throws on a machine that cannot run it (a DMMA kernel on a GPU
/// without FP64 tensor cores); the message says why. The benchmark reports it
/// as an error; the grader's --serve answers kNoDevice (lab/grade_wire.hpp),
/// which the grader believes only where its own reference program agrees.
struct NotOnThisMachine : std::runtime_error {
  using std::runtime_error::runtime_error;
};

/// Adds a variant; returns its index (so it can initialize a static).
int register_variant(Variant v);
const std::vector<Variant>& registered_variants();

}  // namespace lab

#define LAB_CONCAT_(a, b) a##b
#define LAB_CONCAT(a, b) LAB_CONCAT_(a, b)
/// At namespace scope in a registration file: LAB_REGISTER_VARIANT({"step01", "naive_ijk", ...});
#define LAB_REGISTER_VARIANT(...) \
  [[maybe_unused]] static const int LAB_CONCAT(lab_variant_, __LINE__) = ::lab::register_variant(__VA_ARGS__)
