# Runs lab_lost_context_tests (CMD, see common/cuda/test_lost_context.cpp) and
# passes only when a lost GPU context reads as one failure: the test that lost
# it fails with a line saying so and how to find the bad access, the later GPU
# test fails at once as "not run", the others pass, a closing failure sums it
# up, the exit status is non-zero, and nothing says LAB-SKIP (ctest would
# report the program skipped).
# Usage: cmake -DCMD=<binary> -P ExpectLostContext.cmake
execute_process(COMMAND ${CMD} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
set(all "${out}${err}")
set(problems "")
if(rc EQUAL 0)
  string(APPEND problems "  the program exited 0\n")
endif()
if(all MATCHES "LAB-SKIP")
  string(APPEND problems "  it printed LAB-SKIP\n")
endif()
if(all MATCHES "ran its kernel")
  string(APPEND problems "  the later GPU test ran\n")
endif()
# Each piece must come after the one before it.
set(pieces
  "[       OK ] LostContext.StickyErrorsAreTheDocumentedOnes"
  "[       OK ] LostContext.AnOrdinaryErrorPoisonsNothing"
  "dgemm threw for a valid call: e failed at test_lost_context.cpp"
  "the GPU context is now lost (cudaErrorIllegalAddress): the later GPU tests of this program cannot run. Find the bad access with: compute-sanitizer --tool memcheck "
  " --gtest_filter='LostContext.KernelFaults'"
  "[  FAILED  ] LostContext.KernelFaults ("
  "[       OK ] LostContext.TheFirstLossIsKept"
  "not run: the GPU context was lost in LostContext.KernelFaults (cudaErrorIllegalAddress)"
  "[  FAILED  ] LostContext.LaterGpuTestDoesNotRun ("
  "[       OK ] LostContext.LaterCpuTestStillRuns"
  "the GPU context was lost in LostContext.KernelFaults (cudaErrorIllegalAddress): the 1 GPU test after it did not run and count as failed"
  " 2 FAILED TESTS")
set(rest "${all}")
foreach(piece IN LISTS pieces)
  string(FIND "${rest}" "${piece}" at)
  if(at EQUAL -1)
    string(APPEND problems "  missing, or out of order: ${piece}\n")
  else()
    string(LENGTH "${piece}" len)
    math(EXPR at "${at} + ${len}")
    string(SUBSTRING "${rest}" ${at} -1 rest)
  endif()
endforeach()
if(problems)
  message(FATAL_ERROR "a lost GPU context is not reported as it should be (exit ${rc}):\n${problems}"
                      "the output:\n${all}")
endif()
message("a lost GPU context reads as one failure (exit ${rc})")
