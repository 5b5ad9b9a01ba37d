# hlorun's command line: inputs in every .npy flavour, inline literals, bad inputs (exit 2,
# one line naming the file and the parameter), --expected (exit 1 with the worst element),
# printing, --benchmark, --random-inputs, running a .so, the cache.  Expected numbers are the
# fixtures' contents documented in testdata/npy/make.py.
# Runtime flags (--infeed, --outfeed-dir, --custom-call-lib, --replicas, --threads) end to end
# on a model written by hand against hlo/abi.h (tests/hlorun_fixtures/feed_model.c), linked
# with the runtime as hloc links a model; no code generator needed.
add_library(hlorun_feed_model MODULE ${CMAKE_SOURCE_DIR}/tests/hlorun_fixtures/feed_model.c)
target_link_libraries(hlorun_feed_model PRIVATE hlort)
add_library(hlorun_scale_lib MODULE ${CMAKE_SOURCE_DIR}/tests/hlorun_fixtures/scale_lib.c)
set_target_properties(hlorun_feed_model hlorun_scale_lib PROPERTIES PREFIX "" SUFFIX ".so"
  LIBRARY_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/fixtures)
add_test(NAME cli.hlorun.runtime_flags COMMAND ${CMAKE_SOURCE_DIR}/tests/hlorun_fixtures/feeds.sh $<TARGET_FILE:hlorun>
  $<TARGET_FILE:hlorun_feed_model> $<TARGET_FILE:hlorun_scale_lib> ${CMAKE_SOURCE_DIR}/testdata/npy)

if(NOT HLOC_HAVE_CODEGEN)
  return()
endif()
set(EXPECT ${CMAKE_SOURCE_DIR}/tests/expect_exit.sh)
set(NPY ${CMAKE_SOURCE_DIR}/testdata/npy)
set(ADD ${NPY}/add_f32_2x3.hlo)
set(RUN $<TARGET_FILE:hlorun>)
set(SUM "^  \\{ 6, 8, 10 \\}$")
function(hlorun_test name status regex)
  add_test(NAME cli.hlorun.${name} COMMAND ${EXPECT} ${status} "${regex}" ${ARGN})
  set_tests_properties(cli.hlorun.${name} PROPERTIES ENVIRONMENT "XDG_CACHE_HOME=${CMAKE_BINARY_DIR}/test-cache")
endfunction()
hlorun_test(help 0 "usage: hlorun" ${RUN} --help)
hlorun_test(unknown_flag 2 "unknown option: --nope" ${RUN} ${ADD} --nope)
hlorun_test(no_model 2 "no model given" ${RUN})
hlorun_test(npy_v1 0 "${SUM}" ${RUN} ${ADD} --input ${NPY}/f32_2x3.npy --input=@${NPY}/f32_2x3.npy)
hlorun_test(npy_v2_v3 0 "${SUM}" ${RUN} ${ADD} --input ${NPY}/f32_2x3_v2.npy --input ${NPY}/f32_2x3_v3.npy)
hlorun_test(npy_big_endian_fortran 0 "${SUM}" ${RUN} ${ADD} --input ${NPY}/f32_2x3_big_endian.npy --input ${NPY}/f32_2x3_fortran.npy)
hlorun_test(inline_literal 0 "^  \\{ 7, 9, 11 \\}$"
  ${RUN} ${ADD} --input ${NPY}/f32_2x3.npy "--input=f32[2,3] {{1,2,3},{4,5,6}}")
hlorun_test(wrong_dtype 2 "f64_2x3.npy: parameter 1 \\(%b\\) expects f32\\[2,3\\], got f64\\[2,3\\]"
  ${RUN} ${ADD} --input ${NPY}/f32_2x3.npy --input ${NPY}/f64_2x3.npy)
hlorun_test(wrong_shape 2 "f32_3x2.npy: parameter 0 \\(%a\\) expects f32\\[2,3\\], got f32\\[3,2\\]"
  ${RUN} ${ADD} --input ${NPY}/f32_3x2.npy --input ${NPY}/f32_2x3.npy)
hlorun_test(truncated 2 "truncated.npy: truncated: the header promises 24 bytes of data"
  ${RUN} ${ADD} --input ${NPY}/truncated.npy --input ${NPY}/f32_2x3.npy)
hlorun_test(garbage 2 "garbage.npy: not a valid .npy file: missing the .x93NUMPY magic"
  ${RUN} ${ADD} --input ${NPY}/garbage.npy --input ${NPY}/f32_2x3.npy)
