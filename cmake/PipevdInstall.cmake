# Install rule and CMake package: find_package(pipevd) gives pipevd::pipevd.
include(CMakePackageConfigHelpers)
install(TARGETS pipevd EXPORT pipevdTargets
        LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
        ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
        RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR}
        INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(FILES include/pipevd.h DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
set(PIPEVD_CMAKE_DIR ${CMAKE_INSTALL_LIBDIR}/cmake/pipevd)
install(EXPORT pipevdTargets NAMESPACE pipevd:: DESTINATION ${PIPEVD_CMAKE_DIR})
configure_package_config_file(cmake/pipevdConfig.cmake.in ${CMAKE_CURRENT_BINARY_DIR}/pipevdConfig.cmake
                              INSTALL_DESTINATION ${PIPEVD_CMAKE_DIR}
                              PATH_VARS CMAKE_INSTALL_INCLUDEDIR)
write_basic_package_version_file(${CMAKE_CURRENT_BINARY_DIR}/pipevdConfigVersion.cmake
                                 COMPATIBILITY SameMajorVersion)
install(FILES ${CMAKE_CURRENT_BINARY_DIR}/pipevdConfig.cmake
              ${CMAKE_CURRENT_BINARY_DIR}/pipevdConfigVersion.cmake
              cmake/PipevdScalapack.cmake
        DESTINATION ${PIPEVD_CMAKE_DIR})

include(PipevdPkgConfig)  # pipevd.pc for Make-based codes
