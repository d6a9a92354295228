// step08_mpi_3d — the benchmark of the distributed DGEMM.
//
// By default the matrices are born on the ranks: each rank fills its own blocks
// (by global index, so the matrix made whole is always the same), the timed call
// is the distributed multiply alone, and the check is a distributed Freivalds
// check. It reports, per run, the wall time, each rank's own local-product time
// (min/median/max), the overhead (wall - slowest rank's product) / wall, and the
// words moved against the formulas. Run it under mpiexec:
//   mpiexec -n 8 build/student/bin/step08_mpi_3d --n 4096 --threads 1 --local step04,openblas --impl student,baseline
// The shared options of every step (--m --n --k --reps --impl --csv --json --check
// --threads --seed --min-time) mean what they mean elsewhere; --impl baseline is
// ScaLAPACK's pdgemm where the build found it. Every rank parses the same arguments
// and reaches the same verdict, so every rank exits with the same status.
#include <malloc.h>
#include <mpi.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "comm.hpp"
#include "grid.hpp"
#include "bench_main.hpp"    // step08: collective_main
#include "bench_report.hpp"
#include "implementations.hpp"
#include "lab/bench.hpp"
#include "lab/machine.hpp"
#include "lab/todo.hpp"
#include "local_kernel.hpp"
#include "mpi3d.hpp"

namespace {

using lab::UsageError;
using lab::step08::Breakdown;
using lab::step08::Grid;
using lab::step08::kPhases;
using lab::step08::LocalKernel;
using lab::step08::Figures;
using lab::step08::Placement;
using lab::step08::placement;
using lab::step08::RunResult;
using lab::step08::RunSetup;

const lab::StepInfo kInfo{"step08", "distributed DGEMM on a 3D process grid", lab::Backend::cpu, 1024};

struct Step08Args {
  Grid grid;  // not given: chosen by the implementation
  std::vector<LocalKernel> locals{LocalKernel::step04};
  std::string breakdown_csv;
  double alpha = 1.0, beta = 0.0;
  int64_t pad = 0;
  int nb = 256, transfer = 0, warmup = 1, root_copy = 0;
  bool data_on_root = false;
  bool bcasts_at_once = true;
};

double parse_number(const std::string& flag, const std::string& text) {
  char* end = nullptr;
  errno = 0;
  const double v = std::strtod(text.c_str(), &end);
  if (text.empty() || *end != '\0' || errno == ERANGE || !std::isfinite(v))
    throw UsageError("option " + flag + " expects a number, got '" + text + "'");
  return v;
}

int64_t parse_count(const std::string& flag, const std::string& text, int64_t lo, int64_t hi) {
  const double v = parse_number(flag, text);
  if (v != std::floor(v) || v < double(lo) || v > double(hi))
    throw UsageError("option " + flag + " expects a whole number from " + std::to_string(lo) + " to " +
                     std::to_string(hi) + ", got '" + text + "'");
  return static_cast<int64_t>(v);
}

Grid parse_grid(const std::string& text) {
  int d[3];
  char tail = 0;
  if (std::sscanf(text.c_str(), "%d,%d,%d%c", &d[0], &d[1], &d[2], &tail) != 3 || d[0] < 1 || d[1] < 1 ||
      d[2] < 1)
    throw UsageError("option --grid expects three whole numbers >= 1 like 2,2,2 (px,py,pz), got '" + text +
                     "'");
  return {d[0], d[1], d[2]};
}

LocalKernel parse_local(const std::string& v) {
  if (v == "step04" || v == "cpu") return LocalKernel::step04;
  if (v == "openblas") return LocalKernel::openblas;
  if (v == "cuda") return LocalKernel::cuda;
  throw UsageError("option --local takes step04, openblas or cuda (comma-separated), got '" + v + "'");
}

// Takes this step's own options out of argv; the rest goes to the shared parser.
std::vector<const char*> take_step08_args(int argc, char** argv, Step08Args* s) {
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
      s->grid = parse_grid(next());
    } else if (a == "--local") {
      s->locals.clear();
      for (const std::string& v : lab::split_list(next())) s->locals.push_back(parse_local(v));
      if (s->locals.empty()) throw UsageError("option --local needs at least one kernel");
    } else if (a == "--data") {
      const std::string v = next();
      if (v != "ranks" && v != "root") throw UsageError("option --data takes ranks or root, got '" + v + "'");
      s->data_on_root = v == "root";
    } else if (a == "--transfer") {
      const std::string v = next();
      if (v != "auto" && v != "nccl" && v != "mpi")
        throw UsageError("option --transfer takes auto, nccl or mpi, got '" + v + "'");
      s->transfer = v == "auto" ? 0 : v == "nccl" ? 1 : 2;
    } else if (a == "--root-copy") {
      const std::string v = next();
      if (v != "auto" && v != "direct" && v != "relay")
        throw UsageError("option --root-copy takes auto, direct or relay, got '" + v + "'");
      s->root_copy = v == "auto" ? 0 : v == "direct" ? 1 : 2;
    } else if (a == "--bcast") {
      const std::string v = next();
      if (v != "together" && v != "in-turn")
        throw UsageError("option --bcast takes together or in-turn, got '" + v + "'");
      s->bcasts_at_once = v == "together";
    } else if (a == "--breakdown") {
      s->breakdown_csv = next();
      if (s->breakdown_csv.empty()) throw UsageError("--breakdown needs a file name");
    } else if (a == "--alpha") {
      s->alpha = parse_number(a, next());
    } else if (a == "--beta") {
      s->beta = parse_number(a, next());
    } else if (a == "--pad") {
      s->pad = parse_count(a, next(), 0, 1 << 20);
    } else if (a == "--nb") {
      s->nb = static_cast<int>(parse_count(a, next(), 1, 1 << 16));
    } else if (a == "--warmup") {
      s->warmup = static_cast<int>(parse_count(a, next(), 0, 100));
    } else {
      rest.push_back(argv[i]);
    }
  }
  return rest;
}

