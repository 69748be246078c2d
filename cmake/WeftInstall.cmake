include(GNUInstallDirs)
include(CMakePackageConfigHelpers)
install(TARGETS weft EXPORT weftTargets
  ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR})
install(DIRECTORY ${PROJECT_SOURCE_DIR}/include/weft DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(EXPORT weftTargets NAMESPACE weft:: DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/weft)
configure_package_config_file(${PROJECT_SOURCE_DIR}/cmake/weftConfig.cmake.in
  ${PROJECT_BINARY_DIR}/weftConfig.cmake INSTALL_DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/weft)
write_basic_package_version_file(${PROJECT_BINARY_DIR}/weftConfigVersion.cmake
  COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/weftConfig.cmake ${PROJECT_BINARY_DIR}/weftConfigVersion.cmake
  DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/weft)
