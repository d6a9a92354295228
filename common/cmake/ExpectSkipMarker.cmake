# Runs lab_skip_marker_tests (CMD, see common/testing/test_skip_marker.cpp) once
# a suite, as programs of their own, and passes only when the LAB-SKIP marker
# (which makes ctest report a whole program skipped) comes exactly where nothing
# ran: once, with the first reason, where every test skipped; never where a test
# passed or failed beside the skipped ones, nor after a lost GPU context. There
# the exit status decides, and each skipped test still says why.
# Usage: cmake -DCMD=<binary> -P ExpectSkipMarker.cmake
set(problems "")

# The exit status (want: zero or nonzero) and the pieces the output `all` must
# hold; what is wrong, and what the caller found wrong in `mine`, goes to
# `problems` with the output, under `what`.
macro(judge what want)
  if("${want}" STREQUAL "zero" AND NOT rc EQUAL 0)
    string(APPEND mine "    exited ${rc}, not 0\n")
  elseif("${want}" STREQUAL "nonzero" AND rc EQUAL 0)
    string(APPEND mine "    exited 0\n")
  endif()
  foreach(piece IN LISTS pieces)
    string(FIND "${all}" "${piece}" at)
    if(at EQUAL -1)
      string(APPEND mine "    missing: ${piece}\n")
    endif()
  endforeach()
  if(mine)
    set(problems "${problems}  ${what}:\n${mine}  its output:\n${all}\n" PARENT_SCOPE)
  endif()
endmacro()

# run(<suite> <zero|nonzero> <the marker line, or NONE> <pieces...>)
function(run suite want marker)
  execute_process(COMMAND ${CMD} --gtest_filter=${suite}.* RESULT_VARIABLE rc OUTPUT_VARIABLE out
                  ERROR_VARIABLE err)
  set(all "${out}${err}")
  set(pieces ${ARGN})
  set(mine "")
  # ctest matches the marker anywhere in a line: count every occurrence.
  string(REGEX MATCHALL "LAB-SKIP[^\n]*" marks "${all}")
  list(LENGTH marks n_marks)
  if(marker STREQUAL "NONE" AND n_marks GREATER 0)
    string(APPEND mine "    printed the marker: ${marks}\n")
  elseif(NOT marker STREQUAL "NONE" AND NOT marks STREQUAL marker)
    string(APPEND mine "    printed ${n_marks} marker lines (${marks}), not one: ${marker}\n")
  endif()
  judge(${suite} ${want})
endfunction()

run(PartlySkipped zero NONE
    "[       OK ] PartlySkipped.Runs"
    "skipped: no device for this subject here"
    "[  SKIPPED ] PartlySkipped.CannotRunHere")
run(AllSkipped zero "LAB-SKIP: no device for this subject here"
    "skipped: no device for this subject here"
    "[  SKIPPED ] AllSkipped.SkipsWithItsOwnReason")
run(AllSkippedPlainly zero "LAB-SKIP: this CPU cannot run the kernel")
run(SkippedAndFailed nonzero NONE
    "[  SKIPPED ] SkippedAndFailed.CannotRunHere"
    "wrong result (on purpose)"
    "[  FAILED  ] SkippedAndFailed.Fails")
run(LostThenSkipped nonzero NONE
    "the GPU context was lost in LostThenSkipped.LosesTheContextAndSkips (cudaErrorIllegalAddress)")

# The must-fail check of an untouched skeleton reads the same output: failures
# beside skipped tests still count, a program whose tests all passed or skipped
# passed (and must not), and a whole skip stays a skip.
function(must_fail suite want piece)
  execute_process(COMMAND ${CMAKE_COMMAND} "-DCMD=${CMD};--gtest_filter=${suite}.*"
                          -P ${CMAKE_CURRENT_LIST_DIR}/ExpectFailure.cmake
                  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  set(all "${out}${err}")
  set(pieces "${piece}")
  set(mine "")
  judge("ExpectFailure.cmake on ${suite}" ${want})
endfunction()

must_fail(SkippedAndFailed zero "as expected, the skeleton fails its tests")
must_fail(PartlySkipped nonzero "the student build PASSED its tests")
must_fail(AllSkipped zero "LAB-SKIP: the student tests were skipped here: no device for this subject here")

if(problems)
  message(FATAL_ERROR "the LAB-SKIP marker is not where it should be:\n${problems}")
endif()
message("the marker comes once where every test skipped, and never beside a test that ran; "
        "the must-fail check reads it alike")
