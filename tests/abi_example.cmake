# docs/abi_example.c — the C program of docs/abi.md — builds against a compiled model and
# prints numbers that match numpy; the model .so must not depend on LLVM.
if(HLOC_HAVE_CODEGEN)
  add_test(NAME abi.example COMMAND ${CMAKE_SOURCE_DIR}/tests/abi_example.sh ${CMAKE_SOURCE_DIR} ${CMAKE_BINARY_DIR}
    $<TARGET_FILE:hloc>)
  # The libraries a model needs are the C library's, libffi's and nothing else: no LLVM.
  add_test(NAME abi.no_llvm_dependency COMMAND bash -c [=[
    set -e
    "$1" "$2" -o "$3/abi-deps.so"
    ldd "$3/abi-deps.so"
    if ldd "$3/abi-deps.so" | grep -qi llvm; then echo "FAIL: depends on LLVM"; exit 1; fi
    extra=$(readelf -d "$3/abi-deps.so" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p' |
            grep -vE '^(libc|libm|libffi|libpthread|libdl)\.so\.[0-9]+$' || true)
    if [ -n "$extra" ]; then echo "FAIL: unexpected dependencies: $extra"; exit 1; fi
    echo ok]=] _ $<TARGET_FILE:hloc> ${CMAKE_SOURCE_DIR}/testdata/examples/mlp.hlo ${CMAKE_BINARY_DIR})
endif()
