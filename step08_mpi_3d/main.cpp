// step08_mpi_3d — the benchmark of the distributed DGEMM.
//
// Runs lab::step08::dgemm on MPI_COMM_WORLD with the full matrices on rank 0,
// checks the result, and prints where the time went and how many words each rank
// moved, against the 2D, 3D and lower-bound formulas. Run it under mpiexec:
//   mpiexec -n 8 build/mpi/bin/step08_mpi_3d --n 2048 --threads 1 --breakdown results/step08_breakdown.csv
// The shared options of every step (--m --n --k --reps --impl --csv --json --check
// --threads --seed) mean what they mean elsewhere; this step adds --grid, --local,
// --breakdown, --alpha and --beta. Every rank parses the same arguments and reaches
// the same verdict, so every rank exits with the same status.
#include <malloc.h>
#include <mpi.h>

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
#include "implementations.hpp"
#include "lab/bench.hpp"
#include "lab/check.hpp"
#include "lab/machine.hpp"
#include "lab/todo.hpp"
#include "mpi3d.hpp"

namespace {

using lab::UsageError;
using lab::step08::Breakdown;
using lab::step08::Grid;
using lab::step08::kPhases;

const lab::StepInfo kInfo{"step08", "distributed DGEMM on a 3D process grid", lab::Backend::cpu, 1024};

struct Step08Args {
  Grid grid;  // not given: chosen by the implementation
  lab::step08::LocalKernel local = lab::step08::LocalKernel::cpu;
  std::string breakdown_csv;
  double alpha = 1.0, beta = 0.0;
};

// MPI_Init_thread / MPI_Finalize around main. FUNNELED: OpenMP threads compute,
// only the main thread calls MPI.
struct MpiSession {
  MpiSession(int* argc, char*** argv) {
    int provided = 0;
    MPI_Init_thread(argc, argv, MPI_THREAD_FUNNELED, &provided);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  }
  ~MpiSession() { MPI_Finalize(); }
  MpiSession(const MpiSession&) = delete;
  MpiSession& operator=(const MpiSession&) = delete;
};

double parse_number(const std::string& flag, const std::string& text) {
  char* end = nullptr;
  errno = 0;
  const double v = std::strtod(text.c_str(), &end);
  if (text.empty() || *end != '\0' || errno == ERANGE || !std::isfinite(v))
    throw UsageError("option " + flag + " expects a number, got '" + text + "'");
  return v;
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
      const std::string v = next();
      if (v != "cpu" && v != "cuda") throw UsageError("option --local takes cpu or cuda, got '" + v + "'");
      s->local = v == "cpu" ? lab::step08::LocalKernel::cpu : lab::step08::LocalKernel::cuda;
    } else if (a == "--breakdown") {
      s->breakdown_csv = next();
      if (s->breakdown_csv.empty()) throw UsageError("--breakdown needs a file name");
    } else if (a == "--alpha") {
      s->alpha = parse_number(a, next());
    } else if (a == "--beta") {
      s->beta = parse_number(a, next());
    } else {
      rest.push_back(argv[i]);
    }
  }
  return rest;
}

std::string usage() {
  return lab::bench_usage(kInfo) +
         "step08 (run it under mpiexec; --variant, --tile, --gpus, --streams do not apply):\n"
         "  --grid PX,PY,PZ  the process grid, PX*PY*PZ = ranks (default: the grid moving the fewest words)\n"
         "  --local KIND     cpu (step04's kernel, --threads OpenMP threads per rank) or cuda (cuBLAS,\n"
         "                   one GPU per rank by its index on the node)\n"
         "  --breakdown FILE append per-rank time and bytes per phase to FILE (CSV)\n"
         "  --alpha A, --beta B   the scalars of C <- alpha A B + beta C (default 1 and 0)\n";
}

