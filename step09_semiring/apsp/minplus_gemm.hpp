// minplus_gemm.hpp — the min-plus GEMM that the APSP tool runs on, handed in as
// function objects.
//
// The tool owns no GEMM of its own: the step's kernels (lab::step09::gemm<MinPlus>
// on the CPU, gemm_device<MinPlus> on the GPU) are registered here by the program
// that links them, so the algorithms are tested on the plain kernels of
// reference.hpp and run on the fast ones without a change.
//
// The contract (the step's): with (A (x) B)(i, j) = min over q of A(i, q) + B(q, j),
// and +inf for an empty min (k == 0),
//   accumulate == false:  C <- A (x) B            (C is not read)
//   accumulate == true:   C <- min(C, A (x) B)
// Views are column-major with a leading dimension (lab/matrix.hpp); the device
// form takes device views and queues its work on `stream`. The algorithms pass
// A and B as the same memory (repeated squaring: both are only read), but never
// a C that overlaps A or B: where an update needs that, they copy the operand first.
#pragma once

#include <functional>
#include <string>

#include "lab/matrix.hpp"

// cudaStream_t is `CUstream_st*`; naming the struct keeps this header free of CUDA
// so that the CPU-only build compiles it.
struct CUstream_st;

namespace lab::step09::apsp {

using HostMinPlusGemm = std::function<void(ConstMatView A, ConstMatView B, MatView C, bool accumulate)>;
using DeviceMinPlusGemm =
    std::function<void(ConstMatView A, ConstMatView B, MatView C, bool accumulate, CUstream_st* stream)>;

/// The GEMMs a program gives the tool. An empty `gpu` means no GPU back-end
/// (`--backend gpu` then exits 77, skipped).
struct MinPlusGemms {
  std::string cpu_name, gpu_name;  ///< shown in the report and the CSV
  HostMinPlusGemm cpu;
  DeviceMinPlusGemm gpu;
};

/// What `apsp_main(argc, argv)` runs on; a program registers before calling it:
///   lab::step09::apsp::register_gemms({"step09 gemm<MinPlus>", "step09 gemm_device<MinPlus>",
///       [](auto A, auto B, auto C, bool acc) { lab::step09::gemm<MinPlus>(A, B, C, acc); },
///       [](auto A, auto B, auto C, bool acc, cudaStream_t s) { lab::step09::gemm_device<MinPlus>(A, B, C,
///       acc, s); }});
void register_gemms(MinPlusGemms gemms);
const MinPlusGemms& registered_gemms();

/// The plain kernels of reference.hpp (the GPU one where this library is built with CUDA).
MinPlusGemms reference_gemms();

}  // namespace lab::step09::apsp
