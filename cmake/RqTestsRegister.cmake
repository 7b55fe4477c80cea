# CTest side of rq_discover_tests() (RqTests.cmake): declares the tests a
# binary listed with `--ctest`, when ctest reads the build tree. A line:
#   NAME build=plain|inline arg=ARG timeout=SECONDS skip=77|none labels=L,... env=VAR=value,...
# is the test NAME, running `EXE ARG` (the inline build's EXE for
# build=inline) with that TIMEOUT, SKIP_RETURN_CODE, LABELS and ENVIRONMENT.
# Tests labelled cpu0-overload (TU_OVERLOAD) pin busy threads to the first
# CPU and assume that load is all: they share RESOURCE_LOCK cpu0-overload,
# so that CTest never runs two of them at once.
include(${CMAKE_CURRENT_LIST_DIR}/RqListing.cmake)

set(RQ_CTEST_LINE
    "^([a-z0-9_]+) build=(plain|inline) arg=([a-z0-9_]+) timeout=([0-9]+) skip=(77|none) labels=([^ ]*) env=([^ ]*)$")

# listing, the binary, its inline build ("" if none), working directory, and
# the environment every test gets besides its own.
function(rq_register_tests listing exe inline_exe workdir extra_env)
  get_filename_component(bin "${exe}" NAME)
  rq_read_listing("${listing}" ${bin} "${RQ_CTEST_LINE}" lines)
  foreach(line IN LISTS lines)
    string(REGEX MATCH "${RQ_CTEST_LINE}" line "${line}") # for CMAKE_MATCH_n
    set(name ${CMAKE_MATCH_1})
    set(cmd "${exe}")
    if(CMAKE_MATCH_2 STREQUAL "inline")
      set(cmd "${inline_exe}")
    endif()
    set(arg ${CMAKE_MATCH_3})
    set(timeout ${CMAKE_MATCH_4})
    set(skip ${CMAKE_MATCH_5})
    string(REPLACE "," ";" labels "${CMAKE_MATCH_6}")
    string(REPLACE "," ";" env "${CMAKE_MATCH_7}")
    list(APPEND env ${extra_env})
    add_test(${name} "${cmd}" ${arg})
    set_tests_properties(${name} PROPERTIES TIMEOUT ${timeout} LABELS "${labels}"
                         ENVIRONMENT "${env}" WORKING_DIRECTORY "${workdir}")
    list(FIND labels cpu0-overload overload) # no IN_LIST: ctest runs this without policies
    if(overload GREATER -1)
      set_tests_properties(${name} PROPERTIES RESOURCE_LOCK cpu0-overload)
    endif()
    if(skip STREQUAL "77")
      set_tests_properties(${name} PROPERTIES SKIP_RETURN_CODE 77)
    endif()
  endforeach()
endfunction()
