# docs/abi_example.c — the C program of docs/abi.md — builds against a compiled model and
# prints numbers that match numpy; the model .so must not depend on LLVM.
if(HLOC_HAVE_CODEGEN)
  add_test(NAME abi.example COMMAND ${CMAKE_SOURCE_DIR}/tests/abi_example.sh ${CMAKE_SOURCE_DIR} ${CMAKE_BINARY_DIR}
    $<TARGET_FILE:hloc>)
endif()
