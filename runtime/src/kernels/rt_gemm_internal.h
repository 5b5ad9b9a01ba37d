/* rt_gemm_internal.h — the f32 GEMM on half-precision operands widened to f32 as they are
 * packed (rt_gemm_impl.h with GEMM_WIDEN): the f32 kernels' arithmetic on the exact f32
 * values, without f32 copies of the operands.  rt_gemm_bf16.c calls the bf16 one on hosts
 * without AMX; rt_gemm.c's hlo_rt_gemm_*_f16 are the f16 one.  Not a public header.
 */
#ifndef HLO_RT_GEMM_INTERNAL_H
#define HLO_RT_GEMM_INTERNAL_H

#include <stdint.h>
#include <string.h>

#include "hlo/rt.h"

/* A bf16 element (its bits) as f32: the upper half of the f32's bits, exact. */
static inline float rt_bf16_to_f32(uint16_t h) {
  uint32_t w = (uint32_t)h << 16;
  float f;
  memcpy(&f, &w, sizeof f);
  return f;
}

/* How `threads` threads share one m x n x k product: a grid of `rows` slices of C's rows by
 * `cols` slices of its columns (rows * cols == threads), each thread one rectangle computed
 * start to end with its own packing buffers, so that it packs only its rows of A and its
 * columns of B.  The grid is the one whose busiest thread has least to do: its micro tiles
 * (mr x nr x k multiply-adds each, a partial tile counted as a whole one) plus the elements it
 * packs, each counted as `pack_cost` multiply-adds.  Ties go to fewer row slices.  rows_only:
 * columns stay whole (a product that reads A in place).  A C element's sum does not depend on
 * the grid, so neither do the bits. */
typedef struct rt_gemm_grid {
  int rows, cols;
} rt_gemm_grid;

static inline rt_gemm_grid rt_gemm_split(int64_t m, int64_t n, int64_t k, int mr, int nr, int threads,
                                         double pack_cost, int rows_only) {
  rt_gemm_grid best = {threads, 1};
  double best_cost = -1, row_tiles = (double)((m + mr - 1) / mr), col_tiles = (double)((n + nr - 1) / nr);
  for (int rows = rows_only ? threads : 1; rows <= threads; rows++) {
    if (threads % rows)
      continue;
    int cols = threads / rows;
    double tiles = __builtin_ceil(row_tiles / rows) * __builtin_ceil(col_tiles / cols);
    double packed = __builtin_ceil((double)m / rows) * (double)k + (double)k * __builtin_ceil((double)n / cols);
    double cost = tiles * mr * nr * (double)k + pack_cost * packed;
    if (best_cost < 0 || cost < best_cost) {
      best = (rt_gemm_grid){rows, cols};
      best_cost = cost;
    }
  }
  return best;
}

/* [*lo, *hi): slice `t` of `parts` of `size` elements, cut at multiples of `step`. */
static inline void rt_gemm_slice(int64_t size, int64_t step, int64_t t, int64_t parts, int64_t *lo, int64_t *hi) {
  int64_t units = (size + step - 1) / step;
  *lo = units * t / parts * step;
  *hi = units * (t + 1) / parts * step;
  if (*hi > size)
    *hi = size;
  if (*lo > size)
    *lo = size;
}

/* Multiply-adds per cycle of AVX512_BF16's vdpbf16ps over AVX-512 FMA's on this core, measured
 * (rt_gemm_bf16.c's probe, ~0.1 ms); 0 where the CPU, or HLO_RT_ISA, gives no AVX512_BF16. */
double rt_gemm_bf16_dot_gain(void);

/* The gain from which the AVX512_BF16 kernel replaces the f32 route on a CPU without AMX. */
#define RT_GEMM_BF16_DOT_PAYS 1.2

/* C (batch x m x n, dense f32) = A·B for bf16 A and B (their bits as uint16_t): element
 * strides (a_bs, a_rs, a_cs; b_bs, b_rs, b_cs) as hlo_rt_gemm_strided_f32, or, when a_off is
 * not NULL, offset tables a_off and b_off laid out as hlo_rt_gemm_indexed_f32's (the strides
 * are then ignored).  epi (may be NULL) runs on each finished part of C while it is in cache,
 * as epi(epi_arg, begin, end) over elements [begin, end) of the whole C, as
 * hlo_rt_gemm_strided_epi_f32's.  Threads from ctx's pool; the same bits as hlo_rt_gemm_*_f32
 * on the operands widened to f32. */
void rt_gemm_widened_bf16(hlo_context *ctx, int64_t batch, int64_t m, int64_t n, int64_t k, const uint16_t *a,
                          int64_t a_bs, int64_t a_rs, int64_t a_cs, const int64_t *a_off, const uint16_t *b,
                          int64_t b_bs, int64_t b_rs, int64_t b_cs, const int64_t *b_off, float *c,
                          hlo_rt_range_fn epi, void *epi_arg);
/* The same for IEEE half (f16) operands (rt_gemm_widened_f16c: packing with F16C, for CPUs
 * with AVX2; rt_gemm.c's hlo_rt_gemm_*_f16 pick one). */
void rt_gemm_widened_f16c(hlo_context *ctx, int64_t batch, int64_t m, int64_t n, int64_t k, const uint16_t *a,
                          int64_t a_bs, int64_t a_rs, int64_t a_cs, const int64_t *a_off, const uint16_t *b,
                          int64_t b_bs, int64_t b_rs, int64_t b_cs, const int64_t *b_off, float *c,
                          hlo_rt_range_fn epi, void *epi_arg);
void rt_gemm_widened_f16(hlo_context *ctx, int64_t batch, int64_t m, int64_t n, int64_t k, const uint16_t *a,
                         int64_t a_bs, int64_t a_rs, int64_t a_cs, const int64_t *a_off, const uint16_t *b,
                         int64_t b_bs, int64_t b_rs, int64_t b_cs, const int64_t *b_off, float *c,
                         hlo_rt_range_fn epi, void *epi_arg);

#endif
