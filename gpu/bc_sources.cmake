# Bulge chasing on the GPU (issue 6, branch gpubc).
target_sources(pipevd_objects PRIVATE ${CMAKE_CURRENT_LIST_DIR}/bulge_chasing.cu)
# BC-back's BLAS3 formulation (MAGMA's), the BLAS2 kernel's baseline in tests and bench (issue 7).
target_sources(pipevd_objects PRIVATE ${CMAKE_CURRENT_LIST_DIR}/bc_back_blas3.cu)
# Complex Hermitian bulge chasing and BC-back (issue 28), with BC-back's tensor-core variant.
target_sources(pipevd_objects PRIVATE ${CMAKE_CURRENT_LIST_DIR}/bulge_chasing_complex.cu
                                      ${CMAKE_CURRENT_LIST_DIR}/bc_back_complex.cu
                                      ${CMAKE_CURRENT_LIST_DIR}/bc_back_complex_tensor.cu)