std::string usage() {
  return lab::bench_usage(kInfo) +
         "step08 (run it under mpiexec; --variant, --tile, --gpus, --streams do not apply):\n"
         "  --impl LIST      student, solution, baseline (ScaLAPACK pdgemm, where built)\n"
         "  --data WHERE     ranks: each rank makes its own blocks, the multiply alone is timed (default);\n"
         "                   root: rank 0 makes the matrices, scatter + multiply + gather are timed\n"
         "                   (with --local cuda: through pinned buffers and NCCL, dgemm_device_root)\n"
         "  --grid PX,PY,PZ  the process grid, PX*PY*PZ = ranks (default: the grid moving the fewest words)\n"
         "  --local LIST     what multiplies the blocks: step04 (your kernel), openblas, cuda (blocks on\n"
         "                   each rank's GPU, chosen by its index on the node); comma-separated: one run each\n"
         "  --transfer HOW   device blocks: auto (NCCL where it can), nccl, mpi (through host buffers)\n"
         "  --root-copy HOW  --data root --local cuda: direct (rank 0 copies into every GPU of its node\n"
         "                   through that GPU's own link, CUDA IPC), relay (through rank 0's GPU and\n"
         "                   NCCL), auto (direct where it can, the default)\n"
         "  --host-memory pinned|pageable   --data root --local cuda: rank 0's matrices page-locked\n"
         "                   (cudaHostRegister, outside the timing) or not (the default)\n"
         "  --bcast HOW      host blocks: together (A's and B's broadcasts in flight at once, the\n"
         "                   default) or in-turn (B's after A's)\n"
         "  --threads T      threads per rank of the cpu kernels (default: all cores)\n"
         "  --pad P          ld = rows + P for the blocks (default 0)\n"
         "  --nb NB          ScaLAPACK's block size (default 256)\n"
         "  --warmup W       untimed calls first (default 1)\n"
         "  --breakdown FILE append per-rank times and bytes per phase to FILE (CSV)\n"
         "  --alpha A, --beta B   the scalars of C <- alpha A B + beta C (default 1 and 0)\n";
}