// One rank's breakdown as numbers, for MPI_Gather: seconds, then sent/recv bytes per phase.
constexpr int kPacked = 3 * kPhases;
void pack(const Breakdown& b, double* out) {
  for (int p = 0; p < kPhases; ++p) {
    out[p] = b.seconds[p];
    out[kPhases + 2 * p] = double(b.traffic[p].sent);
    out[kPhases + 2 * p + 1] = double(b.traffic[p].recv);
  }
}
Breakdown unpack(const double* in, const Grid& g) {
  Breakdown b;
  b.grid = g;
  for (int p = 0; p < kPhases; ++p) {
    b.seconds[p] = in[p];
    b.traffic[p].sent = int64_t(in[kPhases + 2 * p]);
    b.traffic[p].recv = int64_t(in[kPhases + 2 * p + 1]);
  }
  return b;
}

int64_t words_moved(const Breakdown& b) {
  using lab::step08::kBroadcast, lab::step08::kReduce;
  return (b.traffic[kBroadcast].sent + b.traffic[kBroadcast].recv + b.traffic[kReduce].sent +
          b.traffic[kReduce].recv) /
         int64_t(sizeof(double));
}

struct Run {
  std::string impl;
  lab::Timing timing;
  Grid grid;
  std::vector<Breakdown> ranks;  // rank 0 only: every rank's breakdown of the median call
  std::string check;             // "pass", "fail", "todo", "error"
  std::string note;
};

void print_run(const Run& r, const lab::BenchOptions& o, int p, int threads, const Step08Args& s) {
  if (r.check == "todo") {
    std::printf("%-9s %s\n", r.impl.c_str(), r.note.c_str());
    return;
  }
  const double gf = lab::gflops(o.m, o.n, o.k, r.timing.median_s);
  std::printf("%-9s grid %-8s median %.4f s (min %.4f, max %.4f, %d calls)  %.2f GFLOP/s  check: %s\n",
              r.impl.c_str(), r.grid.str().c_str(), r.timing.median_s, r.timing.min_s, r.timing.max_s,
              r.timing.reps, gf, r.check.c_str());
  std::printf("  per phase, slowest rank (s):");
  for (int ph = 0; ph < kPhases; ++ph) {
    double worst = 0;
    for (const Breakdown& b : r.ranks) worst = std::max(worst, b.seconds[ph]);
    std::printf("  %s %.4f", lab::step08::phase_name(ph), worst);
  }
  std::printf("\n");
  const double m = double(o.m), n = double(o.n), k = double(o.k);
  int64_t most = 0;
  for (const Breakdown& b : r.ranks) most = std::max(most, words_moved(b));
  const Grid g2 = lab::step08::best_2d_grid(p, o.m, o.n, o.k);
  const double formula = lab::step08::words_formula(r.grid, m, n, k);
  std::printf("  words moved per rank in the broadcasts and the reduction (doubles):\n");
  auto line = [](const std::string& label, double words, const std::string& how) {
    std::printf("    %-40s %14.0f  %s\n", label.c_str(), words, how.c_str());
  };
  char off[64] = "";
  if (formula > 0)
    std::snprintf(off, sizeof off, "(%+.1f%% off the formula)", 100.0 * (double(most) - formula) / formula);
  line("measured, busiest rank", double(most), off);
  line("formula for grid " + r.grid.str(), formula,
       "[py>1] mk/(px pz) + [px>1] kn/(py pz) + [pz>1] mn/(px py)");
  line("2D: best grid " + g2.str(), lab::step08::words_formula(g2, m, n, k), "");
  line("3D: ideal cube", lab::step08::cube_formula(p, m, n, k), "(mk + kn + mn) / p^(2/3)");
  line("lower bound", lab::step08::lower_bound_words(p, m, n, k), "3 (mnk/p)^(2/3) - (mk + kn + mn) / p");
  std::printf(
      "  (rank 0 also scatters A, B%s and gathers C: the same on every grid; %d rank(s), %d thread(s) each, "
      "local %s)\n",
      s.beta != 0.0 ? ", C" : "", p, threads, s.local == lab::step08::LocalKernel::cpu ? "cpu" : "cuda");
}

