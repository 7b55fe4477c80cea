# Build step, run after spinprog links:
#   cmake -D EXE=spinprog -D OUT=spinprog.cases -P CasesList.cmake
# writes `EXE --list` (a line per case: NAME [VAR=value ...]) to OUT. A
# failing binary or a line CTest could not read fails the build and leaves
# no listing behind.
include(${CMAKE_CURRENT_LIST_DIR}/CasesRegister.cmake)

execute_process(COMMAND ${EXE} --list OUTPUT_VARIABLE out ERROR_VARIABLE err RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  set(problem "${EXE} --list failed (${rc}):\n${err}")
elseif(out MATCHES ";")
  set(problem "${EXE} --list: a ';' in the listing")
elseif(out STREQUAL "")
  set(problem "${EXE} --list: no cases")
else()
  string(REGEX MATCHALL "[^\n]+" lines "${out}")
  foreach(line IN LISTS lines)
    if(NOT line MATCHES "${RQ_CASE_LINE}")
      set(problem "${EXE} --list: unreadable line: ${line}")
    endif()
  endforeach()
endif()
if(DEFINED problem)
  file(REMOVE ${OUT})
  message(FATAL_ERROR "${problem}")
endif()
file(WRITE ${OUT} "${out}")
