# Runs one test program and decides the test (see WeftTesting.cmake):
#   cmake -DWEFT_TEST_SPEC=spec.cmake -P run_test.cmake -- program args...
# The output is printed whole, then the verdict; a failed check exits 1.
include(${WEFT_TEST_SPEC})

set(command)
set(after_dashes FALSE)
math(EXPR last "${CMAKE_ARGC} - 1")
foreach(i RANGE ${last})
  if(after_dashes)
    string(REPLACE ";" "\\;" arg "${CMAKE_ARGV${i}}")  # one argument, even with a ';' in it
    list(APPEND command "${arg}")
  elseif("${CMAKE_ARGV${i}}" STREQUAL "--")
    set(after_dashes TRUE)
  endif()
endforeach()
if(NOT command)
  message(FATAL_ERROR "run_test.cmake: no command after --")
endif()

execute_process(COMMAND ${command} RESULT_VARIABLE status OUTPUT_VARIABLE output ERROR_VARIABLE output)
message("${output}")
message("(exit status ${status})")

# FATAL_ERROR ends the script with status 1 (cmake_language(EXIT) needs
# CMake 3.29).
function(fail why)
  message(FATAL_ERROR "TEST FAILED: ${why}")
endfunction()

if(DEFINED WEFT_SKIP_STATUS AND "${status}" STREQUAL "${WEFT_SKIP_STATUS}")
  # ctest's SKIP_REGULAR_EXPRESSION (set by weft_test) looks for this line.
  message("WEFT_TEST_SKIPPED: exit status ${status} means the program could not run here")
  return()
endif()
if(DEFINED WEFT_FAILS_WITH)
  if("${status}" STREQUAL "0")
    fail("expected the program to fail, it exited 0")
  endif()
  if(DEFINED WEFT_STATUS AND NOT "${status}" STREQUAL "${WEFT_STATUS}")
    fail("expected exit status ${WEFT_STATUS}, got ${status}")
  endif()
  if(NOT output MATCHES "${WEFT_FAILS_WITH}")
    fail("expected output matching: ${WEFT_FAILS_WITH}")
  endif()
else()
  if(NOT "${status}" STREQUAL "0")
    fail("exit status ${status}")
  endif()
  if(DEFINED WEFT_SKIP_IF AND output MATCHES "${WEFT_SKIP_IF}")
    # ctest's SKIP_REGULAR_EXPRESSION (set by weft_test) looks for this line,
    # printed only once the exit status was found to be 0.
    message("WEFT_TEST_SKIPPED: the output matches ${WEFT_SKIP_IF}")
    return()
  endif()
endif()
if(WEFT_EXPECT_COUNT GREATER 0)
  math(EXPR last "${WEFT_EXPECT_COUNT} - 1")
  foreach(i RANGE ${last})
    if(NOT output MATCHES "${WEFT_EXPECT_${i}}")
      fail("expected output matching: ${WEFT_EXPECT_${i}}")
    endif()
  endforeach()
endif()
