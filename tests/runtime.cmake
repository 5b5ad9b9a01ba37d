# The runtime end to end (testdata/runtime/): custom calls through a user library built here
# (testdata/runtime/custom_call_lib.c, the one docs/custom-call.md shows), partitioner markers,
# and the error paths, each case CASE.hlo + CASE.args with CASE.expected (stdout) or CASE.err
# (the exact message), run by tests/runtime_case.sh.  Expected values are hand-computed.
if(NOT HLOC_HAVE_CODEGEN)
  return()
endif()
add_library(runtime_cc_lib MODULE ${CMAKE_SOURCE_DIR}/testdata/runtime/custom_call_lib.c)
set_target_properties(runtime_cc_lib PROPERTIES PREFIX "" SUFFIX ".so"
  LIBRARY_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/fixtures)
file(GLOB RUNTIME_CASES CONFIGURE_DEPENDS ${CMAKE_SOURCE_DIR}/testdata/runtime/*.hlo)
foreach(m ${RUNTIME_CASES})
  get_filename_component(name ${m} NAME_WE)
  get_filename_component(dir ${m} DIRECTORY)
  add_test(NAME runtime.${name} COMMAND ${CMAKE_SOURCE_DIR}/tests/runtime_case.sh $<TARGET_FILE:hlorun>
    ${dir}/${name} $<TARGET_FILE:runtime_cc_lib>)
  set_tests_properties(runtime.${name} PROPERTIES ENVIRONMENT "XDG_CACHE_HOME=${CMAKE_BINARY_DIR}/test-cache")
endforeach()

# docs/runtime_example.c, the embedding program of docs/runtime.md, against a model hloc builds.
add_test(NAME runtime.embed_example COMMAND bash -c [=[
  set -e
  src=$1 build=$2 hloc=$3
  work=$build/runtime-example
  rm -rf "$work" && mkdir -p "$work" && cd "$work"
  "$hloc" "$src/testdata/examples/embed.hlo" -o embed.so --header embed.h
  cc -std=c17 -Wall -Wextra -Werror "$src/docs/runtime_example.c" -I. -I"$src/runtime/include" embed.so \
    "$build/libhlort.a" -lffi -lm -lpthread -ldl -Wl,-rpath,"$work" -o runtime_example
  ./runtime_example | tee out.txt
  printf 'replica 0: result {6, 10, 14} outfeed {6, 10, 14}\nreplica 1: result {6, 10, 14} outfeed {6, 10, 14}\n' |
    diff - out.txt]=] _ ${CMAKE_SOURCE_DIR} ${CMAKE_BINARY_DIR} $<TARGET_FILE:hloc>)

# Send/Recv attributes code generation refuses, with the exact message (testdata/runtime/compile_err).
set(SR_ERR ${CMAKE_SOURCE_DIR}/testdata/runtime/compile_err)
add_test(NAME runtime.compile_err.sendrecv_validation COMMAND ${CMAKE_SOURCE_DIR}/tests/expect_exit.sh 1
  "sendrecv_validation.hlo:6:3: error: %rv: frontend attribute _xla_send_recv_validation \\(XLA GPU's bounds for pipelined send/recv\\) is not supported"
  $<TARGET_FILE:hloc> ${SR_ERR}/sendrecv_validation.hlo -o ${CMAKE_BINARY_DIR}/sendrecv_validation.so)
add_test(NAME runtime.compile_err.sendrecv_bad_pairs COMMAND ${CMAKE_SOURCE_DIR}/tests/expect_exit.sh 1
  "sendrecv_bad_pairs.hlo:7:3: error: %sn: cannot read _xla_send_recv_source_target_pairs=\"\\{\\{0,1\\},\\{2\\}\\}\" \\(want \\{\\{source,target\\},...\\}\\)"
  $<TARGET_FILE:hloc> ${SR_ERR}/sendrecv_bad_pairs.hlo -o ${CMAKE_BINARY_DIR}/sendrecv_bad_pairs.so)
add_test(NAME runtime.cli.recv_bad_arg COMMAND ${CMAKE_SOURCE_DIR}/tests/expect_exit.sh 2
  "^hlorun: --recv a.npy: want CHANNEL:FILE.npy \\(a channel_id, a colon, a file\\)$"
  $<TARGET_FILE:hlorun> ${CMAKE_SOURCE_DIR}/testdata/runtime/host_recv_wrong_shape.hlo --recv a.npy)
set_tests_properties(runtime.cli.recv_bad_arg PROPERTIES ENVIRONMENT "XDG_CACHE_HOME=${CMAKE_BINARY_DIR}/test-cache")
