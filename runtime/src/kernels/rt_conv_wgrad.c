/* rt_conv_wgrad.c — the weight gradient of a depthwise convolution over planes
 * (hlo_rt_conv_dw_wgrad_f32, hlo/rt_abi.def; descriptor hlo/rt.h HLO_RT_DWG_*): for each
 * channel c and tap (ky, kx),
 *   out(c, ky, kx) = sum over n, oy, ox of x(n, c, ky*st_h + oy*dl_h - pad_h,
 *                                              kx*st_w + ox*dl_w - pad_w) * dy(n, c, oy, ox),
 * positions outside x contributing 0: XLA's convolution with batch_group_count = the channels
 * (PyTorch/XLA's fb01_io01->01bf, JAX's depthwise weight gradients), where st is the window
 * stride (the forward convolution's dilation) and dl the window dilation (its stride).
 *
 * Each x plane (one image, one channel) is copied once into a zero-padded buffer whose columns
 * are split into dl_w phases, so that for every tap the elements a row of dy meets are one
 * contiguous run; each row of dy is summed against all taps' runs at once into 16 lanes per
 * tap (a row's last vector masked: short rows, 7 or 14 wide, stay vector operations).  A
 * channel is one work unit (the pool splits channels), summed in a fixed order (images, rows
 * of dy; lane j takes columns j, j+16, ... of each row; the lanes added pairwise at the end),
 * so the bits do not depend on the thread count.  In builds with oneDNN its jit_dw kernel
 * (with two reorders into blocked layouts) keeps dy planes under 56x56 and every plane on CPUs
 * without AVX-512, where it is as fast or faster (compiler/codegen/conv_dnnl.c `route`;
 * docs/performance.md).  Tests: runtime/src/kernels/rt_conv_test.c (run_dw_wgrad_all), golden
 * conv_model_bwd_weights_dw*.
 */
#include <stdint.h>
#include <string.h>

#include "hlo/rt.h"
#include "hlo/rt_parallel.h"

enum { DWG_LANES = 16 };

typedef float dwg_v16 __attribute__((vector_size(64), aligned(4)));
typedef int32_t dwg_v16i __attribute__((vector_size(64), aligned(4)));

/* The buffers of one plane.  x: rows x phases x cols floats, phase p of padded row r holding
 * columns p, p + dl_w, ... of the padded row (cols past the plane's reach stay zero: a tap's
 * run is read in whole vectors, the lanes past the row's end discarded).  dy: oh rows of
 * `run` floats (ow rounded up to the lanes). */
typedef struct dwg_geom {
  int64_t rows, cols, phases; /* padded rows; columns per phase (read room included); dl_w */
  int64_t reach;              /* columns per phase that hold the plane */
  int64_t run;                /* dy's row stride in its buffer */
} dwg_geom;

static int64_t dwg_round(int64_t x) { return (x + DWG_LANES - 1) / DWG_LANES * DWG_LANES; }

static dwg_geom dwg_geometry(const int64_t *d) {
  int64_t reach_y = (d[HLO_RT_DWG_KH] - 1) * d[HLO_RT_DWG_ST_H] + (d[HLO_RT_DWG_OH] - 1) * d[HLO_RT_DWG_DL_H] + 1;
  int64_t reach_x = (d[HLO_RT_DWG_KW] - 1) * d[HLO_RT_DWG_ST_W] + (d[HLO_RT_DWG_OW] - 1) * d[HLO_RT_DWG_DL_W] + 1;
  int64_t ph = d[HLO_RT_DWG_DL_W], run = dwg_round(d[HLO_RT_DWG_OW]);
  int64_t reach = (reach_x + ph - 1) / ph, last = (d[HLO_RT_DWG_KW] - 1) * d[HLO_RT_DWG_ST_W] / ph;
  return (dwg_geom){reach_y, last + run > reach ? last + run : reach, ph, reach, run};
}

