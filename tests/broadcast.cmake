# Broadcasting examples at library level (tests/broadcast_check.c: parser, verifier and
# pass_canonicalize_broadcasts; no hloc, no LLVM): one test per testdata/broadcast/*.hlo,
#   broadcast_check.NAME   // EXPECT: shape   or   // EXPECT-ERROR: first diagnostic line
# (tests/frontend.cmake runs the same files through the hloc binary as broadcast.NAME).
add_executable(broadcast_check ${CMAKE_SOURCE_DIR}/tests/broadcast_check.c)
target_link_libraries(broadcast_check PRIVATE hlocc_grammar hlocc_passes hlocc_shape hlocc_ir)

file(GLOB HLOC_BROADCAST_CASES CONFIGURE_DEPENDS ${CMAKE_SOURCE_DIR}/testdata/broadcast/*.hlo)
foreach(f ${HLOC_BROADCAST_CASES})
  get_filename_component(name ${f} NAME_WE)
  add_test(NAME broadcast_check.${name} COMMAND broadcast_check ${f})
endforeach()
