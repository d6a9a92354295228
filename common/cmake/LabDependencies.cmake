# Finds what the lab needs. Every optional piece says, in the configure output
# and in LAB_SKIP_REASONS, what is missing and what that costs.
# With LAB_PROBE set (common/cmake/probe, run by `./lab doctor`), nothing is
# required and nothing is built: each finding is printed as one line instead.

function(lab_note_skip what why)
  set_property(GLOBAL APPEND PROPERTY LAB_SKIPPED "${what}: ${why}")
endfunction()

# -- OpenMP (required: the reference and every CPU step use it)
if(LAB_PROBE)
  find_package(OpenMP COMPONENTS CXX)
else()
  find_package(OpenMP REQUIRED COMPONENTS CXX)
endif()

# -- GoogleTest: the installed package (GTest_ROOT, CMAKE_PREFIX_PATH), else a
#    source tree (the distribution's /usr/src/googletest, or GTEST_SOURCE_DIR)
find_package(GTest QUIET)
set(LAB_GTEST_HOW "find_package(GTest)")
if(NOT TARGET GTest::gtest)
  foreach(_src $ENV{GTEST_SOURCE_DIR} /usr/src/googletest /usr/src/gtest)
    if(EXISTS "${_src}/CMakeLists.txt" AND NOT TARGET gtest AND NOT LAB_GTEST_SOURCE)
      set(LAB_GTEST_SOURCE "${_src}")
      set(LAB_GTEST_HOW "built from the source tree ${_src}")
      if(NOT LAB_PROBE)
        set(INSTALL_GTEST OFF CACHE BOOL "" FORCE)
        set(BUILD_GMOCK OFF CACHE BOOL "" FORCE)
        add_subdirectory(${_src} ${CMAKE_BINARY_DIR}/_googletest EXCLUDE_FROM_ALL)
        add_library(GTest::gtest ALIAS gtest)
        add_library(GTest::gtest_main ALIAS gtest_main)
      endif()
    endif()
  endforeach()
endif()
if(NOT TARGET GTest::gtest AND NOT LAB_PROBE)
  message(FATAL_ERROR "GoogleTest not found (searched: find_package(GTest) with GTest_ROOT and "
                      "CMAKE_PREFIX_PATH, GTEST_SOURCE_DIR, /usr/src/googletest): install it "
                      "(apt-get install libgtest-dev; ./lab does this as root) or point GTest_ROOT at an installed copy")
endif()
if(NOT LAB_PROBE)
  include(GoogleTest)
endif()

# -- OpenBLAS (optional): the CPU baseline
find_path(LAB_CBLAS_INCLUDE cblas.h HINTS ${OpenBLAS_ROOT} ENV OpenBLAS_ROOT ENV OPENBLAS_ROOT
          PATH_SUFFIXES include include/openblas openblas openblas-pthread openblas-openmp)
find_library(LAB_OPENBLAS_LIBRARY NAMES openblas openblasp openblaso
             HINTS ${OpenBLAS_ROOT} ENV OpenBLAS_ROOT ENV OPENBLAS_ROOT PATH_SUFFIXES lib lib64)
if(LAB_PROBE)
  set(LAB_HAVE_OPENBLAS OFF)
  if(LAB_CBLAS_INCLUDE AND LAB_OPENBLAS_LIBRARY)
    set(LAB_HAVE_OPENBLAS ON)
  endif()
elseif(LAB_CBLAS_INCLUDE AND LAB_OPENBLAS_LIBRARY)
  add_library(lab_openblas INTERFACE)
  target_include_directories(lab_openblas INTERFACE ${LAB_CBLAS_INCLUDE})
  target_link_libraries(lab_openblas INTERFACE ${LAB_OPENBLAS_LIBRARY})
  set(LAB_HAVE_OPENBLAS ON)
