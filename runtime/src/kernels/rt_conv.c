/* rt_conv.c — the direct kernel for depthwise and grouped convolutions with few input
 * features per group (hlo/rt.h: hlo_rt_conv_grouped_f32).  Two spatial dimensions (one for
 * 1-D convolutions, with a unit height), any element strides, window strides, padding, window
 * dilation and (through a negative kernel stride) reversal; f32 in, f32 accumulation, f32
 * out.  Output rows (batch x output height) are split over the context's thread pool; a row
 * is vectorized along the width when the input's width is unit-stride, else along features.
 * Tests: runtime/src/kernels/rt_conv_test.c.
 */
#include <stdbool.h>
#include <stdint.h>

#include "hlo/rt.h"
#include "hlo/rt_parallel.h"

/* The row loops are built for AVX-512, x86-64-v3 (AVX2 with FMA) and the baseline and picked
 * when the library loads (libhlort runs on many machines); CMake compiles this file with -O3
 * so that they vectorize.  Each string of target_clones is one clone: "avx2,fma" would be two
 * clones, AVX2 without FMA and FMA without AVX2 (the resolver picked the first, so the AVX2
 * hosts' loops multiplied and added separately until the 2026-11-28 eighth session). */
#if (defined(__x86_64__) || defined(__i386__)) && defined(__GNUC__) && !defined(__clang__)
#define CONV_CLONES __attribute__((target_clones("avx512f", "arch=x86-64-v3", "default")))
#else
#define CONV_CLONES
#endif

/* The plane path's helpers are inlined into its clones, so each is compiled for its ISA. */
#define CONV_INLINE static inline __attribute__((always_inline))

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

/* ---- planes: one output feature of one image at a time ----
 * For depthwise layouts with a unit-stride input width (NCHW: mobilenet_v2's layers and their
 * input gradients).  Each input row the window reads is copied once per plane into a small
 * cache, zero-padded to the window's reach and split into `stride` phases (phase q holds the
 * padded row's elements q, q + stride, ...), so every window column reads one unit-stride run
 * (column kx: phase kx*dil % stride from kx*dil / stride) and the row loops carry no bounds.
 * A plane's rows stay in the cache while the output rows that read them are computed, so the
 * input is read from memory once.  Each output is one chain of multiply-adds from zero in the
 * window's order (rows, then columns), as conv_row_width sums; out-of-range window rows are
 * skipped, padded columns multiplied by zero. */

/* The row cache (on the stack), its rows and the widest window are hlo/rt.h's
 * HLO_RT_CONV_PLANE_*, whose hlo_rt_conv_plane_fits hloc asks too (it runs these convolutions
 * here, not in oneDNN); larger rows take the row path. */
/* Output rows narrower than this, at stride 1 with a 3x3 window, are computed as one flat run
 * over the whole padded plane (plane_flat_3x3): a row loop per 7 or 14 outputs costs more
 * than the sums (mobilenet_v2's 7x7 layers 1.8x faster). */
enum { CONV_PLANE_FLAT_WIDTH = 32 };
/* At least this many work units (planes, or bands of a plane's rows) per call. */
enum { CONV_PLANE_MIN_UNITS = 64 };

typedef struct plane_geom {
  int64_t phase_len; /* elements per phase of a cached row */
  int64_t ring;      /* cached rows: the window's reach in rows */
  int64_t bands;     /* bands of output rows per plane (work units per plane) */
  /* where window column kx reads in a cached row (its phase's start plus its offset), and
   * window row ky's cache slot relative to window row 0's: (ky * DIL_H) mod ring */
  int64_t col_at[HLO_RT_CONV_PLANE_MAX_KW], row_slot[HLO_RT_CONV_PLANE_MAX_RING];
  bool flat; /* short rows: plane_flat_3x3 */
} plane_geom;

