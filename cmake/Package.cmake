# find_package(dlc) support, from the build tree and after `cmake --install`.
include(CMakePackageConfigHelpers)
set(DLC_CMAKE_INSTALL_DIR lib/cmake/dlc)

export(EXPORT dlcTargets NAMESPACE dlc:: FILE ${PROJECT_BINARY_DIR}/dlcTargets.cmake)
configure_file(${PROJECT_SOURCE_DIR}/cmake/dlcConfig.cmake.in
               ${PROJECT_BINARY_DIR}/dlcConfig.cmake @ONLY)
configure_file(${PROJECT_SOURCE_DIR}/cmake/dlcFunctions.cmake
               ${PROJECT_BINARY_DIR}/dlcFunctions.cmake COPYONLY)
write_basic_package_version_file(${PROJECT_BINARY_DIR}/dlcConfigVersion.cmake
                                 COMPATIBILITY SameMinorVersion)

install(EXPORT dlcTargets NAMESPACE dlc:: DESTINATION ${DLC_CMAKE_INSTALL_DIR})
install(FILES ${PROJECT_BINARY_DIR}/dlcConfig.cmake ${PROJECT_BINARY_DIR}/dlcConfigVersion.cmake
              ${PROJECT_SOURCE_DIR}/cmake/dlcFunctions.cmake
        DESTINATION ${DLC_CMAKE_INSTALL_DIR})