else()
  set(LAB_HAVE_OPENBLAS OFF)
  lab_note_skip("OpenBLAS baseline" "OpenBLAS not found (apt-get install libopenblas-dev, or OpenBLAS_ROOT)")
endif()

# -- CUDA (optional): GPU steps compile wherever nvcc is, run where a GPU is
set(LAB_HAVE_CUDA OFF)
if(NOT LAB_ENABLE_CUDA STREQUAL "OFF")
  include(CheckLanguage)
  check_language(CUDA)
  if(CMAKE_CUDA_COMPILER AND LAB_PROBE)
    find_package(CUDAToolkit QUIET)
    set(LAB_HAVE_CUDA ON)
  elseif(CMAKE_CUDA_COMPILER)
    if(NOT DEFINED CMAKE_CUDA_ARCHITECTURES)
      # The user's choice always wins. Otherwise: the GPU in this machine when
      # one is visible, else Hopper (sm_90), the lab's reference GPU.
      execute_process(COMMAND nvidia-smi -L RESULT_VARIABLE _smi OUTPUT_QUIET ERROR_QUIET)
      if(_smi EQUAL 0)
        set(CMAKE_CUDA_ARCHITECTURES native)
      else()
        set(CMAKE_CUDA_ARCHITECTURES 90)
      endif()
    endif()
    enable_language(CUDA)
    set(CMAKE_CUDA_STANDARD 17)
    set(CMAKE_CUDA_STANDARD_REQUIRED ON)
    find_package(CUDAToolkit REQUIRED)
    set(LAB_HAVE_CUDA ON)
    message(STATUS "gemm-lab: CUDA ${CMAKE_CUDA_COMPILER_VERSION}, architectures ${CMAKE_CUDA_ARCHITECTURES}")
  elseif(LAB_ENABLE_CUDA STREQUAL "ON")
    message(FATAL_ERROR "LAB_ENABLE_CUDA=ON but no CUDA compiler (nvcc) was found")
  else()
    lab_note_skip("GPU steps 05-07" "no CUDA compiler (nvcc) found; install the CUDA Toolkit")
  endif()
endif()  # (LAB_ENABLE_CUDA=OFF: each GPU step's own line says so)