void append_breakdown_csv(const std::string& path, const Run& r, const lab::BenchOptions& o, int threads,
                          const Step08Args& s) {
  bool fresh = true;
  {
    std::ifstream probe(path);
    fresh = !probe.good() || probe.peek() == std::ifstream::traits_type::eof();
  }
  std::ostringstream out;
  if (fresh) {
    out << "step,variant,impl,m,n,k,threads,median_s,gflops,p,grid,px,py,pz,local,rank,x,y,z";
    for (int ph = 0; ph < kPhases; ++ph) out << ',' << lab::step08::phase_name(ph) << "_s";
    for (int ph = 0; ph < kPhases; ++ph)
      out << ',' << lab::step08::phase_name(ph) << "_sent_B," << lab::step08::phase_name(ph) << "_recv_B";
    out << ",words_moved,words_formula,words_best_2d,words_cube,words_lower_bound,check\n";
  }
  const int p = static_cast<int>(r.ranks.size());
  const Grid& g = r.grid;
  const double m = double(o.m), n = double(o.n), k = double(o.k);
  const char* local = s.local == lab::step08::LocalKernel::cpu ? "cpu" : "cuda";
  char num[64];
  auto f = [&](double v) {
    std::snprintf(num, sizeof num, "%.9g", v);
    return std::string(num);
  };
  for (int rank = 0; rank < p; ++rank) {
    const Breakdown& b = r.ranks[rank];
    // MPI_COMM_WORLD, no reordering: Cartesian ranks are row-major.
    const int x = rank / (g.py * g.pz), y = (rank / g.pz) % g.py, z = rank % g.pz;
    out << "step08,cube," << r.impl << ',' << o.m << ',' << o.n << ',' << o.k << ',' << threads << ','
        << f(r.timing.median_s) << ',' << f(lab::gflops(o.m, o.n, o.k, r.timing.median_s)) << ',' << p << ','
        << g.str() << ',' << g.px << ',' << g.py << ',' << g.pz << ',' << local << ',' << rank << ',' << x
        << ',' << y << ',' << z;
    for (int ph = 0; ph < kPhases; ++ph) out << ',' << f(b.seconds[ph]);
    for (int ph = 0; ph < kPhases; ++ph) out << ',' << b.traffic[ph].sent << ',' << b.traffic[ph].recv;
    out << ',' << words_moved(b) << ',' << f(lab::step08::words_formula(g, m, n, k)) << ','
        << f(lab::step08::words_formula(lab::step08::best_2d_grid(p, o.m, o.n, o.k), m, n, k)) << ','
        << f(lab::step08::cube_formula(p, m, n, k)) << ',' << f(lab::step08::lower_bound_words(p, m, n, k))
        << ',' << r.check << '\n';
  }
  std::ofstream file(path, std::ios::app);
  if (!file) throw std::runtime_error("cannot write the breakdown file '" + path + "'");
  file << out.str();
}

