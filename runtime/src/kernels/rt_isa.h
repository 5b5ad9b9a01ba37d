/* rt_isa.h — which vector instruction set the runtime's hand-written kernels may use: the
 * running CPU's, capped by the environment variable HLO_RT_ISA (baseline, avx2, avx512, amx).
 * libhlort is built once and runs on many machines, so every kernel family with per-ISA forms
 * (rt_gemm.c, rt_gemm_small.h, rt_gemm_bf16.c, rt_dnnl.c) asks here instead of testing the CPU
 * itself.  The cap lets one machine run, test and time the forms a smaller CPU would run
 * (tests/runtime_isa.cmake, bench/run.py --isa); it never raises the level above the CPU's.
 * Not a public header.
 */
#ifndef HLO_RT_ISA_H
#define HLO_RT_ISA_H

#include <stdint.h>

/* Ordered: each level includes the ones below it. */
enum {
  RT_ISA_BASE = 0,   /* the baseline x86-64 (SSE2) or any other architecture */
  RT_ISA_AVX2 = 1,   /* AVX2, FMA and F16C (x86-64-v3) */
  RT_ISA_AVX512 = 2, /* AVX-512 F; a kernel that needs more (BW, BF16) asks the CPU for it too */
  RT_ISA_AMX = 3,    /* AVX-512 and AMX's tiles where the CPU has them */
};

/* The target attribute of the kernels' AVX-512 forms that are written in generic vectors (the
 * f32/f64 micro-kernels, the few-rows kernels).  A test build with RT_ISA_EMULATE_AVX512
 * compiles them for AVX2 instead (GCC splits each 16-lane vector into two 8-lane ones: the
 * same operations lane by lane, so the same bits) and reports level AVX512 on an AVX2 CPU, so
 * a host without AVX-512 runs and checks their tiles, tails and blocking
 * (unit.rt_gemm_test.avx512_emulated).  The few AVX-512 intrinsics among them take generic
 * forms there; kernels that need more than AVX-512 F (BW, BF16, AMX) ask the CPU and stay out. */
#ifdef RT_ISA_EMULATE_AVX512
#define RT_TARGET_AVX512 __attribute__((target("avx2,fma,f16c")))
#else
#define RT_TARGET_AVX512 __attribute__((target("avx512f,avx2,fma")))
#endif

/* The level this process's kernels use: the CPU's, lowered to HLO_RT_ISA when that names a
 * lower one.  Found once; the same answer for the life of the process. */
int rt_isa_level(void);

/* The size from which the runtime's kernels write large results with streaming stores:
 * HLO_RT_NONTEMPORAL_MIN_BYTES (hlo/rt.h), or the environment variable of the same name (a
 * byte count; "off": never; tests stream small results with it).  Found once per process. */
int64_t rt_nontemporal_min_bytes(void);

#endif
