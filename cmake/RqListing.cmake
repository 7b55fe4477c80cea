# Build-step helper shared by the test listings (RqTestsList.cmake, and
# pthread/tests/CasesList.cmake): runs `exe flag`, checks that it succeeded
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

# Fails the build with @problem (if not empty), leaving no listing behind.
function(rq_listing_check out problem)
  if(NOT problem STREQUAL "")
    file(REMOVE ${out})
    message(FATAL_ERROR "${problem}")
  endif()
endfunction()
