# Build step of rq_discover_tests() (RqTests.cmake), run after each link:
#   cmake -D EXE=prog -D OUT=prog.ctest -D HAS_INLINE=ON|OFF -P RqTestsList.cmake
# writes `EXE --ctest` to OUT. A failing binary (a table entry without its
# metadata), a line CTest could not read, or an inline test without an
# inline build fails the build and leaves no listing behind.
include(${CMAKE_CURRENT_LIST_DIR}/RqTestsRegister.cmake) # and RqListing.cmake

rq_write_listing(${EXE} --ctest "${RQ_CTEST_LINE}" ${OUT} lines)
foreach(line IN LISTS lines)
  if(line MATCHES "${RQ_CTEST_LINE}" AND CMAKE_MATCH_2 STREQUAL "inline" AND NOT HAS_INLINE)
    rq_listing_check(${OUT}
                     "${EXE} --ctest lists ${CMAKE_MATCH_1}, but rq_discover_tests() got no INLINE_TARGET")
  endif()
endforeach()
