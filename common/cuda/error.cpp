// The one place CUDA and cuBLAS errors become exceptions (see LAB_CUDA_CHECK).
#include <stdexcept>
#include <string>

#include "lab/cuda.hpp"

namespace lab::cuda {
namespace {

[[noreturn]] void raise(const char* call, const char* file, int line, const std::string& what) {
  std::string f(file);
  const auto slash = f.find_last_of('/');
  if (slash != std::string::npos) f = f.substr(slash + 1);
  throw std::runtime_error(std::string(call) + " failed at " + f + ":" + std::to_string(line) + ": " + what);
}

}  // namespace

void throw_error(cudaError_t e, const char* call, const char* file, int line) {
  // The runtime also keeps this error as its "last error": taken here, it cannot
  // surface again at an unrelated later check (a launch's cudaGetLastError).
  cudaGetLastError();
  raise(call, file, line, std::string(cudaGetErrorName(e)) + " (" + cudaGetErrorString(e) + ")");
}

void throw_error(cublasStatus_t s, const char* call, const char* file, int line) {
  raise(call, file, line, std::string(cublasGetStatusName(s)) + " (" + cublasGetStatusString(s) + ")");
}

}  // namespace lab::cuda
