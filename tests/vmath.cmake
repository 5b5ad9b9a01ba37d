# Vectorized math (compiler/codegen/vmath.c): the examples' listings are vector code with no
# libm call (tests/vmath_asm.sh); accuracy is unit.vmath_test.
file(GLOB VMATH_EXAMPLES CONFIGURE_DEPENDS ${CMAKE_SOURCE_DIR}/testdata/examples/vmath/*.hlo)
foreach(f ${VMATH_EXAMPLES})
  get_filename_component(name ${f} NAME_WE)
  add_test(NAME vmath.asm.${name} COMMAND ${CMAKE_SOURCE_DIR}/tests/vmath_asm.sh $<TARGET_FILE:hloc> ${f})
endforeach()