/* Copies plane (n, c) of x into buf: padded row r is x row r - pad_h, padded column q is x
 * column q - pad_w.  Only the elements inside x are written: the padding around them is the
 * same for every plane and stays zero from the allocation, as does the read room past
 * `reach`.  Loops, not library calls: rows of 7 to 28 columns are common. */
__attribute__((always_inline)) static inline void dwg_fill(const int64_t *d, const dwg_geom *g,
                                                          const float *restrict plane, float *restrict buf) {
  int64_t h = d[HLO_RT_DWG_H], w = d[HLO_RT_DWG_W], ph = g->phases, py = d[HLO_RT_DWG_PAD_H], px = d[HLO_RT_DWG_PAD_W];
  int64_t r0 = py > 0 ? py : 0, r1 = h + py < g->rows ? h + py : g->rows;
  for (int64_t r = r0; r < r1; r++) {
    float *row = buf + r * ph * g->cols;
    const float *src = plane + (r - py) * d[HLO_RT_DWG_X_H];
    for (int64_t p = 0; p < ph; p++) { /* j's column ix = j*ph + p - px is in x for j in [lo, hi) */
      float *dst = row + p * g->cols;
      int64_t lo = px - p > 0 ? (px - p + ph - 1) / ph : 0, hi = w + px - p > 0 ? (w + px - p + ph - 1) / ph : 0;
      lo = lo < g->reach ? lo : g->reach;
      hi = hi < lo ? lo : hi < g->reach ? hi : g->reach;
      int64_t j = lo;
      if (ph == 2) /* the even or odd columns: 32 read, 16 kept, while a whole pair is in x */
        for (; j + DWG_LANES < hi; j += DWG_LANES) {
          const float *at = src + 2 * j + p - px;
          dwg_v16 e = *(const dwg_v16 *)at, o = *(const dwg_v16 *)(at + DWG_LANES);
          *(dwg_v16 *)(dst + j) = __builtin_shuffle(
              e, o, (dwg_v16i){0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30});
        }
      if (ph == 1)
        for (; j < hi; j++)
          dst[j] = src[j - px];
      else
        for (; j < hi; j++)
          dst[j] = src[j * ph + p - px];
    }
  }
}

/* The lanes of a row's last, partial vector that are kept, those below `rest` (1-15): 16
 * loaded from dwg_keep_bits + 16 - rest (a table: GCC 12 failed on a vector comparison in
 * the AVX-512 clone under -fsanitize). */
static const int32_t dwg_keep_bits[2 * DWG_LANES] = {-1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1,
                                                      -1, -1, -1, -1, -1, 0,  0,  0,  0,  0,  0,
                                                      0,  0,  0,  0,  0,  0,  0,  0,  0,  0};
#define DWG_KEEP(rest) (*(const dwg_v16i *)(dwg_keep_bits + DWG_LANES - (rest)))

/* acc[t] += the products of each row oy of dy (n elements, rows `run` apart) with tap t's run
 * in x (at x + off[t] + oy * step), element i into lane i % 16, for taps t < TAPS (a constant
 * where inlined: accumulators and offsets stay in registers, each dy vector is loaded once
 * for all taps); a row's last vector reads lanes past n (within the buffers) and discards
 * them, not added. */
__attribute__((always_inline)) static inline void dwg_rows(dwg_v16 *acc, const float *x, const int64_t *off,
                                                          int64_t step, const float *dy, int64_t run, int64_t rows,
                                                          int64_t n, int64_t taps) {
  for (int64_t oy = 0; oy < rows; oy++, x += step, dy += run) {
    int64_t i = 0;
    for (; i + DWG_LANES <= n; i += DWG_LANES) {
      dwg_v16 g = *(const dwg_v16 *)(dy + i);
#pragma GCC unroll 16
      for (int64_t t = 0; t < taps; t++)
        acc[t] += *(const dwg_v16 *)(x + off[t] + i) * g;
    }
    if (i < n) {
      dwg_v16i keep = DWG_KEEP(n - i);
      dwg_v16 g = *(const dwg_v16 *)(dy + i);
#pragma GCC unroll 16
      for (int64_t t = 0; t < taps; t++)
        acc[t] += (dwg_v16)((dwg_v16i)(*(const dwg_v16 *)(x + off[t] + i) * g) & keep);
    }
  }
}