hlorun_test(missing_file 2 "no_such.npy: cannot open" ${RUN} ${ADD} --input no_such.npy --input ${NPY}/f32_2x3.npy)
hlorun_test(missing_input 2 "takes 2 inputs but 1 was given: parameter 1 \\(%b\\) f32\\[2,3\\] has no --input"
  ${RUN} ${ADD} --input ${NPY}/f32_2x3.npy)
hlorun_test(extra_input 2 "takes 2 inputs but 3 were given: 'x.npy' is extra"
  ${RUN} ${ADD} --input ${NPY}/f32_2x3.npy --input ${NPY}/f32_2x3.npy --input x.npy)
hlorun_test(directory_input 2 "npy: is a directory" ${RUN} ${ADD} --input ${NPY} --input ${NPY}/f32_2x3.npy)
hlorun_test(random_and_input 2 "either --input or --random-inputs" ${RUN} ${ADD} --input ${NPY}/f32_2x3.npy --random-inputs)
hlorun_test(bad_number 2 "--rtol needs a number >= 0: abc" ${RUN} ${ADD} --random-inputs --rtol abc)
hlorun_test(bad_seed 2 "--random-inputs=SEED needs an unsigned integer" ${RUN} ${ADD} --random-inputs=x)
hlorun_test(version 0 "^hlorun [0-9]+\\.[0-9]+\\.[0-9]+$" ${RUN} --version)
hlorun_test(bad_literal 2 "--input 'f32\\[2,3\\] \\{\\{1,2\\}\\}' \\(parameter 1, %b\\): column 10: " ${RUN} ${ADD} --input ${NPY}/f32_2x3.npy "--input=f32[2,3] {{1,2}}")
hlorun_test(expected_match 0 ".*" ${RUN} ${ADD} --input ${NPY}/f32_2x3.npy --input ${NPY}/f32_2x3.npy
  --expected ${CMAKE_SOURCE_DIR}/testdata/npy/f32_2x3.npy --rtol 1.5)
hlorun_test(expected_mismatch 1 "result 0 does not match .*f32_2x3.npy: worst element \\[1,2\\] got 10 expected 5"
  ${RUN} ${ADD} --input ${NPY}/f32_2x3.npy --input ${NPY}/f32_2x3.npy --expected ${NPY}/f32_2x3.npy)
# Comparison: within N ulp, NaN matches NaN, NaN against a number fails, integers exactly.
set(ONE_ULP ${NPY}/f32_2x3_times2_1ulp.npy)
hlorun_test(ulp_match 0 ".*" ${RUN} ${ADD} --input ${NPY}/f32_2x3.npy --input ${NPY}/f32_2x3.npy
  --expected ${ONE_ULP} --rtol 0 --atol 0 --ulp 1)
hlorun_test(ulp_mismatch 1 "worst element \\[1,1\\] got 8 expected 8.00000095 .*6 of 6 elements differ"
  ${RUN} ${ADD} --input ${NPY}/f32_2x3.npy --input ${NPY}/f32_2x3.npy --expected ${ONE_ULP} --rtol 0 --atol 0)
hlorun_test(nan_matches_nan 0 ".*" ${RUN} ${ADD} --input ${NPY}/f32_2x3.npy "--input=f32[2,3] {{nan,1,2},{3,4,5}}"
  --expected ${NPY}/f32_2x3_times2_nan.npy --rtol 0 --atol 0)
hlorun_test(nan_against_number 1 "worst element \\[0,0\\] got nan expected 0 .*1 of 6 elements differ"
  ${RUN} ${ADD} --input ${NPY}/f32_2x3.npy "--input=f32[2,3] {{nan,1,2},{3,4,5}}" --expected ${NPY}/f32_2x3.npy --rtol 1.5)
hlorun_test(int_exact 1 "worst element \\[1\\] got -8 expected -7 .*1 of 3 elements differ"
  ${RUN} ${NPY}/add_s32_3.hlo --input ${NPY}/s32_3.npy "--input=s32[3] {0, 0, 0}" --expected ${NPY}/s32_3_off_by_one.npy)
# bf16 parameters read from float32 (rounded) and results compared as raw <u2 bits.
hlorun_test(bf16_from_f32 0 "^bf16\\[3\\] \\{3, -4, 6\\}$"
  ${RUN} ${NPY}/add_bf16_3.hlo --input ${NPY}/f32_3_bf16_exact.npy --input ${NPY}/f32_3_bf16_exact.npy)
hlorun_test(bf16_bits_expected 0 ".*" ${RUN} ${NPY}/add_bf16_3.hlo --input ${NPY}/f32_3_bf16_exact.npy
  --input ${NPY}/f32_3_bf16_exact.npy --expected ${NPY}/bf16_bits_3_-4_6.npy --rtol 0 --atol 0)