// Rank 0: the table on stdout, then the files asked for.
void report(const std::vector<RunResult>& runs, const lab::BenchOptions& o, int p, int threads, const Step08Args& s,
            const Placement& pl) {
  std::vector<lab::Record> records;
  for (const RunResult& r : runs) {
    print_run(r, o, p, threads, pl);
    const bool todo = r.check.report.rfind("not implemented yet", 0) == 0;
    if (!s.breakdown_csv.empty() && !r.ranks.empty()) append_breakdown_csv(s.breakdown_csv, r, o, threads, s.data_on_root, pl);
    lab::Record rec;
    rec.step = "step08";
    rec.variant = lab::step08::variant_of(r);
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
    rec.device = r.local == "cuda" ? "cuda:cublas" : "cpu:" + r.local;
    const Figures f = figures_of(r, o);
    rec.note = todo ? r.check.report
                    : "p=" + std::to_string(p) + " layout=" + r.layout + " data=" +
                          (s.data_on_root ? "root" : "ranks") + (o.pinned_host ? " host=pinned" : "") +
                          (f.has_product ? " overhead=" + std::to_string(f.overhead) : "") +
                          (pl.oversubscribed ? " oversubscribed" : "") + (s.bcasts_at_once ? "" : " bcast=in-turn");
    records.push_back(rec);
  }
  if (!o.csv.empty()) lab::append_csv(o.csv, records);
  if (!o.json.empty()) lab::write_json(o.json, records);
}

std::vector<const lab::step08::Implementation*> pick_impls(const std::string& wanted) {
  std::vector<const lab::step08::Implementation*> out;
  const auto& all = lab::step08::implementations();
  std::string list = wanted;
  if (list.empty()) {  // the solution where it is built, else the student's code
    for (const auto& i : all)
      if (i.name == "solution") list = "solution";
    if (list.empty()) list = "student";
  }
  for (const std::string& name : lab::split_list(list)) {
    bool found = false;
    for (const auto& i : all)
      if (name == "all" || i.name == name) {
        out.push_back(&i);
        found = true;
      }
    if (!found && name == "baseline")
      throw UsageError(
          "--impl baseline is ScaLAPACK's pdgemm, which this build did not find (apt-get install "
          "libscalapack-openmpi-dev, or common/tools/fetch-scalapack, then reconfigure)");
    if (!found) throw UsageError("--impl " + name + " is not built in this executable (see LAB_IMPL)");
  }
  return out;
}

