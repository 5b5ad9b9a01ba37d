# StableHLO MLIR input (docs/stablehlo.md):
#   stablehlo.ok.NAME      testdata/mlir/ok/NAME.mlir runs under hlorun and its checks (values
#                          computed by hand, in the file) all hold
#   stablehlo.err.NAME     hloc on testdata/mlir/err/NAME.mlir exits 2 with the first line of NAME.err
#   stablehlo.emit_hlo     hloc --emit=hlo prints HLO text that hlorun runs
#   stablehlo.corrupt.*    a testdata file with one expected value changed fails with exit 1
#   stablehlo.testdata     every file of ../shared/stablehlo/testdata, gated on tests/stablehlo_min.txt
if(NOT HLOC_HAVE_CODEGEN)
  return()
endif()
file(GLOB HLOC_MLIR_OK CONFIGURE_DEPENDS ${CMAKE_SOURCE_DIR}/testdata/mlir/ok/*.mlir)
foreach(f ${HLOC_MLIR_OK})
  get_filename_component(name ${f} NAME_WE)
  add_test(NAME stablehlo.ok.${name}
    COMMAND ${CMAKE_SOURCE_DIR}/tests/expect_exit.sh 0 "^[0-9]+ checks? passed" $<TARGET_FILE:hlorun> ${f})
  set_tests_properties(stablehlo.ok.${name} PROPERTIES ENVIRONMENT "XDG_CACHE_HOME=${CMAKE_BINARY_DIR}/test-cache")
endforeach()

file(GLOB HLOC_MLIR_ERR CONFIGURE_DEPENDS ${CMAKE_SOURCE_DIR}/testdata/mlir/err/*.mlir)
foreach(f ${HLOC_MLIR_ERR})
  get_filename_component(name ${f} NAME_WE)
  get_filename_component(dir ${f} DIRECTORY)
  file(READ ${dir}/${name}.err want)
  string(STRIP "${want}" want)
  string(REGEX REPLACE "([][+.*()^$?|\\\\{}])" "\\\\\\1" want "${want}")
  add_test(NAME stablehlo.err.${name} COMMAND ${CMAKE_SOURCE_DIR}/tests/expect_exit.sh 2 "^${want}$"
           $<TARGET_FILE:hloc> ${name}.mlir --emit=none WORKING_DIRECTORY ${dir})
endforeach()

add_test(NAME stablehlo.emit_hlo COMMAND sh -c "\"$1\" \"$3\" --emit=hlo -o stablehlo_emit.hlo && grep -q '^HloModule' stablehlo_emit.hlo && \"$2\" stablehlo_emit.hlo"
         sh $<TARGET_FILE:hloc> $<TARGET_FILE:hlorun> ${CMAKE_SOURCE_DIR}/testdata/mlir/ok/elementwise_pretty.mlir
         WORKING_DIRECTORY ${CMAKE_BINARY_DIR})

# Inputs mlir_fuzz found crashing, kept as regressions (named hostile.* so that the sanitizer
# pass runs them): each must end in diagnostics, exit 2.  check_values_moved: a check's values
# were held by pointer while later ops grew the value table (use after free).
file(GLOB HLOC_MLIR_FUZZ CONFIGURE_DEPENDS ${CMAKE_SOURCE_DIR}/testdata/mlir/fuzz/*.mlir)
foreach(file ${HLOC_MLIR_FUZZ})
  get_filename_component(name ${file} NAME_WE)
  add_test(NAME hostile.mlir_fuzz.${name} COMMAND ${CMAKE_SOURCE_DIR}/tests/expect_exit.sh 2 "error: "
           $<TARGET_FILE:hloc> ${file} --emit=none)
endforeach()

# Token ops: infeed, outfeed, host send and recv (testdata/mlir/feeds: x = [1,2,3] in, z =
# [10,20,30] received; result 2x + z, outfeed and send 2x, all by hand).
add_test(NAME stablehlo.feeds COMMAND ${CMAKE_SOURCE_DIR}/tests/expect_stdout.sh
         ${CMAKE_SOURCE_DIR}/testdata/mlir/feeds/feeds.expected $<TARGET_FILE:hlorun>
         ${CMAKE_SOURCE_DIR}/testdata/mlir/feeds/feeds.mlir --infeed x.npy --recv 8:z.npy
         WORKING_DIRECTORY ${CMAKE_SOURCE_DIR}/testdata/mlir/feeds)
set_tests_properties(stablehlo.feeds PROPERTIES ENVIRONMENT "XDG_CACHE_HOME=${CMAKE_BINARY_DIR}/test-cache")

if(EXISTS ${HLOC_SHARED_DIR}/stablehlo/testdata)
  foreach(file abs_bfloat16_20_20 abs_int16_20_20)
    add_test(NAME stablehlo.corrupt.${file}
      COMMAND ${PYTHON3} ${CMAKE_SOURCE_DIR}/tests/stablehlo_corrupt.py $<TARGET_FILE:hlorun> ${HLOC_SHARED_DIR} ${file}.mlir)
  endforeach()
  add_test(NAME stablehlo.testdata
    COMMAND ${PYTHON3} ${CMAKE_SOURCE_DIR}/tests/stablehlo_gate.py $<TARGET_FILE:hlorun> ${HLOC_SHARED_DIR}
            ${CMAKE_BINARY_DIR})
  set_tests_properties(stablehlo.testdata PROPERTIES TIMEOUT 1800)
endif()
