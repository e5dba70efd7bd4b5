# Runs ${PLUMBER} with ${ARGS} (a ;-list) and fails unless its stdout equals
# the file ${EXPECTED} byte for byte and its exit code is ${EXIT_CODE}.
# With EXPECTED_STDERR set, stderr must equal that file too.
# With PLUMBER_UPDATE_GOLDEN=1 in the environment it rewrites ${EXPECTED}.
execute_process(COMMAND ${PLUMBER} ${ARGS} OUTPUT_VARIABLE out ERROR_VARIABLE err RESULT_VARIABLE code)
if(DEFINED ENV{PLUMBER_UPDATE_GOLDEN} AND "$ENV{PLUMBER_UPDATE_GOLDEN}" STREQUAL "1")
  file(WRITE ${EXPECTED} "${out}")
  if(EXPECTED_STDERR)
    file(WRITE ${EXPECTED_STDERR} "${err}")
  endif()
endif()
file(READ ${EXPECTED} want)
if(NOT code STREQUAL EXIT_CODE)
  message(FATAL_ERROR "plumber ${ARGS}: exit code ${code}, expected ${EXIT_CODE}\nstderr:\n${err}")
endif()
if(NOT out STREQUAL want)
  message(FATAL_ERROR "plumber ${ARGS}: stdout differs from ${EXPECTED}\n--- got ---\n${out}\n--- want ---\n${want}\nstderr:\n${err}")
endif()
if(EXPECTED_STDERR)
  file(READ ${EXPECTED_STDERR} want_err)
  if(NOT err STREQUAL want_err)
    message(FATAL_ERROR "plumber ${ARGS}: stderr differs from ${EXPECTED_STDERR}\n--- got ---\n${err}\n--- want ---\n${want_err}")
  endif()
endif()