int run(int argc, char** argv) {
  int rank = 0, p = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &p);
  const bool root = rank == 0;
  if (argc >= 2 && std::string(argv[1]) == "--serve") return lab::step08::serve_main(argc >= 3 ? argv[2] : "");
  Step08Args s;
  lab::BenchOptions o;
  std::vector<const lab::step08::Implementation*> impls;
  try {
    const std::vector<const char*> rest = take_step08_args(argc, argv, &s);
    o = lab::parse_bench_args(static_cast<int>(rest.size()), rest.data(), kInfo);
    if (!o.variants.empty() || !o.params.tile.empty() || o.params.gpus || o.params.streams)
      throw UsageError("--variant, --tile, --gpus and --streams do not apply to step08 (see --help)");
    const bool root_on_gpus = s.data_on_root && std::find(s.locals.begin(), s.locals.end(), LocalKernel::cuda) !=
                                                   s.locals.end();
    if ((o.pinned_host || s.root_copy != 0) && !root_on_gpus)
      throw UsageError("--host-memory pinned and --root-copy apply to the rank-0 entry on GPUs only "
                       "(--data root --local cuda)");
    if (o.full_check)
      throw UsageError("--check (the full reference) needs the whole matrices on one rank; step08 checks with a "
                       "distributed randomized check instead");
    if (s.grid.given()) lab::step08::validate_grid(s.grid, p);
    for (LocalKernel k : s.locals) lab::step08::require_local_kernel(k);
    impls = pick_impls(o.impl);
  } catch (const UsageError& e) {
    const bool help = std::string(e.what()) == "help";
    if (root) std::fprintf(help ? stdout : stderr, "%s", help ? usage().c_str() : "");
    const std::string why = e.what();
    if (root && !help)
      std::fprintf(stderr, "step08_mpi_3d: error: %s%s\n", why.c_str(),
                   why.find("--help") == std::string::npos ? " (see --help)" : "");
    return help ? lab::kExitOk : lab::kExitUsage;
  } catch (const std::invalid_argument& e) {
    if (root) std::fprintf(stderr, "step08_mpi_3d: error: %s\n", e.what());
    return lab::kExitUsage;
  }
  if (o.list) {
    if (root)
      for (const auto& i : lab::step08::implementations())
        std::printf("step08  %-6s  %-9s  %s\n", i.name == "baseline" ? "pdgemm" : "cube", i.name.c_str(),
                    i.name == "baseline" ? "ScaLAPACK pdgemm (2D SUMMA, block-cyclic) on the same ranks"
                                         : "3D-grid DGEMM over MPI (collective; --grid, --local, --data)");
    return lab::kExitOk;
  }
  const int threads = o.params.threads > 0 ? o.params.threads : lab::max_threads();
  const Placement pl = placement(threads);
  if (std::find(s.locals.begin(), s.locals.end(), LocalKernel::cuda) != s.locals.end()) {
    // No GPU here is not a failure: skipped (77), on every rank alike.
    std::string why;
    int mine = lab::step08::cuda_usable(&why) ? 1 : 0, all = 0;
    LAB_MPI_CHECK(MPI_Allreduce(&mine, &all, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD));
    if (!all) {
      if (root) std::fprintf(stderr, "step08_mpi_3d: skipped: --local cuda: %s\n", why.empty() ? "a rank has no GPU" : why.c_str());
      return lab::kExitSkipped;
    }
  }

  int status = lab::kExitOk;
  lab::step08::all_or_none(MPI_COMM_WORLD, [&] {
    if (!root) return;
    // Bad paths fail before the run, on every rank alike (as a usage error).
    try {
      if (!o.csv.empty()) lab::require_writable(o.csv, "--csv");
      if (!o.json.empty()) lab::require_writable(o.json, "--json");
      if (!s.breakdown_csv.empty()) lab::require_writable(s.breakdown_csv, "--breakdown");
      if (s.data_on_root) lab::require_memory_for(o.m, o.n, o.k);
    } catch (const UsageError& e) {
      throw std::invalid_argument(e.what());
    }
  });
  if (root)
    std::printf("step08_mpi_3d: C <- %g A B + %g C, m=%lld n=%lld k=%lld on %d rank(s), data born on %s\n",
                s.alpha, s.beta, (long long)o.m, (long long)o.n, (long long)o.k, p,
                s.data_on_root ? "rank 0" : "the ranks");
  RunSetup setup;
  setup.m = o.m;
  setup.n = o.n;
  setup.k = o.k;
  setup.alpha = s.alpha;
  setup.beta = s.beta;
  setup.seeds = lab::step08::Seeds::from(o.seed);
  setup.grid = s.grid;
  setup.threads = threads;
  setup.reps = o.reps;
  setup.warmup = s.warmup;
  setup.min_time_s = o.min_time_s;
  setup.pad = s.pad;
  setup.data_on_root = s.data_on_root;
  setup.transfer = s.transfer;
  setup.root_copy = s.root_copy;
  setup.pinned_host = o.pinned_host;
  setup.bcasts_at_once = s.bcasts_at_once;
  setup.nb = s.nb;
  std::vector<RunResult> runs;
  for (const auto* impl : impls) {
    // the baseline has one local kernel of its own (OpenBLAS, as ScaLAPACK's users run it)
    const std::vector<LocalKernel> locals =
        impl->name == "baseline" ? std::vector<LocalKernel>{LocalKernel::openblas} : s.locals;
    for (LocalKernel local : locals) {
      setup.local = local;
      // A TODO in one implementation (thrown alike on every rank) does not stop the others.
      try {
        runs.push_back(impl->run(setup));
        if (!runs.back().check.ok) status = std::max<int>(status, lab::kExitCheckFailed);
      } catch (const lab::Todo& e) {
        RunResult r;
        r.impl = impl->name;
        r.local = lab::step08::local_kernel_name(local);
        r.check.ok = false;
        r.check.report = e.what();
        runs.push_back(r);
        status = std::max<int>(status, lab::kExitTodo);
      }
    }
  }
  // Only rank 0 reports; the others wait here, so that a file it cannot write
  // fails every rank alike.
  lab::step08::all_or_none(MPI_COMM_WORLD, [&] {
    if (root) report(runs, o, p, threads, s, pl);
  });
  return status;
}

}  // namespace

int main(int argc, char** argv) {
  return lab::step08::collective_main(argc, argv, "step08_mpi_3d", run);
}