/* The lanes added pairwise. */
static float dwg_total(const float *lanes) {
  float t[DWG_LANES];
  memcpy(t, lanes, sizeof t);
  for (int w = DWG_LANES / 2; w >= 1; w /= 2)
    for (int j = 0; j < w; j++)
      t[j] += t[j + w];
  return t[0];
}

typedef struct dwg_job {
  const int64_t *d;
  const float *x, *dy;
  float *out;
} dwg_job;

/* One channel's sums into acc (one vector of lanes per tap): every image's x plane padded once
 * into xb and its dy plane copied into dyb (rows of g->run), then the rows of dy against all
 * taps' runs at once (off: each tap's run for the first row of dy, in xb). */
__attribute__((target_clones("avx512f", "arch=x86-64-v3", "default"))) static void
dwg_channel(const dwg_job *jb, const dwg_geom *g, int64_t c, float *restrict xb, float *restrict dyb, dwg_v16 *acc,
            const int64_t *off) {
  const int64_t *d = jb->d;
  int64_t taps = d[HLO_RT_DWG_KH] * d[HLO_RT_DWG_KW], oh = d[HLO_RT_DWG_OH], ow = d[HLO_RT_DWG_OW];
  int64_t step = d[HLO_RT_DWG_DL_H] * g->phases * g->cols;
  dwg_v16 a9[9];
  int64_t o9[9];
  if (taps == 9)
    memcpy(a9, acc, sizeof a9), memcpy(o9, off, sizeof o9);
  for (int64_t n = 0; n < d[HLO_RT_DWG_N]; n++) {
    dwg_fill(d, g, jb->x + n * d[HLO_RT_DWG_X_N] + c * d[HLO_RT_DWG_X_C], xb);
    const float *dyp = jb->dy + n * d[HLO_RT_DWG_DY_N] + c * d[HLO_RT_DWG_DY_C];
    for (int64_t oy = 0; oy < oh; oy++)
      for (int64_t ox = 0; ox < ow; ox++)
        dyb[oy * g->run + ox] = dyp[oy * d[HLO_RT_DWG_DY_H] + ox];
    if (taps == 9) /* 3x3: nine accumulators and offsets in registers */
      dwg_rows(a9, xb, o9, step, dyb, g->run, oh, ow, 9);
    else
      dwg_rows(acc, xb, off, step, dyb, g->run, oh, ow, taps);
  }
  if (taps == 9)
    memcpy(acc, a9, sizeof a9);
}

/* The formula one element at a time (when the buffers cannot be allocated). */
static void dwg_naive(const int64_t *d, const float *x, const float *dy, float *out, int64_t c0, int64_t c1) {
  for (int64_t c = c0; c < c1; c++)
    for (int64_t ky = 0; ky < d[HLO_RT_DWG_KH]; ky++)
      for (int64_t kx = 0; kx < d[HLO_RT_DWG_KW]; kx++) {
        float s = 0;
        for (int64_t n = 0; n < d[HLO_RT_DWG_N]; n++)
          for (int64_t oy = 0; oy < d[HLO_RT_DWG_OH]; oy++)
            for (int64_t ox = 0; ox < d[HLO_RT_DWG_OW]; ox++) {
              int64_t iy = ky * d[HLO_RT_DWG_ST_H] + oy * d[HLO_RT_DWG_DL_H] - d[HLO_RT_DWG_PAD_H];
              int64_t ix = kx * d[HLO_RT_DWG_ST_W] + ox * d[HLO_RT_DWG_DL_W] - d[HLO_RT_DWG_PAD_W];
              if (iy < 0 || iy >= d[HLO_RT_DWG_H] || ix < 0 || ix >= d[HLO_RT_DWG_W])
                continue;
              s += x[n * d[HLO_RT_DWG_X_N] + c * d[HLO_RT_DWG_X_C] + iy * d[HLO_RT_DWG_X_H] + ix] *
                   dy[n * d[HLO_RT_DWG_DY_N] + c * d[HLO_RT_DWG_DY_C] + oy * d[HLO_RT_DWG_DY_H] + ox];
            }
        out[c * d[HLO_RT_DWG_OUT_C] + ky * d[HLO_RT_DWG_OUT_H] + kx * d[HLO_RT_DWG_OUT_W]] = s;
      }
}