# -- MPI (optional): step08
set(LAB_HAVE_MPI OFF)
if(NOT LAB_ENABLE_MPI STREQUAL "OFF")
  find_package(MPI COMPONENTS CXX QUIET)
  if(MPI_CXX_FOUND AND MPIEXEC_EXECUTABLE)
    set(LAB_HAVE_MPI ON)
    execute_process(COMMAND ${MPIEXEC_EXECUTABLE} --version OUTPUT_VARIABLE _mpiv ERROR_VARIABLE _mpiv)
    set(LAB_MPIEXEC_EXTRA "")
    set(LAB_MPI_ENV "")
    set(LAB_MPI_GRADE_ENV "")
    # Every MPI test starts as ${LAB_MPIEXEC} -n R ...: mpiexec with a TMPDIR of
    # its own (own_tmpdir.sh says why: ctest -j starts several at once).
    find_program(LAB_SH sh)
    if(LAB_SH)
      set(LAB_MPIEXEC ${LAB_SH} ${PROJECT_SOURCE_DIR}/common/cmake/own_tmpdir.sh ${MPIEXEC_EXECUTABLE})
    else()
      set(LAB_MPIEXEC ${MPIEXEC_EXECUTABLE})
    endif()
    # the flavour names its ScaLAPACK build (Debian: libscalapack-openmpi, libscalapack-mpich)
    if(_mpiv MATCHES "Open MPI|OpenRTE")
      set(LAB_MPI_FLAVOUR openmpi)
    elseif(_mpiv MATCHES "HYDRA|MPICH")
      set(LAB_MPI_FLAVOUR mpich)
    else()
      set(LAB_MPI_FLAVOUR other)
    endif()
    if(LAB_MPI_FLAVOUR STREQUAL "openmpi")
      # Tests oversubscribe small machines; root may run them (CI runs as root).
      # --bind-to none: by default Open MPI pins rank r to core r, so the ranks of
      # every MPI test ctest runs at once (and their OpenMP threads) would share
      # cores 0, 1, 2, ... of a big node while the others idle.
      set(LAB_MPIEXEC_EXTRA --oversubscribe --bind-to none)
      set(LAB_MPI_ENV OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1)
      # The grader starts one mpiexec per case, some 200 a grade of step08. On each
      # start Open MPI weighs its point-to-point layers (UCX, and the cm layer over
      # OFI and PSM) before it settles; naming ob1, which carries messages between
      # the ranks of one host through shared memory, skips that: a start of 4 ranks
      # 0.62 s -> 0.42 s, step08's grade 114 s -> 73 s on a 2-core VM (Open MPI 4.1).
      # The grader's products are small and its ranks on one host; the tests and
      # benchmarks keep Open MPI's own choice.
      set(LAB_MPI_GRADE_ENV OMPI_MCA_pml=ob1)
    endif()
    # The same in the cache, where the grader reads how the tests start a step
    # program under MPI (common/tools/grade.py's mpi_launch).
    set(LAB_MPIEXEC_FLAGS "${LAB_MPIEXEC_EXTRA}" CACHE INTERNAL "mpiexec's flags in the MPI tests")
    set(LAB_MPIEXEC_ENV "${LAB_MPI_ENV}" CACHE INTERNAL "the environment of the MPI tests")
    set(LAB_MPIEXEC_GRADE_ENV "${LAB_MPI_GRADE_ENV}" CACHE INTERNAL "what the grader adds to it (where not set already)")
  elseif(LAB_ENABLE_MPI STREQUAL "ON")
    message(FATAL_ERROR "LAB_ENABLE_MPI=ON but MPI was not found (apt-get install libopenmpi-dev openmpi-bin, or MPI_HOME)")
  else()
    lab_note_skip("step08_mpi_3d" "MPI not found (apt-get install libopenmpi-dev openmpi-bin, or MPI_HOME)")
  endif()
endif()  # (LAB_ENABLE_MPI=OFF: step08's and step09's own lines say so)

# -- ScaLAPACK (optional): step08's pdgemm baseline, built for the MPI found above
function(lab_find_scalapack)
  set(_names scalapack)
  if(LAB_MPI_FLAVOUR MATCHES "^(openmpi|mpich)$")
    set(_names scalapack-${LAB_MPI_FLAVOUR} scalapack)
  endif()
  find_library(LAB_SCALAPACK_LIBRARY NAMES ${_names}
               HINTS ${LAB_SCALAPACK_ROOT} ENV LAB_SCALAPACK_ROOT
               PATH_SUFFIXES usr/lib/x86_64-linux-gnu lib lib64)
endfunction()

# -- NCCL (optional): collectives of device blocks (steps 08, 09)
function(lab_find_nccl)
  find_path(LAB_NCCL_INCLUDE nccl.h HINTS ENV NCCL_HOME PATH_SUFFIXES include
            PATHS ${CUDAToolkit_INCLUDE_DIRS})
  find_library(LAB_NCCL_LIBRARY nccl HINTS ENV NCCL_HOME PATH_SUFFIXES lib lib64
               PATHS ${CUDAToolkit_LIBRARY_DIR})
endfunction()

# -- Python for the skeleton tool and the plots
find_package(Python3 COMPONENTS Interpreter)
# the Python that draws the picture tests' PNGs: ./lab passes one that has
# matplotlib where CMake's own Python lacks it (a pyenv or venv Python first on PATH)
set(LAB_PLOT_PYTHON "${Python3_EXECUTABLE}" CACHE FILEPATH "the Python (with matplotlib) of the picture tests")

