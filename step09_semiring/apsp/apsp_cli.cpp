// The `apsp` command line: options, one run, the benchmark and the generator.
#include "apsp_cli.hpp"

#include <omp.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <memory>
#include <optional>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "algorithms.hpp"
#include "compare.hpp"
#include "distance_io.hpp"
#include "engine.hpp"
#include "generate.hpp"
#include "graph.hpp"
#include "lab/bench.hpp"
#include "lab/machine.hpp"
#include "reference.hpp"
#include "text.hpp"

namespace lab::step09 {
namespace apsp {
namespace {

const char* const kOptions =
    "\n"
    "input:\n"
    "  --graph FILE        the graph: DIMACS .gr ('p sp N M', 'a U V W') or an edge list\n"
    "                      ('U V W' per line, '#' comments)\n"
    "  --format F          dimacs or edges (default: dimacs for *.gr, else edges)\n"
    "  --zero-based        edge list vertices count from 0 (default: from 1)\n"
    "  --vertices N        edge list: N vertices (default: the largest vertex seen)\n"
    "  --allow-negative    accept negative weights (negative cycles are then reported)\n"
    "computing:\n"
    "  --algorithm A       fw (blocked Floyd-Warshall, default), squaring (repeated\n"
    "                      squaring) or plain (Floyd-Warshall on one CPU core);\n"
    "                      with --bench a list (default plain,fw,squaring)\n"
    "  --backend B         cpu (default) or gpu\n"
    "  --threads T         OpenMP threads on the CPU (default: OMP_NUM_THREADS or all)\n"
    "  --block B           fw: vertices per diagonal block (default 256)\n"
    "output:\n"
    "  --out FILE          write the distance matrix (or, with --generate, the graph)\n"
    "  --out-format F      text or binary (default: binary for *.bin, else text)\n"
    "  --query U,V ...     print d(U,V) for each pair (vertex numbers as in the file)\n"
    "  --check             compare with plain Floyd-Warshall (exact for integer weights)\n"
    "  --expect FILE       compare with a distance file written by --out\n"
    "  --csv FILE          append a row per run (the lab's benchmark columns)\n"
    "generator:\n"
    "  --generate N        N vertices, each with --degree D arcs (default 8) to random\n"
    "                      other vertices, weights 1..--max-weight W (default 1000),\n"
    "                      --seed S (default 1); --format dimacs (default) or edges\n"
    "  --help              this text\n"
    "\n"
    "Text output: a line 'n N base B', then line u holds d(u,v) for every v; 'inf' = no path.\n"
    "Binary output: \"APSPDIST\", uint64 N, uint64 B, then N*N little-endian doubles, row-major.\n"
    "exit status: 0 ok, 1 --check/--expect failed, 2 bad usage or input (also a negative\n"
    "cycle), 4 error, 77 no GPU engine here (--backend gpu)\n";

// The usage text, naming the program as the user types it.
std::string usage(const std::string& program) {
  return "usage: " + program + " --graph FILE [options]               all-pairs shortest paths\n"
         "       " + program + " --graph FILE --bench [options]       time the algorithms on one graph\n"
         "       " + program + " --generate N --out FILE [options]    write a random benchmark graph\n" + kOptions;
}

struct Options {
  std::string graph;
  std::optional<GraphFormat> format;
  bool zero_based = false;
  int64_t vertices = 0;
  bool allow_negative = false;
  std::vector<std::string> algorithms;
  std::string backend = "cpu";
  int threads = 0;
  int64_t block = 256;
  std::string out;
  std::optional<DistanceFormat> out_format;
  std::vector<std::pair<int64_t, int64_t>> queries;  // vertex numbers as written
  bool check = false;
  std::string expect;
  bool bench = false;
  std::string csv;
  bool generate = false;
  GenerateOptions gen;
  bool help = false;
};

int64_t integer_option(const std::string& flag, const std::string& text, int64_t lo, int64_t hi) {
  const auto v = parse_integer(text);
  if (!v || *v < lo || *v > hi)
    throw UsageError(flag + " expects a whole number from " + std::to_string(lo) + " to " +
                     std::to_string(hi) + ", got '" + text + "'");
  return *v;
}

std::pair<int64_t, int64_t> query_pair(const std::string& text) {
  const size_t comma = text.find(',');
  const auto u = comma == std::string::npos ? std::nullopt : parse_integer(text.substr(0, comma));
  const auto v = comma == std::string::npos ? std::nullopt : parse_integer(text.substr(comma + 1));
  if (!u || !v) throw UsageError("--query expects U,V (two vertex numbers), got '" + text + "'");
  return {*u, *v};
}

Options parse_options(int argc, char** argv) {
  Options o;
  bool gen_option = false;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i], inline_value;
    bool has_inline = false;
    if (const size_t eq = a.find('='); a.rfind("--", 0) == 0 && eq != std::string::npos) {
      inline_value = a.substr(eq + 1);
      a.resize(eq);
      has_inline = true;
    }
    auto value = [&]() -> std::string {
      if (has_inline) return inline_value;
      if (i + 1 >= argc) throw UsageError(a + " needs a value");
      return argv[++i];
    };
    auto flag = [&](bool& target) {
      if (has_inline) throw UsageError(a + " takes no value");
      target = true;
    };
    if (a == "--help" || a == "-h") {
      flag(o.help);
    } else if (a == "--graph") {
      o.graph = value();
    } else if (a == "--format") {
      const std::string f = value();
      if (f != "dimacs" && f != "edges") throw UsageError("--format is dimacs or edges, got '" + f + "'");
      o.format = f == "dimacs" ? GraphFormat::dimacs : GraphFormat::edges;
    } else if (a == "--zero-based") {
      flag(o.zero_based);
    } else if (a == "--vertices") {
      o.vertices = integer_option(a, value(), 1, int64_t(1) << 31);
    } else if (a == "--allow-negative") {
      flag(o.allow_negative);
    } else if (a == "--algorithm") {
      o.algorithms = split_list(value());
      if (o.algorithms.empty()) throw UsageError("--algorithm needs a name (" + algorithm_names() + ")");
      for (const auto& name : o.algorithms)
        if (!find_algorithm(name))
          throw UsageError("--algorithm: unknown algorithm '" + name + "' (" + algorithm_names() + ")");
    } else if (a == "--backend") {
      o.backend = value();
      if (o.backend != "cpu" && o.backend != "gpu")
        throw UsageError("--backend is cpu or gpu, got '" + o.backend + "'");
    } else if (a == "--threads") {
      o.threads = int(integer_option(a, value(), 1, 4096));
    } else if (a == "--block") {
      o.block = integer_option(a, value(), 1, int64_t(1) << 20);
    } else if (a == "--out") {
      o.out = value();
    } else if (a == "--out-format") {
      const std::string f = value();
      if (f != "text" && f != "binary") throw UsageError("--out-format is text or binary, got '" + f + "'");
      o.out_format = f == "text" ? DistanceFormat::text : DistanceFormat::binary;
    } else if (a == "--query") {
      o.queries.push_back(query_pair(value()));
      // More pairs may follow without repeating the option.
      while (!has_inline && i + 1 < argc && std::string(argv[i + 1]).rfind("--", 0) != 0)
        o.queries.push_back(query_pair(argv[++i]));
    } else if (a == "--check") {
      flag(o.check);
    } else if (a == "--expect") {
      o.expect = value();
    } else if (a == "--bench") {
      flag(o.bench);
    } else if (a == "--csv") {
      o.csv = value();
    } else if (a == "--generate") {
      o.generate = true;
      o.gen.n = integer_option(a, value(), 2, int64_t(1) << 20);
    } else if (a == "--degree") {
      gen_option = true;
      o.gen.degree = integer_option(a, value(), 1, 1 << 16);
    } else if (a == "--seed") {
      gen_option = true;
      o.gen.seed = uint64_t(integer_option(a, value(), 0, INT64_MAX));
    } else if (a == "--max-weight") {
      gen_option = true;
      o.gen.max_weight = integer_option(a, value(), 1, int64_t(1) << 40);
    } else {
      throw UsageError("unknown option '" + a + "'");
    }
  }
  if (o.help) return o;
  if (o.generate) {
    if (o.out.empty()) throw UsageError("--generate needs --out FILE");
    if (!o.graph.empty()) throw UsageError("--generate writes a graph; it takes no --graph");
    return o;
  }
  if (gen_option) throw UsageError("--degree, --seed and --max-weight go with --generate");
  if (o.graph.empty()) throw UsageError("--graph FILE is required");
  const GraphFormat format = o.format.value_or(format_for(o.graph));
  if (format == GraphFormat::dimacs && (o.zero_based || o.vertices))
    throw UsageError("--zero-based and --vertices are for edge lists; DIMACS files number vertices 1..N");
  if (o.out_format && o.out.empty()) throw UsageError("--out-format goes with --out FILE");
  if (o.bench && (o.check || !o.queries.empty()))
    throw UsageError("--bench checks every result itself; it takes no --check or --query");
  if (!o.bench && o.algorithms.size() > 1)
    throw UsageError("--algorithm takes one name (a list only with --bench)");
  return o;
}

double now() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

// Sets the OpenMP thread count for a scope (the tests call the CLI many times in one process).
class ThreadScope {
 public:
  explicit ThreadScope(int threads) : saved_(omp_get_max_threads()) {
    if (threads > 0) omp_set_num_threads(threads);
  }
  ~ThreadScope() { omp_set_num_threads(saved_); }
  ThreadScope(const ThreadScope&) = delete;
  ThreadScope& operator=(const ThreadScope&) = delete;

