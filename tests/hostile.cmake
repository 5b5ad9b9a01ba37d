# The hostile-input table (tests/hostile/hostile.py): one CTest per row, hostile.<case>.  Each
# runs hloc or hlorun on a generated hostile input under ulimit -v and checks the exit status
# (2, or 1 at run time), the message and a 5 s CPU budget.  Under the sanitizers the address-
# space limit is off (ASan reserves terabytes of shadow) and the time budget too (ASan is slow).
if(NOT HLOC_HAVE_CODEGEN)
  return()
endif()
execute_process(COMMAND ${PYTHON3} ${CMAKE_SOURCE_DIR}/tests/hostile/hostile.py --list
  OUTPUT_VARIABLE HOSTILE_CASES OUTPUT_STRIP_TRAILING_WHITESPACE)
set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS ${CMAKE_SOURCE_DIR}/tests/hostile/hostile.py)
set(HOSTILE_ENV "")
if(HLOC_SANITIZE)
  set(HOSTILE_ENV HOSTILE_NO_ULIMIT=1 HOSTILE_NO_TIME_LIMIT=1)
endif()
foreach(c ${HOSTILE_CASES})
  add_test(NAME hostile.${c} COMMAND ${PYTHON3} ${CMAKE_SOURCE_DIR}/tests/hostile/hostile.py
    $<TARGET_FILE:hloc> $<TARGET_FILE:hlorun> ${c})
  set_tests_properties(hostile.${c} PROPERTIES ENVIRONMENT "${HOSTILE_ENV}" TIMEOUT 60)
endforeach()
