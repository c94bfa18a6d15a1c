# Bulge chasing on the GPU (issue 6, branch gpubc).
target_sources(pipevd_objects PRIVATE ${CMAKE_CURRENT_LIST_DIR}/bulge_chasing.cu)
