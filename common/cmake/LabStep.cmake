# lab_add_step(): one call makes a step's libraries, executable and tests.
#
#   lab_add_step(step03_tiling
#     TITLE "cache tiling"            # one line, for --help and the ladder
#     BACKEND cpu | gpu | mpi
#     SOURCES tiling.cpp              # files the student edits: the skeleton lives in
#                                     # stepNN_*/, the solution in solutions/stepNN_*/
#     GIVEN baseline.cpp              # step files with nothing to write, compiled
#                                     # into every implementation's library
#     SUPPORT register.cpp            # step files compiled once per implementation
#     TESTS tests/test_tiling.cpp     # GoogleTest sources (correctness)
#     PERF_TESTS tests/perf_tiling.cpp  # GoogleTest sources (performance ratios)
#     GPU_TESTS tests/test_gpu.cpp    # a CPU step's GPU parts (step09): their own test,
#                                     # labelled gpu; skipped where CUDA is not built
#     DEPENDS step01_naive            # earlier steps whose library this one links
#     LIBS lab_openblas               # anything else to link
#     DEFAULT_SIZE 1024               # m = n = k of the benchmark when none is given
#     MAIN main.cpp                   # own main() instead of the shared benchmark CLI
#     MPI_RANKS 1 2 3 4 6 8)          # BACKEND mpi: run the tests under mpiexec -n R
#
# For every implementation in LAB_IMPLS (student and/or solution) it builds
#   <step>_<impl>           static library: SOURCES (from the impl's folder)
#   <step>_register_<impl>  object library: SUPPORT (variants register themselves)
#   <step>_<kind>_<impl>    the test executables, kind correctness, performance or gpu
# and one executable <step> with every implementation in it (--impl picks).
# Everything of an implementation is compiled with -DLAB_IMPL_NS=<impl>.
#
# ctest names and labels:
#   <step>.<impl>.correctness   labels <stepNN>;<cpu|gpu|mpi>;correctness;<impl>
#   <step>.<impl>.performance   labels ...;performance;<impl>
#   <step>.<impl>.gpu           labels <stepNN>;gpu;correctness;<impl> (GPU_TESTS)
#   <step>.student.must_fail    (LAB_IMPL=both) the student's tests must fail
# A test that cannot run here skips (GoogleTest's "[  SKIPPED ]", with a
# "skipped: <why>" line). A program in which every test that ran was skipped
# ends with "LAB-SKIP: <why>", and ctest (SKIP_REGULAR_EXPRESSION) reports it
# skipped, never passed; where some tests passed or failed beside the skipped
# ones, there is no marker and the exit status decides.

function(lab_target_warnings target)
  set(_w -Wall -Wextra)
  if(LAB_WERROR)
    list(APPEND _w -Werror)
  endif()
  # -lineinfo: device code keeps its source lines (the code itself is unchanged), so
  # compute-sanitizer's memcheck and racecheck name the file and line of a bad access
  # or a race, and ncu its source view
  target_compile_options(${target} PRIVATE
    "$<$<COMPILE_LANGUAGE:CXX>:${_w}>"
    $<$<COMPILE_LANGUAGE:CUDA>:-Xcompiler=-Wall,-Wextra>
    $<$<COMPILE_LANGUAGE:CUDA>:-lineinfo>)
  if(LAB_NATIVE_FLAG)
    target_compile_options(${target} PRIVATE $<$<COMPILE_LANGUAGE:CXX>:${LAB_NATIVE_FLAG}>
                                             $<$<COMPILE_LANGUAGE:CUDA>:-Xcompiler=${LAB_NATIVE_FLAG}>)
  endif()
  if(LAB_SANITIZE)
    # Link flags come with lab_common (common/CMakeLists.txt) to every executable.
    target_compile_options(${target} PRIVATE
      "$<$<COMPILE_LANGUAGE:CXX>:-fsanitize=${LAB_SANITIZE};-fno-sanitize-recover=all;-fno-omit-frame-pointer>")
    if(LAB_SANITIZE_THREAD)
      # ThreadSanitizer checks loads and stores of up to 16 bytes; the 32- and
      # 64-byte ones a loop vectorized for AVX2 or AVX-512 becomes go unchecked.
      # Loops stay scalar here, so a race in a student's plain loop is seen.
      target_compile_options(${target} PRIVATE "$<$<COMPILE_LANGUAGE:CXX>:-fno-vectorize;-fno-slp-vectorize>")
    endif()
  endif()
endfunction()

# Every test is bounded, so a student's endless loop fails that test and the
# rest still runs; generous by default (perf tests on a slow machine), shorter
# when grading (./lab grade --timeout).
set(LAB_TEST_TIMEOUT 900 CACHE STRING "Seconds a test may run before ctest ends it")

