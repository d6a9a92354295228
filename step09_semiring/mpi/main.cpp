// step09_semiring_mpi — the benchmark of the semiring product on step08's cube.
//
// The lecture's shape is (M, K, N) = (8192, 8192, 2048):
//   mpiexec -n 8 build/student/bin/step09_semiring_mpi --m 8192 --k 8192 --n 2048 --threads 1
//       --semiring minplus --breakdown results/step09_mpi_breakdown.csv   (one line)
// The blocks are born on their ranks (host memory, or each rank's GPU with
// --local cuda), the timed call is the distributed product alone, and the rows
// are step08's: wall time, each rank's local product (min/median/max), the
// overhead (wall - slowest product) / wall, and the words moved against the
// formulas, in the same breakdown CSV, so that step08's plot_breakdown.py
// draws it (--title names the figure). The check is exact (min-plus,
// max-plus) on sampled rows and columns of C. Every rank parses the same
// arguments and reaches the same verdict, so every rank exits with the same status.
#include <malloc.h>
#include <mpi.h>

#include <algorithm>
#include <cstdio>
#include <string>
#include <vector>

#include "bench_main.hpp"    // step08: collective_main
#include "bench_report.hpp"  // step08: print_run, append_breakdown_csv, placement
#include "comm.hpp"
#include "lab/bench.hpp"
#include "lab/todo.hpp"
#include "local_kernel.hpp"  // step08: cuda_usable
#include "mpi_bench.hpp"

