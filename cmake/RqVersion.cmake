# rq_check_header_version(HEADER PREFIX): the version macros of a public
# header (PREFIX_VERSION_MAJOR, _MINOR, _PATCH and the string PREFIX_VERSION)
# must be project(VERSION): configuring fails where they differ, so that a
# release cannot ship a header, a .pc file and a library that disagree.
function(rq_check_header_version header prefix)
  file(READ ${header} text)
  set(parts "")
  foreach(part MAJOR MINOR PATCH)
    if(NOT text MATCHES "#define ${prefix}_VERSION_${part} +([0-9]+)")
      message(FATAL_ERROR "${header}: no ${prefix}_VERSION_${part}")
    endif()
    list(APPEND parts ${CMAKE_MATCH_1})
  endforeach()
  string(REPLACE ";" "." numbers "${parts}")
  if(NOT text MATCHES "#define ${prefix}_VERSION +\"([0-9.]+)\"")
    message(FATAL_ERROR "${header}: no ${prefix}_VERSION string")
  endif()
  if(NOT numbers STREQUAL PROJECT_VERSION OR NOT CMAKE_MATCH_1 STREQUAL PROJECT_VERSION)
    message(FATAL_ERROR "${header}: version ${numbers} / \"${CMAKE_MATCH_1}\", "
                        "project(VERSION) ${PROJECT_VERSION}")
  endif()
endfunction()
