# Helpers shared by the test listings: rq_discover_tests() (RqTestsList.cmake,
# RqTestsRegister.cmake) and the drop-in's driver cases (pthread/tests/).
#
# Build step: rq_write_listing() runs `exe flag`, checks that it succeeded
# and that every line of its output matches line_regex, and writes the
# output to out. On a problem it removes out and fails the build, so that
# CTest never reads a listing the build did not accept. The lines go to
# the caller's lines_var for further checks.
function(rq_write_listing exe flag line_regex out lines_var)
  execute_process(COMMAND ${exe} ${flag} OUTPUT_VARIABLE text ERROR_VARIABLE err
                  RESULT_VARIABLE rc)
  if(NOT rc EQUAL 0)
    set(problem "${exe} ${flag} failed (${rc}):\n${err}")
  elseif(text MATCHES ";")
    set(problem "${exe} ${flag}: a ';' in the listing")
  else()
    string(REGEX MATCHALL "[^\n]+" lines "${text}")
    foreach(line IN LISTS lines)
      if(NOT line MATCHES "${line_regex}")
        set(problem "${exe} ${flag}: unreadable line: ${line}")
      endif()
    endforeach()
  endif()
  rq_listing_check("${out}" "${problem}")
  file(WRITE ${out} "${text}")
  set(${lines_var} "${lines}" PARENT_SCOPE)
endfunction()

# CTest side: the lines of @listing that match @line_regex (the build step
# accepts no others), or, when the build wrote no listing, none and a test
# NAME_NOT_BUILT that fails (there is no such command).
function(rq_read_listing listing name line_regex lines_var)
  set(lines "")
  if(EXISTS "${listing}")
    file(STRINGS "${listing}" all)
    foreach(line IN LISTS all)
      if(line MATCHES "${line_regex}")
        list(APPEND lines "${line}")
      endif()
    endforeach()
  else()
    add_test(${name}_NOT_BUILT ${name}_NOT_BUILT)
  endif()
  set(${lines_var} "${lines}" PARENT_SCOPE)
endfunction()

# Fails the build with @problem (if not empty), leaving no listing behind.
function(rq_listing_check out problem)
  if(NOT problem STREQUAL "")
    file(REMOVE ${out})
    message(FATAL_ERROR "${problem}")
  endif()
endfunction()