 private:
  int saved_;
};

// Refuses, before allocating, a graph whose matrices cannot fit in memory.
void require_host_memory(int64_t n, int matrices) {
  std::ifstream meminfo("/proc/meminfo");
  std::string line;
  double kib = -1;  // unknown where there is no /proc/meminfo: no check
  while (std::getline(meminfo, line))
    if (line.rfind("MemAvailable:", 0) == 0) kib = std::strtod(line.c_str() + 13, nullptr);
  const double need = 8.0 * double(n) * double(n) * matrices, have = kib * 1024.0;
  if (kib >= 0 && need > have) {
    char msg[256];
    std::snprintf(
        msg, sizeof msg,
        "%lld vertices need %.1f GiB for %d distance matrices of %.1f GiB; %.1f GiB of memory is available",
        static_cast<long long>(n), need / 1073741824.0, matrices, need / matrices / 1073741824.0,
        have / 1073741824.0);
    throw UsageError(msg);
  }
}

std::string seconds_text(double s) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%10.3f s", s);
  return buf;
}

// One run of an algorithm on a fresh copy of the graph's matrix.
struct Run {
  const Algorithm* algorithm;
  bool gpu = false;
  std::string device, gemm;
  int threads = 1;
  RunReport report;
  double setup_s = 0, download_s = 0;
  Matrix D;                   // the result (empty after a negative cycle)
  double negative_value = 0;  // D(v, v) of the reported vertex
};

