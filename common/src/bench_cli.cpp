// The shared command line of every step executable.
#include <cerrno>
#include <cstdlib>
#include <sstream>

#include "lab/bench.hpp"

namespace lab {
namespace {

int64_t parse_int(const std::string& flag, const std::string& text, int64_t lo, int64_t hi) {
  if (text.empty()) throw UsageError("option " + flag + " needs a number");
  char* end = nullptr;
  errno = 0;
  const long long v = std::strtoll(text.c_str(), &end, 10);
  if (*end != '\0' || errno == ERANGE)
    throw UsageError("option " + flag + " expects a whole number, got '" + text + "'");
  if (v < lo || v > hi)
    throw UsageError("option " + flag + " must be between " + std::to_string(lo) + " and " + std::to_string(hi) +
                     ", got " + text);
  return v;
}

double parse_double(const std::string& flag, const std::string& text, double lo, double hi) {
  char* end = nullptr;
  errno = 0;
  const double v = std::strtod(text.c_str(), &end);
  if (text.empty() || *end != '\0' || errno == ERANGE || !(v >= lo && v <= hi))
    throw UsageError("option " + flag + " expects a number between " + std::to_string(lo) + " and " +
                     std::to_string(hi) + ", got '" + text + "'");
  return v;
}

// "2G", "512M", "64K" or plain bytes (binary units).
int64_t parse_bytes(const std::string& flag, const std::string& text) {
  std::string digits = text;
  int shift = 0;
  if (!digits.empty()) {
    switch (digits.back()) {
      case 'K': case 'k': shift = 10; break;
      case 'M': case 'm': shift = 20; break;
      case 'G': case 'g': shift = 30; break;
      case 'T': case 't': shift = 40; break;
      default: break;
    }
    if (shift) digits.pop_back();
  }
  if (digits.empty()) throw UsageError("option " + flag + " needs a size in bytes, e.g. 2G or 512M");
  const int64_t v = parse_int(flag, digits, 1, (int64_t(1) << 50) >> shift);
  return v << shift;
}

// A list of numbers: "1,,2" or "1," is a typo, refused (split_list would drop the gap).
std::vector<std::string> split_numbers(const std::string& flag, const std::string& s) {
  if (s.find(",,") != std::string::npos || (!s.empty() && (s.front() == ',' || s.back() == ',')))
    throw UsageError(flag + ": an empty entry in '" + s + "'");
  return split_list(s);
}

}  // namespace

std::vector<int> parse_gpu_list(const std::string& flag, const std::string& text) {
  std::vector<int> ids;
  for (const auto& g : split_numbers(flag, text)) ids.push_back(int(parse_int(flag, g, 0, 1023)));
  if (ids.empty()) throw UsageError(flag + " needs GPU ids, e.g. " + flag + " 0,1 or " + flag + " 0,0");
  return ids;
}

std::vector<std::string> split_list(const std::string& s) {
  std::vector<std::string> out;
  std::stringstream in(s);
  std::string item;
  while (std::getline(in, item, ','))
    if (!item.empty()) out.push_back(item);
  return out;
}

std::string bench_usage(const StepInfo& info) {
  std::ostringstream o;
  o << "usage: " << info.step << "_* [options]   (" << info.title << ")\n"
    << "  --n N            columns of B and C; m and k default to N   (default " << info.default_size << ")\n"
    << "  --m M, --k K     rows of A and C, inner dimension\n"
    << "  --size S         m = n = k = S\n"
    << "  --sizes S,S,...  a size sweep: m = n = k = each S in turn, every variant at one size\n"
    << "                   before the next (e.g. --sizes 4,8,16,32,64,128,256,512,1024)\n"
    << "  --reps R         at least R timed repeats (default 3; more until --min-time)\n"
    << "  --min-time S     keep repeating until S seconds were timed (default 0.3)\n"
    << "  --impl LIST      student, solution, baseline or all, comma-separated\n"
    << "                   (default: solution where built, else student; plus baseline)\n"
    << "  --variant LIST   only these variants (see --list)\n"
    << "  --threads T      OpenMP threads (default: OMP_NUM_THREADS or all cores)\n"
    << "  --tile a,b,...   tile sizes for variants that take them\n"
    << "  --gpus LIST      GPU ids for the multi-GPU step, e.g. 0,1,2,3 or 0,0 (an id may repeat)\n"
    << "  --streams S      streams per GPU (multi-GPU step)\n"
    << "  --device-mem-limit BYTES   device memory a host-matrix variant may use, e.g. 2G, 512M\n"
    << "  --host-memory pinned|pageable   host matrices page-locked or not (default pageable)\n"
    << "  --trace FILE     write the timeline of each variant's last call (CSV) where it can\n"
    << "  --share auto|off|on   multi-GPU step: GPUs share the panels of A and B (auto: pinned host matrices)\n"
    << "  --check          full elementwise check against the reference (default: randomized check)\n"
    << "  --seed S         random seed of the matrices (default 2024)\n"
    << "  --csv FILE       append the results to FILE (CSV; header written when new)\n"
    << "  --json FILE      write the results to FILE (JSON)\n"
    << "  --list           list the variants this executable has\n"
    << "  --help           this text\n"
    << "exit status: 0 ok, 1 check failed, 2 bad usage, 3 not implemented yet, 4 error, 77 skipped\n";
  return o.str();
}

BenchOptions parse_bench_args(int argc, const char* const* argv, const StepInfo& info) {
  BenchOptions o;
  constexpr int64_t kMaxDim = int64_t(1) << 31;
  auto value = [&](int& i, const std::string& flag) -> std::string {
    if (i + 1 >= argc) throw UsageError("option " + flag + " needs a value");
    return argv[++i];
  };
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    // Accept --flag=value as well as --flag value.
    std::string inline_value;
    bool has_inline = false;
    if (a.rfind("--", 0) == 0) {
      if (auto eq = a.find('='); eq != std::string::npos) {
        inline_value = a.substr(eq + 1);
        a = a.substr(0, eq);
        has_inline = true;
      }
    }
    auto next = [&]() { return has_inline ? inline_value : value(i, a); };
    if (a == "--help" || a == "-h") {
      o.list = false;
      throw UsageError("help");
    } else if (a == "--m") {
      o.m = parse_int(a, next(), 0, kMaxDim);
    } else if (a == "--n") {
      o.n = parse_int(a, next(), 0, kMaxDim);
    } else if (a == "--k") {
      o.k = parse_int(a, next(), 0, kMaxDim);
    } else if (a == "--size") {
      o.m = o.n = o.k = parse_int(a, next(), 0, kMaxDim);
    } else if (a == "--sizes") {
      o.sizes.clear();
      for (const auto& s : split_numbers(a, next())) o.sizes.push_back(parse_int(a, s, 0, kMaxDim));
      if (o.sizes.empty()) throw UsageError("--sizes needs sizes, e.g. --sizes 16,64,256");
    } else if (a == "--reps") {
      o.reps = static_cast<int>(parse_int(a, next(), 1, 100000));
    } else if (a == "--min-time") {
      o.min_time_s = parse_double(a, next(), 0.0, 3600.0);
    } else if (a == "--impl") {
      o.impl = next();
      for (const auto& s : split_list(o.impl))
        if (s != "student" && s != "solution" && s != "baseline" && s != "all")
          throw UsageError("--impl takes student, solution, baseline or all (got '" + s + "')");
      if (split_list(o.impl).empty()) throw UsageError("--impl needs at least one of student, solution, baseline, all");
    } else if (a == "--variant") {
      o.variants = split_list(next());
      if (o.variants.empty()) throw UsageError("--variant needs a name (see --list)");
    } else if (a == "--threads") {
      o.params.threads = static_cast<int>(parse_int(a, next(), 1, 4096));
    } else if (a == "--tile") {
      o.params.tile.clear();
      const std::string v = next();
      for (const auto& s : split_numbers("--tile", v)) o.params.tile.push_back(parse_int("--tile", s, 1, 1 << 20));
      if (o.params.tile.empty()) throw UsageError("--tile needs sizes, e.g. --tile 64,256,512");
    } else if (a == "--gpus") {
      o.params.gpu_list = parse_gpu_list(a, next());
      o.params.gpus = static_cast<int>(o.params.gpu_list.size());
    } else if (a == "--device-mem-limit") {
      o.params.device_mem_limit = parse_bytes(a, next());
    } else if (a == "--host-memory") {
      const std::string v = next();
      if (v != "pinned" && v != "pageable") throw UsageError("--host-memory takes pinned or pageable, got '" + v + "'");
      o.pinned_host = v == "pinned";
    } else if (a == "--share") {
      const std::string v = next();
      if (v != "auto" && v != "off" && v != "on") throw UsageError("--share takes auto, off or on, got '" + v + "'");
      o.params.share = v;
    } else if (a == "--trace") {
      o.params.trace = next();
      if (o.params.trace.empty()) throw UsageError("--trace needs a file name");
    } else if (a == "--streams") {
      o.params.streams = static_cast<int>(parse_int(a, next(), 1, 1024));
    } else if (a == "--csv") {
      o.csv = next();
      if (o.csv.empty()) throw UsageError("--csv needs a file name");
    } else if (a == "--json") {
      o.json = next();
      if (o.json.empty()) throw UsageError("--json needs a file name");
    } else if (a == "--check") {
      o.full_check = true;
    } else if (a == "--seed") {
      o.seed = static_cast<uint64_t>(parse_int(a, next(), 0, INT64_MAX));
    } else if (a == "--list") {
      o.list = true;
    } else {
      throw UsageError("unknown option '" + a + "' (see --help)");
    }
  }
  if (!o.sizes.empty() && (o.m >= 0 || o.n >= 0 || o.k >= 0))
    throw UsageError("--sizes sets m, n and k: it goes with none of --m, --n, --k, --size");
  const int64_t d = info.default_size;
  if (o.n < 0) o.n = o.m >= 0 ? o.m : (o.k >= 0 ? o.k : d);
  if (o.m < 0) o.m = o.n;
  if (o.k < 0) o.k = o.n;
  return o;
}

}  // namespace lab