/* The cache geometry, or false when the plane path does not apply. */
static bool plane_plan(const int64_t *d, plane_geom *g) {
  if (!hlo_rt_conv_plane_fits(d))
    return false;
  int64_t st = d[HLO_RT_CONV_ST_W];
  int64_t padded = (d[HLO_RT_CONV_OW] - 1) * st + (d[HLO_RT_CONV_KW] - 1) * d[HLO_RT_CONV_DIL_W] + 1;
  g->phase_len = (padded + st - 1) / st;
  g->ring = (d[HLO_RT_CONV_KH] - 1) * d[HLO_RT_CONV_DIL_H] + 1;
  for (int64_t kx = 0; kx < d[HLO_RT_CONV_KW]; kx++) {
    int64_t at = kx * d[HLO_RT_CONV_DIL_W];
    g->col_at[kx] = (at % st) * g->phase_len + at / st;
  }
  for (int64_t ky = 0; ky < d[HLO_RT_CONV_KH]; ky++)
    g->row_slot[ky] = ky * d[HLO_RT_CONV_DIL_H] % g->ring;
  int64_t planes = d[HLO_RT_CONV_N] * d[HLO_RT_CONV_O], oh = d[HLO_RT_CONV_OH];
  g->bands = planes >= CONV_PLANE_MIN_UNITS ? 1 : (CONV_PLANE_MIN_UNITS + planes - 1) / planes;
  g->bands = g->bands > oh ? (oh > 0 ? oh : 1) : g->bands;
  int64_t padded_rows = oh + g->ring - 1;
  g->flat = st == 1 && d[HLO_RT_CONV_ST_H] == 1 && d[HLO_RT_CONV_KH] == 3 && d[HLO_RT_CONV_KW] == 3 &&
            d[HLO_RT_CONV_OUT_W] == 1 && d[HLO_RT_CONV_OW] < CONV_PLANE_FLAT_WIDTH && g->bands == 1 &&
            padded_rows * g->phase_len <= HLO_RT_CONV_PLANE_CACHE && oh * g->phase_len <= HLO_RT_CONV_MAX_ROW;
  return true;
}

/* Input row iy of `plane` into `slot`: zero-padded from input column -PAD_W on, in phases. */
CONV_INLINE void plane_fill_row(const int64_t *d, const plane_geom *g, const float *row, float *slot) {
  int64_t st = d[HLO_RT_CONV_ST_W], w_n = d[HLO_RT_CONV_W], pad = d[HLO_RT_CONV_PAD_W], len = g->phase_len;
  if (st == 1) { /* padded [0, lo), the row's columns [lo, hi), padded [hi, len) */
    int64_t lo = pad < 0 ? 0 : pad > len ? len : pad, hi = pad + w_n > len ? len : pad + w_n;
    hi = hi < lo ? lo : hi;
    for (int64_t x = 0; x < lo; x++)
      slot[x] = 0.0f;
    for (int64_t x = lo; x < hi; x++)
      slot[x] = row[x - pad];
    for (int64_t x = hi; x < len; x++)
      slot[x] = 0.0f;
    return;
  }
  for (int64_t q = 0; q < st; q++) { /* phase q: padded [0, lo), input columns q + j*st - pad, padded [hi, len) */
    float *ph = slot + q * len;
    int64_t first = pad - q, lo = first <= 0 ? 0 : (first + st - 1) / st;
    int64_t hi = w_n + pad - q <= 0 ? 0 : (w_n + pad - q + st - 1) / st;
    lo = lo > len ? len : lo, hi = hi > len ? len : hi < lo ? lo : hi;
    const float *src = row + q - pad;
    for (int64_t j = 0; j < lo; j++)
      ph[j] = 0.0f;
    if (st == 2)
      for (int64_t j = lo; j < hi; j++)
        ph[j] = src[2 * j];
    else
      for (int64_t j = lo; j < hi; j++)
        ph[j] = src[j * st];
    for (int64_t j = hi; j < len; j++)
      ph[j] = 0.0f;
  }
}

/* out[x] = the nine taps of a 3x3 window whose three rows are all inside the image, summed
 * in plane_row_taps's order from zero (so the same bits as that path): col[3 * ky + kx] is
 * where window position (ky, kx) reads, w its weight. */
CONV_INLINE void plane_taps_3x3(const float *const *col, const float *w, int64_t ow_n, float *restrict out) {
  const float *restrict a0 = col[0], *restrict a1 = col[1], *restrict a2 = col[2];
  const float *restrict b0 = col[3], *restrict b1 = col[4], *restrict b2 = col[5];
  const float *restrict c0 = col[6], *restrict c1 = col[7], *restrict c2 = col[8];
  for (int64_t x = 0; x < ow_n; x++) {
    float v = 0.0f + w[0] * a0[x] + w[1] * a1[x] + w[2] * a2[x];
    v = v + w[3] * b0[x] + w[4] * b1[x] + w[5] * b2[x];
    out[x] = v + w[6] * c0[x] + w[7] * c1[x] + w[8] * c2[x];
  }
}

/* acc[x] += the window row's taps (kx = 0..KW-1, weights kern[kx * kstep]) over a cached row,
 * three columns per pass. */
