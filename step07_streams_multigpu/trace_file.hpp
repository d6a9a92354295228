// trace_file.hpp — the benchmark's timeline file (--trace FILE).
//
// One CSV, a row per copy or product of the last call of each variant:
//   variant,impl,gpu,device,stream,kind,start_s,end_s,bytes
// timeline.py draws it and prints how much the copies and products overlapped.
#pragma once

#include <string>
#include <vector>

#include "streams.hpp"

namespace lab::step07 {

/// Keeps `events` as the timeline of (variant, impl), replacing its earlier
/// one, and rewrites `path` with every variant's latest timeline.
void write_trace(const std::string& path, const std::string& variant, const std::string& impl,
                 const std::vector<TraceEvent>& events);

}  // namespace lab::step07