Run run_algorithm(const Options& o, const Graph& g, const Algorithm& alg, const MinPlusGemms& gemms) {
  Run run;
  run.algorithm = &alg;
  // Plain Floyd-Warshall is the one-core baseline whatever the backend.
  const bool plain = alg.name == "plain";
  run.gpu = o.backend == "gpu" && !plain;
  ThreadScope threads(plain ? 1 : 0);
  run.threads = run.gpu ? 1 : omp_get_max_threads();
  Matrix D0 = distance_matrix(g);
  double t0 = now();
  std::unique_ptr<Engine> engine = run.gpu ? make_gpu_engine(std::move(D0), gemms.gpu, gemms.gpu_name)
                                           : make_cpu_engine(std::move(D0), gemms.cpu, gemms.cpu_name);
  engine->finish();
  run.setup_s = now() - t0;
  run.device = engine->device();
  run.gemm = plain ? "none" : engine->gemm_name();
  run.report = alg.run(*engine, AlgorithmOptions{o.block, g.has_negative});
  t0 = now();
  run.D = engine->take_result();
  run.download_s = now() - t0;
  if (run.report.negative_cycle >= 0) {
    const int64_t v = run.report.negative_cycle;
    run.negative_value = run.D(v, v);
  }
  return run;
}

double ops_rate(const Run& run, int64_t n) {
  return run.report.seconds > 0 ? 2.0 * double(n) * double(n) * run.report.inner / run.report.seconds / 1e9
                                : 0;
}

std::string negative_cycle_message(const Run& run, const Graph& g) {
  const int64_t v = run.report.negative_cycle;
  return "negative cycle: vertex " + std::to_string(v + g.base) + " lies on a cycle of negative weight (d(" +
         std::to_string(v + g.base) + "," + std::to_string(v + g.base) +
         ") = " + format_number(run.negative_value) + " after " + run.algorithm->title +
         "), so shortest paths are not defined";
}

