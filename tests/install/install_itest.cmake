# ctest install_package_itest (cmake/install/ukai_install.cmake), run as `cmake -P`:
# installs BUILD_DIR into WORK_DIR/prefix, checks the layout and that the public headers
# include nothing from src/, then builds consumer/main.cc out of tree with pkg-config and
# with find_package(ukai) (shared and static) and runs them, alone and under the installed
# `ukai launch -n 2`.
function(run what)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  message(STATUS "${what}: ${out}")
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "${what} failed (${rc}): ${ARGN}\n${out}\n${err}")
  endif()
endfunction()

set(prefix ${WORK_DIR}/prefix)
file(REMOVE_RECURSE ${WORK_DIR})
run("install" ${CMAKE_COMMAND} --install ${BUILD_DIR} --prefix ${prefix})
foreach(f include/ukai/ukai.hpp include/ukai/status.hpp include/ukai/rt/runtime.hpp
          include/ukai/rt/request.hpp lib/libukai.so lib/libukai.a lib/pkgconfig/ukai.pc
          lib/cmake/ukai/ukaiConfig.cmake lib/cmake/ukai/ukaiTargets.cmake bin/ukai)
  if(NOT EXISTS ${prefix}/${f})
    message(FATAL_ERROR "not installed: ${f}")
  endif()
endforeach()
file(GLOB_RECURSE headers ${prefix}/include/*)
foreach(h ${headers})
  file(STRINGS ${h} bad REGEX "#include \"(core|rt|wire|sim)/")
  if(bad)
    message(FATAL_ERROR "${h} includes a header of the source tree: ${bad}")
  endif()
endforeach()

# pkg-config
find_program(PKG_CONFIG pkg-config REQUIRED)
find_program(CXX NAMES c++ g++ REQUIRED)
set(ENV{PKG_CONFIG_PATH} ${prefix}/lib/pkgconfig)
execute_process(COMMAND ${PKG_CONFIG} --cflags --libs ukai OUTPUT_VARIABLE flags
                RESULT_VARIABLE rc OUTPUT_STRIP_TRAILING_WHITESPACE)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "pkg-config --cflags --libs ukai failed")
endif()
separate_arguments(flags UNIX_COMMAND "${flags}")
run("c++ with pkg-config" ${CXX} -std=c++20 ${SOURCE_DIR}/consumer/main.cc ${flags}
    -o ${WORK_DIR}/consumer_pc)
set(env ${CMAKE_COMMAND} -E env LD_LIBRARY_PATH=${prefix}/lib)
run("consumer (pkg-config)" ${env} ${WORK_DIR}/consumer_pc)
run("ukai launch -n 2 consumer (pkg-config)" ${env} ${prefix}/bin/ukai launch -n 2 --timeout 60
    ${WORK_DIR}/consumer_pc)

# CMake
run("cmake configure" ${CMAKE_COMMAND} -S ${SOURCE_DIR}/consumer -B ${WORK_DIR}/cmake
    -DCMAKE_PREFIX_PATH=${prefix} -DCMAKE_BUILD_TYPE=Release -DCMAKE_CXX_COMPILER=${CXX})
run("cmake build" ${CMAKE_COMMAND} --build ${WORK_DIR}/cmake)
run("consumer (find_package, shared)" ${WORK_DIR}/cmake/consumer)
run("consumer (find_package, static)" ${WORK_DIR}/cmake/consumer_static)
run("ukai launch -n 2 consumer_static" ${prefix}/bin/ukai launch -n 2 --timeout 60
    ${WORK_DIR}/cmake/consumer_static)
file(REMOVE_RECURSE ${WORK_DIR})
