# Bulge chasing and BC-back on the host (branch bc).
target_sources(pipevd_objects PRIVATE ${CMAKE_CURRENT_LIST_DIR}/bulge_chasing.cpp
                                      ${CMAKE_CURRENT_LIST_DIR}/bc_back.cpp)
