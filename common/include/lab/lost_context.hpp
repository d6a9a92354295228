// lab/lost_context.hpp — the first error that left this process's GPU context unusable.
//
// After some CUDA errors (an illegal address, a trap or an assert in a kernel)
// every later CUDA call of the process fails with that same error until the
// process ends. A test program must then say so once, and not blame every later
// test for it. lab::cuda's error check records the first such error here
// (lab::cuda::is_sticky); the test harness names the test that was running and
// fails each later GPU test at once with one line (contract.hpp,
// skip_if_unavailable). Plain C++, so that the CUDA-free test harness reads it.
#pragma once

#include <optional>
#include <string>

namespace lab {

struct LostContext {
  std::string error;  ///< the runtime's name for it, e.g. cudaErrorIllegalAddress
  std::string test;   ///< the test running when it came ("" outside a test)
};

/// Records the loss of the context through `error`, unless one is recorded
/// already: the first is the one to fix, the later ones are its echoes.
void record_lost_context(const std::string& error);

/// The recorded loss, or nothing while the context is usable.
std::optional<LostContext> lost_context();

/// The test now running ("" between tests), named in a loss recorded meanwhile.
void set_running_test(const std::string& name);

}  // namespace lab
