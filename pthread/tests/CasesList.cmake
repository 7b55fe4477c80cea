# Build step, run after spinprog links:
#   cmake -D EXE=spinprog -D OUT=spinprog.cases -P CasesList.cmake
# writes `EXE --list` (a line per case: NAME [VAR=value ...]) to OUT. A
# failing binary or a line CTest could not read fails the build and leaves
# no listing behind.
include(${CMAKE_CURRENT_LIST_DIR}/CasesRegister.cmake) # and RqListing.cmake

rq_write_listing(${EXE} --list "${RQ_CASE_LINE}" ${OUT} lines)