// Times one implementation: a warm-up call, then timed calls until both --reps and
// --min-time are reached; each call's time is that of the slowest rank.
Run run_impl(const lab::step08::Implementation& impl, const lab::BenchOptions& o, const Step08Args& s,
             int threads, lab::Matrix& A, lab::Matrix& B, const lab::Matrix& C0, lab::Matrix& C) {
  int rank = 0, p = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &p);
  const bool root = rank == 0;
  const lab::MatView none{nullptr, 0, 0, 1};
  lab::step08::Options opts;
  opts.grid = s.grid;
  opts.local = s.local;
  opts.threads = threads;
  Breakdown one;
  opts.breakdown = &one;
  auto call = [&] {
    if (root && s.beta != 0.0) std::copy(C0.data(), C0.data() + C0.size(), C.data());
    LAB_MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD));
    const double t0 = MPI_Wtime();
    impl.gemm(MPI_COMM_WORLD, s.alpha, root ? A.cview() : none, root ? B.cview() : none, s.beta,
              root ? C.view() : none, opts);
    double t = MPI_Wtime() - t0, slowest = 0;
    LAB_MPI_CHECK(MPI_Allreduce(&t, &slowest, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD));
    return slowest;
  };
  Run r;
  r.impl = impl.name;
  call();  // warm-up: first touch of the buffers, MPI's connections, cuBLAS start-up
  std::vector<double> samples;
  std::vector<Breakdown> calls;
  double total = 0;
  while (int(samples.size()) < o.reps || (total < o.min_time_s && samples.size() < 1000)) {
    samples.push_back(call());
    calls.push_back(one);
    total += samples.back();
  }
  r.timing = lab::summarize(samples);
  r.grid = one.grid;
  // The breakdown of the median call (the lower middle one for an even count), so
  // that its phases add up to the time reported. The samples are the slowest rank's
  // times, the same on every rank, so every rank picks the same call.
  std::vector<size_t> order(samples.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::sort(order.begin(), order.end(), [&](size_t a, size_t b) { return samples[a] < samples[b]; });
  double mine[kPacked];
  pack(calls[order[(order.size() - 1) / 2]], mine);
  std::vector<double> all(root ? size_t(kPacked) * p : 0);
  LAB_MPI_CHECK(MPI_Gather(mine, kPacked, MPI_DOUBLE, all.data(), kPacked, MPI_DOUBLE, 0, MPI_COMM_WORLD));
  for (int q = 0; root && q < p; ++q) r.ranks.push_back(unpack(&all[size_t(q) * kPacked], r.grid));

  // The check, on rank 0 (the only rank with the matrices), told to every rank.
  int ok = 1;
  if (root) {
    const lab::CheckResult c =
        o.full_check
            ? lab::check_against_reference(s.alpha, A.cview(), B.cview(), s.beta, C0.cview(), C.cview())
            : lab::freivalds_check(s.alpha, A.cview(), B.cview(), s.beta, C0.cview(), C.cview());
    ok = c.ok;
    if (!c.ok)
      std::fprintf(stderr, "step08_mpi_3d: %s: WRONG RESULT\n%s", impl.name.c_str(), c.report.c_str());
    r.note = o.full_check ? "full check" : "randomized check";
  }
  LAB_MPI_CHECK(MPI_Bcast(&ok, 1, MPI_INT, 0, MPI_COMM_WORLD));
  r.check = ok ? "pass" : "fail";
  return r;
}

