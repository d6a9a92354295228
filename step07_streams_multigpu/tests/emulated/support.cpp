// What lab_cuda would give the emulated tests (see cuda_runtime_api.h here).
#include <stdexcept>
#include <string>

#include "lab/cuda.hpp"

namespace lab::cuda {

void throw_error(cudaError_t e, const char* call, const char* file, int line) {
  throw std::runtime_error(std::string(call) + " failed at " + file + ":" + std::to_string(line) + ": " +
                           cudaGetErrorName(e));
}
void throw_error(cublasStatus_t s, const char* call, const char* file, int line) {
  throw std::runtime_error(std::string(call) + " failed at " + file + ":" + std::to_string(line) +
                           ": status " + std::to_string(int(s)));
}
bool device_available(std::string*) { return true; }

}  // namespace lab::cuda
