// bench_main: pick variants from the registry, make the matrices, validate
// every variant once, then time it; print a table and write CSV/JSON.
#include "lab/bench.hpp"

#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <memory>
#include <set>
#include <sstream>
#include <stdexcept>

#include "lab/check.hpp"
#include "lab/machine.hpp"
#include "lab/todo.hpp"

#ifdef _OPENMP
#include <omp.h>
#endif

namespace lab {
namespace {

std::unique_ptr<GpuHooks>& hooks_slot() {
  static std::unique_ptr<GpuHooks> h;
  return h;
}

// Timing uses alpha = 1, beta = 0.5: the general path (C is read), and values
// stay bounded however many times the product is repeated into the same C.
constexpr double kAlpha = 1.0, kBeta = 0.5;
// Up to this many multiply-adds the full reference check is cheap enough to be the default.
constexpr double kFullCheckWork = 64.0 * 64 * 64 * 64 * 4;

struct Shape {
  int64_t m, n, k;
};
double work(const Shape& s) { return double(s.m) * double(s.n) * double(s.k); }

int64_t mem_available_bytes() {
  std::ifstream f("/proc/meminfo");
  std::string key;
  int64_t kb;
  std::string unit;
  while (f >> key >> kb >> unit)
    if (key == "MemAvailable:") return kb * 1024;
  return -1;
}

std::string gib(double bytes) {
  char b[32];
  std::snprintf(b, sizeof b, "%.1f GiB", bytes / double(1 << 30));
  return b;
}

std::vector<const Variant*> choose(const BenchOptions& o, const StepInfo& info, std::string* err) {
  const auto& all = registered_variants();
  const std::string step = info.step;
  bool have_solution = false;
  for (const auto& v : all)
    if (v.step == step && v.impl == "solution") have_solution = true;
  std::set<std::string> impls;
  if (o.impl.empty()) {
    impls = {have_solution ? "solution" : "student", "baseline"};
  } else {
    for (const auto& s : split_list(o.impl)) {
      if (s == "all") impls.insert({"student", "solution", "baseline"});
      else impls.insert(s);
    }
  }
  std::vector<const Variant*> out;
  for (const auto& v : all) {
    const bool mine = v.step == step || (v.step == "vendor" && v.backend == info.backend);
    if (!mine || !impls.count(v.impl)) continue;
    if (!o.variants.empty()) {
      bool named = false;
      for (const auto& n : o.variants) named = named || n == v.name;
      if (!named) continue;
    }
    out.push_back(&v);
  }
  for (const auto& n : o.variants) {
    bool known = false;
    for (const auto& v : all) known = known || ((v.step == step || v.step == "vendor") && v.name == n);
    if (!known) {
      *err = "unknown variant '" + n + "' (see --list)";
      return {};
    }
  }
  for (const auto& s : impls)
    if (s == "solution" && !have_solution && !o.impl.empty()) {
      *err = "this build has no solution code (configure with LAB_IMPL=solution or both)";
      return {};
    }
  if (out.empty()) *err = "no variant matches --impl/--variant (see --list)";
  return out;
}

void print_row(const Record& r) {
  // A rate above the measured peak: on a CPU the probe read low (a busy
  // machine). On a GPU the probe times FP64 FMAs on the SIMT cores, while
  // cuBLAS's DGEMM (and what calls it) runs on the FP64 tensor cores (DMMA,
  // about twice that on an H100): the row says which instead of printing a
  // share no machine can have.
  const double pct = r.peak_gflops > 0 ? 100.0 * r.gflops / r.peak_gflops : 0.0;
  char pct_text[16];
  std::snprintf(pct_text, sizeof pct_text, pct > 100.0 ? ">100%%" : "%.1f%%", pct);
  std::string note = r.note;
  const bool cpu_row = r.device.rfind("cpu:", 0) == 0;
  if (pct > 100.0)
    note += std::string(note.empty() ? "" : "; ") +
            (cpu_row ? "the peak probe read low (busy machine?)"
                     : "above the FP64 SIMT peak: tensor cores (DMMA)");
  std::printf("%-8s %-16s %-9s %6lld %6lld %6lld %4d %11.5f %10.2f %8s  %s%s%s\n", r.step.c_str(),
              r.variant.c_str(), r.impl.c_str(), (long long)r.m, (long long)r.n, (long long)r.k, r.threads, r.median_s,
              r.gflops, pct_text, r.check.c_str(), note.empty() ? "" : "  ", note.c_str());
  std::fflush(stdout);
}

}  // namespace

void require_memory_for(int64_t m, int64_t n, int64_t k) {
  const double need = 8.0 * (double(m) * k + double(k) * n + 3.0 * double(m) * n);
  const int64_t avail = mem_available_bytes();
  if (avail > 0 && need > 0.9 * double(avail))
    throw UsageError(std::to_string(m) + " x " + std::to_string(n) + " x " + std::to_string(k) + " needs about " +
                     gib(need) + " of memory, only " + gib(double(avail)) + " is available");
}

void require_writable(const std::string& path, const std::string& flag) {
  namespace fs = std::filesystem;
  const std::string who = (flag.empty() ? "" : flag + ": ") + "cannot write '" + path + "'";
  std::error_code ec;
  if (fs::is_directory(path, ec)) throw UsageError(who + ": is a folder");
  // (the file is written under a temporary name in its folder, then renamed)
  const fs::path parent = fs::path(path).parent_path();
  const std::string dir = parent.empty() ? "." : parent.string();
  if (!fs::is_directory(dir, ec)) throw UsageError(who + ": there is no folder '" + dir + "'");
  if (access(dir.c_str(), W_OK) != 0) throw UsageError(who + ": the folder is not writable");
  if (fs::exists(path, ec) && access(path.c_str(), W_OK) != 0) throw UsageError(who + ": the file is not writable");
}

void set_gpu_hooks(GpuHooks hooks) { hooks_slot() = std::make_unique<GpuHooks>(std::move(hooks)); }
const GpuHooks* gpu_hooks() { return hooks_slot().get(); }

int bench_main(int argc, char** argv, const StepInfo& info) {
  if (argc == 3 && std::string(argv[1]) == "--serve") return serve_main(argv[2], info);
  std::string prog_name = argc > 0 ? argv[0] : info.step;
  prog_name = prog_name.substr(prog_name.find_last_of('/') + 1);
  const char* prog = prog_name.c_str();
  BenchOptions o;
  try {
    o = parse_bench_args(argc, argv, info);
  } catch (const UsageError& e) {
    if (std::string(e.what()) == "help") {
      std::cout << bench_usage(info);
      return kExitOk;
    }
    std::cerr << prog << ": error: " << e.what() << "\n";
    return kExitUsage;
  }
  if (o.list) {
    for (const auto& v : registered_variants())
      if (v.step == info.step || (v.step == "vendor" && v.backend == info.backend))
        std::printf("%-18s %-9s %s\n", v.name.c_str(), v.impl.c_str(), v.about.c_str());
    return kExitOk;
  }
  std::string err;
  const auto chosen = choose(o, info, &err);
  if (chosen.empty()) {
    std::cerr << prog << ": error: " << err << "\n";
    return kExitUsage;
  }
  if (!o.params.tile.empty()) {
    // --tile must mean something to the variants chosen, and be whole for each
    // that takes it: a row measured with other tiles than asked would be mislabelled.
    std::string none_take;
    bool any_takes = false;
    for (const Variant* v : chosen) {
      const std::string why = tile_error(*v, o.params.tile);
      if (!v->tiles.names.empty() && !why.empty()) {
        std::cerr << prog << ": error: --tile: " << why << "\n";
        return kExitUsage;
      }
      any_takes = any_takes || !v->tiles.names.empty();
      if (v->tiles.names.empty()) none_take += (none_take.empty() ? "" : ", ") + v->name;
    }
    if (!any_takes) {
      std::cerr << prog << ": error: --tile: no selected variant takes tiles (" << none_take << ")\n";
      return kExitUsage;
    }
  }

  // The shapes to run: m x n x k once, or each size of a --sizes sweep.
  std::vector<Shape> shapes;
  if (o.sizes.empty()) shapes.push_back({o.m, o.n, o.k});
  for (int64_t size : o.sizes) shapes.push_back({size, size, size});
  // What each variant will do, from the arguments alone: a request no device
  // could run (step07's memory cap below its smallest plan) is refused here,
  // before a GPU is looked for, on any machine.
  std::vector<std::string> plans(chosen.size());
  try {
    for (const auto& [m, n, k] : shapes) require_memory_for(m, n, k);
    if (!o.csv.empty()) require_writable(o.csv, "--csv");
    if (!o.json.empty()) require_writable(o.json, "--json");
    if (!o.params.trace.empty()) require_writable(o.params.trace, "--trace");
    for (size_t i = 0; i < chosen.size(); ++i) {
      if (!chosen[i]->plan) continue;
      for (const auto& [m, n, k] : shapes) {
        const std::string plan = chosen[i]->plan(o.params, m, n, k);
        if (shapes.size() > 1) plans[i] += (plans[i].empty() ? "" : "; ") + std::to_string(m) + ": ";
        plans[i] += plan;
      }
    }
  } catch (const std::invalid_argument& e) {
    std::cerr << prog << ": error: " << e.what() << "\n";
    return kExitUsage;
  } catch (const UsageError& e) {
    std::cerr << prog << ": error: " << e.what() << "\n";
    return kExitUsage;
  }

  // A step's variants may run on both (step09): GPU rows need a usable GPU,
  // and where there is none they are reported skipped; a GPU step without one
  // has nothing to run at all.
  std::string gpu_why = "this build has no CUDA support";
  const bool gpu_ok = gpu_hooks() && gpu_hooks()->available(&gpu_why);
  bool any_cpu = false;
  for (const Variant* v : chosen) any_cpu = any_cpu || v->backend == Backend::cpu;
  if (!gpu_ok && !any_cpu) {
    std::cout << prog << ": skipped: " << gpu_why << "\n";
    return kExitSkipped;
  }
  if (o.pinned_host && !gpu_ok) {
    std::cerr << prog << ": error: --host-memory pinned needs a GPU: " << gpu_why << "\n";
    return kExitUsage;
  }
  const bool gpu = info.backend == Backend::gpu && gpu_ok;
  const std::string device = gpu ? gpu_hooks()->device_name() : "cpu:" + cpu_simd_level();
  double peak = 0;
#ifdef _OPENMP
  if (o.params.threads > 0) omp_set_num_threads(o.params.threads);
#endif
  const int cpu_threads = max_threads();
  Params params = o.params;

  std::vector<Record> rows;
  int status = kExitOk;
  try {
    peak = gpu ? gpu_hooks()->peak_gflops() : cpu_peak_gflops(cpu_threads);

    bool own_checks = false;
    for (const Variant* v : chosen) own_checks = own_checks || bool(v->check);
    const bool full_first = o.full_check || work(shapes.front()) <= kFullCheckWork;
    const bool full_last = o.full_check || work(shapes.back()) <= kFullCheckWork;
    std::printf("# %s (%s) on %s, peak %.1f GFLOP/s measured; check: %s\n", info.step, info.title, device.c_str(),
                peak, full_first != full_last ? "elementwise vs reference on the small sizes, else randomized"
                      : full_first ? "elementwise vs reference"
                      : own_checks ? "randomized (Freivalds), or the variant's own" : "randomized (Freivalds)");
    std::string no_tiles;
    for (const Variant* v : chosen) {
      if (v->tiles.names.empty()) {
        no_tiles += (no_tiles.empty() ? "" : ", ") + v->name;
        continue;
      }
      try {
        std::printf("# %s: %s\n", v->name.c_str(), tile_banner(*v, params).c_str());
      } catch (const std::exception& e) {  // the row below reports the same problem
        std::printf("# %s: tiles: %s\n", v->name.c_str(), e.what());
      }
    }
    if (!no_tiles.empty())
      std::printf("# %s: %s\n", params.tile.empty() ? "no block sizes to set (--tile)" : "--tile does not apply to",
                  no_tiles.c_str());
    for (size_t i = 0; i < chosen.size(); ++i)
      if (!plans[i].empty()) std::printf("# %s: plan: %s\n", chosen[i]->name.c_str(), plans[i].c_str());
    for (const Variant* v : chosen) {
      if (!v->describe) continue;
      try {
        std::printf("# %s: %s\n", v->name.c_str(), v->describe(params).c_str());
      } catch (const std::exception& e) {  // the row below reports the same problem
        std::printf("# %s: %s\n", v->name.c_str(), e.what());
      }
    }
    std::printf("%-8s %-16s %-9s %6s %6s %6s %4s %11s %10s %8s  %s\n", "step", "variant", "impl", "m", "n", "k",
                "thr", "median_s", "GFLOP/s", "%peak", "check");
    TimingOptions topts;
    topts.min_reps = o.reps;
    topts.min_time_s = o.min_time_s;
    for (const Shape& shape : shapes) {  // a sweep runs every variant at one size before the next
      const auto [m, n, k] = shape;
      Matrix A(m, k), B(k, n), C0(m, n), C(m, n);
      A.fill_random(o.seed);
      B.fill_random(o.seed + 1);
      C0.fill_random(o.seed + 2);
      // --host-memory pinned: page-locked the way a user would do it (cudaHostRegister),
      // outside the timing; the host-matrix variants (step07) copy straight from it.
      std::vector<std::shared_ptr<void>> pins;
      if (o.pinned_host) {
        for (Matrix* mat : {&A, &B, &C})
          if (mat->size() > 0) pins.push_back(gpu_hooks()->pin_host(mat->data(), sizeof(double) * size_t(mat->size())));
      }
      const bool full = o.full_check || work(shape) <= kFullCheckWork;
      for (const Variant* v : chosen) {
        const bool on_gpu = v->backend == Backend::gpu;
        const bool needs_gpu = on_gpu || v->backend == Backend::gpu_host;
        Record r;
        r.step = info.step;
        r.variant = v->name;
        r.impl = v->impl;
        r.m = m, r.n = n, r.k = k;
        r.threads = on_gpu ? 1 : cpu_threads;
        params.threads = r.threads;
        if (needs_gpu && !gpu_ok) {
          r.check = "skipped";
          r.note = gpu_why;
          print_row(r);
          rows.push_back(r);
          continue;
        }
        // A row of the other kind than the step's (step09) names its own device and peak.
        r.device = needs_gpu == gpu ? device : needs_gpu ? gpu_hooks()->device_name() : "cpu:" + cpu_simd_level();
        r.peak_gflops =
            needs_gpu == gpu ? peak : needs_gpu ? gpu_hooks()->peak_gflops() : cpu_peak_gflops(cpu_threads);
        if (!params.tile.empty() && !v->tiles.names.empty()) {
          std::string t;
          for (auto x : params.tile) t += (t.empty() ? "tile=" : "x") + std::to_string(x);
          r.note = t;
        }
        if (v->backend == Backend::gpu_host)
          r.note += std::string(r.note.empty() ? "" : "; ") + (o.pinned_host ? "host=pinned" : "host=pageable");
        try {
          Timing t;
          if (on_gpu) {
            t = gpu_hooks()->run(*v, kAlpha, A.cview(), B.cview(), kBeta, C0.cview(), C.view(), params, topts);
          } else {
            // Validate on a fresh copy of C0 first; then time into the same buffer.
            for (int64_t e = 0; e < C.size(); ++e) C.data()[e] = C0.data()[e];
            v->run(GemmCall{kAlpha, A.cview(), B.cview(), kBeta, C.view(), &params, nullptr});
          }
          // (the GPU hook returns the C of its first, validated call)
          const CheckResult chk =
              v->check ? v->check(kAlpha, A.cview(), B.cview(), kBeta, C0.cview(), C.cview(), full)
              : full   ? check_against_reference(kAlpha, A.cview(), B.cview(), kBeta, C0.cview(), C.cview())
                       : freivalds_check(kAlpha, A.cview(), B.cview(), kBeta, C0.cview(), C.cview());
          r.check = chk.ok ? "pass" : "fail";
          if (!chk.ok) {
            std::fprintf(stderr, "%s %s (%s): WRONG RESULT\n%s", info.step, v->name.c_str(), v->impl.c_str(),
                         chk.report.c_str());
            if (status == kExitOk) status = kExitCheckFailed;
          }
          if (!on_gpu) {
            MatView cv = C.view();
            TimingOptions host_opts = topts;
            // A host-matrix GPU variant's checked call already warmed it up (one
            // call can take seconds at the sizes it is for).
            if (v->backend == Backend::gpu_host) host_opts.warmup = 0;
            t = time_host([&] { v->run(GemmCall{kAlpha, A.cview(), B.cview(), kBeta, cv, &params, nullptr}); },
                          host_opts);
          }
          r.median_s = t.median_s;
          r.min_s = t.min_s;
          r.max_s = t.max_s;
          r.reps = t.reps;
          r.gflops = gflops(m, n, k, t.median_s);
        } catch (const Todo& e) {
          r.check = "todo";
          r.note = e.what();
          if (status == kExitOk) status = kExitTodo;
        } catch (const std::invalid_argument& e) {
          // The variant refused an option (step07's `--gpus 9` on a one-GPU
          // host): a usage error like the ones the parser finds.
          r.check = "error";
          r.note = e.what();
          std::fprintf(stderr, "%s %s (%s): error: %s\n", info.step, v->name.c_str(), v->impl.c_str(), e.what());
          if (status != kExitCheckFailed) status = kExitUsage;
        } catch (const std::exception& e) {
          r.check = "error";
          r.note = e.what();
          std::fprintf(stderr, "%s %s (%s): error: %s\n", info.step, v->name.c_str(), v->impl.c_str(), e.what());
          if (status == kExitOk || status == kExitTodo) status = kExitError;
        }
        print_row(r);
        rows.push_back(r);
        if (status == kExitUsage) break;  // the same refusal would follow from every other row
      }
      if (status == kExitUsage) break;
    }
  } catch (const std::bad_alloc&) {
    std::cerr << prog << ": error: cannot allocate the matrices for " << o.m << " x " << o.n << " x " << o.k << "\n";
    return kExitUsage;
  } catch (const std::exception& e) {
    std::cerr << prog << ": error: " << e.what() << "\n";
    return kExitError;
  }
  try {  // (a refused request writes no results)
    if (!o.csv.empty() && status != kExitUsage) append_csv(o.csv, rows);
    if (!o.json.empty() && status != kExitUsage) write_json(o.json, rows);
  } catch (const std::exception& e) {
    std::cerr << prog << ": error: " << e.what() << "\n";
    return kExitError;
  }
  return status;
}

}  // namespace lab
