# Front-end tests, driven by tests/check.py over data files:
#   parse.ok.*    round trip of testdata/parse/ok/*.hlo and ../shared/models/*.hlo
#   parse.err.*   testdata/parse/err/NAME.hlo + NAME.err (first diagnostic, exact)
#   verify.err.*  testdata/verify/err/NAME.hlo + NAME.err (+ NAME.flags)
#   broadcast.*   testdata/broadcast/*.hlo (EXPECT / EXPECT-ERROR header comments)
#   conformance.parse_verify  every ../shared/conformance/cases/*/model.hlo parses and verifies
set(CHECK ${PYTHON3} ${CMAKE_SOURCE_DIR}/tests/check.py)

function(hloc_data_tests prefix mode pattern)
  file(GLOB files CONFIGURE_DEPENDS ${pattern})
  foreach(f ${files})
    get_filename_component(name ${f} NAME_WLE)
    add_test(NAME ${prefix}.${name} COMMAND ${CHECK} ${mode} $<TARGET_FILE:hloc> ${f})
  endforeach()
endfunction()

hloc_data_tests(parse.ok roundtrip ${CMAKE_SOURCE_DIR}/testdata/parse/ok/*.hlo)
hloc_data_tests(models.roundtrip roundtrip ${HLOC_SHARED_DIR}/models/*.hlo)
hloc_data_tests(parse.err diag ${CMAKE_SOURCE_DIR}/testdata/parse/err/*.hlo)
hloc_data_tests(verify.err diag ${CMAKE_SOURCE_DIR}/testdata/verify/err/*.hlo)
hloc_data_tests(broadcast broadcast ${CMAKE_SOURCE_DIR}/testdata/broadcast/*.hlo)

if(EXISTS ${HLOC_SHARED_DIR}/conformance/cases)
  add_test(NAME conformance.parse_verify
    COMMAND ${CMAKE_SOURCE_DIR}/tests/verify_all.sh $<TARGET_FILE:hloc> ${HLOC_SHARED_DIR}/conformance/cases)
endif()

# Every repository path named in docs/*.md, README.md and the sources' comments exists.
add_test(NAME docs.paths_exist COMMAND ${PYTHON3} ${CMAKE_SOURCE_DIR}/tests/docs_paths.py ${CMAKE_SOURCE_DIR})
# No include circles in compiler/, runtime/, grammar/ or tools/ (issue 20): the #include
# lines, resolved as the build resolves them (tests/include_cycles.py).
add_test(NAME structure.no_include_circles COMMAND ${PYTHON3} ${CMAKE_SOURCE_DIR}/tests/include_cycles.py ${CMAKE_SOURCE_DIR})
# ... and codegen, the driver and the runtime call downward only: no cycle in their file-level
# call graphs (tests/call_layers.py).
add_test(NAME structure.call_layers COMMAND ${PYTHON3} ${CMAKE_SOURCE_DIR}/tests/call_layers.py ${CMAKE_SOURCE_DIR})
