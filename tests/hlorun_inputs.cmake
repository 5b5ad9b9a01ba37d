# hlorun's collection inputs (docs/cli.md "Inputs"): --input=@FILE.npz (stored, deflated,
# zip64), @FILE.safetensors, @DIR; by position and by name; zero-copy mapping; the error
# cases; corrupt files; --random-inputs identical for any thread count.  The fixtures are
# written at test time by tests/hlorun_inputs.py with numpy (safetensors by hand).  The big
# case (a 4.4 GB member, zip64) is skipped unless HLOC_BIG_TESTS=1 is set.
if(NOT HLOC_HAVE_CODEGEN OR NOT PYTHON3)
  return()
endif()
foreach(c npz_positional npz_mixed npz_named npz_compressed npz_converted safetensors
          safetensors_names_and_f32_for_bf16 dir errors corrupt random_threads big)
  add_test(NAME cli.hlorun.inputs.${c} COMMAND ${PYTHON3} ${CMAKE_SOURCE_DIR}/tests/hlorun_inputs.py
    $<TARGET_FILE:hlorun> ${CMAKE_SOURCE_DIR}/testdata/inputs ${CMAKE_BINARY_DIR}/hlorun-inputs/${c} ${c})
  set_tests_properties(cli.hlorun.inputs.${c} PROPERTIES SKIP_RETURN_CODE 77)
endforeach()
if(NOT ZLIB_FOUND)
  set_tests_properties(cli.hlorun.inputs.npz_compressed PROPERTIES DISABLED ON)
endif()
