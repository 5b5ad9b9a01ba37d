/* rt_transpose16.h — a 16 x 16 transpose of 32-bit elements in AVX-512 registers, and an
 * 8 x 8 one in AVX2 registers, for the GEMMs' packing of a transposed B (rt_gemm.c: f32
 * elements; rt_gemm_bf16.c: bf16 depth pairs).  Not a public header.  Tests: rt_gemm_test's
 * transposed products (and unit.rt_gemm_test.avx2 for the 8 x 8 one).
 */
#ifndef HLOC_RT_TRANSPOSE16_H
#define HLOC_RT_TRANSPOSE16_H

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>

/* r[i] (16 lanes each) becomes column i: afterwards r[q] lane i holds what r[i] lane q held.
 * Unpack, shuffle, then two 128-bit-lane shuffles: 64 shuffles for 256 elements. */
__attribute__((target("avx512f"), always_inline)) static inline void rt_transpose16(__m512 r[16]) {
  __m512 t[16], u[16], v[16];
  for (int k = 0; k < 8; k++) {
    t[2 * k] = _mm512_unpacklo_ps(r[2 * k], r[2 * k + 1]);
    t[2 * k + 1] = _mm512_unpackhi_ps(r[2 * k], r[2 * k + 1]);
  }
  for (int k = 0; k < 4; k++) {
    u[4 * k + 0] = _mm512_shuffle_ps(t[4 * k + 0], t[4 * k + 2], 0x44);
    u[4 * k + 1] = _mm512_shuffle_ps(t[4 * k + 0], t[4 * k + 2], 0xEE);
    u[4 * k + 2] = _mm512_shuffle_ps(t[4 * k + 1], t[4 * k + 3], 0x44);
    u[4 * k + 3] = _mm512_shuffle_ps(t[4 * k + 1], t[4 * k + 3], 0xEE);
  }
  for (int k = 0; k < 2; k++)
    for (int i = 0; i < 4; i++) {
      v[8 * k + i] = _mm512_shuffle_f32x4(u[8 * k + i], u[8 * k + 4 + i], 0x88);
      v[8 * k + 4 + i] = _mm512_shuffle_f32x4(u[8 * k + i], u[8 * k + 4 + i], 0xDD);
    }
  for (int i = 0; i < 8; i++) {
    r[i] = _mm512_shuffle_f32x4(v[i], v[8 + i], 0x88);
    r[8 + i] = _mm512_shuffle_f32x4(v[i], v[8 + i], 0xDD);
  }
}

/* The same for 8 x 8 in AVX2 registers: unpack, shuffle, then one exchange of 128-bit halves
 * (24 shuffles for 64 elements). */
__attribute__((target("avx2"), always_inline)) static inline void rt_transpose8(__m256 r[8]) {
  __m256 t[8], u[8];
  for (int k = 0; k < 4; k++) {
    t[2 * k] = _mm256_unpacklo_ps(r[2 * k], r[2 * k + 1]);
    t[2 * k + 1] = _mm256_unpackhi_ps(r[2 * k], r[2 * k + 1]);
  }
  for (int k = 0; k < 2; k++) {
    u[4 * k + 0] = _mm256_shuffle_ps(t[4 * k + 0], t[4 * k + 2], 0x44);
    u[4 * k + 1] = _mm256_shuffle_ps(t[4 * k + 0], t[4 * k + 2], 0xEE);
    u[4 * k + 2] = _mm256_shuffle_ps(t[4 * k + 1], t[4 * k + 3], 0x44);
    u[4 * k + 3] = _mm256_shuffle_ps(t[4 * k + 1], t[4 * k + 3], 0xEE);
  }
  for (int i = 0; i < 4; i++) {
    r[i] = _mm256_permute2f128_ps(u[i], u[4 + i], 0x20);
    r[4 + i] = _mm256_permute2f128_ps(u[i], u[4 + i], 0x31);
  }
}
#endif

#endif
