# Fails if a Catch2 test case has none of the tags ctest runs (it would never run).
execute_process(COMMAND ${EXE} ${FILTER} --list-test-names-only OUTPUT_VARIABLE out RESULT_VARIABLE rc)
string(STRIP "${out}" out)
if(out)
  message(FATAL_ERROR "test cases outside the ctest tags (give them one):\n${out}")
endif()
message(STATUS "every test case carries a ctest tag")
