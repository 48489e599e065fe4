# `cmake --install build [--prefix DIR]`: mentatd and mentat-cli, and the C++
# client as a CMake package, so that another project can
#
#   find_package(mentat 0.1 REQUIRED)            # CMAKE_PREFIX_PATH=DIR
#   target_link_libraries(app PRIVATE mentat::client)
#
# and include "mentat/client/client.h". The package holds the static
# libraries mentat_client and mentat_proto (the generated messages and gRPC
# stubs, whose headers the client's include), their headers, and the
# .proto; mentatConfig.cmake finds the same Protobuf, gRPC and abseil the
# build used. client/tests/find_package_test.py installs into a temporary
# prefix and builds a consumer against it.
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

set(mentat_cmake_dir ${CMAKE_INSTALL_LIBDIR}/cmake/mentat)

set_target_properties(mentat_client PROPERTIES EXPORT_NAME client)
set_target_properties(mentat_proto PROPERTIES EXPORT_NAME proto)
install(TARGETS mentat_client mentat_proto
        EXPORT mentatTargets
        ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
        LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
        INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(DIRECTORY ${CMAKE_SOURCE_DIR}/client/include/
        DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(FILES ${MENTAT_PROTO_HEADERS}
        DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/mentat/v1)
install(FILES ${MENTAT_PROTO_DIR}/mentat/v1/mentat.proto
        DESTINATION ${CMAKE_INSTALL_DATADIR}/mentat/proto/mentat/v1)
foreach(program mentatd mentat-cli)
  if(TARGET ${program})
    install(TARGETS ${program} RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
  endif()
endforeach()

install(EXPORT mentatTargets NAMESPACE mentat::
        DESTINATION ${mentat_cmake_dir})
configure_package_config_file(
  ${CMAKE_SOURCE_DIR}/tools/cmake/mentatConfig.cmake.in
  ${CMAKE_BINARY_DIR}/mentatConfig.cmake
  INSTALL_DESTINATION ${mentat_cmake_dir})
write_basic_package_version_file(
  ${CMAKE_BINARY_DIR}/mentatConfigVersion.cmake
  VERSION ${PROJECT_VERSION}
  # v1 of the proto and the client are compatible within 0.x.y only.
  COMPATIBILITY SameMinorVersion)
install(FILES ${CMAKE_BINARY_DIR}/mentatConfig.cmake
              ${CMAKE_BINARY_DIR}/mentatConfigVersion.cmake
        DESTINATION ${mentat_cmake_dir})
