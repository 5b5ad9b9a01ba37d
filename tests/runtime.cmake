# The runtime end to end (testdata/runtime/): custom calls through a user library built here
# (testdata/runtime/custom_call_lib.c, the one docs/custom-call.md shows, and ffi_lib.c, typed-FFI
# handlers; the ffi_* cases are written by testdata/runtime/make_ffi.py), partitioner markers,
# and the error paths, each case CASE.hlo + CASE.args with CASE.expected (stdout) or CASE.err
# (the exact message), run by tests/runtime_case.sh.  Expected values are hand-computed.
if(NOT HLOC_HAVE_CODEGEN)
  return()
endif()
add_library(runtime_cc_lib MODULE ${CMAKE_SOURCE_DIR}/testdata/runtime/custom_call_lib.c
  ${CMAKE_SOURCE_DIR}/testdata/runtime/ffi_lib.c)
# ffi_lib.c: typed-FFI handlers written against the installed header hlo/xla_ffi.h only.
target_include_directories(runtime_cc_lib PRIVATE ${CMAKE_SOURCE_DIR}/runtime/include)
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

# Malformed typed-FFI attribute dictionaries (testdata/runtime/ffi_bad/, from make_ffi.py): hloc
# stops at the offending character; run from inside the directory so the message names the
# file as CASE.err has it.
file(GLOB FFI_BAD_CASES CONFIGURE_DEPENDS ${CMAKE_SOURCE_DIR}/testdata/runtime/ffi_bad/*.hlo)
foreach(m ${FFI_BAD_CASES})
  get_filename_component(name ${m} NAME_WE)
  add_test(NAME runtime.ffi_bad.${name} COMMAND bash -c [=[
    cd "$1" && "$2" "$3.hlo" >/dev/null 2>"$4/ffi_bad.$3.stderr"
    rc=$?
    [ "$rc" -eq 1 ] || { echo "FAIL: exit status $rc, expected 1"; cat "$4/ffi_bad.$3.stderr"; exit 1; }
    diff -u "$3.err" "$4/ffi_bad.$3.stderr" && echo ok]=] _ ${CMAKE_SOURCE_DIR}/testdata/runtime/ffi_bad
    $<TARGET_FILE:hlorun> ${name} ${CMAKE_BINARY_DIR})
  set_tests_properties(runtime.ffi_bad.${name} PROPERTIES ENVIRONMENT "XDG_CACHE_HOME=${CMAKE_BINARY_DIR}/test-cache")
endforeach()

# The typed-FFI handler docs/custom-call.md shows, built from the page and run on ffi_axpy.hlo.
add_test(NAME runtime.ffi_doc_example COMMAND bash -c [=[
  set -e
  src=$1 build=$2 hlorun=$3
  work=$build/ffi-doc-example
  rm -rf "$work" && mkdir -p "$work"
  awk '/^## API_VERSION_TYPED_FFI/{s=1} s&&/^```c$/{f=1; next} f&&/^```$/{exit} f' "$src/docs/custom-call.md" >"$work/ffi_doc.c"
  cc -std=c17 -Wall -Wextra -Werror -fPIC -shared -I"$src/runtime/include" "$work/ffi_doc.c" -o "$work/libffi_doc.so"
  "$hlorun" "$src/testdata/runtime/ffi_axpy.hlo" --custom-call-lib "$work/libffi_doc.so" \
    '--input=f32[2,3] {{-1.5, -0.75, 0}, {0.75, 1.5, 2.25}}' '--input=f32[2,3] {{0.5, -0.25, 1}, {2, 0, -4}}' >"$work/out.txt"
  printf 'f32[2,3] {\n  { -3.25, -2.125, 1 },\n  { 3.875, 3.75, 1.625 }\n}\n' | diff - "$work/out.txt"
  echo ok]=] _ ${CMAKE_SOURCE_DIR} ${CMAKE_BINARY_DIR} $<TARGET_FILE:hlorun>)
set_tests_properties(runtime.ffi_doc_example PROPERTIES ENVIRONMENT "XDG_CACHE_HOME=${CMAKE_BINARY_DIR}/test-cache")

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

# A model whose custom-call target is its own exported entry name, linked into a program
# (global symbols): the lookup must say "not found", never call the model itself.
add_test(NAME runtime.self_target_linked COMMAND bash -c [=[
  set -e
  src=$1 build=$2 hloc=$3
  work=$build/runtime-self-target
  rm -rf "$work" && mkdir -p "$work" && cd "$work"
  "$hloc" "$src/testdata/runtime/self_target.hlo" -o self_target.so --header self_target.h
  cc -std=c17 -Wall -Wextra -Werror "$src/testdata/runtime/self_target.c" -I. -I"$src/runtime/include" self_target.so \
    "$build/libhlort.a" -lffi -lm -lpthread -ldl -Wl,-rpath,"$work" -o self_target
  ./self_target]=] _ ${CMAKE_SOURCE_DIR} ${CMAKE_BINARY_DIR} $<TARGET_FILE:hloc>)