CONV_INLINE void plane_row_taps(const int64_t *d, const plane_geom *g, const float *slot, const float *kern,
                                       int64_t kstep, float *restrict acc) {
  int64_t ow_n = d[HLO_RT_CONV_OW], kw_n = d[HLO_RT_CONV_KW];
  const float *col[3];
  float w[3];
  int64_t kx = 0;
  while (kx < kw_n) {
    int taps = kw_n - kx >= 3 ? 3 : (int)(kw_n - kx);
    for (int t = 0; t < taps; t++) {
      col[t] = slot + g->col_at[kx + t];
      w[t] = kern[(kx + t) * kstep];
    }
    const float *restrict a = col[0], *restrict b = col[taps > 1 ? 1 : 0], *restrict c = col[taps > 2 ? 2 : 0];
    if (taps == 3) /* one chain from acc[x]: the same order as plane_taps_3x3's */
      for (int64_t x = 0; x < ow_n; x++)
        acc[x] = acc[x] + w[0] * a[x] + w[1] * b[x] + w[2] * c[x];
    else if (taps == 2)
      for (int64_t x = 0; x < ow_n; x++)
        acc[x] = acc[x] + w[0] * a[x] + w[1] * b[x];
    else
      for (int64_t x = 0; x < ow_n; x++)
        acc[x] = acc[x] + w[0] * a[x];
    kx += taps;
  }
}

/* A whole plane of short rows, stride 1, a 3x3 window: the plane zero-padded into the cache
 * (rows of L = the padded width), the taps summed over it as one run of OH rows of L (the
 * last L - OW sums of each row fall on padding and are dropped) into t, then the rows copied
 * out.  Window rows outside the image are padded rows here, so their taps add w * 0, which
 * leaves every finite sum as plane_rows's (which skips them). */
CONV_INLINE void plane_flat_3x3(const int64_t *d, const plane_geom *g, const float *plane, const float *w9, float *dst,
                                float *cache, float *t) {
  int64_t len = g->phase_len, oh = d[HLO_RT_CONV_OH], ow_n = d[HLO_RT_CONV_OW];
  for (int64_t r = 0; r < oh + g->ring - 1; r++) {
    int64_t iy = r - d[HLO_RT_CONV_PAD_H];
    if (iy >= 0 && iy < d[HLO_RT_CONV_H])
      plane_fill_row(d, g, plane + iy * d[HLO_RT_CONV_IN_H], cache + r * len);
    else
      for (int64_t x = 0; x < len; x++)
        cache[r * len + x] = 0.0f;
  }
  const float *col[9];
  for (int k = 0; k < 9; k++)
    col[k] = cache + (k / 3) * d[HLO_RT_CONV_DIL_H] * len + g->col_at[k % 3];
  plane_taps_3x3(col, w9, (oh - 1) * len + ow_n, t);
  for (int64_t oy = 0; oy < oh; oy++)
    for (int64_t x = 0; x < ow_n; x++)
      dst[oy * d[HLO_RT_CONV_OUT_H] + x] = t[oy * len + x];
}

