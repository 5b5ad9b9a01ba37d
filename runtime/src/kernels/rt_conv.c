/* rt_conv.c — the direct kernel for depthwise and grouped convolutions with few input
 * features per group (hlo/rt.h: hlo_rt_conv_grouped_f32).  Two spatial dimensions (one for
 * 1-D convolutions, with a unit height), any element strides, window strides, padding, window
 * dilation and (through a negative kernel stride) reversal; f32 in, f32 accumulation, f32
 * out.  Output rows (batch x output height) are split over the context's thread pool; a row
 * is vectorized along the width when the input's width is unit-stride, else along features.
 * Tests: runtime/src/kernels/rt_conv_test.c.
 */
#include <stdint.h>

#include "hlo/rt.h"
#include "hlo/rt_parallel.h"

/* The row loops are built for AVX-512, AVX2 and the baseline and picked when the library
 * loads (libhlort runs on many machines); CMake compiles this file with -O3 so that they
 * vectorize. */
#if (defined(__x86_64__) || defined(__i386__)) && defined(__GNUC__) && !defined(__clang__)
#define CONV_CLONES __attribute__((target_clones("avx512f", "avx2,fma", "default")))
#else
#define CONV_CLONES
#endif

/* Multiply-adds below which a convolution runs on the calling thread. */
#define CONV_PARALLEL_MIN_WORK 65536.0

typedef struct conv_job {
  const int64_t *d; /* the descriptor, HLO_RT_CONV_* indices */
  const float *in, *k;
  float *out;
} conv_job;

/* ceil(a / b) for b > 0 and any sign of a. */
static int64_t div_up(int64_t a, int64_t b) { return a >= 0 ? (a + b - 1) / b : -((-a) / b); }

/* Window column kx of a row vectorized along the width: its input column offset *ix0 and the
 * output columns [*lo, *hi) whose input column lies inside the row.  A division only for
 * strides above 1. */
static void column_bounds(const int64_t *d, int64_t kx, int64_t *ix0, int64_t *lo, int64_t *hi) {
  int64_t ow_n = d[HLO_RT_CONV_OW], w_n = d[HLO_RT_CONV_W], st = d[HLO_RT_CONV_ST_W];
  *ix0 = kx * d[HLO_RT_CONV_DIL_W] - d[HLO_RT_CONV_PAD_W];
  *lo = st == 1 ? -*ix0 : div_up(-*ix0, st);
  *hi = st == 1 ? w_n - *ix0 : div_up(w_n - *ix0, st);
  *lo = *lo < 0 ? 0 : *lo;
  *hi = *hi > ow_n ? ow_n : *hi;
}

/* One output row (batch n, output row oy), vectorized along the width: acc holds OW sums of
 * one output feature. */
CONV_CLONES static void conv_row_width(const conv_job *j, int64_t n, int64_t oy, float *acc) {
  const int64_t *d = j->d;
  int64_t ow_n = d[HLO_RT_CONV_OW], st = d[HLO_RT_CONV_ST_W];
  int64_t per_group = d[HLO_RT_CONV_M], k_in = d[HLO_RT_CONV_KIN];
  int64_t kw_n = d[HLO_RT_CONV_KW];
  for (int64_t o = 0; o < d[HLO_RT_CONV_O]; o++) {
    for (int64_t x = 0; x < ow_n; x++)
      acc[x] = 0;
    int64_t g = o / per_group;
    for (int64_t i = 0; i < k_in; i++) {
      const float *plane = j->in + n * d[HLO_RT_CONV_IN_N] + (g * k_in + i) * d[HLO_RT_CONV_IN_C];
      const float *kern = j->k + i * d[HLO_RT_CONV_K_I] + o * d[HLO_RT_CONV_K_O];
      for (int64_t ky = 0; ky < d[HLO_RT_CONV_KH]; ky++) {
        int64_t iy = oy * d[HLO_RT_CONV_ST_H] - d[HLO_RT_CONV_PAD_H] + ky * d[HLO_RT_CONV_DIL_H];
        if (iy < 0 || iy >= d[HLO_RT_CONV_H])
          continue;
        const float *row = plane + iy * d[HLO_RT_CONV_IN_H];
        for (int64_t kx = 0; kx < kw_n; kx++) {
          float w = kern[ky * d[HLO_RT_CONV_K_H] + kx * d[HLO_RT_CONV_K_W]];
          int64_t ix0, lo, hi;
          column_bounds(d, kx, &ix0, &lo, &hi);
          if (st == 1) {
            const float *src = row + ix0;
            for (int64_t x = lo; x < hi; x++)
              acc[x] += w * src[x];
          } else {
            for (int64_t x = lo; x < hi; x++)
              acc[x] += w * row[x * st + ix0];
          }
        }
      }
    }
    float *dst = j->out + n * d[HLO_RT_CONV_OUT_N] + o * d[HLO_RT_CONV_OUT_O] + oy * d[HLO_RT_CONV_OUT_H];
    for (int64_t x = 0; x < ow_n; x++)
      dst[x * d[HLO_RT_CONV_OUT_W]] = acc[x];
  }
}

