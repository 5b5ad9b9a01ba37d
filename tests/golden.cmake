# Numeric golden cases: one CTest per testdata/golden/<case>/ (expected values from numpy
# formulas in testdata/golden/make.py), run through hlorun by tests/golden.py.
if(NOT HLOC_HAVE_CODEGEN)
  message(STATUS "golden tests: skipped (no code generator in this build)")
  return()
endif()
file(GLOB GOLDEN_CASES CONFIGURE_DEPENDS ${CMAKE_SOURCE_DIR}/testdata/golden/*/model.hlo)
foreach(m ${GOLDEN_CASES})
  get_filename_component(dir ${m} DIRECTORY)
  get_filename_component(name ${dir} NAME)
  add_test(NAME golden.${name}
    COMMAND ${PYTHON3} ${CMAKE_SOURCE_DIR}/tests/golden.py --hlorun $<TARGET_FILE:hlorun> ${dir})
  set_tests_properties(golden.${name} PROPERTIES
    ENVIRONMENT "XDG_CACHE_HOME=${CMAKE_BINARY_DIR}/test-cache")
endforeach()
