# rq_add_parser_fuzzer(TARGET TEST LABELS
#                      SOURCES src... [INCLUDES dir...] [LIBS lib...])
# In the clang ASan build only: TARGET, the SOURCES built with RQ_FUZZ
# defined as a libFuzzer target (a test file whose RQ_FUZZ branch holds the
# entry, tests/parsecheck.h), and the CTest test TEST that runs it for 5 s
# on a fresh corpus, with inputs up to 255 bytes (environment strings).
function(rq_add_parser_fuzzer target test labels)
  if(NOT (CMAKE_C_COMPILER_ID STREQUAL "Clang" AND RQ_SANITIZE STREQUAL "address"))
    return()
  endif()
  cmake_parse_arguments(PARSE_ARGV 3 arg "" "" "SOURCES;INCLUDES;LIBS")
  add_executable(${target} ${arg_SOURCES})
  target_compile_definitions(${target} PRIVATE RQ_FUZZ)
  target_compile_options(${target} PRIVATE -fsanitize=fuzzer)
  target_link_options(${target} PRIVATE -fsanitize=fuzzer)
  target_include_directories(${target} PRIVATE ${arg_INCLUDES})
  target_link_libraries(${target} PRIVATE ${arg_LIBS})
  add_test(NAME ${test} COMMAND sh -c
           "rm -rf ${test}-corpus && mkdir ${test}-corpus && \
            exec '$<TARGET_FILE:${target}>' -max_total_time=5 -max_len=255 -timeout=10 ${test}-corpus")
  set_tests_properties(${test} PROPERTIES TIMEOUT 60 LABELS "${labels}")
endfunction()
