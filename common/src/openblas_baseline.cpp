// OpenBLAS's dgemm as the CPU baseline ("vendor" BLAS) of every CPU step.
#include <cblas.h>

#include <cctype>
#include <cstdlib>
#include <string>

#include "lab/gemm_args.hpp"
#include "lab/machine.hpp"
#include "lab/registry.hpp"

namespace {

void openblas_dgemm(const lab::GemmCall& c) {
  lab::check_gemm_args(c.A, c.B, c.C);
  if (c.C.rows == 0 || c.C.cols == 0) return;
  // OpenBLAS keeps its own thread pool; give it the thread count of the run.
  if (c.params && c.params->threads > 0) openblas_set_num_threads(c.params->threads);
  cblas_dgemm(CblasColMajor, CblasNoTrans, CblasNoTrans, static_cast<blasint>(c.C.rows),
              static_cast<blasint>(c.C.cols), static_cast<blasint>(c.A.cols), c.alpha, c.A.data,
              static_cast<blasint>(c.A.ld), c.B.data, static_cast<blasint>(c.B.ld), c.beta, c.C.data,
              static_cast<blasint>(c.C.ld));
}

// OpenBLAS's x86 kernels that use no AVX: what an OpenBLAS older than the CPU
// falls back to (0.3.21 picks Prescott on a Xeon it does not know).
bool old_kernel_on_new_cpu(const char* corename) {
  const std::string level = lab::cpu_simd_level();
  if (corename == nullptr || (level != "avx2" && level != "avx512")) return false;
  std::string name(corename);
  for (char& ch : name) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
  for (const char* old : {"prescott", "core2", "penryn", "dunnington", "nehalem", "atom", "katmai",
                          "coppermine", "northwood", "banias", "opteron", "barcelona", "bobcat", "generic"})
    if (name.rfind(old, 0) == 0) return true;
  return false;
}

// Which OpenBLAS this is and which of its kernels runs: a baseline is only
// worth its figure when it runs at its own speed, and OPENBLAS_CORETYPE (set on
// some machines where an old OpenBLAS misreads the CPU) pins a kernel that may
// be slower than the one it would choose.
std::string describe(const lab::Params&) {
  const int parallel = openblas_get_parallel();
  std::string s = std::string(openblas_get_config()) + "; threads: " +
                  (parallel == 0 ? "none" : parallel == 1 ? "pthreads" : "OpenMP") + "; kernel " +
                  openblas_get_corename();
  if (const char* forced = std::getenv("OPENBLAS_CORETYPE"))
    s += " (pinned by OPENBLAS_CORETYPE=" + std::string(forced) +
         ": its own choice on this CPU may be faster; compare without it)";
  else if (old_kernel_on_new_cpu(openblas_get_corename()))
    s += " (a kernel without AVX on a CPU with AVX2: this OpenBLAS does not know the CPU and runs far "
         "under its speed, so no ratio against it means much; common/tools/openblas-check --coretypes "
         "\"default SkylakeX Haswell\" finds its fastest kernel, and OPENBLAS_CORETYPE=NAME runs it)";
  return s;
}

LAB_REGISTER_VARIANT({"vendor", "openblas", "baseline", lab::Backend::cpu, &openblas_dgemm,
                      "OpenBLAS cblas_dgemm (the vendor baseline)", &describe});

}  // namespace
