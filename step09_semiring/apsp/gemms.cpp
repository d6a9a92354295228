// The GEMMs the command line runs on, and the reference pair.
#include "minplus_gemm.hpp"
#include "reference.hpp"

namespace lab::step09::apsp {
namespace {

MinPlusGemms& slot() {
  static MinPlusGemms gemms;
  return gemms;
}

}  // namespace

void register_gemms(MinPlusGemms gemms) { slot() = std::move(gemms); }
const MinPlusGemms& registered_gemms() { return slot(); }

MinPlusGemms reference_gemms() {
  MinPlusGemms g;
  g.cpu_name = "reference (plain loop)";
  g.cpu = reference_minplus_gemm;
#ifdef LAB_APSP_CUDA
  g.gpu_name = "reference (one thread per entry)";
  g.gpu = reference_minplus_gemm_device;
#endif
  return g;
}

}  // namespace lab::step09::apsp
