// lab_gpu_copy — the memory roof of the GPU roofline: the device-to-device copy
// rate of device 0 (cudaMemcpyAsync of a buffer far larger than the L2), best of
// several repeats, counted as 2 x bytes (each byte is read once and written once).
// gpu-check runs it; common/tools/roofline.py draws the rate beside the FP64 peak
// that the harness measures (lab::cuda::fp64_peak_gflops).
//
//   lab_gpu_copy [--csv FILE]        (the same columns as lab_stream's CSV)
#include <algorithm>
#include <cstdio>
#include <exception>
#include <fstream>
#include <string>

#include "lab/cuda.hpp"

namespace {

int run(int argc, char** argv) {
  std::string csv;
  if (argc == 3 && std::string(argv[1]) == "--csv") {
    csv = argv[2];
  } else if (argc != 1) {
    std::fprintf(stderr, "usage: lab_gpu_copy [--csv FILE]\n");
    return 2;
  }
  int count = 0;
  if (cudaGetDeviceCount(&count) != cudaSuccess || count == 0) {
    std::fprintf(stderr, "lab_gpu_copy: no CUDA GPU visible: SKIPPED\n");
    return 77;
  }
  constexpr size_t kBytes = size_t(1) << 30;  // 1 GiB per buffer
  constexpr int kRepeats = 10;
  lab::cuda::DeviceBuffer<char> src{kBytes}, dst{kBytes};
  LAB_CUDA_CHECK(cudaMemset(src.data(), 1, kBytes));
  lab::cuda::Stream s;
  lab::cuda::Event start, stop;
  double best = 1e30;
  for (int r = 0; r <= kRepeats; ++r) {  // repeat 0 warms up
    start.record(s.get());
    LAB_CUDA_CHECK(cudaMemcpyAsync(dst.data(), src.data(), kBytes, cudaMemcpyDeviceToDevice, s.get()));
    stop.record(s.get());
    stop.sync();
    if (r > 0) best = std::min(best, stop.seconds_since(start));
  }
  const double gbs = 2.0 * double(kBytes) / best / 1e9;
  cudaDeviceProp prop{};
  LAB_CUDA_CHECK(cudaGetDeviceProperties(&prop, 0));
  std::printf("device-to-device copy on %s: %.0f GB/s (read + write, best of %d)\n", prop.name, gbs, kRepeats);
  if (!csv.empty()) {
    std::ofstream f(csv, std::ios::trunc);
    f << "probe,threads,n,gb_s,device,note\n"
      << "d2d_copy,0," << kBytes << ',' << gbs << ",\"" << prop.name << "\",read + write counted\n";
    if (!f) {
      std::fprintf(stderr, "lab_gpu_copy: error: cannot write '%s'\n", csv.c_str());
      return 1;
    }
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    return run(argc, argv);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "lab_gpu_copy: error: %s\n", e.what());
    return 1;
  }
}
