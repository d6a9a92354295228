// The one place CUDA and cuBLAS errors become exceptions (see LAB_CUDA_CHECK).
#include <stdexcept>
#include <string>

#include "lab/cuda.hpp"
#include "lab/lost_context.hpp"

namespace lab::cuda {
namespace {

[[noreturn]] void raise(const char* call, const char* file, int line, const std::string& what) {
  std::string f(file);
  const auto slash = f.find_last_of('/');
  if (slash != std::string::npos) f = f.substr(slash + 1);
  throw std::runtime_error(std::string(call) + " failed at " + f + ":" + std::to_string(line) + ": " + what);
}

void record_if_sticky(cudaError_t e) {
  if (is_sticky(e)) record_lost_context(cudaGetErrorName(e));
}

}  // namespace

bool is_sticky(cudaError_t e) {
  // The errors the runtime documents as leaving "the process in an inconsistent
  // state" (any further CUDA work returns the same error; the process must be
  // relaunched), and the uncorrectable hardware errors, after which no result
  // of this process can be trusted either.
  switch (e) {
    case cudaErrorIllegalAddress:
    case cudaErrorLaunchTimeout:
    case cudaErrorAssert:
    case cudaErrorHardwareStackError:
    case cudaErrorIllegalInstruction:
    case cudaErrorMisalignedAddress:
    case cudaErrorInvalidAddressSpace:
    case cudaErrorInvalidPc:
    case cudaErrorLaunchFailure:
    case cudaErrorMpsClientTerminated:
    case cudaErrorExternalDevice:
    case cudaErrorECCUncorrectable:
    case cudaErrorNvlinkUncorrectable:
      return true;
    default:
      // Newer than some toolkits the lab builds with, hence by number:
      // cudaErrorContained (226) and cudaErrorTensorMemoryLeak (721).
      return e == 226 || e == 721;
  }
}

void throw_error(cudaError_t e, const char* call, const char* file, int line) {
  record_if_sticky(e);
  // The runtime also keeps this error as its "last error": taken here, it cannot
  // surface again at an unrelated later check (a launch's cudaGetLastError).
  // (A sticky error cannot be taken: every later call returns it anyway.)
  cudaGetLastError();
  raise(call, file, line, std::string(cudaGetErrorName(e)) + " (" + cudaGetErrorString(e) + ")");
}

void throw_error(cublasStatus_t s, const char* call, const char* file, int line) {
  // cuBLAS reports a kernel that faulted as its own status (EXECUTION_FAILED):
  // the runtime's last error says whether the context went with it.
  record_if_sticky(cudaPeekAtLastError());
  raise(call, file, line, std::string(cublasGetStatusName(s)) + " (" + cublasGetStatusString(s) + ")");
}

}  // namespace lab::cuda
