# Test helpers: MPI tests through mpiexec at several rank counts, GPU tests that report "skipped"
# (exit code 77) where no device is visible.
find_package(GTest REQUIRED)

set(PIPEVD_MPIEXEC_FLAGS --oversubscribe --bind-to none)
# Every test launches through this wrapper of mpiexec: it runs a launch once more where Open MPI's
# launcher lost a finished rank's exit (the script says why).
configure_file(${PROJECT_SOURCE_DIR}/tests/scripts/mpiexec_lost_exit.sh.in
               ${PROJECT_BINARY_DIR}/mpiexec_lost_exit.sh @ONLY USE_SOURCE_PERMISSIONS)
set(PIPEVD_MPIEXEC ${PROJECT_BINARY_DIR}/mpiexec_lost_exit.sh)
set(PIPEVD_TEST_ENV
    OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
    OMPI_MCA_btl_vader_single_copy_mechanism=none OMPI_MCA_rmaps_base_oversubscribe=1
    OPENBLAS_NUM_THREADS=1 OMP_NUM_THREADS=1 PMIX_MCA_pcompress_base_silence_warning=1
    PMIX_MCA_gds=hash)
set(PIPEVD_SKIP_CODE 77)

# pipevd_add_mpi_test(<name> <target> RANKS 1 2 3 4 [LABELS ...] [ENV ...] [ARGS ...] [TIMEOUT s]
#                     [LAUNCHER script] [FAIL_REGEX regex ...]): LAUNCHER runs each rank through a
# script (e.g. tests/scripts/own_gpu.sh); a line of output matching a FAIL_REGEX fails the test.
function(pipevd_add_mpi_test name target)
  cmake_parse_arguments(T "" "TIMEOUT;LAUNCHER" "RANKS;LABELS;ENV;ARGS;FAIL_REGEX" ${ARGN})
  if(NOT T_RANKS)
    set(T_RANKS 1 2 3 4)
  endif()
  if(NOT T_TIMEOUT)
    set(T_TIMEOUT 600)
  endif()
  foreach(np IN LISTS T_RANKS)
    set(tname ${name}.np${np})
    add_test(NAME ${tname}
             COMMAND ${PIPEVD_MPIEXEC} ${MPIEXEC_NUMPROC_FLAG} ${np} ${PIPEVD_MPIEXEC_FLAGS}
                     ${MPIEXEC_PREFLAGS} ${T_LAUNCHER} $<TARGET_FILE:${target}> ${MPIEXEC_POSTFLAGS}
                     ${T_ARGS})
    set_tests_properties(${tname} PROPERTIES ENVIRONMENT "${PIPEVD_TEST_ENV};${T_ENV}"
                         TIMEOUT ${T_TIMEOUT} PROCESSORS ${np} SKIP_RETURN_CODE ${PIPEVD_SKIP_CODE}
                         LABELS "mpi;${T_LABELS}")
    if(T_FAIL_REGEX)
      set_tests_properties(${tname} PROPERTIES FAIL_REGULAR_EXPRESSION "${T_FAIL_REGEX}")
    endif()
  endforeach()
endfunction()

# pipevd_add_line_test(<name> <target> RANKS <n> PASS_REGEX <regex> [FAIL_REGEX ...] [ENV ...]
# [ARGS ...] [LABELS ...] [RESOURCE_LOCK <lock>]): one test of that exact name on n ranks that
# passes only where its output matches PASS_REGEX (a verbose line, say) and fails on any
# FAIL_REGEX or a rank's crash (a pass regex makes CTest ignore the exit code); skipped (exit
# PIPEVD_SKIP_CODE) as the others.
function(pipevd_add_line_test name target)
  cmake_parse_arguments(T "" "RANKS;PASS_REGEX;RESOURCE_LOCK" "ENV;ARGS;FAIL_REGEX;LABELS" ${ARGN})
  list(APPEND T_FAIL_REGEX "Segmentation fault" "exited on signal" "MPI_ABORT was invoked")
  add_test(NAME ${name}
           COMMAND ${PIPEVD_MPIEXEC} ${MPIEXEC_NUMPROC_FLAG} ${T_RANKS} ${PIPEVD_MPIEXEC_FLAGS}
                   $<TARGET_FILE:${target}> ${T_ARGS})
  set_tests_properties(${name} PROPERTIES ENVIRONMENT "${PIPEVD_TEST_ENV};${T_ENV}"
                       PROCESSORS ${T_RANKS} SKIP_RETURN_CODE ${PIPEVD_SKIP_CODE}
                       PASS_REGULAR_EXPRESSION "${T_PASS_REGEX}" LABELS "mpi;${T_LABELS}")
  if(T_FAIL_REGEX)
    set_tests_properties(${name} PROPERTIES FAIL_REGULAR_EXPRESSION "${T_FAIL_REGEX}")
  endif()
  if(T_RESOURCE_LOCK)
    set_tests_properties(${name} PROPERTIES RESOURCE_LOCK ${T_RESOURCE_LOCK})
  endif()
endfunction()

# pipevd_add_gtest_executable(<target> SOURCES ... LIBS <pipevd::pipevd | pipevd_internal> ...):
# GoogleTest with the MPI-aware main. LIBS come first on the link line, so libpipevd is ahead of
# ScaLAPACK as in a relinked application.
function(pipevd_add_gtest_executable target)
  cmake_parse_arguments(T "" "" "SOURCES;LIBS" ${ARGN})
  add_executable(${target} ${T_SOURCES})
  target_link_libraries(${target} PRIVATE ${T_LIBS} pipevd_test_support GTest::gtest)
endfunction()

# pipevd_add_gpu_gtest_executable(<target> SOURCES ... LIBS ...): GoogleTest with the GPU main, which
# exits 77 (ctest: skipped) where no CUDA device is visible.
function(pipevd_add_gpu_gtest_executable target)
  cmake_parse_arguments(T "" "" "SOURCES;LIBS" ${ARGN})
  add_executable(${target} ${T_SOURCES})
  target_link_libraries(${target} PRIVATE ${T_LIBS} pipevd_gpu_test_main GTest::gtest CUDA::cudart)
endfunction()

# pipevd_add_gpu_test(<name> <target> [LABELS ...] [ENV ...] [ARGS ...] [TIMEOUT s]): label `gpu`;
# reported as skipped (not passed) on a machine without a GPU. PIPEVD_REQUIRE_GPU=1 in the
# environment turns the skip into a failure (the GPU machine's runs set it).
function(pipevd_add_gpu_test name target)
  cmake_parse_arguments(T "" "TIMEOUT" "LABELS;ENV;ARGS" ${ARGN})
  if(NOT T_TIMEOUT)
    set(T_TIMEOUT 600)
  endif()
  add_test(NAME ${name} COMMAND $<TARGET_FILE:${target}> ${T_ARGS})
  set_tests_properties(${name} PROPERTIES ENVIRONMENT "${PIPEVD_TEST_ENV};${T_ENV}"
                       TIMEOUT ${T_TIMEOUT} SKIP_RETURN_CODE ${PIPEVD_SKIP_CODE}
                       RESOURCE_LOCK gpu LABELS "gpu;${T_LABELS}")
endfunction()
