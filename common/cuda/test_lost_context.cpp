// The harness on a lost GPU context, without a GPU: the error check is fed the
// errors a faulting kernel returns. The record is the process's own, so the
// tests below run in this order, and two of them must FAIL, as a student's
// would: ctest runs this program through common/cmake/ExpectLostContext.cmake,
// which checks what the student reads (which tests failed, and the lines that
// say why) and the exit status.
#include <cuda_runtime_api.h>
#include <gtest/gtest.h>

#include <stdexcept>
#include <string>

#include "contract.hpp"
#include "lab/cuda.hpp"
#include "lab/lost_context.hpp"

namespace {

// A subject that can run here, as on a machine with a GPU (no kernel behind it).
lab::testing::Subject gpu_subject() {
  lab::testing::Subject s;
  s.available = [](std::string*) { return true; };
  return s;
}

// The error check on what a kernel's launch or wait returned: the exception's message.
std::string check_fails_with(cudaError_t e) {
  try {
    LAB_CUDA_CHECK(e);
  } catch (const std::runtime_error& x) {
    return x.what();
  }
  return "(no exception)";
}

TEST(LostContext, StickyErrorsAreTheDocumentedOnes) {
  for (const cudaError_t e :
       {cudaErrorIllegalAddress, cudaErrorLaunchFailure, cudaErrorMisalignedAddress,
        cudaErrorIllegalInstruction, cudaErrorInvalidPc, cudaErrorHardwareStackError, cudaErrorAssert,
        cudaErrorInvalidAddressSpace, cudaErrorLaunchTimeout, cudaErrorECCUncorrectable})
    EXPECT_TRUE(lab::cuda::is_sticky(e)) << cudaGetErrorName(e);
  // A bad argument or launch, a full memory: this call failed, the next can work.
  for (const cudaError_t e : {cudaErrorInvalidValue, cudaErrorMemoryAllocation, cudaErrorInvalidConfiguration,
                              cudaErrorLaunchOutOfResources, cudaErrorNoDevice, cudaErrorNotReady})
    EXPECT_FALSE(lab::cuda::is_sticky(e)) << cudaGetErrorName(e);
}

TEST(LostContext, AnOrdinaryErrorPoisonsNothing) {
  EXPECT_NE(check_fails_with(cudaErrorInvalidValue).find("cudaErrorInvalidValue"), std::string::npos);
  EXPECT_FALSE(lab::lost_context());
  EXPECT_FALSE(lab::testing::skip_if_unavailable(gpu_subject())) << "the next GPU test must run";
}

// Fails as a kernel's illegal address fails its test in the contract suite.
TEST(LostContext, KernelFaults) {
  const std::string what = check_fails_with(cudaErrorIllegalAddress);
  ASSERT_TRUE(lab::lost_context());
  EXPECT_EQ("cudaErrorIllegalAddress", lab::lost_context()->error);
  EXPECT_EQ("LostContext.KernelFaults", lab::lost_context()->test);
  FAIL() << "dgemm threw for a valid call: " << what;
}

TEST(LostContext, TheFirstLossIsKept) {
  check_fails_with(cudaErrorLaunchFailure);  // a later fault, or the echo of the first
  ASSERT_TRUE(lab::lost_context());
  EXPECT_EQ("cudaErrorIllegalAddress", lab::lost_context()->error);
  EXPECT_EQ("LostContext.KernelFaults", lab::lost_context()->test);
}

// Fails at once, with "not run: ...".
TEST(LostContext, LaterGpuTestDoesNotRun) {
  if (lab::testing::skip_if_unavailable(gpu_subject())) return;
  ADD_FAILURE() << "ran its kernel on a lost context";
}

// A test that needs no GPU is not held back.
TEST(LostContext, LaterCpuTestStillRuns) { EXPECT_TRUE(lab::lost_context()); }

}  // namespace
