# What each test uses, told to ctest's scheduler: the same `ctest -j <cores>` then
# holds from a 2-core laptop to a 128-core, 8-GPU node.
#
# lab_schedule_directory(), called in each folder that adds tests (lab_add_step
# calls it), runs lab_schedule_tests() when that folder's CMakeLists is done. It
# sets, from each test's labels and name (one policy for all, instead of a
# property at every add_test):
#   performance    RUN_SERIAL: a speed test runs with nothing beside it (GPU ones too)
#   mpi, ".npR"    R ranks of one thread each (OMP_NUM_THREADS=1): PROCESSORS R
#   tools          the Python tools' tests: one process, PROCESSORS 1
#   other tests    LAB_TEST_THREADS OpenMP threads (OMP_NUM_THREADS): PROCESSORS that many
#   LAB_PROCESSORS a test property that overrides the count (a tool that runs its own jobs)
#   gpu            RESOURCE_GROUPS: a test of R ranks gets R GPUs of its own (all
#                  LAB_GPU_SLOTS slots of each); a one-process test one slot of a GPU,
#                  so that up to LAB_GPU_SLOTS such tests share a GPU
# PROCESSORS never exceeds the cores this build may use (ctest runs a larger test
# alone anyway). The GPUs are ctest's "gpus" resource; ./lab writes the resource
# spec file from nvidia-smi (each GPU with LAB_GPU_SLOTS slots) and passes it to
# ctest, and the test program (lab_cuda) turns its allocation into
# CUDA_VISIBLE_DEVICES. Plain `ctest` without a spec file ignores RESOURCE_GROUPS.
# A test that starts a GPU program without the gpu label (the command-line fuzz)
# says so with the test property LAB_USES_GPU.

# The cores this build may use: under Slurm or taskset fewer than the machine has.
# GNU nproc reads the affinity mask (and answers OMP_NUM_THREADS where it is set,
# hence the unset); where there is no nproc, the machine's count.
cmake_host_system_information(RESULT LAB_HOST_CORES QUERY NUMBER_OF_LOGICAL_CORES)
execute_process(COMMAND "${CMAKE_COMMAND}" -E env --unset=OMP_NUM_THREADS --unset=OMP_THREAD_LIMIT nproc
                RESULT_VARIABLE _nproc_rc OUTPUT_VARIABLE _usable_cores ERROR_QUIET
                OUTPUT_STRIP_TRAILING_WHITESPACE)
if(_nproc_rc EQUAL 0 AND _usable_cores MATCHES "^[1-9][0-9]*$" AND _usable_cores LESS LAB_HOST_CORES)
  set(LAB_HOST_CORES ${_usable_cores})
endif()
if(LAB_HOST_CORES LESS 1)
  set(LAB_HOST_CORES 1)
endif()
set(_threads_default 4)
if(LAB_HOST_CORES LESS 4)
  set(_threads_default ${LAB_HOST_CORES})
endif()
set(LAB_TEST_THREADS ${_threads_default} CACHE STRING
    "OpenMP threads of each correctness test (ctest runs cores / this many at once)")
set(LAB_GPUS "" CACHE STRING
    "GPUs the tests may use (./lab sets it from nvidia-smi; empty: as many as a test has ranks)")
set(LAB_GPU_SLOTS 4 CACHE STRING "One-process GPU tests that may share one GPU (the resource spec's slots)")

function(_lab_min out a b)
  if(a LESS b)
    set(${out} ${a} PARENT_SCOPE)
  else()
    set(${out} ${b} PARENT_SCOPE)
  endif()
endfunction()

function(lab_schedule_directory)
  get_property(_done DIRECTORY PROPERTY LAB_SCHEDULED)
  if(NOT _done)
    set_property(DIRECTORY PROPERTY LAB_SCHEDULED TRUE)
    cmake_language(DEFER CALL lab_schedule_tests)
  endif()
endfunction()

function(lab_schedule_tests)
  get_property(_all DIRECTORY PROPERTY TESTS)
  # the OpenMP threads of a test; under ThreadSanitizer at least two, or there is nothing to race
  set(_omp ${LAB_TEST_THREADS})
  if(LAB_SANITIZE_THREAD AND _omp LESS 2)
    set(_omp 2)
  endif()
  foreach(_t IN LISTS _all)
    get_test_property(${_t} LABELS _labels)
    if(_labels STREQUAL "NOTFOUND")
      set(_labels "")
    endif()
    get_test_property(${_t} ENVIRONMENT _env)
    if(_env STREQUAL "NOTFOUND")
      set(_env "")
    endif()
    get_test_property(${_t} LAB_USES_GPU _uses_gpu)
    get_test_property(${_t} LAB_PROCESSORS _own)
    set(_ranks 1)
    if("mpi" IN_LIST _labels AND _t MATCHES "\\.np([0-9]+)(\\.|$)")
      set(_ranks ${CMAKE_MATCH_1})
    endif()
    # (one property at a time: ENVIRONMENT is itself a list)
    if("performance" IN_LIST _labels)
      # alone on the machine; the test sets its own thread counts
      set_property(TEST ${_t} PROPERTY RUN_SERIAL TRUE)
      set_property(TEST ${_t} PROPERTY PROCESSORS ${LAB_HOST_CORES})
    elseif("mpi" IN_LIST _labels)
      _lab_min(_p ${_ranks} ${LAB_HOST_CORES})
      set_property(TEST ${_t} PROPERTY PROCESSORS ${_p})
      if(NOT _env MATCHES "OMP_NUM_THREADS=")
        set_property(TEST ${_t} APPEND PROPERTY ENVIRONMENT OMP_NUM_THREADS=1)
      endif()
    else()
      set(_p ${LAB_TEST_THREADS})
      if(NOT _own STREQUAL "NOTFOUND")
        set(_p ${_own})
      elseif("tools" IN_LIST _labels)
        set(_p 1)
      endif()
      _lab_min(_p ${_p} ${LAB_HOST_CORES})
      set_property(TEST ${_t} PROPERTY PROCESSORS ${_p})
      if(NOT _env MATCHES "OMP_NUM_THREADS=")
        set_property(TEST ${_t} APPEND PROPERTY ENVIRONMENT OMP_NUM_THREADS=${_omp})
      endif()
    endif()
    if(LAB_ARCHER AND LAB_SANITIZE_THREAD)
      # ThreadSanitizer (the tsan preset): OpenMP's own synchronisation through
      # Archer; the first race ends the program, in the test that met it
      set_property(TEST ${_t} APPEND PROPERTY ENVIRONMENT "OMP_TOOL_LIBRARIES=${LAB_ARCHER}"
                   "TSAN_OPTIONS=ignore_noninstrumented_modules=1:halt_on_error=1:second_deadlock_stack=1")
    endif()
    if(LAB_HAVE_CUDA AND ("gpu" IN_LIST _labels OR _uses_gpu))
      if("mpi" IN_LIST _labels OR "performance" IN_LIST _labels)
        # whole GPUs: one for each rank (as many as this machine has, where the
        # ranks outnumber them: the ranks then share, or the test skips)
        set(_groups ${_ranks})
        if(NOT LAB_GPUS STREQUAL "" AND LAB_GPUS GREATER 0)
          _lab_min(_groups ${_ranks} ${LAB_GPUS})
        endif()
        set_property(TEST ${_t} PROPERTY RESOURCE_GROUPS "${_groups},gpus:${LAB_GPU_SLOTS}")
      else()
        set_property(TEST ${_t} PROPERTY RESOURCE_GROUPS "gpus:1")
      endif()
    endif()
  endforeach()
endfunction()
