# A benchmark run briefly with --summary must succeed and write its summary: JSON whose output
# (the printed lines) starts as expected and whose named numbers are positive. The values are
# speeds and are not checked.
#   cmake "-DCOMMAND=program;arg;..." -DSUMMARY=file -DFIRST_LINE=regex
#         "-DNUMBERS=a/b/c;d/e" -P check_summary.cmake
file(REMOVE ${SUMMARY})
execute_process(COMMAND ${COMMAND} RESULT_VARIABLE status OUTPUT_VARIABLE output
                ERROR_VARIABLE errors)
if(NOT status EQUAL 0)
  message(FATAL_ERROR "${COMMAND} failed (${status}): ${errors}")
endif()
if(NOT EXISTS ${SUMMARY})
  message(FATAL_ERROR "${SUMMARY} was not written")
endif()
file(READ ${SUMMARY} summary)
string(JSON first_line ERROR_VARIABLE problem GET "${summary}" output 0)
if(problem OR NOT first_line MATCHES "${FIRST_LINE}")
  message(FATAL_ERROR "${SUMMARY}: output starts with '${first_line}' ${problem}")
endif()
string(JSON commit ERROR_VARIABLE problem GET "${summary}" versions git_commit)
if(problem OR commit STREQUAL "")
  message(FATAL_ERROR "${SUMMARY}: no versions.git_commit ${problem}")
endif()
foreach(key IN LISTS NUMBERS)
  string(REPLACE "/" ";" path "${key}")
  string(JSON value ERROR_VARIABLE problem GET "${summary}" ${path})
  if(problem OR NOT value MATCHES "^[0-9]*\\.?[0-9]+(e[-+]?[0-9]+)?$" OR value MATCHES "^0*\\.?0*$")
    message(FATAL_ERROR "${SUMMARY}: ${key} is '${value}', not a positive number ${problem}")
  endif()
endforeach()
message(STATUS "${SUMMARY} is well-formed")
