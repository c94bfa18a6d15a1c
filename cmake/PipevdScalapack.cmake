# ScaLAPACK (with its BLACS) and LAPACK/BLAS as imported targets. Plain find_library so the same
# file works with Debian's packages and with the relocated copies of ../shared/gpu-node.
find_library(PIPEVD_SCALAPACK_LIBRARY NAMES scalapack-openmpi scalapack REQUIRED)
find_library(PIPEVD_LAPACK_LIBRARY NAMES lapack REQUIRED)
find_library(PIPEVD_BLAS_LIBRARY NAMES openblas blas REQUIRED)
if(NOT TARGET pipevd::lapack)
  add_library(pipevd::lapack INTERFACE IMPORTED)
  set_target_properties(pipevd::lapack PROPERTIES INTERFACE_LINK_LIBRARIES
                                                  "${PIPEVD_LAPACK_LIBRARY};${PIPEVD_BLAS_LIBRARY}")
  add_library(pipevd::scalapack INTERFACE IMPORTED)
  set_target_properties(pipevd::scalapack PROPERTIES INTERFACE_LINK_LIBRARIES
                                                     "${PIPEVD_SCALAPACK_LIBRARY};pipevd::lapack")
endif()
message(STATUS "pipevd: ScaLAPACK ${PIPEVD_SCALAPACK_LIBRARY}, LAPACK ${PIPEVD_LAPACK_LIBRARY}, BLAS ${PIPEVD_BLAS_LIBRARY}")
