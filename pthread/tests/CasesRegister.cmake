# CTest side of the drop-in's driver tests: for each case spinprog listed
# (CasesList.cmake), run_case.sh runs it preloaded and linked (and, with
# RQ_EXTRA_TESTS, on plain glibc, where the deadlocking cases must hang).
# A line: NAME [VAR=value ...], the environment that case's runs need.
include(${CMAKE_CURRENT_LIST_DIR}/../../cmake/RqListing.cmake)

set(RQ_CASE_LINE "^([a-z0-9][a-z0-9-]*)((( [A-Z_]+=[^ ]*)*))$")

# listing, run_case.sh, spinprog, spinprog_linked, LD_PRELOAD's list, the
# environment every run gets, and ON to register the plain-glibc runs.
function(rq_register_cases listing driver plain_exe linked_exe preload extra_env with_plain)
  rq_read_listing("${listing}" spinprog "${RQ_CASE_LINE}" lines)
  foreach(line IN LISTS lines)
    string(REGEX MATCH "${RQ_CASE_LINE}" line "${line}") # for CMAKE_MATCH_n
    set(c ${CMAKE_MATCH_1})
    string(STRIP "${CMAKE_MATCH_2}" own_env)
    string(REPLACE " " ";" env "${own_env}")
    list(APPEND env ${extra_env})
    add_test(pthread_preload_${c} "${driver}" preload ${c} "${plain_exe}" "${preload}")
    add_test(pthread_linked_${c} "${driver}" linked ${c} "${linked_exe}")
    set_tests_properties(pthread_preload_${c} pthread_linked_${c}
                         PROPERTIES TIMEOUT 60 LABELS pthread ENVIRONMENT "${env}")
    if(with_plain)
      # Proof that glibc hangs: configuration-independent, registered once.
      add_test(pthread_plain_${c} "${driver}" plain ${c} "${plain_exe}")
      set_tests_properties(pthread_plain_${c} PROPERTIES TIMEOUT 60 LABELS pthread)
    endif()
  endforeach()
endfunction()
