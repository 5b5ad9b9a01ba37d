# The runtime ABI is described once (runtime/include/hlo/rt_abi.def): a runtime definition or a
# row that disagrees with it does not compile (tests/rt_abi.sh); the code generator's side is
# unit.rt_abi_test (compiler/codegen/rt_abi_test.c).
add_test(NAME abi.rt_abi_mismatch_fails COMMAND ${CMAKE_SOURCE_DIR}/tests/rt_abi.sh ${CMAKE_SOURCE_DIR}
  ${CMAKE_C_COMPILER} ${LLVM_INCLUDE_DIRS})
