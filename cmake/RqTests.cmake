# Test registration from the test binaries themselves.
#
# A test binary built on tests/testutil.h holds a table of its tests, each
# with its CTest metadata (timeout, labels, environment, TAS and inline
# variants); `prog --ctest` prints one line per CTest test. This is the only
# list: CMake keeps none, so a test added to a table is registered without
# touching CMake. As gtest_discover_tests() does, the binary is asked after
# each link and CTest reads the answer through TEST_INCLUDE_FILES:
#
#   rq_discover_tests(TARGET [INLINE_TARGET target] [ENVIRONMENT var=value...])
#
# - after each link, TARGET --ctest is written to TARGET.ctest in the build
#   directory (RqTestsList.cmake); a table entry without its metadata, or an
#   inline test without INLINE_TARGET, fails the build;
# - when ctest reads the build tree, RqTestsRegister.cmake declares the
#   listed tests; the inline ones (build=inline) run INLINE_TARGET, the
#   RQSPINLOCK_INLINE build of the same source; ENVIRONMENT is added to the
#   environment of every test (settings of this build, such as paths).
set(RQ_TESTS_MODULE_DIR ${CMAKE_CURRENT_LIST_DIR})

function(rq_discover_tests target)
  cmake_parse_arguments(D "" "INLINE_TARGET" "ENVIRONMENT" ${ARGN})
  set(listing ${CMAKE_CURRENT_BINARY_DIR}/${target}.ctest)
  set(include_file ${CMAKE_CURRENT_BINARY_DIR}/${target}_tests.cmake)
  set(inline_exe "")
  set(has_inline OFF)
  if(D_INLINE_TARGET)
    set(inline_exe $<TARGET_FILE:${D_INLINE_TARGET}>)
    set(has_inline ON)
  endif()
  add_custom_command(TARGET ${target} POST_BUILD
    BYPRODUCTS ${listing}
    COMMAND ${CMAKE_COMMAND} -D EXE=$<TARGET_FILE:${target}> -D OUT=${listing}
            -D HAS_INLINE=${has_inline} -P ${RQ_TESTS_MODULE_DIR}/RqTestsList.cmake
    VERBATIM)
  # The script that lists the tests is part of what the listing depends on.
  set_property(TARGET ${target} APPEND PROPERTY LINK_DEPENDS
               ${RQ_TESTS_MODULE_DIR}/RqTestsList.cmake ${RQ_TESTS_MODULE_DIR}/RqListing.cmake)
  file(GENERATE OUTPUT ${include_file} CONTENT
"include([==[${RQ_TESTS_MODULE_DIR}/RqTestsRegister.cmake]==])
rq_register_tests([==[${listing}]==] [==[$<TARGET_FILE:${target}>]==]
  [==[${inline_exe}]==] [==[${CMAKE_CURRENT_BINARY_DIR}]==] [==[${D_ENVIRONMENT}]==])
")
  set_property(DIRECTORY APPEND PROPERTY TEST_INCLUDE_FILES ${include_file})
endfunction()
