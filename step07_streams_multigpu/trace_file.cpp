// The benchmark's timeline file (see trace_file.hpp).
#include "trace_file.hpp"

#include <cstdio>
#include <map>
#include <mutex>
#include <stdexcept>
#include <utility>

#include "lab/bench.hpp"

namespace lab::step07 {

void write_trace(const std::string& path, const std::string& variant, const std::string& impl,
                 const std::vector<TraceEvent>& events) {
  static std::mutex mu;
  static std::map<std::pair<std::string, std::string>, std::vector<TraceEvent>> latest;
  std::lock_guard<std::mutex> lock(mu);
  latest[{variant, impl}] = events;
  std::string text = "variant,impl,gpu,device,stream,kind,start_s,end_s,bytes\n";
  char line[512];
  for (const auto& [key, list] : latest)
    for (const TraceEvent& e : list) {
      std::snprintf(line, sizeof line, "%s,%s,%d,%d,%d,%s,%.9f,%.9f,%lld\n", key.first.c_str(), key.second.c_str(),
                    e.gpu, e.device, e.stream, e.kind.c_str(), e.start_s, e.end_s, (long long)e.bytes);
      text += line;
    }
  try {
    lab::write_file_whole(path, text, "trace");
  } catch (const std::runtime_error& e) {
    throw std::runtime_error(std::string("--trace: ") + e.what());
  }
}

}  // namespace lab::step07
