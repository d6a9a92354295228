// lab/bench.hpp — the shared benchmark CLI every step executable runs.
//
//   stepNN_name [--m M] [--n N] [--k K] [--size S | --sizes S,S,...] [--reps R] [--impl student|solution|baseline|all]
//               [--variant NAME[,NAME...]] [--threads T] [--tile a,b,c] [--csv FILE] [--json FILE]
//               [--check] [--seed S] [--list] [--help]
//
// Exit status: 0 all ran and checked, 1 a result failed its check, 2 bad usage,
// 3 a variant is not implemented yet (LAB_TODO), 4 other runtime error,
// 77 nothing could run here (e.g. no GPU): skipped.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "lab/registry.hpp"
#include "lab/timer.hpp"

namespace lab {

enum ExitCode : int { kExitOk = 0, kExitCheckFailed = 1, kExitUsage = 2, kExitTodo = 3, kExitError = 4, kExitSkipped = 77 };

struct StepInfo {
  const char* step;        ///< "step03"
  const char* title;       ///< "cache tiling"
  Backend backend;
  int64_t default_size;    ///< m = n = k when the user gives none
};

struct BenchOptions {
  int64_t m = -1, n = -1, k = -1;
  std::vector<int64_t> sizes;         ///< --sizes: m = n = k = each in turn (empty: m, n, k once)
  int reps = 3;
  std::string impl;                   ///< empty: solution where built, else student (+ baseline)
  std::vector<std::string> variants;  ///< empty: all of the chosen impls
  Params params;
  std::string csv, json;
  bool full_check = false;
  uint64_t seed = 2024;
  bool list = false;
  double min_time_s = 0.3;
  bool pinned_host = false;  ///< --host-memory pinned: the host matrices are page-locked (GPU builds)
};

/// Parses argv (throws lab::UsageError with a one-line message on bad input).
struct UsageError : std::runtime_error {
  using std::runtime_error::runtime_error;
};
/// "a,b,,c" -> {"a", "b", "c"}: the comma lists of the CLI.
std::vector<std::string> split_list(const std::string& s);
/// "0,1" or "0,0" -> the GPU ids of a --gpus list (0..1023, at least one; UsageError naming `flag` otherwise).
std::vector<int> parse_gpu_list(const std::string& flag, const std::string& text);
BenchOptions parse_bench_args(int argc, const char* const* argv, const StepInfo& info);
std::string bench_usage(const StepInfo& info);

/// Throws UsageError, with the sizes and the memory available, when A, B and
/// three m x n matrices (C0, the result, a check's copy) would not fit in memory.
void require_memory_for(int64_t m, int64_t n, int64_t k);
/// Throws UsageError (naming `flag`, e.g. "--csv", where given) when a results
/// file could not be written: a folder, a missing or unwritable folder, an
/// unwritable file; so a long run never ends in an unwritable path. Creates nothing.
void require_writable(const std::string& path, const std::string& flag = "");

/// One row of results, as written to CSV/JSON. The first nine CSV columns are
/// fixed by the lab: step,variant,impl,m,n,k,threads,median_s,gflops.
struct Record {
  std::string step, variant, impl;
  int64_t m = 0, n = 0, k = 0;
  int threads = 1;
  double median_s = 0, gflops = 0, min_s = 0, max_s = 0;
  int reps = 0;
  double peak_gflops = 0;  ///< measured peak of the machine the row ran on (0: unknown)
  std::string check;       ///< "pass", "fail", "todo", "error", "skipped"
  std::string device;      ///< "cpu:<simd>" or the GPU's name
  std::string note;        ///< e.g. the TODO message or the tile sizes
};
/// Results files are written whole or not at all (a temporary name in the same
/// folder, renamed at the end); append_csv rewrites the file with the rows added.
void append_csv(const std::string& path, const std::vector<Record>& rows);
void write_json(const std::string& path, const std::vector<Record>& rows);
/// Writes `text` to `path` whole or not at all (std::runtime_error naming the
/// `what` file and the reason).
void write_file_whole(const std::string& path, const std::string& text, const std::string& what);
/// Appends `rows` to `path` the same way, after `header` where the file is new or empty.
void append_file_whole(const std::string& path, const std::string& header, const std::string& rows,
                       const std::string& what);

/// What a GPU build adds (set by the CUDA part of the harness at start-up).
struct GpuHooks {
  std::function<bool(std::string* why)> available;  ///< a usable device is visible
  /// Copies A, B, C0 to the device; runs the variant ONCE on C0 and copies that
  /// result back into `C_out` (same shape as C0; the caller checks it against
  /// alpha*A*B + beta*C0); then warms up and times further calls (into the same
  /// device C) with device events, returning the timing.
  std::function<Timing(const Variant&, double alpha, ConstMatView A, ConstMatView B, double beta,
                       ConstMatView C0, MatView C_out, const Params&, const TimingOptions&)>
      run;
  std::function<double()> peak_gflops;  ///< measured FP64 peak of the device, GFLOP/s
  std::function<std::string()> device_name;
  /// Page-locks `bytes` at `p` (cudaHostRegister) until the returned handle goes.
  std::function<std::shared_ptr<void>(void* p, size_t bytes)> pin_host;
  /// A device variant for the grader (`--serve`): the whole host buffers of
  /// the call (each ld x cols, C's rows below m included) go to the device at
  /// the same ld, the variant runs `repeat` times there, B (and A where
  /// refill_a) refilled on the device before each call but the first
  /// (lab/grade_wire.hpp), and C's whole buffer comes back.
  std::function<void(const Variant&, const GemmCall& host_call, int64_t repeat, uint64_t refill_seed, bool refill_a)>
      serve;
  /// Makes the device's context now (the grader times its products after it).
  std::function<void()> warm_up;
};
void set_gpu_hooks(GpuHooks hooks);
const GpuHooks* gpu_hooks();  ///< nullptr in a build without CUDA

/// The whole benchmark program: parse, pick variants, make matrices, validate,
/// time, print the table, write CSV/JSON. Returns the exit status.
int bench_main(int argc, char** argv, const StepInfo& info);

/// `--serve VARIANT`: one product for the grader's checker (lab/grade_wire.hpp),
/// by the variant of info.step with that name and implementation `impl`.
int serve_main(const char* variant, const StepInfo& info, const char* impl = "student");

}  // namespace lab
