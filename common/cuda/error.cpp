// The one place CUDA and cuBLAS errors become exceptions (see LAB_CUDA_CHECK).
#include <cstdlib>
#include <stdexcept>
#include <string>
#include <vector>

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

std::vector<std::string> split(const std::string& s, char sep) {
  std::vector<std::string> out;
  size_t at = 0;
  for (size_t next; (next = s.find(sep, at)) != std::string::npos; at = next + 1) out.push_back(s.substr(at, next - at));
  out.push_back(s.substr(at));
  return out;
}

// The GPUs ctest gave this test (its resource allocation: CTEST_RESOURCE_GROUP_<i>_GPUS
// = "id:<n>,slots:<s>", n the position of a GPU in the resource spec that ./lab
// writes from nvidia-smi) become CUDA_VISIBLE_DEVICES before the first CUDA call:
// the test, and each of its MPI ranks, then sees only its own GPUs. Where
// CUDA_VISIBLE_DEVICES was already set (a batch system's choice), position n is
// its n-th entry. Done once: a program this one starts sees the result as it is.
// This file is linked into every program that checks a CUDA call.
const bool kCtestGpusApplied = [] {
  const char* count = std::getenv("CTEST_RESOURCE_GROUP_COUNT");
  if (!count) return false;
  const std::string visible = std::getenv("CUDA_VISIBLE_DEVICES") ? std::getenv("CUDA_VISIBLE_DEVICES") : "";
  const std::vector<std::string> entries = visible.empty() ? std::vector<std::string>{} : split(visible, ',');
  std::string mine;
  const int groups = std::atoi(count);
  for (int g = 0; g < groups; ++g) {
    const char* spec = std::getenv(("CTEST_RESOURCE_GROUP_" + std::to_string(g) + "_GPUS").c_str());
    if (!spec) continue;
    for (const std::string& part : split(spec, ';')) {
      if (part.rfind("id:", 0) != 0) continue;
      const std::string id = part.substr(3, part.find(',') - 3);
      const size_t n = std::strtoul(id.c_str(), nullptr, 10);
      const std::string gpu = entries.empty() ? id : (n < entries.size() ? entries[n] : "");
      if (!gpu.empty() && ("," + mine + ",").find("," + gpu + ",") == std::string::npos)
        mine += (mine.empty() ? "" : ",") + gpu;
    }
  }
  if (mine.empty()) return false;
  setenv("CUDA_VISIBLE_DEVICES", mine.c_str(), 1);
  unsetenv("CTEST_RESOURCE_GROUP_COUNT");
  return true;
}();

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