/* Channels [c0, c1) (a hlo_rt_range_fn). */
static void dwg_channels(void *arg, int64_t c0, int64_t c1) {
  const dwg_job *jb = arg;
  const int64_t *d = jb->d;
  dwg_geom g = dwg_geometry(d);
  int64_t kw = d[HLO_RT_DWG_KW], taps = d[HLO_RT_DWG_KH] * kw;
  int64_t xn = g.rows * g.phases * g.cols, dyn = d[HLO_RT_DWG_OH] * g.run;
  float *xb = hlo_rt_alloc(NULL, (int64_t)sizeof(float) * (xn + dyn));
  dwg_v16 *acc = hlo_rt_alloc(NULL, (int64_t)sizeof(dwg_v16) * taps);
  int64_t *off = hlo_rt_alloc(NULL, (int64_t)sizeof(int64_t) * taps);
  if (!xb || !acc || !off) {
    hlo_rt_free(NULL, xb), hlo_rt_free(NULL, acc), hlo_rt_free(NULL, off);
    dwg_naive(d, jb->x, jb->dy, jb->out, c0, c1);
    return;
  }
  for (int64_t t = 0; t < taps; t++) { /* tap (ky, kx): padded row ky*st_h, column kx*st_w */
    int64_t q = t % kw * d[HLO_RT_DWG_ST_W];
    off[t] = t / kw * d[HLO_RT_DWG_ST_H] * g.phases * g.cols + q % g.phases * g.cols + q / g.phases;
  }
  memset(xb, 0, sizeof(float) * (size_t)(xn + dyn)); /* padding and read room: zero for good */
  for (int64_t c = c0; c < c1; c++) {
    memset(acc, 0, sizeof(dwg_v16) * (size_t)taps);
    dwg_channel(jb, &g, c, xb, xb + xn, acc, off);
    for (int64_t t = 0; t < taps; t++) {
      float lanes[DWG_LANES];
      memcpy(lanes, &acc[t], sizeof lanes);
      jb->out[c * d[HLO_RT_DWG_OUT_C] + t / kw * d[HLO_RT_DWG_OUT_H] + t % kw * d[HLO_RT_DWG_OUT_W]] =
          dwg_total(lanes);
    }
  }
  hlo_rt_free(NULL, xb), hlo_rt_free(NULL, acc), hlo_rt_free(NULL, off);
}

HLO_RT_EXPORT void hlo_rt_conv_dw_wgrad_f32(hlo_context *ctx, const int64_t *desc, const float *x, const float *dy,
                                            float *out) {
  int64_t channels = desc[HLO_RT_DWG_C];
  if (channels <= 0)
    return;
  dwg_job jb = {desc, x, dy, out};
  double work = (double)desc[HLO_RT_DWG_N] * (double)desc[HLO_RT_DWG_OH] * (double)desc[HLO_RT_DWG_OW] *
                (double)(desc[HLO_RT_DWG_KH] * desc[HLO_RT_DWG_KW]) * (double)channels;
  hlo_rt_parallel_for(work >= 65536.0 ? ctx : NULL, channels, dwg_channels, &jb);
}
