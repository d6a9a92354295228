// Results as files: CSV for the ladder and plots, JSON for other tools.
#include <cstdio>
#include <fstream>
#include <sstream>
#include <stdexcept>

#include "lab/bench.hpp"

namespace lab {
namespace {

constexpr const char* kCsvHeader =
    "step,variant,impl,m,n,k,threads,median_s,gflops,min_s,max_s,reps,peak_gflops,pct_peak,check,device,note";

std::string csv_field(const std::string& s) {
  if (s.find_first_of(",\"\n") == std::string::npos) return s;
  std::string out = "\"";
  for (char c : s) out += c == '"' ? std::string("\"\"") : std::string(1, c == '\n' ? ' ' : c);
  return out + "\"";
}

std::string json_string(const std::string& s) {
  std::string out = "\"";
  for (char c : s) {
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\t': out += "\\t"; break;
      default:
        if (static_cast<unsigned char>(c) < 0x20) {
          char buf[8];
          std::snprintf(buf, sizeof buf, "\\u%04x", c);
          out += buf;
        } else {
          out += c;
        }
    }
  }
  return out + "\"";
}

std::string num(double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.9g", v);
  return buf;
}

double pct(const Record& r) { return r.peak_gflops > 0 ? 100.0 * r.gflops / r.peak_gflops : 0.0; }

}  // namespace

void append_csv(const std::string& path, const std::vector<Record>& rows) {
  bool fresh = true;
  {
    std::ifstream probe(path);
    fresh = !probe.good() || probe.peek() == std::ifstream::traits_type::eof();
  }
  // Build the text first so that a failure leaves nothing half-written.
  std::ostringstream o;
  if (fresh) o << kCsvHeader << "\n";
  for (const auto& r : rows)
    o << r.step << ',' << csv_field(r.variant) << ',' << r.impl << ',' << r.m << ',' << r.n << ',' << r.k << ','
      << r.threads << ',' << num(r.median_s) << ',' << num(r.gflops) << ',' << num(r.min_s) << ',' << num(r.max_s)
      << ',' << r.reps << ',' << num(r.peak_gflops) << ',' << num(pct(r)) << ',' << r.check << ','
      << csv_field(r.device) << ',' << csv_field(r.note) << "\n";
  std::ofstream f(path, std::ios::app);
  if (!f) throw std::runtime_error("cannot write the CSV file '" + path + "'");
  f << o.str();
  if (!f) throw std::runtime_error("writing the CSV file '" + path + "' failed");
}

void write_json(const std::string& path, const std::vector<Record>& rows) {
  std::ostringstream o;
  o << "[\n";
  for (size_t i = 0; i < rows.size(); ++i) {
    const auto& r = rows[i];
    o << "  {\"step\": " << json_string(r.step) << ", \"variant\": " << json_string(r.variant)
      << ", \"impl\": " << json_string(r.impl) << ", \"m\": " << r.m << ", \"n\": " << r.n << ", \"k\": " << r.k
      << ", \"threads\": " << r.threads << ", \"median_s\": " << num(r.median_s) << ", \"gflops\": " << num(r.gflops)
      << ", \"min_s\": " << num(r.min_s) << ", \"max_s\": " << num(r.max_s) << ", \"reps\": " << r.reps
      << ", \"peak_gflops\": " << num(r.peak_gflops) << ", \"pct_peak\": " << num(pct(r))
      << ", \"check\": " << json_string(r.check) << ", \"device\": " << json_string(r.device)
      << ", \"note\": " << json_string(r.note) << "}" << (i + 1 < rows.size() ? "," : "") << "\n";
  }
  o << "]\n";
  const std::string tmp = path + ".tmp";
  {
    std::ofstream f(tmp, std::ios::trunc);
    if (!f) throw std::runtime_error("cannot write the JSON file '" + path + "'");
    f << o.str();
    if (!f) throw std::runtime_error("writing the JSON file '" + path + "' failed");
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0)
    throw std::runtime_error("cannot write the JSON file '" + path + "'");
}

}  // namespace lab
