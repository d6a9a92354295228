// lab/cuda_testing.hpp — a device dgemm as a subject of the contract suite.
//
//   LAB_CONTRACT_SUITE(Step05Tiled, ::lab::cuda::host_subject(&lab::step05::dgemm));
//
// The subject copies the host matrices (with the guard cells between columns)
// to the device and back, and is `available` only where a CUDA device is
// visible: elsewhere every test skips (contract.hpp, say_skipped), and a
// program in which no test ran ends with LAB-SKIP, which ctest reports skipped.
#pragma once

#include <string>

#include "contract.hpp"
#include "lab/cuda.hpp"

namespace lab::cuda {

inline ::lab::testing::Subject host_subject(DeviceGemm gemm) {
  ::lab::testing::Subject s;
  s.gemm = [gemm](double alpha, ConstMatView A, ConstMatView B, double beta, MatView C) {
    run_on_host_views(gemm, alpha, A, B, beta, C);
  };
  s.available = [](std::string* why) { return device_available(why); };
  return s;
}

}  // namespace lab::cuda
