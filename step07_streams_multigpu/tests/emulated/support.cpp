// What lab_cuda would give the emulated tests (see cuda_runtime_api.h here).
// A call that failed because it would race with another stream's work says
// which race: that message is the one a student needs.
#include <stdexcept>
#include <string>

#include "lab/cuda.hpp"

namespace lab::cuda {
namespace {

[[noreturn]] void raise(const char* call, const char* file, int line, const std::string& what) {
  std::string f(file);
  const auto slash = f.find_last_of('/');
  if (slash != std::string::npos) f = f.substr(slash + 1);
  std::string race;
  race.swap(lab_emulated::last_error());
  if (!race.empty())
    throw std::runtime_error("a race between the streams: " + race + " (found by the CUDA emulation when " +
                             f + ":" + std::to_string(line) + " queued it)");
  throw std::runtime_error(std::string(call) + " failed at " + f + ":" + std::to_string(line) + ": " + what);
}

}  // namespace

void throw_error(cudaError_t e, const char* call, const char* file, int line) {
  raise(call, file, line, cudaGetErrorName(e));
}
void throw_error(cublasStatus_t s, const char* call, const char* file, int line) {
  raise(call, file, line, "status " + std::to_string(int(s)));
}
bool device_available(std::string*) { return true; }

}  // namespace lab::cuda
