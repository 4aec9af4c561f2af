# The installable package (`cmake --install BUILD [--prefix DIR]`), docs/runtime.md
# "Install and link":
#   include/ukai/...                   the public headers (self-contained)
#   lib/libukai.so, lib/libukai.a      the runtime (with its wire codec and Status), one
#                                      library a user links (shared and static)
#   lib/pkgconfig/ukai.pc              pkg-config (relocatable: paths from ${pcfiledir})
#   lib/cmake/ukai/ukaiConfig*.cmake   find_package(ukai) -> ukai::ukai (shared),
#                                      ukai::ukai_static
#   bin/ukai                           the `ukai` tool
# The in-tree targets (ukai, ukai_core, ukai_wire) stay static archives for the tree's own
# programs; the installed libraries are built from one set of position-independent objects.
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

file(GLOB_RECURSE ukai_pkg_srcs CONFIGURE_DEPENDS ${PROJECT_SOURCE_DIR}/src/rt/*.cc
     ${PROJECT_SOURCE_DIR}/src/wire/*.cc)
list(APPEND ukai_pkg_srcs ${PROJECT_SOURCE_DIR}/src/core/status.cc)
list(FILTER ukai_pkg_srcs EXCLUDE REGEX "_main\\.cc$")
list(FILTER ukai_pkg_srcs EXCLUDE REGEX "/rt/sim_machine/")  # needs the simulator
if(NOT MPI_FOUND)
  list(FILTER ukai_pkg_srcs EXCLUDE REGEX "/rt/modules/mpi/|/rt/launch/mpi")
else()  # Open MPI is loaded on demand (core/mpi/mpi_library.h), not linked
  list(APPEND ukai_pkg_srcs ${PROJECT_SOURCE_DIR}/src/core/mpi/mpi_library.cc
       ${PROJECT_SOURCE_DIR}/src/core/shared_library.cc)
  set_source_files_properties(${PROJECT_SOURCE_DIR}/src/core/mpi/mpi_library.cc PROPERTIES
                              COMPILE_DEFINITIONS UKAI_MPI_SONAME="${UKAI_MPI_SONAME}")
endif()
add_library(ukai_pkg_objects OBJECT ${ukai_pkg_srcs})
set_target_properties(ukai_pkg_objects PROPERTIES POSITION_INDEPENDENT_CODE ON)
target_include_directories(ukai_pkg_objects PRIVATE ${PROJECT_SOURCE_DIR}/src
                                                    ${PROJECT_SOURCE_DIR}/include)
target_link_libraries(ukai_pkg_objects PRIVATE PkgConfig::SODIUM PkgConfig::OTF2)
if(MPI_FOUND)
  target_compile_definitions(ukai_pkg_objects PRIVATE UKAI_HAVE_MPI=1)
  target_link_libraries(ukai_pkg_objects PRIVATE ukai_mpi_headers)
endif()

foreach(kind shared static)
  string(TOUPPER ${kind} KIND)
  add_library(ukai_${kind} ${KIND} $<TARGET_OBJECTS:ukai_pkg_objects>)
  set_target_properties(ukai_${kind} PROPERTIES OUTPUT_NAME ukai
                                                ARCHIVE_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/pkg
                                                LIBRARY_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/pkg)
  target_include_directories(ukai_${kind} INTERFACE
                             $<BUILD_INTERFACE:${PROJECT_SOURCE_DIR}/include>
                             $<INSTALL_INTERFACE:${CMAKE_INSTALL_INCLUDEDIR}>)
  target_compile_features(ukai_${kind} INTERFACE cxx_std_20)
  # libsodium and libotf2 by path too: the exported static target needs no pkg-config at
  # the user.
  target_link_libraries(ukai_${kind} PRIVATE Threads::Threads ${SODIUM_LINK_LIBRARIES}
                        ${OTF2_LINK_LIBRARIES})
  target_link_libraries(ukai_${kind} PRIVATE ${CMAKE_DL_LIBS})  # Open MPI, libpcap on demand
endforeach()
set_target_properties(ukai_shared PROPERTIES EXPORT_NAME ukai VERSION ${PROJECT_VERSION}
                                             SOVERSION ${PROJECT_VERSION_MAJOR})
set_target_properties(ukai_static PROPERTIES EXPORT_NAME ukai_static)

install(DIRECTORY ${PROJECT_SOURCE_DIR}/include/ukai DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(TARGETS ukai_shared ukai_static EXPORT ukaiTargets
        LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
        ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR})
if(TARGET ukai_exe)
  install(TARGETS ukai_exe RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
  install(PROGRAMS ${PROJECT_SOURCE_DIR}/src/cli/plot/ukai_sim_plot.py
          DESTINATION ${CMAKE_INSTALL_BINDIR})
endif()
install(EXPORT ukaiTargets NAMESPACE ukai:: DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/ukai)
configure_package_config_file(${CMAKE_CURRENT_LIST_DIR}/ukaiConfig.cmake.in
                              ${CMAKE_BINARY_DIR}/pkg/ukaiConfig.cmake
                              INSTALL_DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/ukai)
write_basic_package_version_file(${CMAKE_BINARY_DIR}/pkg/ukaiConfigVersion.cmake
                                 COMPATIBILITY SameMinorVersion)
install(FILES ${CMAKE_BINARY_DIR}/pkg/ukaiConfig.cmake ${CMAKE_BINARY_DIR}/pkg/ukaiConfigVersion.cmake
        DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/ukai)

# ukai.pc: prefix relative to the file, so `--prefix` at install time is honoured.
string(REGEX REPLACE "[^/]+" ".." UKAI_PC_UP "${CMAKE_INSTALL_LIBDIR}/pkgconfig")
set(UKAI_PC_PRIVATE "-pthread")  # Open MPI is loaded on demand: not a dependency
set(UKAI_PC_REQUIRES_PRIVATE "libsodium otf2")
configure_file(${CMAKE_CURRENT_LIST_DIR}/ukai.pc.in ${CMAKE_BINARY_DIR}/pkg/ukai.pc @ONLY)
install(FILES ${CMAKE_BINARY_DIR}/pkg/ukai.pc DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)

# The test: install into a temporary prefix, then build and run a program out of tree
# against it, once with pkg-config and once with find_package (tests/install/). Not in a
# sanitizer build (a plain consumer cannot link a sanitized libukai).
if(UKAI_BUILD_TESTS AND NOT UKAI_SANITIZE)
  add_test(NAME install_package_itest
           COMMAND ${CMAKE_COMMAND} -DBUILD_DIR=${CMAKE_BINARY_DIR}
                   -DSOURCE_DIR=${PROJECT_SOURCE_DIR}/tests/install
                   -DWORK_DIR=${CMAKE_BINARY_DIR}/install_itest
                   -P ${PROJECT_SOURCE_DIR}/tests/install/install_itest.cmake)
  set_tests_properties(install_package_itest PROPERTIES LABELS integration TIMEOUT 600)
endif()
