# cmake --install into a temporary prefix; the installed hloc builds a model and the C example
# links against the installed runtime through pkg-config.
if(HLOC_HAVE_CODEGEN)
  add_test(NAME install.prefix COMMAND ${CMAKE_SOURCE_DIR}/tests/install.sh ${CMAKE_SOURCE_DIR} ${CMAKE_BINARY_DIR})
endif()