hlorun_test(unwritable_output 1 "/nonexistent-dir/y.npy: cannot write" ${RUN} ${ADD} --random-inputs --output /nonexistent-dir/y.npy)
# Runtime flags.
hlorun_test(replicas 0 "^replica 1:$" ${RUN} ${ADD} --random-inputs --replicas 2 --threads 1)
hlorun_test(custom_call_lib_missing 2 "/nonexistent/libcc.so: cannot load custom-call library"
  ${RUN} ${ADD} --random-inputs --custom-call-lib /nonexistent/libcc.so)
hlorun_test(custom_call_lib 0 "${SUM}" ${RUN} ${ADD} --input ${NPY}/f32_2x3.npy --input ${NPY}/f32_2x3.npy
  --custom-call-lib libm.so.6)
hlorun_test(infeed_missing 2 "--infeed 0: no_such.npy: cannot open" ${RUN} ${ADD} --random-inputs --infeed no_such.npy)
hlorun_test(infeed_unused 0 "${SUM}" ${RUN} ${ADD} --input ${NPY}/f32_2x3.npy --input ${NPY}/f32_2x3.npy
  --infeed ${NPY}/f32_2x3.npy --outfeed-dir ${CMAKE_BINARY_DIR})
# Printing: every form of XLA's literal printer, compared whole.
add_test(NAME cli.hlorun.print_format COMMAND ${CMAKE_SOURCE_DIR}/tests/expect_stdout.sh ${NPY}/print_shapes.expected
  ${RUN} ${NPY}/print_shapes.hlo "--input=f32[] 1.5" "--input=s32[3] {1, -2, 3}" "--input=pred[2] {true, false}"
  "--input=f32[2,1] {{0.25},{-0}}" "--input=f32[2,1,1,2] {{{{1,2}}},{{{3,4}}}}")
set_tests_properties(cli.hlorun.print_format PROPERTIES ENVIRONMENT "XDG_CACHE_HOME=${CMAKE_BINARY_DIR}/test-cache")
# The compile cache: miss, hit, options, a corrupt entry, an unwritable folder, elided constants.
add_test(NAME cli.hlorun.cache COMMAND ${CMAKE_SOURCE_DIR}/tests/hlorun_cache.sh $<TARGET_FILE:hlorun> ${NPY})
hlorun_test(benchmark 0 "^benchmark: iterations=5 min_ms=[0-9.]+ median_ms=[0-9.]+ max_ms=[0-9.]+$"
  ${RUN} ${ADD} --random-inputs=3 --benchmark 5)
hlorun_test(random_inputs 0 "^f32\\[2,3\\] \\{$" ${RUN} ${ADD} --random-inputs)
hlorun_test(parse_error 2 "syntax_bad_slice.hlo:5:46: error" ${RUN} ${CMAKE_SOURCE_DIR}/testdata/parse/err/syntax_bad_slice.hlo)
# A shared object built by hloc runs directly.
add_test(NAME cli.hlorun.so_build COMMAND $<TARGET_FILE:hloc> ${ADD} -o ${CMAKE_BINARY_DIR}/add_f32_2x3.so)
hlorun_test(so_run 0 "${SUM}" ${RUN} ${CMAKE_BINARY_DIR}/add_f32_2x3.so --input ${NPY}/f32_2x3.npy --input ${NPY}/f32_2x3.npy)
set_tests_properties(cli.hlorun.so_run PROPERTIES DEPENDS cli.hlorun.so_build)

# Per-replica inputs (rK:, docs/cli.md "Replicas"): a replica number past the last, and a
# replica left without enough inputs, are usage errors naming the flag or the replica.
set(RT ${CMAKE_SOURCE_DIR}/testdata/runtime)
hlorun_test(replica_prefix_range 2 "--input r4:.*there are only 4 replicas \\(r0 to r3\\)"
  ${RUN} ${RT}/replica_inputs.hlo --input r4:${RT}/replica_in_r1.npy --input ${RT}/replica_in_shared.npy)
hlorun_test(replica_missing_input 2 "0 were given for replica 0: parameter 0 \\(%x\\)"
  ${RUN} ${RT}/replica_inputs.hlo --input r1:${RT}/replica_in_r1.npy)
hlorun_test(replica_extra_input 2 "2 were given for replica 1: '.*replica_in_r0.npy' is extra"
  ${RUN} ${RT}/replica_inputs.hlo --input r1:${RT}/replica_in_r1.npy --input r1:${RT}/replica_in_r0.npy --input ${RT}/replica_in_shared.npy)
