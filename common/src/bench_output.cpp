// Results as files: CSV for the ladder and plots, JSON for other tools.
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
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

void write_file_whole(const std::string& path, const std::string& text, const std::string& what) {
  // A device or pipe (/dev/null, /dev/stdout) is written to as it is: renaming
  // a file over it would replace the device.
  struct stat st;
  if (stat(path.c_str(), &st) == 0 && !S_ISREG(st.st_mode)) {
    std::ofstream f(path, std::ios::binary);
    if (!(f << text) || !f.flush())
      throw std::runtime_error("writing the " + what + " file '" + path + "' failed");
    return;
  }
  // A temporary name in the same folder, renamed over `path` at the end: a
  // reader (or a crash) sees the old file or the new one, never half of one.
  std::string tmp = path + ".XXXXXX";
  const int fd = mkstemp(tmp.data());
  if (fd < 0) throw std::runtime_error("cannot write the " + what + " file '" + path + "': " + std::strerror(errno));
  // mkstemp makes the file 0600; a results file is as readable as any other.
  const mode_t mask = umask(0);
  umask(mask);
  fchmod(fd, 0666 & ~mask);
  std::FILE* f = fdopen(fd, "wb");
  bool ok = f && std::fwrite(text.data(), 1, text.size(), f) == text.size();
  ok = f && std::fflush(f) == 0 && ok;
  const std::string why = std::strerror(errno);
  if (f) ok = std::fclose(f) == 0 && ok; else close(fd);
  if (!ok || std::rename(tmp.c_str(), path.c_str()) != 0) {
    std::remove(tmp.c_str());
    throw std::runtime_error("writing the " + what + " file '" + path + "' failed: " + (ok ? std::strerror(errno) : why));
  }
}

void append_file_whole(const std::string& path, const std::string& header, const std::string& rows,
                       const std::string& what) {
  // The rows go after what the file holds (the header first where it is new or empty).
  std::string text;
  {
    std::ifstream in(path, std::ios::binary);
    if (in) {
      std::ostringstream whole;
      whole << in.rdbuf();
      text = whole.str();
    }
  }
  if (text.empty()) text = header;
  else if (text.back() != '\n') text += '\n';
  write_file_whole(path, text + rows, what);
}

void append_csv(const std::string& path, const std::vector<Record>& rows) {
  std::ostringstream o;
  for (const auto& r : rows)
    o << r.step << ',' << csv_field(r.variant) << ',' << r.impl << ',' << r.m << ',' << r.n << ',' << r.k << ','
      << r.threads << ',' << num(r.median_s) << ',' << num(r.gflops) << ',' << num(r.min_s) << ',' << num(r.max_s)
      << ',' << r.reps << ',' << num(r.peak_gflops) << ',' << num(pct(r)) << ',' << r.check << ','
      << csv_field(r.device) << ',' << csv_field(r.note) << "\n";
  append_file_whole(path, std::string(kCsvHeader) + "\n", o.str(), "CSV");
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
  write_file_whole(path, o.str(), "JSON");
}

}  // namespace lab
