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

# The AVX-512 forms written in generic vectors (the f32/f64 micro-kernels, the few-rows
# kernels for f32, bf16 and f16), compiled for AVX2 and run at level AVX512 on any AVX2 CPU
# (rt_isa.h RT_ISA_EMULATE_AVX512): their tiles, tails and blocking are checked on hosts
# without AVX-512 too, with the same exact checks (a 16-lane vector split in two 8-lane ones
# computes the same bits).  This test's own copies of the GEMM sources come first at link
# time, so the archive's are not pulled in.
if(CMAKE_SYSTEM_PROCESSOR MATCHES "x86_64|AMD64")
  set(RT_KERNELS ${CMAKE_SOURCE_DIR}/runtime/src/kernels)
  add_executable(rt_gemm_test_avx512emu ${RT_KERNELS}/rt_gemm_test.c ${RT_KERNELS}/rt_gemm.c
                 ${RT_KERNELS}/rt_gemm_bf16.c ${RT_KERNELS}/rt_isa.c)
  target_compile_definitions(rt_gemm_test_avx512emu PRIVATE RT_ISA_EMULATE_AVX512=1)
  target_include_directories(rt_gemm_test_avx512emu PRIVATE ${CMAKE_SOURCE_DIR}/runtime/src)
  target_link_libraries(rt_gemm_test_avx512emu PRIVATE hlort)
  add_test(NAME unit.rt_gemm_test.avx512_emulated COMMAND rt_gemm_test_avx512emu
           WORKING_DIRECTORY ${CMAKE_SOURCE_DIR})
endif()

# Products whose results are written with non-temporal stores (rt_gemm_impl.h `streams`): every
# aligned result streams at 1 byte, at each instruction set's tile (the AVX-512 one emulated on
# AVX2 hosts as well), checked against the exact product and the unaligned (ordinary) bits.
foreach(isa native avx2 baseline)
  add_test(NAME unit.rt_gemm_test.nontemporal.${isa} COMMAND rt_gemm_test WORKING_DIRECTORY ${CMAKE_SOURCE_DIR})
  set(env "HLO_RT_NONTEMPORAL_MIN_BYTES=1")
  if(NOT isa STREQUAL "native")
    set(env "${env};HLO_RT_ISA=${isa}")
  endif()
  set_tests_properties(unit.rt_gemm_test.nontemporal.${isa} PROPERTIES ENVIRONMENT "${env}")
endforeach()
if(TARGET rt_gemm_test_avx512emu)
  add_test(NAME unit.rt_gemm_test.nontemporal.avx512_emulated COMMAND rt_gemm_test_avx512emu
           WORKING_DIRECTORY ${CMAKE_SOURCE_DIR})
  set_tests_properties(unit.rt_gemm_test.nontemporal.avx512_emulated PROPERTIES
                       ENVIRONMENT "HLO_RT_NONTEMPORAL_MIN_BYTES=1")
endif()
