# The JAX-computed conformance suite (../shared/conformance) run through hlorun, gated on the
# committed minimum pass count (tests/conformance_min.txt); the log shows the per-family table
# and the `N passed, M failed` line.  Each run compiles every case afresh into its own cache
# folder inside the build tree, removed afterwards.
if(HLOC_HAVE_CODEGEN AND EXISTS ${HLOC_SHARED_DIR}/conformance/run.py)
  add_test(NAME conformance
    COMMAND ${PYTHON3} ${CMAKE_SOURCE_DIR}/tests/conformance_gate.py $<TARGET_FILE:hlorun> ${HLOC_SHARED_DIR}
            ${CMAKE_BINARY_DIR})
  set_tests_properties(conformance PROPERTIES TIMEOUT 1800)
  # The same suite compiled at -O0 and at -O3 (issue 7: results must not depend on the level).
  foreach(level O0 O3)
    add_test(NAME conformance.${level}
      COMMAND ${PYTHON3} ${CMAKE_SOURCE_DIR}/tests/conformance_gate.py $<TARGET_FILE:hlorun> ${HLOC_SHARED_DIR}
              ${CMAKE_BINARY_DIR} -${level})
    set_tests_properties(conformance.${level} PROPERTIES TIMEOUT 1800)
  endforeach()
endif()
