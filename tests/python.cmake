# The Python package (python/hloc, docs/python.md) under pytest: one CTest test per file of
# python/tests/, importing the package from the source tree and compiling with this build's
# hloc (HLOC_PREFIX).  Needs pytest (Debian: python3-pytest); without it the tests fail saying
# so.  pytest's exit status 5 (no test collected) is non-zero, so CTest counts it a failure.
if(NOT HLOC_HAVE_CODEGEN OR NOT PYTHON3)
  return()
endif()
execute_process(COMMAND ${PYTHON3} -c "import pytest, numpy" RESULT_VARIABLE HLOC_PYTEST_MISSING
  OUTPUT_QUIET ERROR_QUIET)
file(GLOB HLOC_PYTHON_TESTS CONFIGURE_DEPENDS ${CMAKE_SOURCE_DIR}/python/tests/test_*.py)
if(NOT HLOC_PYTHON_TESTS)
  message(FATAL_ERROR "tests/python.cmake: no python/tests/test_*.py")
endif()
foreach(file ${HLOC_PYTHON_TESTS})
  get_filename_component(name ${file} NAME_WE)
  string(REGEX REPLACE "^test_" "" name ${name})
  if(HLOC_PYTEST_MISSING)
    add_test(NAME python.${name} COMMAND sh -c
      "echo 'pytest or numpy is missing for ${PYTHON3}: apt-get install python3-pytest python3-numpy'; exit 1")
    continue()
  endif()
  add_test(NAME python.${name}
    COMMAND ${PYTHON3} -m pytest -q -p no:cacheprovider --basetemp=${CMAKE_BINARY_DIR}/python-tmp-${name} ${file})
  set_tests_properties(python.${name} PROPERTIES TIMEOUT 600 ENVIRONMENT
    "PYTHONPATH=${CMAKE_SOURCE_DIR}/python;HLOC_PREFIX=${CMAKE_BINARY_DIR};HLOC_SHARED_DIR=${HLOC_SHARED_DIR};PYTHONDONTWRITEBYTECODE=1")
endforeach()