Record csv_record(const Run& run, const Options& o, const Graph& g, const std::string& check) {
  Record r;
  r.step = "step09";
  const bool plain = run.algorithm->name == "plain";
  r.variant = "apsp_" + run.algorithm->name + (run.gpu ? "_gpu" : "_cpu");
  r.impl = plain ? "baseline" : "solution";
  r.m = r.n = g.n;
  r.k = int64_t(run.report.inner);  // the work equals one n x k times k x n product
  r.threads = run.threads;
  r.median_s = r.min_s = r.max_s = run.report.seconds;
  r.reps = 1;
  r.gflops = ops_rate(run, g.n);
  r.check = check;
  r.device = run.gpu ? run.device : "cpu:" + cpu_simd_level();
  std::ostringstream note;
  note << "graph=" << o.graph << " arcs=" << g.arcs.size() << " gemm=" << run.gemm;
  if (run.algorithm->name == "fw") note << " block=" << o.block;
  if (run.algorithm->name == "squaring")
    note << " products=" << run.report.products << "/" << run.report.product_limit;
  note << " setup_s=" << run.setup_s << " download_s=" << run.download_s;
  r.note = note.str();
  return r;
}

// "--graph FILE: ..." where a message about the file names it only by its path.
template <class Error, class F>
auto naming(const std::string& flag, F read) {
  try {
    return read();
  } catch (const Error& e) {
    throw Error(flag + " " + e.what());
  }
}

Graph load_graph(const Options& o) {
  ReadOptions ro;
  ro.format = o.format.value_or(format_for(o.graph));
  ro.zero_based = o.zero_based;
  ro.vertices = o.vertices;
  ro.allow_negative = o.allow_negative;
  return naming<GraphError>("--graph", [&] { return read_graph(o.graph, ro); });
}

// The output file exists (as a temporary) from the start, so an unwritable
// path fails now rather than after the computation.
std::unique_ptr<OutputFile> open_output(const std::string& path) {
  if (path.empty()) return nullptr;
  try {
    return std::make_unique<OutputFile>(path);
  } catch (const std::runtime_error& e) {
    throw UsageError(std::string("--out: ") + e.what());
  }
}

DistanceFormat output_format(const Options& o) {
  const std::string bin = ".bin";
  const bool ends_bin =
      o.out.size() >= bin.size() && o.out.compare(o.out.size() - bin.size(), bin.size(), bin) == 0;
  return o.out_format.value_or(ends_bin ? DistanceFormat::binary : DistanceFormat::text);
}

// Where the GPU engine is missing: the reason, else empty.
std::string gpu_missing(const MinPlusGemms& gemms) {
  if (!gemms.gpu) return "no GPU min-plus GEMM in this program";
  std::string why;
  return gpu_engine_available(&why) ? std::string() : why;
}

DistanceFile load_expected(const Options& o, const Graph& g) {
  DistanceFile want = naming<DistanceFileError>("--expect", [&] { return read_distances(o.expect); });
  if (want.D.rows() != g.n || want.base != g.base)
    throw UsageError("--expect " + o.expect + " holds " + std::to_string(want.D.rows()) + " vertices from " +
                     std::to_string(want.base) + "; the graph has " + std::to_string(g.n) + " from " +
                     std::to_string(g.base));
  return want;
}

void print_graph(const Options& o, const Graph& g, double read_s) {
  double lo = INFINITY, hi = -INFINITY;
  for (const Arc& a : g.arcs) lo = std::min(lo, a.w), hi = std::max(hi, a.w);
  std::cout << "apsp: graph " << o.graph << " (" << format_name(o.format.value_or(format_for(o.graph)))
            << "): " << g.n << " vertices, " << g.arcs.size() << " arcs";
  if (!g.arcs.empty()) std::cout << ", weights " << format_number(lo) << ".." << format_number(hi);
  std::cout << "\n  read      " << seconds_text(read_s) << "\n";
}

int run_generate(const Options& o) {
  Graph g = random_graph(o.gen);
  const GraphFormat format = o.format.value_or(GraphFormat::dimacs);
  if (format == GraphFormat::edges && o.zero_based) g.base = 0;
  std::unique_ptr<OutputFile> out = open_output(o.out);
  std::ostringstream text;
  write_graph(text, g, format,
              "random graph: " + std::to_string(g.n) + " vertices, out-degree " +
                  std::to_string(o.gen.degree) + ", weights 1.." + std::to_string(o.gen.max_weight) +
                  ", seed " + std::to_string(o.gen.seed) + " (apsp --generate)");
  const std::string s = text.str();
  if (std::fwrite(s.data(), 1, s.size(), out->stream()) != s.size())
    throw std::runtime_error("writing '" + o.out + "' failed");
  out->commit();
  std::cout << "apsp: wrote " << o.out << " (" << format_name(format) << "): " << g.n << " vertices, "
            << g.arcs.size() << " arcs\n";
  return kExitOk;
}