/* One output row vectorized along the output features: acc holds O sums of one position.
 * Depthwise (one input feature per group, one output per group) with unit feature strides
 * takes the contiguous loop. */
CONV_CLONES static void conv_row_features(const conv_job *j, int64_t n, int64_t oy, float *acc) {
  const int64_t *d = j->d;
  int64_t o_n = d[HLO_RT_CONV_O], per_group = d[HLO_RT_CONV_M], k_in = d[HLO_RT_CONV_KIN];
  int64_t cs = d[HLO_RT_CONV_IN_C], ks = d[HLO_RT_CONV_K_O];
  int contiguous = k_in == 1 && per_group == 1 && cs == 1 && ks == 1;
  for (int64_t ox = 0; ox < d[HLO_RT_CONV_OW]; ox++) {
    for (int64_t o = 0; o < o_n; o++)
      acc[o] = 0;
    for (int64_t ky = 0; ky < d[HLO_RT_CONV_KH]; ky++) {
      int64_t iy = oy * d[HLO_RT_CONV_ST_H] - d[HLO_RT_CONV_PAD_H] + ky * d[HLO_RT_CONV_DIL_H];
      if (iy < 0 || iy >= d[HLO_RT_CONV_H])
        continue;
      for (int64_t kx = 0; kx < d[HLO_RT_CONV_KW]; kx++) {
        int64_t ix = ox * d[HLO_RT_CONV_ST_W] - d[HLO_RT_CONV_PAD_W] + kx * d[HLO_RT_CONV_DIL_W];
        if (ix < 0 || ix >= d[HLO_RT_CONV_W])
          continue;
        const float *src = j->in + n * d[HLO_RT_CONV_IN_N] + iy * d[HLO_RT_CONV_IN_H] + ix * d[HLO_RT_CONV_IN_W];
        const float *kern = j->k + ky * d[HLO_RT_CONV_K_H] + kx * d[HLO_RT_CONV_K_W];
        if (contiguous) {
          for (int64_t o = 0; o < o_n; o++)
            acc[o] += kern[o] * src[o];
          continue;
        }
        for (int64_t o = 0; o < o_n; o++) {
          int64_t g = o / per_group;
          for (int64_t i = 0; i < k_in; i++)
            acc[o] += kern[i * d[HLO_RT_CONV_K_I] + o * ks] * src[(g * k_in + i) * cs];
        }
      }
    }
    float *dst = j->out + n * d[HLO_RT_CONV_OUT_N] + oy * d[HLO_RT_CONV_OUT_H] + ox * d[HLO_RT_CONV_OUT_W];
    for (int64_t o = 0; o < o_n; o++)
      dst[o * d[HLO_RT_CONV_OUT_O]] = acc[o];
  }
}

/* Output rows [begin, end) of batch x output height (a hlo_rt_range_fn). */
static void conv_rows(void *arg, int64_t begin, int64_t end) {
  const conv_job *j = arg;
  const int64_t *d = j->d;
  int by_width = d[HLO_RT_CONV_IN_W] == 1 && d[HLO_RT_CONV_OW] >= 8;
  float acc[HLO_RT_CONV_MAX_ROW];
  for (int64_t r = begin; r < end; r++) {
    int64_t n = r / d[HLO_RT_CONV_OH], oy = r % d[HLO_RT_CONV_OH];
    if (by_width)
      conv_row_width(j, n, oy, acc);
    else
      conv_row_features(j, n, oy, acc);
  }
}

HLO_RT_EXPORT void hlo_rt_conv_grouped_f32(hlo_context *ctx, const int64_t *desc, const float *in, const float *k,
                                           float *out) {
  conv_job j = {desc, in, k, out};
  int64_t rows = desc[HLO_RT_CONV_N] * desc[HLO_RT_CONV_OH];
  double work = (double)rows * (double)desc[HLO_RT_CONV_OW] * (double)desc[HLO_RT_CONV_O] *
                (double)desc[HLO_RT_CONV_KIN] * (double)desc[HLO_RT_CONV_KH] * (double)desc[HLO_RT_CONV_KW];
  hlo_rt_parallel_for(work >= CONV_PARALLEL_MIN_WORK ? ctx : NULL, rows, conv_rows, &j);
}