// Rank 0: the table on stdout, then the files asked for.
void report(const std::vector<Run>& runs, const lab::BenchOptions& o, int p, int threads,
            const Step08Args& s) {
  std::vector<lab::Record> records;
  for (const Run& r : runs) {
    print_run(r, o, p, threads, s);
    if (!s.breakdown_csv.empty() && !r.ranks.empty()) append_breakdown_csv(s.breakdown_csv, r, o, threads, s);
    lab::Record rec;
    rec.step = "step08";
    rec.variant = "cube";
    rec.impl = r.impl;
    rec.m = o.m;
    rec.n = o.n;
    rec.k = o.k;
    rec.threads = threads;
    rec.median_s = r.timing.median_s;
    rec.min_s = r.timing.min_s;
    rec.max_s = r.timing.max_s;
    rec.reps = r.timing.reps;
    rec.gflops = lab::gflops(o.m, o.n, o.k, rec.median_s);
    rec.check = r.check;
    rec.device = s.local == lab::step08::LocalKernel::cpu ? "cpu:" + lab::cpu_simd_level() : "cuda:cublas";
    rec.note = r.check == "todo" ? r.note : "p=" + std::to_string(p) + " grid=" + r.grid.str() + " " + r.note;
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
  std::stringstream in(list);
  std::string name;
  while (std::getline(in, name, ',')) {
    if (name == "baseline")
      throw UsageError("step08 has no baseline: run it with 1 rank (mpiexec -n 1) for the one-process time");
    bool found = false;
    for (const auto& i : all)
      if (name == "all" || i.name == name) {
        out.push_back(&i);
        found = true;
      }
    if (!found) throw UsageError("--impl " + name + " is not built in this executable (see LAB_IMPL)");
  }
  return out;
}

int run(int argc, char** argv) {
  int rank = 0, p = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &p);
  const bool root = rank == 0;
  Step08Args s;
  lab::BenchOptions o;
  std::vector<const lab::step08::Implementation*> impls;
  try {
    const std::vector<const char*> rest = take_step08_args(argc, argv, &s);
    o = lab::parse_bench_args(static_cast<int>(rest.size()), rest.data(), kInfo);
    if (!o.variants.empty() || !o.params.tile.empty() || o.params.gpus || o.params.streams)
      throw UsageError("--variant, --tile, --gpus and --streams do not apply to step08 (see --help)");
    if (s.grid.given()) lab::step08::validate_grid(s.grid, p);
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
        std::printf("step08  cube  %-9s  3D-grid DGEMM over MPI (collective; --grid, --local)\n",
                    i.name.c_str());
    return lab::kExitOk;
  }
  const int threads = o.params.threads > 0 ? o.params.threads : lab::max_threads();

  lab::Matrix A, B, C0, C;  // rank 0 only
  int status = lab::kExitOk;
  try {
    lab::step08::all_or_none(MPI_COMM_WORLD, [&] {
      if (!root) return;
      // Bad sizes or paths fail before the run, on every rank alike (as a usage error).
      try {
        lab::require_memory_for(o.m, o.n, o.k);
        for (const auto& path : {o.csv, o.json, s.breakdown_csv})
          if (!path.empty()) lab::require_writable(path);
        A = lab::Matrix(o.m, o.k);
        B = lab::Matrix(o.k, o.n);
        C0 = lab::Matrix(o.m, o.n);
        C = lab::Matrix(o.m, o.n);
      } catch (const UsageError& e) {
        throw std::invalid_argument(e.what());
      } catch (const std::bad_alloc&) {
        throw std::invalid_argument("cannot allocate the matrices of " + std::to_string(o.m) + " x " +
                                    std::to_string(o.n) + " x " + std::to_string(o.k) + " on rank 0");
      }
      A.fill_random(o.seed);
      B.fill_random(o.seed + 1);
      C0.fill_random(o.seed + 2);
    });
    if (root)
      std::printf("step08_mpi_3d: C <- %g A B + %g C, m=%lld n=%lld k=%lld on %d rank(s)\n", s.alpha, s.beta,
                  (long long)o.m, (long long)o.n, (long long)o.k, p);
    std::vector<Run> runs;
    for (const auto* impl : impls) {
      // A TODO in one implementation (thrown alike on every rank) does not stop the others.
      try {
        runs.push_back(run_impl(*impl, o, s, threads, A, B, C0, C));
        if (runs.back().check != "pass") status = std::max<int>(status, lab::kExitCheckFailed);
      } catch (const lab::Todo& e) {
        Run r;
        r.impl = impl->name;
        r.check = "todo";
        r.note = e.what();
        runs.push_back(r);
        status = std::max<int>(status, lab::kExitTodo);
      }
    }
    // Only rank 0 reports; the others wait here, so that a file it cannot write
    // fails every rank alike.
    lab::step08::all_or_none(MPI_COMM_WORLD, [&] {
      if (root) report(runs, o, p, threads, s);
    });
  } catch (const lab::Todo& e) {
    if (root) std::fprintf(stderr, "step08_mpi_3d: %s\n", e.what());
    return lab::kExitTodo;
  } catch (const std::invalid_argument& e) {
    if (root) std::fprintf(stderr, "step08_mpi_3d: error: %s\n", e.what());
    return lab::kExitUsage;
  } catch (const std::exception& e) {
    if (root) std::fprintf(stderr, "step08_mpi_3d: error: %s\n", e.what());
    return lab::kExitError;
  }
  return status;
}

}  // namespace

int main(int argc, char** argv) {
  // Keep freed memory in the process: each call allocates blocks of hundreds of MB,
  // and fresh pages cost a page fault on first touch (on the 2-core lab machine a
  // copy into fresh memory ran at 1.3 GB/s, into reused memory at 4 GB/s). Without
  // this, glibc returns big blocks to the system at free() and every timed call
  // would fault them in again.
  mallopt(M_MMAP_MAX, 0);
  mallopt(M_TRIM_THRESHOLD, -1);
  const MpiSession session(&argc, &argv);
  int status = run(argc, argv);
  // Every path above is taken alike on every rank; the maximum makes sure of it
  // (a rank that failed alone, e.g. writing a file, fails them all).
  int worst = status;
  MPI_Allreduce(&status, &worst, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  return worst;
}
