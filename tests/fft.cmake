# fft plans: built once per call site, released when model.so is unloaded (the destructor
# compiler/codegen/fft.c registers; tests/fft/plan_release.c on tests/fft/prime_fft.hlo).
if(HLOC_HAVE_CODEGEN)
  add_executable(fft_plan_release tests/fft/plan_release.c)
  target_link_libraries(fft_plan_release PRIVATE hlort ${CMAKE_DL_LIBS})
  add_test(NAME fft.plan_release COMMAND bash -c
    [=["$1" "$2" -o "$3/fft-prime.so" && "$4" "$3/fft-prime.so"]=] _
    $<TARGET_FILE:hloc> ${CMAKE_SOURCE_DIR}/tests/fft/prime_fft.hlo ${CMAKE_BINARY_DIR} $<TARGET_FILE:fft_plan_release>)
  set_tests_properties(fft.plan_release PROPERTIES SKIP_RETURN_CODE 77)
endif()
