# The printer's fixed point, in process (tests/roundtrip.c: parse, verify, print twice, compare
# byte for byte, show the first differing line):
#   roundtrip.ok.NAME      every testdata/parse/ok/*.hlo
#   roundtrip.model.NAME   every ../shared/models/*.hlo, read in place (skipped when absent)
#   conformance.parse_verify_all   every ../shared/conformance/cases/*/model.hlo parses and
#                                  verifies (tests/parse_verify_all.c), "N passed, M failed"
add_executable(hlo_roundtrip ${CMAKE_SOURCE_DIR}/tests/roundtrip.c)
target_link_libraries(hlo_roundtrip PRIVATE hlocc_grammar hlocc_shape hlocc_ir)
add_executable(parse_verify_all ${CMAKE_SOURCE_DIR}/tests/parse_verify_all.c)
target_link_libraries(parse_verify_all PRIVATE hlocc_grammar hlocc_shape hlocc_ir)

function(hloc_roundtrip_tests prefix pattern)
  file(GLOB files CONFIGURE_DEPENDS ${pattern})
  foreach(f ${files})
    get_filename_component(name ${f} NAME_WLE)
    add_test(NAME ${prefix}.${name} COMMAND hlo_roundtrip ${f})
  endforeach()
endfunction()

hloc_roundtrip_tests(roundtrip.ok ${CMAKE_SOURCE_DIR}/testdata/parse/ok/*.hlo)
if(EXISTS ${HLOC_SHARED_DIR}/models)
  hloc_roundtrip_tests(roundtrip.model ${HLOC_SHARED_DIR}/models/*.hlo)
endif()
if(EXISTS ${HLOC_SHARED_DIR}/conformance/cases)
  add_test(NAME conformance.parse_verify_all
    COMMAND parse_verify_all ${HLOC_SHARED_DIR}/conformance/cases)
endif()
# The driver itself fails on a module that does not parse.
add_test(NAME roundtrip.rejects_unparsable
  COMMAND hlo_roundtrip ${CMAKE_SOURCE_DIR}/testdata/parse/err/bad_direction.hlo)
set_tests_properties(roundtrip.rejects_unparsable PROPERTIES WILL_FAIL TRUE)
