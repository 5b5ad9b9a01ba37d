# Error paths of the dynamic-shape ops, stochastic-convert, ragged-dot and shuffle (their
# numeric cases are goldens from testdata/golden/make_ops_misc.py): each model under
# testdata/ops_misc must stop with the exact message, through hloc.  Below: the passes that
# rewrite those ops leave modules that verify.
if(NOT HLOC_HAVE_CODEGEN)
  return()
endif()
set(OPS_MISC ${CMAKE_SOURCE_DIR}/testdata/ops_misc)
add_test(NAME ops_misc.err.dynamic_size_into_reverse COMMAND ${CMAKE_SOURCE_DIR}/tests/expect_exit.sh 1
  "dynamic_size_into_reverse.hlo:6:8: error: %r: 'reverse' cannot read operand 0 \\(%s\\), whose dimension 0 has a dynamic size"
  $<TARGET_FILE:hloc> ${OPS_MISC}/dynamic_size_into_reverse.hlo -o ${CMAKE_BINARY_DIR}/ops_misc_err.so)
add_test(NAME ops_misc.err.stochastic_convert_to_float COMMAND ${CMAKE_SOURCE_DIR}/tests/expect_exit.sh 1
  "stochastic_convert_to_float.hlo:5:8: error: %y: stochastic-convert to bf16: XLA defines it only for signed integer results"
  $<TARGET_FILE:hloc> ${OPS_MISC}/stochastic_convert_to_float.hlo -o ${CMAKE_BINARY_DIR}/ops_misc_err.so)
add_test(NAME ops_misc.err.ragged_dot_contracting_prefix_not_batch COMMAND ${CMAKE_SOURCE_DIR}/tests/expect_exit.sh 1
  "ragged_dot_contracting_prefix_not_batch.hlo:6:8: error: %r: ragged-dot: with a contracting ragged dimension, the leading dimensions of group_sizes must be batch dimensions"
  $<TARGET_FILE:hloc> ${OPS_MISC}/ragged_dot_contracting_prefix_not_batch.hlo -o ${CMAKE_BINARY_DIR}/ops_misc_err.so)
add_test(NAME ops_misc.err.shuffle_multi_rotate COMMAND ${CMAKE_SOURCE_DIR}/tests/expect_exit.sh 1
  "shuffle_multi_rotate.hlo:4:8: error: %s: shuffle: mode=multi_rotate: hloc runs the modes XLA's ShuffleExpander expands \\(rotate, permute\\)"
  $<TARGET_FILE:hloc> ${OPS_MISC}/shuffle_multi_rotate.hlo -o ${CMAKE_BINARY_DIR}/ops_misc_err.so)
# The expand-dots, expand-shuffle and dynamic-padder passes leave modules that verify: each
# golden model of theirs through hloc --verify-each (the verifier after every pass).
file(GLOB OPS_MISC_PASS_MODELS CONFIGURE_DEPENDS
  ${CMAKE_SOURCE_DIR}/testdata/golden/dyn_*/model.hlo ${CMAKE_SOURCE_DIR}/testdata/golden/ragged_dot_*/model.hlo
  ${CMAKE_SOURCE_DIR}/testdata/golden/scaled_dot_*/model.hlo ${CMAKE_SOURCE_DIR}/testdata/golden/shuffle_*/model.hlo)
foreach(m ${OPS_MISC_PASS_MODELS})
  get_filename_component(dir ${m} DIRECTORY)
  get_filename_component(name ${dir} NAME)
  add_test(NAME ops_misc.verify_each.${name}
    COMMAND $<TARGET_FILE:hloc> ${m} --verify-each --emit=hlo --after-passes -o ${CMAKE_BINARY_DIR}/ops_misc_${name}.hlo)
endforeach()
