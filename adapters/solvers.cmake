# pipevd_solvers: the comparison adapters (adapters/solver.hpp) for bench/ and tests/, not part of
# libpipevd. Each adapter is compiled only where its library is found; the registry says which.
# Link it ahead of a support library that defines pipevd::test::call_scalapack_pdsyevd
# (pipevd_test_support, or bench's pipevd_bench_support: the same tests/support sources).
set(PIPEVD_CUSOLVERMP_ROOT "" CACHE PATH
    "Unpacked nvidia-cusolvermp wheel (holds include/cusolverMp.h and lib/libcusolverMp.so*)")

add_library(pipevd_solvers STATIC solver_registry.cpp root_copy.cpp pipevd/pipevd_solver.cpp
                                  scalapack/pdsyevd_solver.cpp)
target_include_directories(pipevd_solvers PUBLIC ${PROJECT_SOURCE_DIR} ${PROJECT_SOURCE_DIR}/include)
# The pipevd adapter calls the library's public entry.
target_link_libraries(pipevd_solvers PUBLIC pipevd::pipevd MPI::MPI_CXX pipevd::scalapack)

find_package(PkgConfig QUIET)
if(PkgConfig_FOUND)
  pkg_search_module(PIPEVD_ELPA IMPORTED_TARGET elpa_openmp elpa)
endif()
if(PIPEVD_ELPA_FOUND)
  target_sources(pipevd_solvers PRIVATE elpa/elpa_solver.cpp)
  target_link_libraries(pipevd_solvers PUBLIC PkgConfig::PIPEVD_ELPA)
  target_compile_definitions(pipevd_solvers PRIVATE PIPEVD_SOLVERS_HAVE_ELPA=1)
  message(STATUS "pipevd: ELPA adapters with ${PIPEVD_ELPA_MODULE_NAME} ${PIPEVD_ELPA_VERSION}")
else()
  message(STATUS "pipevd: ELPA adapters not built (no elpa / elpa_openmp pkg-config module)")
endif()

if(PIPEVD_HAVE_CUDA)
  target_sources(pipevd_solvers PRIVATE cusolver/cusolver_solver.cpp
                                        cusolvermg/cusolvermg_solver.cpp)
  # cuSOLVERMg is deprecated in CUDA 13 but is still the single-process multi-GPU peer.
  set_source_files_properties(cusolvermg/cusolvermg_solver.cpp PROPERTIES COMPILE_OPTIONS
                                                                          -Wno-deprecated-declarations)
  # CMake 3.25's FindCUDAToolkit has no CUDA::cusolverMg target.
  find_library(PIPEVD_CUSOLVERMG_LIBRARY cusolverMg HINTS ${CUDAToolkit_LIBRARY_DIR} REQUIRED)
  target_link_libraries(pipevd_solvers PUBLIC CUDA::cudart CUDA::cusolver ${PIPEVD_CUSOLVERMG_LIBRARY})
  target_compile_definitions(pipevd_solvers PRIVATE PIPEVD_SOLVERS_HAVE_CUDA=1)

  # Searched afresh each configure, so changing or clearing the root takes effect.
  unset(PIPEVD_CUSOLVERMP_INCLUDE CACHE)
  unset(PIPEVD_CUSOLVERMP_LIBRARY CACHE)
  if(PIPEVD_CUSOLVERMP_ROOT)
    find_path(PIPEVD_CUSOLVERMP_INCLUDE cusolverMp.h PATHS ${PIPEVD_CUSOLVERMP_ROOT}/include NO_DEFAULT_PATH)
    find_library(PIPEVD_CUSOLVERMP_LIBRARY NAMES cusolverMp libcusolverMp.so.0
                 PATHS ${PIPEVD_CUSOLVERMP_ROOT}/lib NO_DEFAULT_PATH)
  endif()
  if(PIPEVD_CUSOLVERMP_INCLUDE AND PIPEVD_CUSOLVERMP_LIBRARY AND PIPEVD_NCCL_LIBRARY)
    target_sources(pipevd_solvers PRIVATE cusolvermp/cusolvermp_solver.cpp)
    set_source_files_properties(cusolvermp/cusolvermp_solver.cpp PROPERTIES INCLUDE_DIRECTORIES
                                                                             ${PIPEVD_CUSOLVERMP_INCLUDE})
    # libcusolverMp needs libcuda.so.1 at link time: the driver's, or the toolkit's stub without a GPU.
    target_link_libraries(pipevd_solvers PUBLIC ${PIPEVD_CUSOLVERMP_LIBRARY} ${PIPEVD_NCCL_LIBRARY}
                                                CUDA::cuda_driver)
    target_compile_definitions(pipevd_solvers PRIVATE PIPEVD_SOLVERS_HAVE_CUSOLVERMP=1)
    message(STATUS "pipevd: cuSOLVERMp adapter with ${PIPEVD_CUSOLVERMP_LIBRARY}")
  else()
    message(STATUS "pipevd: cuSOLVERMp adapter not built (PIPEVD_CUSOLVERMP_ROOT='${PIPEVD_CUSOLVERMP_ROOT}')")
  endif()
endif()