int run_single(const Options& o, const MinPlusGemms& gemms) {
  const Algorithm& alg = *find_algorithm(o.algorithms.empty() ? "fw" : o.algorithms.front());
  if (o.backend == "gpu" && alg.name != "plain") {
    if (const std::string why = gpu_missing(gemms); !why.empty()) {
      std::cerr << "apsp: skipped: --backend gpu: " << why << "\n";
      return kExitSkipped;
    }
  }
  if (!o.csv.empty()) require_writable(o.csv, "--csv");
  std::unique_ptr<OutputFile> out = open_output(o.out);
  double t0 = now();
  const Graph g = load_graph(o);
  print_graph(o, g, now() - t0);
  for (const auto& [u, v] : o.queries)
    for (int64_t x : {u, v})
      if (x < g.base || x >= g.n + g.base)
        throw UsageError("--query " + std::to_string(u) + "," + std::to_string(v) + ": vertex " +
                         std::to_string(x) + " is not in " + std::to_string(g.base) + ".." +
                         std::to_string(g.n - 1 + g.base));
  require_host_memory(g.n, 2 + o.check + !o.expect.empty());
  std::optional<DistanceFile> want;
  if (!o.expect.empty()) want = load_expected(o, g);

  Run run = run_algorithm(o, g, alg, gemms);
  std::cout << "apsp: " << alg.title;
  if (alg.name == "fw") std::cout << " (block " << std::min(o.block, g.n) << ")";
  std::cout << " on " << run.device << ", min-plus GEMM: " << run.gemm << "\n";
  std::cout << "  " << (run.gpu ? "upload  " : "setup   ") << "  " << seconds_text(run.setup_s) << "\n";
  for (const auto& [phase, s] : run.report.phases)
    std::printf("  %-10s%s\n", phase.c_str(), seconds_text(s).c_str());
  std::cout << "  total     " << seconds_text(run.report.seconds) << "   ";
  std::printf("%.2f G min-plus ops/s", ops_rate(run, g.n));
  if (alg.name == "squaring")
    std::cout << ", " << run.report.products << " of at most " << run.report.product_limit << " products";
  std::cout << "\n";
  if (run.gpu) std::cout << "  download  " << seconds_text(run.download_s) << "\n";
  std::cout.flush();
  if (run.report.negative_cycle >= 0) {
    std::cerr << "apsp: " << negative_cycle_message(run, g) << "\n";
    return kExitUsage;
  }

  std::string check = "unchecked";
  const double tolerance = distance_tolerance(g);
  auto verify = [&](const char* against, ConstMatView ref) {
    const Comparison c = compare_distances(run.D.cview(), ref, tolerance, g.base);
    if (!c.ok()) {
      std::cerr << "apsp: the result differs from " << against << ": " << c.report << "\n";
      check = "fail";
    } else if (check != "fail") {
      check = "pass";
      std::cout << "apsp: the result matches " << against
                << (tolerance > 0 ? " (within the tolerance)" : " exactly") << "\n";
    }
  };
  if (o.check) {
    t0 = now();
    Matrix ref = distance_matrix(g);
    plain_floyd_warshall(ref.view());
    std::cout << "  check     " << seconds_text(now() - t0) << "   (plain Floyd-Warshall, one core)\n";
    verify("plain Floyd-Warshall", ref.cview());
  }
  if (want) verify(o.expect.c_str(), want->D.cview());
  if (!o.csv.empty()) append_csv(o.csv, {csv_record(run, o, g, check)});
  if (check == "fail") return kExitCheckFailed;

  if (out) {
    t0 = now();
    write_distances(*out, run.D.cview(), g.base, output_format(o));
    out->commit();
    std::cout << "  write     " << seconds_text(now() - t0) << "   " << o.out << "\n";
  }
  int64_t reachable = 0;
  double largest = 0;
  for (int64_t v = 0; v < g.n; ++v)
    for (int64_t u = 0; u < g.n; ++u)
      if (std::isfinite(run.D(u, v))) ++reachable, largest = std::max(largest, run.D(u, v));
  std::cout << "apsp: " << reachable << " of " << g.n * g.n << " ordered pairs connected; largest distance "
            << format_number(largest) << "\n";
  for (const auto& [u, v] : o.queries)
    std::cout << "d(" << u << "," << v << ") = " << format_number(run.D(u - g.base, v - g.base)) << "\n";
  return kExitOk;
}

