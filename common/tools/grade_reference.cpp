// lab_grade_reference: the grader's GPU references for the speed cases of
// ./lab grade (common/tools/grade_check.cpp, --reference-runner).
//
//   lab_grade_reference --serve naive_coalesced|cublas|fp64_peak|cublasxt|gpu|fp64_tensor_cores
//
// Built by the grader from the lab's own files and nothing of a submission:
// step05's given coalesced global-memory kernel, cublasDgemm (the vendor
// baseline every GPU step is measured against), cublasxt (step07's baseline,
// baselines.cpp: cublasXtDgemm on the host matrices, block 8192, on GPU 0;
// the checker has them pinned), and fp64_peak: the FMA probe
// of lab::cuda::fp64_peak_gflops run for the product's 2 m n k FLOPs, so its
// time is the product's at the CUDA cores' peak (its C is not a product and
// is not checked). It answers the checker over the same pipe as a step program
// (lab/grade_wire.hpp), so that the reference and the student's kernel are
// timed from outside in the same way.
// gpu and fp64_tensor_cores compute nothing: they answer whether this machine
// has a usable GPU, and one with FP64 tensor cores (compute capability 8.0 or
// later), so that the checker believes a step program that says it cannot run
// here only where the grader's own program agrees.
#include <cstdio>
#include <string>
#include <vector>

#include "lab/bench.hpp"
#include "lab/cuda.hpp"
#include "lab/registry.hpp"
#include "shared.hpp"  // step05's given kernels

namespace {

constexpr const char* kStep = "reference";

void naive_coalesced(const lab::GemmCall& c) {
  lab::step05::dgemm_naive_coalesced(c.alpha, c.A, c.B, c.beta, c.C, static_cast<cudaStream_t>(c.stream));
}

void fp64_peak(const lab::GemmCall& c) {
  lab::cuda::fp64_peak_work(2.0 * double(c.C.rows) * double(c.C.cols) * double(c.A.cols),
                            static_cast<cudaStream_t>(c.stream));
}

void needs_tensor_cores(const lab::GemmCall&) {
  const lab::cuda::DeviceInfo& d = lab::cuda::device_info();
  if (d.cc_major < 8)
    throw lab::NotOnThisMachine("FP64 tensor cores need compute capability 8.0 or later; " + d.name + " has " +
                                std::to_string(d.cc_major) + "." + std::to_string(d.cc_minor));
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 3 || std::string(argv[1]) != "--serve") {
    std::fprintf(stderr,
                 "usage: lab_grade_reference --serve naive_coalesced|cublas|fp64_peak|cublasxt|gpu|fp64_tensor_cores "
                 "(for ./lab grade)\n");
    return 2;
  }
  lab::register_variant({kStep, "naive_coalesced", kStep, lab::Backend::gpu, naive_coalesced,
                         "step05's given kernel: one thread per C(i,j) from global memory, coalesced"});
  lab::register_variant({kStep, "fp64_peak", kStep, lab::Backend::gpu, fp64_peak,
                         "the FMA probe for 2 m n k FLOPs: a product's time at the CUDA cores' FP64 peak"});
  lab::register_variant({kStep, "gpu", kStep, lab::Backend::gpu, [](const lab::GemmCall&) {},
                         "nothing: answers whether a usable GPU is here"});
  lab::register_variant({kStep, "fp64_tensor_cores", kStep, lab::Backend::gpu, needs_tensor_cores,
                         "nothing: answers whether the GPU has FP64 tensor cores"});
  // the vendor baselines, as they are: cublasDgemm (lab_cuda_bench) and step07's cuBLASXt at block 8192
  std::vector<lab::Variant> vendor;
  for (const lab::Variant& v : lab::registered_variants())
    if ((v.step == "vendor" && v.name == "cublas") || (v.step == "step07" && v.name == "cublasxt_8192")) {
      vendor.push_back(v);
      vendor.back().step = vendor.back().impl = kStep;
      if (v.step == "step07") vendor.back().name = "cublasxt";
    }
  for (lab::Variant& v : vendor) lab::register_variant(std::move(v));
  const lab::StepInfo info{kStep, "the grader's GPU references", lab::Backend::gpu, 4096};
  return lab::serve_main(argv[2], info, kStep);
}
