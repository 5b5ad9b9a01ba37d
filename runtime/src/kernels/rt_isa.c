/* rt_isa.c — the runtime's one answer to "which instruction set may a kernel use"
 * (rt_isa.h): the running CPU's level, capped by HLO_RT_ISA; and from what size a kernel's
 * result is written with streaming stores (HLO_RT_NONTEMPORAL_MIN_BYTES). */
#include "rt_isa.h"

#include "hlo/rt.h"

#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#if (defined(__x86_64__) || defined(__i386__)) && defined(__GNUC__)
#define ISA_X86 1
#else
#define ISA_X86 0
#endif

/* The highest level HLO_RT_ISA allows; unset or any other name: no cap. */
static int isa_cap(void) {
  static const struct {
    const char *name;
    int level;
  } names[] = {{"baseline", RT_ISA_BASE}, {"avx2", RT_ISA_AVX2}, {"avx512", RT_ISA_AVX512}, {"amx", RT_ISA_AMX}};
  const char *want = getenv("HLO_RT_ISA");
  if (want)
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
      if (strcmp(want, names[i].name) == 0)
        return names[i].level;
  return RT_ISA_AMX;
}

/* The CPU's own level.  AMX is counted as present here when AVX-512 is; whether the CPU has
 * tiles and the OS grants them is rt_gemm_bf16.c's test, since only it uses them. */
static int isa_cpu(void) {
#if ISA_X86
  __builtin_cpu_init();
  if (__builtin_cpu_supports("avx512f"))
    return RT_ISA_AMX;
  if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma") && __builtin_cpu_supports("f16c"))
#ifdef RT_ISA_EMULATE_AVX512
    return RT_ISA_AVX512; /* the AVX-512 forms compiled for AVX2 (rt_isa.h RT_TARGET_AVX512) */
#else
    return RT_ISA_AVX2;
#endif
#endif
  return RT_ISA_BASE;
}

int rt_isa_level(void) {
  static _Atomic int cached = -1; /* the run-time dispatch cache: one value per process */
  int level = atomic_load_explicit(&cached, memory_order_relaxed);
  if (level >= 0)
    return level;
  int cpu = isa_cpu(), cap = isa_cap();
  level = cpu < cap ? cpu : cap;
  atomic_store_explicit(&cached, level, memory_order_relaxed);
  return level;
}

int64_t rt_nontemporal_min_bytes(void) {
  static _Atomic int64_t cached = -2; /* the run-time dispatch cache; -1 is "off" */
  int64_t min = atomic_load_explicit(&cached, memory_order_relaxed);
  if (min != -2)
    return min;
  min = HLO_RT_NONTEMPORAL_MIN_BYTES;
  const char *want = getenv("HLO_RT_NONTEMPORAL_MIN_BYTES");
  if (want && strcmp(want, "off") == 0) {
    min = -1;
  } else if (want && *want) {
    char *end;
    long long v = strtoll(want, &end, 10);
    if (!*end && v > 0)
      min = v;
  }
  atomic_store_explicit(&cached, min, memory_order_relaxed);
  return min;
}
