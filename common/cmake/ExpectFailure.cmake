# Runs a student test binary (CMD) and passes only when its tests FAIL the way a
# skeleton should: "not implemented yet" (LAB_TODO) or a wrong-result report.
# A test suite that passes on the skeleton cannot tell right from wrong.
# The program prints LAB-SKIP only when none of its tests ran (no GPU here):
# then this check is skipped too. Where some tests skipped and others ran, those
# that ran must fail.
# Usage: cmake -DCMD="<binary>;<args>" -P ExpectFailure.cmake
execute_process(COMMAND ${CMD} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
set(all "${out}${err}")
string(REGEX MATCHALL "not implemented yet[^\n]*" todos "${all}")
list(LENGTH todos n_todo)
string(REGEX MATCHALL "\\[  FAILED  \\] [^\n]*" failed "${all}")
list(LENGTH failed n_failed)
string(REGEX MATCH "LAB-SKIP: ([^\n]*)" skipped "${all}")
if(NOT skipped STREQUAL "" AND n_failed EQUAL 0)
  message("LAB-SKIP: the student tests were skipped here: ${CMAKE_MATCH_1}")
  return()
endif()
if(rc EQUAL 0)
  message(FATAL_ERROR "the student build PASSED its tests, but the skeleton should fail them:\n${all}")
endif()
if(n_todo EQUAL 0 AND NOT all MATCHES "wrong result|WRONG RESULT|outside the bound|mismatch")
  message(FATAL_ERROR "the student tests failed, but not with 'not implemented yet' or a wrong-result report "
                      "(exit ${rc}):\n${all}")
endif()
set(first "a wrong-result report")
if(n_todo GREATER 0)
  list(GET todos 0 first)
endif()
message("as expected, the skeleton fails its tests: ${n_failed} failure lines, ${n_todo} 'not implemented yet' "
        "(first: ${first})")
