// The baseline step07 is measured against: cuBLASXt, NVIDIA's out-of-core
// DGEMM on host matrices, at block sizes 2048, 4096, 8192 and 16384 (its
// speed depends on the block size, so the benchmark sweeps it and the handout
// compares with the best; 16384 is the step's own largest tile). Timed the way its users call it: one
// cublasXtDgemm on the host matrices, pinned or not as the caller has them
// (--host-memory), on the GPUs of --gpus (repeats dropped: cuBLASXt takes
// each device once; default GPU 0, like the streams variant).
// (The device-resident baseline, cublasDgemm on data already on the GPU, is
// the harness's "cublas" variant.)
#include <cublasXt.h>

#include <algorithm>
#include <map>
#include <mutex>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "lab/cuda.hpp"
#include "lab/gemm_args.hpp"
#include "lab/registry.hpp"

namespace {

std::vector<int> devices_of(const lab::Params& p) {
  std::vector<int> ids = p.gpu_list.empty() ? std::vector<int>{0} : p.gpu_list;
  std::sort(ids.begin(), ids.end());
  ids.erase(std::unique(ids.begin(), ids.end()), ids.end());
  return ids;
}

// A handle per device list and block size, made once: cublasXtCreate and
// cublasXtDeviceSelect set up every device, which a user does once too.
cublasXtHandle_t handle_for(const std::vector<int>& ids, int block) {
  static std::mutex mu;
  static std::map<std::pair<std::vector<int>, int>, cublasXtHandle_t> handles;
  std::lock_guard<std::mutex> lock(mu);
  auto& h = handles[{ids, block}];
  if (!h) {
    cublasXtHandle_t made = nullptr;
    LAB_CUDA_CHECK(cublasXtCreate(&made));
    std::vector<int> list = ids;
    if (cublasXtDeviceSelect(made, int(list.size()), list.data()) != CUBLAS_STATUS_SUCCESS) {
      cublasXtDestroy(made);
      throw std::runtime_error("cublasXtDeviceSelect failed for the GPUs of --gpus");
    }
    LAB_CUDA_CHECK(cublasXtSetBlockDim(made, block));
    h = made;
  }
  return h;
}

void run_xt(const lab::GemmCall& c, int block) {
  lab::check_gemm_args(c.A, c.B, c.C);
  if (lab::gemm_quick_return(c.alpha, c.A, c.B, c.beta, c.C)) return;
  const cublasXtHandle_t h = handle_for(devices_of(*c.params), block);
  LAB_CUDA_CHECK(cublasXtDgemm(h, CUBLAS_OP_N, CUBLAS_OP_N, size_t(c.C.rows), size_t(c.C.cols),
                               size_t(c.A.cols), &c.alpha, c.A.data, size_t(c.A.ld), c.B.data, size_t(c.B.ld),
                               &c.beta, c.C.data, size_t(c.C.ld)));
}

LAB_REGISTER_VARIANT({"step07", "cublasxt_2048", "baseline", lab::Backend::gpu_host,
                      [](const lab::GemmCall& c) { run_xt(c, 2048); },
                      "cublasXtDgemm on the host matrices, block size 2048"});
LAB_REGISTER_VARIANT({"step07", "cublasxt_4096", "baseline", lab::Backend::gpu_host,
                      [](const lab::GemmCall& c) { run_xt(c, 4096); },
                      "cublasXtDgemm on the host matrices, block size 4096"});
LAB_REGISTER_VARIANT({"step07", "cublasxt_8192", "baseline", lab::Backend::gpu_host,
                      [](const lab::GemmCall& c) { run_xt(c, 8192); },
                      "cublasXtDgemm on the host matrices, block size 8192"});
LAB_REGISTER_VARIANT({"step07", "cublasxt_16384", "baseline", lab::Backend::gpu_host,
                      [](const lab::GemmCall& c) { run_xt(c, 16384); },
                      "cublasXtDgemm on the host matrices, block size 16384"});

}  // namespace
