# Helpers shared by every CMakeLists.txt of the project.

# ukai_soname(VAR LIBRARY): the soname of shared library LIBRARY (a path), for a library
# the program loads on demand with dlopen() instead of linking it.
function(ukai_soname var library)
  execute_process(COMMAND ${CMAKE_OBJDUMP} -p ${library} OUTPUT_VARIABLE dyn)
  string(REGEX MATCH "SONAME +([^ \n]+)" soname_line "${dyn}")
  if(NOT CMAKE_MATCH_1)
    message(FATAL_ERROR "cannot read the soname of ${library} (objdump -p)")
  endif()
  set(${var} "${CMAKE_MATCH_1}" PARENT_SCOPE)
endfunction()

# ukai_library(NAME DIR [DEPS ...]): a static library of every .cc below src/DIR
# (excluding *_main.cc), with include roots src/ and include/.
function(ukai_library name dir)
  cmake_parse_arguments(ARG "" "" "DEPS;EXCLUDE" ${ARGN})
  file(GLOB_RECURSE srcs CONFIGURE_DEPENDS ${PROJECT_SOURCE_DIR}/src/${dir}/*.cc)
  list(FILTER srcs EXCLUDE REGEX "_main\\.cc$")
  foreach(pattern IN LISTS ARG_EXCLUDE)
    list(FILTER srcs EXCLUDE REGEX "${pattern}")
  endforeach()
  if(srcs)
    add_library(${name} STATIC ${srcs})
    target_include_directories(${name} PUBLIC ${PROJECT_SOURCE_DIR}/src ${PROJECT_SOURCE_DIR}/include)
    target_link_libraries(${name} PUBLIC ${ARG_DEPS})
    # One section per function: the `ukai` executable's link places the hot ones together
    # (src/cli/CMakeLists.txt, hot_symbols.txt) and drops the unused ones.
    if(NOT UKAI_SANITIZE AND NOT UKAI_FUZZ)
      target_compile_options(${name} PRIVATE -ffunction-sections)
    endif()
  else()  # headers only so far
    add_library(${name} INTERFACE)
    target_include_directories(${name} INTERFACE ${PROJECT_SOURCE_DIR}/src ${PROJECT_SOURCE_DIR}/include)
    target_link_libraries(${name} INTERFACE ${ARG_DEPS})
  endif()
endfunction()

# ukai_tests(AREA DEPS ...): one unit-test binary of tests/AREA/**/*_test.cc (label `unit`)
# and one integration-test binary of tests/AREA/**/*_itest.cc (label `integration`).
function(ukai_tests area)
  cmake_parse_arguments(ARG "" "" "DEPS" ${ARGN})
  file(GLOB_RECURSE unit CONFIGURE_DEPENDS ${PROJECT_SOURCE_DIR}/tests/${area}/*_test.cc)
  file(GLOB_RECURSE integ CONFIGURE_DEPENDS ${PROJECT_SOURCE_DIR}/tests/${area}/*_itest.cc)
  string(REPLACE "/" "_" tag ${area})
  if(unit)
    add_executable(${tag}_unit_tests ${unit})
    target_link_libraries(${tag}_unit_tests PRIVATE ${ARG_DEPS} GTest::gtest GTest::gtest_main GTest::gmock)
    target_include_directories(${tag}_unit_tests PRIVATE ${PROJECT_SOURCE_DIR}/tests)
    gtest_discover_tests(${tag}_unit_tests PROPERTIES LABELS unit DISCOVERY_TIMEOUT 60)
  endif()
  if(integ AND UKAI_BUILD_INTEGRATION_TESTS)
    add_executable(${tag}_integration_tests ${integ})
    target_link_libraries(${tag}_integration_tests PRIVATE ${ARG_DEPS} GTest::gtest GTest::gtest_main GTest::gmock)
    target_include_directories(${tag}_integration_tests PRIVATE ${PROJECT_SOURCE_DIR}/tests)
    gtest_discover_tests(${tag}_integration_tests PROPERTIES LABELS integration DISCOVERY_TIMEOUT 60)
  endif()
endfunction()

# ukai_fuzz_targets(LIB SRCS...): a libFuzzer executable ukai_fuzz_<stem> per fuzz source,
# linked to LIB (clang only; called from fuzz/CMakeLists.txt under -DUKAI_FUZZ=ON); the
# target ukai_fuzz_all builds them all.
function(ukai_fuzz_targets lib)
  if(NOT TARGET ukai_fuzz_all)
    add_custom_target(ukai_fuzz_all)
  endif()
  foreach(src IN LISTS ARGN)
    get_filename_component(stem ${src} NAME_WE)
    add_executable(ukai_fuzz_${stem} ${src})
    add_dependencies(ukai_fuzz_all ukai_fuzz_${stem})
    target_compile_options(ukai_fuzz_${stem} PRIVATE -fsanitize=fuzzer)
    target_link_options(ukai_fuzz_${stem} PRIVATE -fsanitize=fuzzer)
    target_link_libraries(ukai_fuzz_${stem} PRIVATE ${lib})
  endforeach()
endfunction()

# ukai_fuzz_replay(TEST_TARGET LIB SRCS...): links each fuzz source's entry point into
# TEST_TARGET, renamed <stem>_TestOneInput so that several link together (the replay tests
# call them under gcc, ASan and UBSan).
function(ukai_fuzz_replay test_target lib)
  foreach(src IN LISTS ARGN)
    get_filename_component(stem ${src} NAME_WE)
    add_library(${stem}_entry OBJECT ${src})
    target_link_libraries(${stem}_entry PRIVATE ${lib})
    target_compile_definitions(${stem}_entry PRIVATE LLVMFuzzerTestOneInput=${stem}_TestOneInput)
    target_link_libraries(${test_target} PRIVATE ${stem}_entry)
  endforeach()
endfunction()