int run_bench(const Options& o, const MinPlusGemms& gemms) {
  std::vector<const Algorithm*> list;
  for (const auto& name :
       o.algorithms.empty() ? std::vector<std::string>{"plain", "fw", "squaring"} : o.algorithms)
    list.push_back(find_algorithm(name));
  bool needs_gpu = false;
  for (const Algorithm* a : list) needs_gpu |= o.backend == "gpu" && a->name != "plain";
  if (needs_gpu) {
    if (const std::string why = gpu_missing(gemms); !why.empty()) {
      std::cerr << "apsp: skipped: --backend gpu: " << why << "\n";
      return kExitSkipped;
    }
  }
  if (!o.csv.empty()) require_writable(o.csv, "--csv");
  std::unique_ptr<OutputFile> out = open_output(o.out);
  const double t0 = now();
  const Graph g = load_graph(o);
  print_graph(o, g, now() - t0);
  require_host_memory(g.n, 4);
  std::optional<Matrix> ref;
  std::string ref_name;
  if (!o.expect.empty()) {
    ref = load_expected(o, g).D;
    ref_name = o.expect;
  }
  const double tolerance = distance_tolerance(g);
  std::printf("%-10s %-40s %7s %9s %11s %10s  %s\n", "algorithm", "on", "threads", "products", "seconds",
              "Gops/s", "check");
  bool failed = false;
  std::vector<std::string> mismatch_reports;
  for (const Algorithm* alg : list) {
    Run run = run_algorithm(o, g, *alg, gemms);
    if (run.report.negative_cycle >= 0) {
      std::cerr << "apsp: " << negative_cycle_message(run, g) << "\n";
      return kExitUsage;
    }
    std::string check = "first";  // what the others are checked against
    if (ref) {
      const Comparison c = compare_distances(run.D.cview(), ref->cview(), tolerance, g.base);
      check = c.ok() ? "pass" : "fail";
      if (!c.ok()) mismatch_reports.push_back(alg->name + " differs from " + ref_name + ": " + c.report);
      failed |= !c.ok();
    }
    const std::string products = alg->name == "squaring" ? std::to_string(run.report.products) + "/" +
                                                               std::to_string(run.report.product_limit)
                                                         : "-";
    std::printf("%-10s %-40s %7d %9s %11.3f %10.2f  %s\n", alg->name.c_str(),
                run.device.substr(0, 40).c_str(), run.threads, products.c_str(), run.report.seconds,
                ops_rate(run, g.n), check.c_str());
    std::fflush(stdout);
    if (!o.csv.empty()) append_csv(o.csv, {csv_record(run, o, g, check)});
    if (!ref) {
      ref = std::move(run.D);
      ref_name = "the " + alg->name + " result";
      if (out) write_distances(*out, ref->cview(), g.base, output_format(o));
    }
  }
  for (const auto& m : mismatch_reports) std::cerr << "apsp: " << m << "\n";
  if (failed) return kExitCheckFailed;
  if (out) {
    if (!o.expect.empty()) write_distances(*out, ref->cview(), g.base, output_format(o));
    out->commit();
  }
  return kExitOk;
}

}  // namespace

int apsp_main_with(int argc, char** argv, const MinPlusGemms& gemms, const char* program) {
  try {
    const Options o = parse_options(argc, argv);
    if (o.help) {
      std::cout << usage(program);
      return kExitOk;
    }
    ThreadScope threads(o.threads);
    if (o.generate) return run_generate(o);
    if (!gemms.cpu) throw std::logic_error("no CPU min-plus GEMM is registered (see minplus_gemm.hpp)");
    return o.bench ? run_bench(o, gemms) : run_single(o, gemms);
  } catch (const UsageError& e) {
    std::cerr << "apsp: " << e.what() << " (see " << program << " --help)\n";
    return kExitUsage;
  } catch (const GraphError& e) {
    std::cerr << "apsp: " << e.what() << "\n";
    return kExitUsage;
  } catch (const DistanceFileError& e) {
    std::cerr << "apsp: " << e.what() << "\n";
    return kExitUsage;
  } catch (const std::exception& e) {
    std::cerr << "apsp: error: " << e.what() << "\n";
    return kExitError;
  }
}

}  // namespace apsp

int apsp_main(int argc, char** argv, const char* program) {
  return apsp::apsp_main_with(argc, argv, apsp::registered_gemms(), program);
}

}  // namespace lab::step09