/* Output rows [y0, y1) of output feature o of image n. */
CONV_CLONES static void plane_rows(const conv_job *j, const plane_geom *g, int64_t n, int64_t o, int64_t y0, int64_t y1,
                       float *cache, float *acc) {
  const int64_t *d = j->d;
  int64_t ow_n = d[HLO_RT_CONV_OW], ow_s = d[HLO_RT_CONV_OUT_W], kh_n = d[HLO_RT_CONV_KH], h_n = d[HLO_RT_CONV_H];
  int64_t st_h = d[HLO_RT_CONV_ST_H], dil_h = d[HLO_RT_CONV_DIL_H], ring = g->ring;
  int64_t slot_len = d[HLO_RT_CONV_ST_W] * g->phase_len;
  const float *plane = j->in + n * d[HLO_RT_CONV_IN_N] + o / d[HLO_RT_CONV_M] * d[HLO_RT_CONV_IN_C];
  const float *kern = j->k + o * d[HLO_RT_CONV_K_O];
  float *dst = j->out + n * d[HLO_RT_CONV_OUT_N] + o * d[HLO_RT_CONV_OUT_O];
  int64_t tags[HLO_RT_CONV_PLANE_MAX_RING]; /* the input row each cache slot holds */
  for (int64_t s = 0; s < ring; s++)
    tags[s] = INT64_MIN;
  bool fused = kh_n == 3 && d[HLO_RT_CONV_KW] == 3 && ow_s == 1;
  float w9[9];
  for (int64_t t = 0; fused && t < 9; t++)
    w9[t] = kern[(t / 3) * d[HLO_RT_CONV_K_H] + (t % 3) * d[HLO_RT_CONV_K_W]];
  if (g->flat) {
    plane_flat_3x3(d, g, plane, w9, dst, cache, acc);
    return;
  }
  /* input row of window row 0 and its slot, stepped per output row without divisions */
  int64_t iy0 = y0 * st_h - d[HLO_RT_CONV_PAD_H], slot0 = (iy0 % ring + ring) % ring, step = st_h % ring;
  for (int64_t oy = y0; oy < y1; oy++, iy0 += st_h, slot0 = slot0 + step >= ring ? slot0 + step - ring : slot0 + step) {
    float *out_row = dst + oy * d[HLO_RT_CONV_OUT_H];
    const float *rows[HLO_RT_CONV_PLANE_MAX_RING]; /* per window row: its cached row, NULL outside */
    int inside = 0;
    for (int64_t ky = 0; ky < kh_n; ky++) {
      int64_t iy = iy0 + ky * dil_h;
      rows[ky] = NULL;
      if (iy < 0 || iy >= h_n)
        continue;
      /* the rows one output row reads span at most `ring`, so they fall in distinct slots */
      int64_t s = slot0 + g->row_slot[ky];
      s = s >= ring ? s - ring : s;
      float *slot = cache + s * slot_len;
      if (tags[s] != iy) {
        plane_fill_row(d, g, plane + iy * d[HLO_RT_CONV_IN_H], slot);
        tags[s] = iy;
      }
      rows[ky] = slot;
      inside++;
    }
    if (fused && inside == 3) {
      const float *col[9];
      for (int t = 0; t < 9; t++)
        col[t] = rows[t / 3] + g->col_at[t % 3];
      plane_taps_3x3(col, w9, ow_n, out_row);
      continue;
    }
    for (int64_t x = 0; x < ow_n; x++)
      acc[x] = 0;
    for (int64_t ky = 0; ky < kh_n; ky++)
      if (rows[ky])
        plane_row_taps(d, g, rows[ky], kern + ky * d[HLO_RT_CONV_K_H], d[HLO_RT_CONV_K_W], acc);
    if (ow_s == 1)
      for (int64_t x = 0; x < ow_n; x++)
        out_row[x] = acc[x];
    else
      for (int64_t x = 0; x < ow_n; x++)
        out_row[x * ow_s] = acc[x];
  }
}

typedef struct plane_job {
  conv_job conv;
  plane_geom geom;
} plane_job;

/* Work units [begin, end): (image, output feature, band of output rows) (a hlo_rt_range_fn). */
static void conv_planes(void *arg, int64_t begin, int64_t end) {
  const plane_job *pj = arg;
  const int64_t *d = pj->conv.d;
  const plane_geom *g = &pj->geom;
  float cache[HLO_RT_CONV_PLANE_CACHE], acc[HLO_RT_CONV_MAX_ROW];
  int64_t oh = d[HLO_RT_CONV_OH], band = (oh + g->bands - 1) / g->bands;
  for (int64_t u = begin; u < end; u++) {
    int64_t plane = u / g->bands, b = u % g->bands;
    int64_t y0 = b * band, y1 = y0 + band < oh ? y0 + band : oh;
    if (y0 < y1)
      plane_rows(&pj->conv, g, plane / d[HLO_RT_CONV_O], plane % d[HLO_RT_CONV_O], y0, y1, cache, acc);
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
  int64_t rows = desc[HLO_RT_CONV_N] * desc[HLO_RT_CONV_OH];
  double work = (double)rows * (double)desc[HLO_RT_CONV_OW] * (double)desc[HLO_RT_CONV_O] *
                (double)desc[HLO_RT_CONV_KIN] * (double)desc[HLO_RT_CONV_KH] * (double)desc[HLO_RT_CONV_KW];
  hlo_context *pool = work >= CONV_PARALLEL_MIN_WORK ? ctx : NULL;
  plane_job pj = {{desc, in, k, out}, {0}};
  if (plane_plan(desc, &pj.geom))
    hlo_rt_parallel_for(pool, desc[HLO_RT_CONV_N] * desc[HLO_RT_CONV_O] * pj.geom.bands, conv_planes, &pj);
  else
    hlo_rt_parallel_for(pool, rows, conv_rows, &pj.conv);
}