namespace {

using lab::UsageError;
using lab::step08::Grid;
using lab::step08::RunResult;
namespace s9m = lab::step09::mpi;

const lab::StepInfo kInfo{"step09", "semiring product on step08's 3D process grid", lab::Backend::cpu, 2048};

struct Args {
  Grid grid;
  std::vector<std::string> semirings{"minplus"};
  std::vector<bool> cuda{false};
  std::string breakdown_csv;
  int64_t pad = 0;
  int warmup = 1, transfer = 0;
  bool accumulate = false, user_op = false;
};

int64_t whole_number(const std::string& flag, const std::string& text, int64_t lo, int64_t hi) {
  size_t used = 0;
  long long v = 0;
  try {
    v = std::stoll(text, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  if (used == 0 || used != text.size() || v < lo || v > hi)
    throw UsageError("option " + flag + " expects a whole number from " + std::to_string(lo) + " to " +
                     std::to_string(hi) + ", got '" + text + "'");
  return v;
}

std::vector<const char*> take_args(int argc, char** argv, Args* s) {
  std::vector<const char*> rest{argv[0]};
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i], value;
    bool has_value = false;
    if (auto eq = a.find('='); a.rfind("--", 0) == 0 && eq != std::string::npos) {
      value = a.substr(eq + 1);
      a = a.substr(0, eq);
      has_value = true;
    }
    auto next = [&]() -> std::string {
      if (has_value) return value;
      if (i + 1 >= argc) throw UsageError("option " + a + " needs a value");
      return argv[++i];
    };
    if (a == "--grid") {
      const std::string v = next();
      int d[3];
      char tail = 0;
      if (std::sscanf(v.c_str(), "%d,%d,%d%c", &d[0], &d[1], &d[2], &tail) != 3 || d[0] < 1 || d[1] < 1 || d[2] < 1)
        throw UsageError("option --grid expects three whole numbers >= 1 like 2,2,2 (px,py,pz), got '" + v + "'");
      s->grid = {d[0], d[1], d[2]};
    } else if (a == "--semiring") {
      s->semirings = lab::split_list(next());
      for (const std::string& v : s->semirings)
        if (v != "minplus" && v != "maxplus" && v != "plustimes")
          throw UsageError("option --semiring takes minplus, maxplus, plustimes (comma-separated), got '" + v + "'");
      if (s->semirings.empty()) throw UsageError("option --semiring needs at least one semiring");
    } else if (a == "--local") {
      s->cuda.clear();
      for (const std::string& v : lab::split_list(next())) {
        if (v != "cpu" && v != "cuda") throw UsageError("option --local takes cpu or cuda (comma-separated), got '" + v + "'");
        s->cuda.push_back(v == "cuda");
      }
      if (s->cuda.empty()) throw UsageError("option --local needs at least one kernel");
    } else if (a == "--transfer") {
      const std::string v = next();
      if (v != "auto" && v != "nccl" && v != "mpi")
        throw UsageError("option --transfer takes auto, nccl or mpi, got '" + v + "'");
      s->transfer = v == "auto" ? 0 : v == "nccl" ? 1 : 2;
    } else if (a == "--breakdown") {
      s->breakdown_csv = next();
      if (s->breakdown_csv.empty()) throw UsageError("--breakdown needs a file name");
    } else if (a == "--pad") {
      s->pad = whole_number(a, next(), 0, 1 << 20);
    } else if (a == "--warmup") {
      s->warmup = static_cast<int>(whole_number(a, next(), 0, 100));
    } else if (a == "--accumulate") {
      s->accumulate = true;
    } else if (a == "--user-op") {
      s->user_op = true;
    } else {
      rest.push_back(argv[i]);
    }
  }
  return rest;
}

std::string usage() {
  return lab::bench_usage(kInfo) +
         "step09_semiring_mpi (run it under mpiexec; --variant, --tile, --gpus, --streams, --check do not apply):\n"
         "  --impl LIST      student, solution (default: the solution where built)\n"
         "  --semiring LIST  minplus (default), maxplus, plustimes; comma-separated: one run each\n"
         "  --local LIST     cpu (step09's gemm<S>, --threads per rank; default) or cuda (each rank's GPU,\n"
         "                   by its index on the node; the blocks are born there)\n"
         "  --transfer HOW   device blocks: auto (NCCL where it can: ncclMin / ncclMax), nccl, mpi\n"
         "  --grid PX,PY,PZ  the process grid, PX*PY*PZ = ranks (default: the grid moving the fewest words)\n"
         "  --accumulate     C <- C (+) A (x) B (default: C <- A (x) B, C not read)\n"
         "  --user-op        reduce along z with an MPI_Op made from the semiring's add (not MPI_MIN/MAX/SUM)\n"
         "  --pad P          ld = rows + P for the blocks (default 0)\n"
         "  --warmup W       untimed calls first (default 1)\n"
         "  --breakdown FILE append per-rank times and bytes per phase to FILE (step08's CSV columns)\n"
         "The lecture's shape: --m 8192 --k 8192 --n 2048.\n";
}

void report(const std::vector<RunResult>& runs, const lab::BenchOptions& o, int p, int threads, const Args& s,
            const lab::step08::Placement& pl) {
  std::vector<lab::Record> records;
  for (const RunResult& r : runs) {
    lab::step08::print_run(r, o, p, threads, pl);
    const bool todo = r.check.report.rfind("not implemented yet", 0) == 0;
    if (!s.breakdown_csv.empty() && !r.ranks.empty()) lab::step08::append_breakdown_csv(s.breakdown_csv, r, o, threads, false, pl);
    lab::Record rec;
    rec.step = "step09";
    rec.variant = r.variant + "_mpi";
    rec.impl = r.impl;
    rec.m = o.m;
    rec.n = o.n;
    rec.k = o.k;
    rec.threads = threads;
    if (!todo) {
      const lab::Timing t = lab::summarize(r.samples);
      rec.median_s = t.median_s;
      rec.min_s = t.min_s;
      rec.max_s = t.max_s;
      rec.reps = t.reps;
      rec.gflops = lab::gflops(o.m, o.n, o.k, rec.median_s);
    }
    rec.check = todo ? "todo" : r.check.ok ? "pass" : "fail";
    rec.device = r.local.find("cuda") != std::string::npos ? "cuda:step09" : "cpu:step09";
    const lab::step08::Figures f = lab::step08::figures_of(r, o);
    rec.note = todo ? r.check.report
                    : "p=" + std::to_string(p) + " layout=" + r.layout + " local=" + r.local +
                          (f.has_product ? " overhead=" + std::to_string(f.overhead) : "") +
                          (pl.oversubscribed ? " oversubscribed" : "");
    records.push_back(rec);
  }
  if (!o.csv.empty()) lab::append_csv(o.csv, records);
  if (!o.json.empty()) lab::write_json(o.json, records);
}

int run(int argc, char** argv) {
  int rank = 0, p = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &p);
  const bool root = rank == 0;
  Args s;
  lab::BenchOptions o;
  std::vector<const s9m::BenchImplementation*> impls;
  try {
    const std::vector<const char*> rest = take_args(argc, argv, &s);
    o = lab::parse_bench_args(static_cast<int>(rest.size()), rest.data(), kInfo);
    if (!o.variants.empty() || !o.params.tile.empty() || o.params.gpus || o.params.streams || o.full_check)
      throw UsageError("--variant, --tile, --gpus, --streams and --check do not apply here (see --help)");
    if (s.grid.given()) lab::step08::validate_grid(s.grid, p);
    std::string list = o.impl;
    if (list.empty()) {
      list = "student";
      for (const auto& i : s9m::bench_implementations())
        if (i.name == "solution") list = "solution";
    }
    for (const std::string& name : lab::split_list(list)) {
      bool found = false;
      for (const auto& i : s9m::bench_implementations())
        if (name == "all" || i.name == name) {
          impls.push_back(&i);
          found = true;
        }
      if (!found) throw UsageError("--impl " + name + " is not built in this executable (see LAB_IMPL)");
    }
  } catch (const UsageError& e) {
    const bool help = std::string(e.what()) == "help";
    if (root) std::fprintf(help ? stdout : stderr, "%s", help ? usage().c_str() : "");
    if (root && !help) std::fprintf(stderr, "step09_semiring_mpi: error: %s (see --help)\n", e.what());
    return help ? lab::kExitOk : lab::kExitUsage;
  } catch (const std::invalid_argument& e) {
    if (root) std::fprintf(stderr, "step09_semiring_mpi: error: %s\n", e.what());
    return lab::kExitUsage;
  }
  if (o.list) {
    if (root)
      for (const auto& i : s9m::bench_implementations())
        std::printf("step09  semiring_mpi  %-9s  min-plus / max-plus / plus-times on step08's cube (--semiring, --local)\n",
                    i.name.c_str());
    return lab::kExitOk;
  }
  const int threads = o.params.threads > 0 ? o.params.threads : lab::max_threads();
  const lab::step08::Placement pl = lab::step08::placement(threads);
  if (std::find(s.cuda.begin(), s.cuda.end(), true) != s.cuda.end()) {
    // No GPU here is not a failure: skipped (77), on every rank alike.
    std::string why;
    int mine = lab::step08::cuda_usable(&why) ? 1 : 0, all = 0;
    LAB_MPI_CHECK(MPI_Allreduce(&mine, &all, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD));
    if (!all) {
      if (root) std::fprintf(stderr, "step09_semiring_mpi: skipped: --local cuda: %s\n", why.empty() ? "a rank has no GPU" : why.c_str());
      return lab::kExitSkipped;
    }
  }
  int status = lab::kExitOk;
  lab::step08::all_or_none(MPI_COMM_WORLD, [&] {
    if (!root) return;
    try {
      if (!o.csv.empty()) lab::require_writable(o.csv, "--csv");
      if (!o.json.empty()) lab::require_writable(o.json, "--json");
      if (!s.breakdown_csv.empty()) lab::require_writable(s.breakdown_csv, "--breakdown");
    } catch (const UsageError& e) {
      throw std::invalid_argument(e.what());
    }
  });
  if (root)
    std::printf("step09_semiring_mpi: C <- %sA (x) B, m=%lld n=%lld k=%lld on %d rank(s), data born on the ranks\n",
                s.accumulate ? "C (+) " : "", (long long)o.m, (long long)o.n, (long long)o.k, p);
  lab::step08::RunSetup setup;
  setup.m = o.m;
  setup.n = o.n;
  setup.k = o.k;
  setup.seeds = lab::step08::Seeds::from(o.seed);
  setup.grid = s.grid;
  setup.threads = threads;
  setup.reps = o.reps;
  setup.warmup = s.warmup;
  setup.min_time_s = o.min_time_s;
  setup.pad = s.pad;
  setup.transfer = s.transfer;
  std::vector<RunResult> runs;
  for (const auto* impl : impls)
    for (const std::string& semiring : s.semirings)
      for (bool cuda : s.cuda) {
        s9m::Job job;
        job.semiring = semiring;
        job.cuda = cuda;
        job.accumulate = s.accumulate;
        job.user_op = s.user_op;
        try {
          runs.push_back(impl->run(setup, job));
          if (!runs.back().check.ok) status = std::max<int>(status, lab::kExitCheckFailed);
        } catch (const lab::Todo& e) {
          RunResult r;
          r.step = "step09";
          r.variant = semiring;
          r.impl = impl->name;
          r.local = semiring + (cuda ? "/cuda" : "/cpu");
          r.check.ok = false;
          r.check.report = e.what();
          runs.push_back(r);
          status = std::max<int>(status, lab::kExitTodo);
        }
      }
  lab::step08::all_or_none(MPI_COMM_WORLD, [&] {
    if (root) report(runs, o, p, threads, s, pl);
  });
  return status;
}

}  // namespace

int main(int argc, char** argv) {
  return lab::step08::collective_main(argc, argv, "step09_semiring_mpi", run);
}
