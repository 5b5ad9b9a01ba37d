# Error tests at library level (tests/diag_check.c: parser + verifier, no hloc, no LLVM):
#   errors.parse.NAME   testdata/parse/err/NAME.hlo   parse only
#   errors.verify.NAME  testdata/verify/err/NAME.hlo  parse + verify (--strict when NAME.flags says so;
#                       a compiling verify when NAME.flags has --after-passes)
# Each passes when the first line of the first error is exactly the first line of NAME.err.
add_executable(diag_check ${CMAKE_SOURCE_DIR}/tests/diag_check.c)
target_link_libraries(diag_check PRIVATE hlocc_grammar hlocc_shape hlocc_ir)

file(GLOB HLOC_PARSE_ERR_CASES CONFIGURE_DEPENDS ${CMAKE_SOURCE_DIR}/testdata/parse/err/*.hlo)
foreach(f ${HLOC_PARSE_ERR_CASES})
  get_filename_component(name ${f} NAME_WE)
  get_filename_component(dir ${f} DIRECTORY)
  add_test(NAME errors.parse.${name} COMMAND diag_check ${f} ${dir}/${name}.err)
endforeach()

file(GLOB HLOC_VERIFY_ERR_CASES CONFIGURE_DEPENDS ${CMAKE_SOURCE_DIR}/testdata/verify/err/*.hlo)
foreach(f ${HLOC_VERIFY_ERR_CASES})
  get_filename_component(name ${f} NAME_WE)
  get_filename_component(dir ${f} DIRECTORY)
  set(flags --verify)
  if(EXISTS ${dir}/${name}.flags)
    file(READ ${dir}/${name}.flags flag_text)
    if(flag_text MATCHES "--strict")
      list(APPEND flags --strict)
    endif()
    if(flag_text MATCHES "--after-passes")  # checked as the module is compiled (async chains)
      list(APPEND flags --compiling)
    endif()
  endif()
  add_test(NAME errors.verify.${name} COMMAND diag_check ${flags} ${f} ${dir}/${name}.err)
endforeach()