function(lab_add_step step)
  cmake_parse_arguments(PARSE_ARGV 1 S "" "TITLE;BACKEND;DEFAULT_SIZE;MAIN"
                        "SOURCES;GIVEN;SUPPORT;TESTS;PERF_TESTS;GPU_TESTS;DEPENDS;LIBS;MPI_RANKS")
  string(REGEX MATCH "^step[0-9][0-9]" _num "${step}")
  if(NOT _num)
    message(FATAL_ERROR "lab_add_step: '${step}' is not named stepNN_<name>")
  endif()
  if(NOT S_BACKEND MATCHES "^(cpu|gpu|mpi)$")
    message(FATAL_ERROR "lab_add_step(${step}): BACKEND must be cpu, gpu or mpi")
  endif()
  if(NOT S_DEFAULT_SIZE)
    set(S_DEFAULT_SIZE 1024)
  endif()
  lab_schedule_directory()  # what each test uses, for ctest (LabSchedule.cmake)
  set(_step_dir "${PROJECT_SOURCE_DIR}/${step}")
  set(_sol_dir "${PROJECT_SOURCE_DIR}/solutions/${step}")

  # Steps that cannot be built here still leave a test that says why (skipped).
  set(_why "")
  set(_cuda_why "CUDA is not enabled in this build (no nvcc found)")
  if(LAB_ENABLE_CUDA STREQUAL "OFF")
    set(_cuda_why "CUDA is turned off in this build (LAB_ENABLE_CUDA=OFF)")
  endif()
  if(S_BACKEND STREQUAL "gpu" AND NOT LAB_HAVE_CUDA)
    set(_why "${_cuda_why}")
  elseif(S_BACKEND STREQUAL "mpi" AND NOT LAB_HAVE_MPI)
    if(LAB_ENABLE_MPI STREQUAL "OFF")
      # (the asan preset: ./lab test --preset asan step08 names the line with LAB_CONFIGURE_ARGS=-DLAB_ENABLE_MPI=ON)
      set(_why "MPI is turned off in this build (LAB_ENABLE_MPI=OFF)")
    else()
      set(_why "MPI is not enabled in this build (MPI was not found: apt-get install libopenmpi-dev openmpi-bin, or MPI_HOME)")
    endif()
  endif()
  get_property(_built GLOBAL PROPERTY LAB_BUILT_STEPS)
  foreach(_d IN LISTS S_DEPENDS)
    if(NOT _d IN_LIST _built)
      set(_why "needs ${_d}, which is not built here")
    endif()
  endforeach()
  if(_why)
    lab_note_skip(${step} "${_why}")
    add_test(NAME ${step}.skipped COMMAND ${CMAKE_COMMAND} -E echo "LAB-SKIP: ${step}: ${_why}")
    set_tests_properties(${step}.skipped PROPERTIES LABELS "${_num};${S_BACKEND};correctness"
                         SKIP_REGULAR_EXPRESSION "LAB-SKIP")
    return()
  endif()
  if(S_GPU_TESTS AND NOT LAB_HAVE_CUDA)
    add_test(NAME ${step}.gpu.skipped COMMAND ${CMAKE_COMMAND} -E echo "LAB-SKIP: ${step} GPU tests: ${_cuda_why}")
    set_tests_properties(${step}.gpu.skipped PROPERTIES LABELS "${_num};gpu;correctness"
                         SKIP_REGULAR_EXPRESSION "LAB-SKIP")
    set(S_GPU_TESTS "")
  endif()
  set_property(GLOBAL APPEND PROPERTY LAB_BUILT_STEPS ${step})
  set_property(GLOBAL APPEND PROPERTY LAB_STEP_INFO "${step}|${S_BACKEND}|${S_TITLE}")

  set(_labels_base "${_num};${S_BACKEND}")
  set(_exe_objs "")
  foreach(impl IN LISTS LAB_IMPLS)
    if(impl STREQUAL "solution")
      set(_src_dir "${_sol_dir}")
    else()
      set(_src_dir "${_step_dir}")
    endif()
    # -- the code the student writes (or its solution)
    set(_srcs "")
    set(_gen_dir "")
    if(impl STREQUAL "solution")
      # The compiler sees the solution with its skeleton parts blanked out
      # (same line numbers; #line points errors at the file in solutions/).
      set(_gen_dir "${CMAKE_BINARY_DIR}/solution_src/${step}")
      file(GLOB_RECURSE _all_sol CONFIGURE_DEPENDS RELATIVE "${_sol_dir}"
           "${_sol_dir}/*.cpp" "${_sol_dir}/*.hpp" "${_sol_dir}/*.h" "${_sol_dir}/*.cu" "${_sol_dir}/*.cuh"
           "${_sol_dir}/*.cc")
      # A copy whose solution file is gone would still shadow the step's own
      # header of that name (this folder comes first on the include path).
      file(GLOB_RECURSE _gen_old RELATIVE "${_gen_dir}" "${_gen_dir}/*")
      foreach(_f IN LISTS _gen_old)
        if(NOT _f IN_LIST _all_sol)
          file(REMOVE "${_gen_dir}/${_f}")
        endif()
      endforeach()
      set(_gen_all "")
      foreach(_f IN LISTS _all_sol)
        add_custom_command(OUTPUT "${_gen_dir}/${_f}"
          COMMAND ${Python3_EXECUTABLE} "${PROJECT_SOURCE_DIR}/common/tools/make_skeletons.py"
                  --strip "${_sol_dir}/${_f}" "${_gen_dir}/${_f}"
          DEPENDS "${_sol_dir}/${_f}" "${PROJECT_SOURCE_DIR}/common/tools/make_skeletons.py"
          COMMENT "solution source ${step}/${_f}" VERBATIM)
        list(APPEND _gen_all "${_gen_dir}/${_f}")
      endforeach()
      foreach(_f IN LISTS S_SOURCES)
        if(NOT EXISTS "${_sol_dir}/${_f}")
          message(FATAL_ERROR "lab_add_step(${step}): solutions/${step}/${_f} is missing")
        endif()
        list(APPEND _srcs "${_gen_dir}/${_f}")
      endforeach()
      # Headers join the target so they are generated before the sources
      # compile; other source files there are compiled only when listed.
      list(FILTER _gen_all INCLUDE REGEX "\\.(hpp|h|cuh)$")
      list(APPEND _srcs ${_gen_all})
    else()
      foreach(_f IN LISTS S_SOURCES)
        list(APPEND _srcs "${_src_dir}/${_f}")
      endforeach()
    endif()
    foreach(_f IN LISTS S_GIVEN)
      list(APPEND _srcs "${_step_dir}/${_f}")
    endforeach()
    add_library(${step}_${impl} STATIC ${_srcs})
    if(_gen_dir)
      target_include_directories(${step}_${impl} BEFORE PRIVATE "${_gen_dir}")
    endif()
    target_include_directories(${step}_${impl} PUBLIC "${_step_dir}")
    target_compile_definitions(${step}_${impl} PRIVATE LAB_IMPL_NS=${impl})
    target_link_libraries(${step}_${impl} PUBLIC lab_common ${S_LIBS})
    foreach(_d IN LISTS S_DEPENDS)
      target_link_libraries(${step}_${impl} PUBLIC ${_d}_${impl})
    endforeach()
    if(S_BACKEND STREQUAL "gpu")
      target_link_libraries(${step}_${impl} PUBLIC lab_cuda)
      set_target_properties(${step}_${impl} PROPERTIES CUDA_SEPARABLE_COMPILATION OFF)
    endif()
    if(S_BACKEND STREQUAL "mpi")
      target_link_libraries(${step}_${impl} PUBLIC MPI::MPI_CXX)
    endif()
    lab_target_warnings(${step}_${impl})
    if(impl STREQUAL "student")
      # Skeletons leave parameters unused until the TODOs are done.
      target_compile_options(${step}_${impl} PRIVATE $<$<COMPILE_LANGUAGE:CXX>:-Wno-unused-parameter>
                                                     $<$<COMPILE_LANGUAGE:CUDA>:-Xcompiler=-Wno-unused-parameter>)
    endif()

    # -- registration of the variants (and anything else the step compiles per impl)
    if(S_SUPPORT)
      set(_sup "")
      foreach(_f IN LISTS S_SUPPORT)
        list(APPEND _sup "${_step_dir}/${_f}")
      endforeach()
      add_library(${step}_register_${impl} OBJECT ${_sup})
      target_link_libraries(${step}_register_${impl} PUBLIC ${step}_${impl})
      target_compile_definitions(${step}_register_${impl} PRIVATE LAB_IMPL_NS=${impl})
      lab_target_warnings(${step}_register_${impl})
      list(APPEND _exe_objs ${step}_register_${impl})
    endif()

    # -- tests
    # LAB_TESTING: a program under the lab's tests names what given code is
    # running of the student's (step04's kernel choice), for a crash's summary
    set(_env "LAB_IMPL=${impl}" "LAB_TESTING=1")
    if(S_BACKEND STREQUAL "mpi")
      list(APPEND _env ${LAB_MPI_ENV})
    endif()
    foreach(_kind correctness performance gpu)
      set(_labels "${_labels_base};${_kind}")
      if(_kind STREQUAL "correctness")
        set(_tsrc ${S_TESTS})
      elseif(_kind STREQUAL "performance")
        set(_tsrc ${S_PERF_TESTS})
      else()
        set(_tsrc ${S_GPU_TESTS})
        set(_labels "${_num};gpu;correctness")
      endif()
      if(NOT _tsrc)
        continue()
      endif()
      if(_kind STREQUAL "performance" AND LAB_SANITIZE)
        continue()  # instrumented code is slow by design: its speed proves nothing
      endif()
      set(_t ${step}_${_kind}_${impl})
      set(_full "")
      foreach(_f IN LISTS _tsrc)
        list(APPEND _full "${_step_dir}/${_f}")
      endforeach()
      add_executable(${_t} ${_full})
      target_link_libraries(${_t} PRIVATE ${step}_${impl} lab_testing)
      target_compile_definitions(${_t} PRIVATE LAB_IMPL_NS=${impl})
      lab_target_warnings(${_t})
      set(_runs "")
      if(S_BACKEND STREQUAL "mpi")
        set(_ranks ${S_MPI_RANKS})
        if(NOT _ranks)
          set(_ranks 1 2 3 4 8)
        endif()
        foreach(_r IN LISTS _ranks)
          # '|' separates the words here: a ';' would split this list of runs.
          string(JOIN "|" _cmd ${LAB_MPIEXEC} ${MPIEXEC_NUMPROC_FLAG} ${_r} ${LAB_MPIEXEC_EXTRA}
                 ${MPIEXEC_PREFLAGS} $<TARGET_FILE:${_t}> ${MPIEXEC_POSTFLAGS})
          list(APPEND _runs "np${_r}|${_cmd}")
        endforeach()
      else()
        list(APPEND _runs "|$<TARGET_FILE:${_t}>")
      endif()
      foreach(_run IN LISTS _runs)
        string(REPLACE "|" ";" _parts "${_run}")
        list(GET _parts 0 _suffix)
        list(REMOVE_AT _parts 0)
        set(_name ${step}.${impl}.${_kind})
        if(_suffix)
          set(_name ${_name}.${_suffix})
        endif()
        if(impl STREQUAL "student" AND LAB_IMPL STREQUAL "both")
          if(NOT _kind STREQUAL "performance")
            # The instructor's build: the skeleton's tests must fail (a suite
            # that cannot fail is a broken suite). A skipped run stays skipped.
            set(_mf ${step}.student.must_fail)
            if(_suffix)
              set(_mf ${_mf}.${_suffix})
            endif()
            if(_kind STREQUAL "gpu")
              set(_mf ${_mf}.gpu)
            endif()
            add_test(NAME ${_mf}
                     COMMAND ${CMAKE_COMMAND} "-DCMD=${_parts}" -P ${PROJECT_SOURCE_DIR}/common/cmake/ExpectFailure.cmake)
            set_tests_properties(${_mf} PROPERTIES
              LABELS "${_labels};student" SKIP_REGULAR_EXPRESSION "LAB-SKIP"
              ENVIRONMENT "${_env}" TIMEOUT ${LAB_TEST_TIMEOUT})
          endif()
          continue()
        endif()
        add_test(NAME ${_name} COMMAND ${_parts})
        set_tests_properties(${_name} PROPERTIES
          LABELS "${_labels};${impl}" SKIP_REGULAR_EXPRESSION "LAB-SKIP"
          ENVIRONMENT "${_env}" TIMEOUT ${LAB_TEST_TIMEOUT})
        if(_kind STREQUAL "performance")
          set_tests_properties(${_name} PROPERTIES RUN_SERIAL TRUE)
        endif()
      endforeach()
    endforeach()
  endforeach()

  # -- the step's executable: every implementation built, plus the baselines
  if(S_MAIN)
    add_executable(${step} "${_step_dir}/${S_MAIN}")
  else()
    add_executable(${step} "${PROJECT_SOURCE_DIR}/common/src/step_main.cpp")
    string(REPLACE "\"" "" _title "${S_TITLE}")
    target_compile_definitions(${step} PRIVATE LAB_STEP_ID="${_num}" LAB_STEP_TITLE="${_title}"
                               LAB_STEP_BACKEND=${S_BACKEND} LAB_STEP_DEFAULT_SIZE=${S_DEFAULT_SIZE})
  endif()
  foreach(_o IN LISTS _exe_objs)
    target_link_libraries(${step} PRIVATE ${_o})
  endforeach()
  foreach(impl IN LISTS LAB_IMPLS)
    target_link_libraries(${step} PRIVATE ${step}_${impl})
  endforeach()
  target_link_libraries(${step} PRIVATE lab_bench)
  if(S_BACKEND STREQUAL "gpu")
    target_link_libraries(${step} PRIVATE lab_cuda_bench)
  elseif(LAB_HAVE_OPENBLAS)
    target_link_libraries(${step} PRIVATE lab_blas_bench)
  endif()
  lab_target_warnings(${step})
  set_target_properties(${step} PROPERTIES RUNTIME_OUTPUT_DIRECTORY "${CMAKE_BINARY_DIR}/bin")
endfunction()
