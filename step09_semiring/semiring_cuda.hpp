// step09_semiring on the GPU: step06's register-blocked SIMT kernel,
// templated on the semiring.
//
// Every function takes DEVICE views and queues its work on `stream`; the rules
// of semiring.hpp hold as on the CPU (shapes, guard cells, bad arguments
// thrown before anything is queued, accumulate, NaN read as the zero, no NaN
// result). The inputs are not scanned: that would make the host wait.
#pragma once

#include <cuda_runtime_api.h>

#include "semiring.hpp"

namespace lab::step09 {
inline namespace LAB_IMPL_NS {

/// C <- A (x) B (accumulate == false) or C <- C (+) (A (x) B) on the CUDA
/// cores: 8 x 8 outputs per thread from shared-memory tiles fed by cp.async
/// (step06's kernel and pipeline). S is PlusTimes, MinPlus, MaxPlus (FP64) or
/// MinPlusI32, whose inner step is one DPX instruction (__viaddmin_s32) on
/// sm_90 and an add and a min elsewhere.
template <class S>
void gemm_device(View<const typename S::value_type> A, View<const typename S::value_type> B,
                 View<typename S::value_type> C, bool accumulate, cudaStream_t stream);

#define LAB_STEP09_DECLARE_DEVICE(S)                                                                       \
  extern template void gemm_device<S>(View<const S::value_type>, View<const S::value_type>, View<S::value_type>, \
                                      bool, cudaStream_t)
LAB_STEP09_DECLARE_DEVICE(PlusTimes);
LAB_STEP09_DECLARE_DEVICE(MinPlus);
LAB_STEP09_DECLARE_DEVICE(MaxPlus);
LAB_STEP09_DECLARE_DEVICE(MinPlusI32);
#undef LAB_STEP09_DECLARE_DEVICE

}  // namespace LAB_IMPL_NS
}  // namespace lab::step09
