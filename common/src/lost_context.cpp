// The record of a lost GPU context (see lab/lost_context.hpp).
#include "lab/lost_context.hpp"

#include <mutex>

namespace lab {
namespace {

// A kernel's fault surfaces on whichever thread waits for it (step07 waits on several).
struct Record {
  std::mutex mutex;
  std::optional<LostContext> lost;
  std::string running;
};

Record& record() {
  static Record r;
  return r;
}

}  // namespace

void record_lost_context(const std::string& error) {
  Record& r = record();
  std::lock_guard<std::mutex> lock(r.mutex);
  if (!r.lost) r.lost = LostContext{error, r.running};
}

std::optional<LostContext> lost_context() {
  Record& r = record();
  std::lock_guard<std::mutex> lock(r.mutex);
  return r.lost;
}

void set_running_test(const std::string& name) {
  Record& r = record();
  std::lock_guard<std::mutex> lock(r.mutex);
  r.running = name;
}

}  // namespace lab
