# The runtime's kernels for smaller CPUs (runtime/src/kernels/rt_isa.h): libhlort picks AVX-512,
# AVX2 + FMA or baseline forms from the running CPU, so on an AVX-512 machine the other forms
# would go untested.  HLO_RT_ISA holds the GEMM tests (f32, f64, bf16, few rows, direct A) to
# each smaller form (avx512: AVX-512 without AMX, where the vdpbf16ps probe picks the default
# bf16 kernel); the golden suite at x86-64-v3 and generic does the same for whole models
# (tests/golden.cmake, tests/models.cmake).
foreach(isa avx512 avx2 baseline)
  add_test(NAME unit.rt_gemm_test.${isa} COMMAND rt_gemm_test WORKING_DIRECTORY ${CMAKE_SOURCE_DIR})
  set_tests_properties(unit.rt_gemm_test.${isa} PROPERTIES ENVIRONMENT "HLO_RT_ISA=${isa}")
endforeach()
