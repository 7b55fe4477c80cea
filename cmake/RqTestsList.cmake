# Build step of rq_discover_tests() (RqTests.cmake), run after each link:
#   cmake -D EXE=prog -D OUT=prog.ctest -D HAS_INLINE=ON|OFF -P RqTestsList.cmake
# writes `EXE --ctest` to OUT. A failing binary (a table entry without its
# metadata), a line CTest could not read, or an inline test without an
# inline build fails the build and leaves no listing behind.
include(${CMAKE_CURRENT_LIST_DIR}/RqTestsRegister.cmake)

function(rq_list_tests)
  execute_process(COMMAND ${EXE} --ctest OUTPUT_VARIABLE out ERROR_VARIABLE err
                  RESULT_VARIABLE rc)
  if(NOT rc EQUAL 0)
    set(problem "${EXE} --ctest failed (${rc}):\n${err}")
  elseif(out MATCHES ";")
    set(problem "${EXE} --ctest: a ';' in the listing")
  else()
    string(REGEX MATCHALL "[^\n]+" lines "${out}")
    foreach(line IN LISTS lines)
      if(NOT line MATCHES "${RQ_CTEST_LINE}")
        set(problem "${EXE} --ctest: unreadable line: ${line}")
      elseif(CMAKE_MATCH_2 STREQUAL "inline" AND NOT HAS_INLINE)
        set(problem "${EXE} --ctest lists ${CMAKE_MATCH_1}, but rq_discover_tests() got no INLINE_TARGET")
      endif()
    endforeach()
  endif()
  if(DEFINED problem)
    file(REMOVE ${OUT})
    message(FATAL_ERROR "${problem}")
  endif()
  file(WRITE ${OUT} "${out}")
endfunction()

rq_list_tests()