# `./lab doctor`: one line a finding, `lab-probe|name|ok or missing|version|path|how`
function(lab_probe_line name ok version path how)
  if(ok)
    set(_state ok)
  else()
    set(_state missing)
  endif()
  message(STATUS "lab-probe|${name}|${_state}|${version}|${path}|${how}")
endfunction()

function(lab_probe_report)
  lab_probe_line(openmp "${OpenMP_CXX_FOUND}" "${OpenMP_CXX_VERSION}" "${OpenMP_CXX_FLAGS}"
                 "find_package(OpenMP) with ${CMAKE_CXX_COMPILER_ID} ${CMAKE_CXX_COMPILER_VERSION}")
  set(_gtest_ok OFF)
  set(_gtest_where "")
  if(TARGET GTest::gtest OR GTest_FOUND)
    set(_gtest_ok ON)
    set(_gtest_where "${GTest_DIR}")
  elseif(LAB_GTEST_SOURCE)
    set(_gtest_ok ON)
    set(_gtest_where "${LAB_GTEST_SOURCE}")
  endif()
  lab_probe_line(gtest "${_gtest_ok}" "${GTest_VERSION}" "${_gtest_where}" "${LAB_GTEST_HOW}")
  lab_probe_line(openblas "${LAB_HAVE_OPENBLAS}" "" "${LAB_OPENBLAS_LIBRARY}"
                 "find_library(openblas) with OpenBLAS_ROOT, CMAKE_PREFIX_PATH")
  lab_probe_line(mpi "${LAB_HAVE_MPI}" "${LAB_MPI_FLAVOUR} (MPI ${MPI_CXX_VERSION})" "${MPIEXEC_EXECUTABLE}"
                 "find_package(MPI) with MPI_HOME, mpicxx on PATH")
  set(_sl OFF)
  if(LAB_HAVE_MPI)
    lab_find_scalapack()
    if(LAB_SCALAPACK_LIBRARY)
      set(_sl ON)
    endif()
  endif()
  lab_probe_line(scalapack "${_sl}" "" "${LAB_SCALAPACK_LIBRARY}"
                 "find_library(scalapack-${LAB_MPI_FLAVOUR} scalapack) with LAB_SCALAPACK_ROOT")
  lab_probe_line(cuda "${LAB_HAVE_CUDA}" "${CUDAToolkit_VERSION}" "${CMAKE_CUDA_COMPILER}"
                 "check_language(CUDA): nvcc on PATH, CUDACXX, CUDAToolkit_ROOT")
  set(_cublas OFF)
  if(TARGET CUDA::cublas)
    set(_cublas ON)
  endif()
  lab_probe_line(cublas "${_cublas}" "${CUDAToolkit_VERSION}" "${CUDAToolkit_LIBRARY_DIR}" "find_package(CUDAToolkit)")
  set(_nccl OFF)
  if(LAB_HAVE_CUDA)
    lab_find_nccl()
    if(LAB_NCCL_INCLUDE AND LAB_NCCL_LIBRARY)
      set(_nccl ON)
    endif()
  endif()
  lab_probe_line(nccl "${_nccl}" "" "${LAB_NCCL_LIBRARY}" "find_library(nccl) with NCCL_HOME, the CUDA Toolkit")
endfunction()

function(lab_print_summary)
  message(STATUS "gemm-lab: building ${LAB_IMPL}; CUDA ${LAB_HAVE_CUDA}, MPI ${LAB_HAVE_MPI}, OpenBLAS ${LAB_HAVE_OPENBLAS}")
  get_property(_skipped GLOBAL PROPERTY LAB_SKIPPED)
  foreach(_s IN LISTS _skipped)
    message(STATUS "gemm-lab: SKIPPED ${_s}")
  endforeach()
  if(_skipped)
    message(WARNING "gemm-lab: some steps or baselines are skipped in this build; "
                    "the SKIPPED lines above say which and why")
  endif()
endfunction()
