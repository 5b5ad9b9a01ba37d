# The walkthrough of docs/architecture.md "Adding an elementwise op", as a test: the compiler
# (ir, grammar, shape, passes, codegen, driver) built a second time with one more opcode row
# (tests/fake_op/fake_op.def, through HLOC_EXTRA_OPCODES) and that op's lowering rule
# (tests/fake_op/fake_op_test.c), which compiles, runs and checks a module using the op.
if(HLOC_HAVE_CODEGEN)
  add_executable(fake_op_test tests/fake_op/fake_op_test.c ${IR_SRCS} ${GRAMMAR_SRCS} ${GEN}/hlo_lexer.c
    ${GEN}/hlo_parser.c ${GEN}/mlir_lexer.c ${SHAPE_SRCS} ${PASSES_SRCS} ${CODEGEN_SRCS} ${DRIVER_SRCS})
  target_compile_definitions(fake_op_test PRIVATE HLOC_EXTRA_OPCODES="fake_op.def"
    $<TARGET_PROPERTY:hlocc_codegen,COMPILE_DEFINITIONS> $<TARGET_PROPERTY:hlocc_driver,COMPILE_DEFINITIONS>)
  target_include_directories(fake_op_test PRIVATE ${CMAKE_SOURCE_DIR}/tests/fake_op ${CMAKE_SOURCE_DIR}/compiler
    ${CMAKE_SOURCE_DIR}/runtime/include ${CMAKE_SOURCE_DIR} ${GEN} ${CMAKE_SOURCE_DIR}/grammar)
  target_include_directories(fake_op_test SYSTEM PRIVATE ${LLVM_INCLUDE_DIRS})
  set_source_files_properties(${GEN}/hlo_parser.c TARGET_DIRECTORY fake_op_test
    PROPERTIES COMPILE_OPTIONS "-Wno-unused-but-set-variable")
  target_link_libraries(fake_op_test PRIVATE hlort LLVM m ${CMAKE_DL_LIBS})
  add_dependencies(fake_op_test hlort)
  add_test(NAME unit.fake_op_test COMMAND fake_op_test WORKING_DIRECTORY ${CMAKE_SOURCE_DIR})
endif()
