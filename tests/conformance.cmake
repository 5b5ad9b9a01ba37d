# The JAX-computed conformance suite (../shared/conformance) run through hlorun, gated on the
# committed minimum pass count (tests/conformance_min.txt); the log shows the count.
if(HLOC_HAVE_CODEGEN AND EXISTS ${HLOC_SHARED_DIR}/conformance/run.py)
  add_test(NAME conformance.run
    COMMAND ${PYTHON3} ${CMAKE_SOURCE_DIR}/tests/conformance_gate.py $<TARGET_FILE:hlorun> ${HLOC_SHARED_DIR})
  set_tests_properties(conformance.run PROPERTIES
    ENVIRONMENT "XDG_CACHE_HOME=${CMAKE_BINARY_DIR}/test-cache" TIMEOUT 1800)
endif()
