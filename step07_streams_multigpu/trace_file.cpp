// The benchmark's timeline file (see trace_file.hpp).
#include "trace_file.hpp"

#include <cstdio>
#include <map>
#include <mutex>
#include <stdexcept>
#include <utility>

namespace lab::step07 {

void write_trace(const std::string& path, const std::string& variant, const std::string& impl,
                 const std::vector<TraceEvent>& events) {
  static std::mutex mu;
  static std::map<std::pair<std::string, std::string>, std::vector<TraceEvent>> latest;
  std::lock_guard<std::mutex> lock(mu);
  latest[{variant, impl}] = events;
  std::FILE* f = std::fopen(path.c_str(), "w");
  if (!f) throw std::runtime_error("--trace: cannot write '" + path + "'");
  std::fprintf(f, "variant,impl,gpu,device,stream,kind,start_s,end_s,bytes\n");
  for (const auto& [key, list] : latest)
    for (const TraceEvent& e : list)
      std::fprintf(f, "%s,%s,%d,%d,%d,%s,%.9f,%.9f,%lld\n", key.first.c_str(), key.second.c_str(), e.gpu, e.device,
                   e.stream, e.kind.c_str(), e.start_s, e.end_s, (long long)e.bytes);
  const bool ok = std::fclose(f) == 0;
  if (!ok) throw std::runtime_error("--trace: writing '" + path + "' failed");
}

}  // namespace lab::step07
