/* rt_conv_test.c — hlo_rt_conv_grouped_f32 against a long-double loop nest written from the
 * convolution formula (rt.h), on pseudo-random data: depthwise NCHW (vectorized along the
 * width) with padding, stride 2 and dilation, depthwise NHWC (along features), grouped with
 * two input and two output features per group, a reversed window through a negative kernel
 * stride, 1-D (unit height), wide rows (56; 71 at stride 2 with three input features per
 * group), a window of 19 columns (its bounds computed per use, not cached per row), one
 * thread and a 2-thread context; the plane path's cases (a multiplier, dilation, bands of rows,
 * small images, rows too wide for its cache, wide padding) at the end.  Also
 * hlo_rt_conv_dw_wgrad_f32 (run_dw_wgrad_all) against its formula.
 */
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "hlo/rt.h"
#include "hlo/runtime.h"

static int failures;

static double next_value(uint64_t *s) {
  *s ^= *s << 13;
  *s ^= *s >> 7;
  *s ^= *s << 17;
  return (double)(*s >> 11) / (double)(1ull << 52) - 1.0;
}

/* n pseudo-random values in [-1, 1) into p. */
static void fill_random(float *p, int64_t n, uint64_t *seed) {
  for (int64_t i = 0; i < n; i++)
    p[i] = (float)next_value(seed);
}

/* The exact value of output (n, o, oy, ox) and the sum of magnitudes of its terms. */
static long double reference(const int64_t *d, const float *in, const float *k, int64_t n, int64_t o, int64_t oy,
                             int64_t ox, long double *mag) {
  long double s = 0;
  *mag = 0;
  int64_t g = o / d[HLO_RT_CONV_M];
  for (int64_t i = 0; i < d[HLO_RT_CONV_KIN]; i++)
    for (int64_t ky = 0; ky < d[HLO_RT_CONV_KH]; ky++)
      for (int64_t kx = 0; kx < d[HLO_RT_CONV_KW]; kx++) {
        int64_t iy = oy * d[HLO_RT_CONV_ST_H] - d[HLO_RT_CONV_PAD_H] + ky * d[HLO_RT_CONV_DIL_H];
        int64_t ix = ox * d[HLO_RT_CONV_ST_W] - d[HLO_RT_CONV_PAD_W] + kx * d[HLO_RT_CONV_DIL_W];
        if (iy < 0 || iy >= d[HLO_RT_CONV_H] || ix < 0 || ix >= d[HLO_RT_CONV_W])
          continue;
        long double x = (long double)in[n * d[HLO_RT_CONV_IN_N] + (g * d[HLO_RT_CONV_KIN] + i) * d[HLO_RT_CONV_IN_C] +
                                        iy * d[HLO_RT_CONV_IN_H] + ix * d[HLO_RT_CONV_IN_W]] *
                        k[i * d[HLO_RT_CONV_K_I] + o * d[HLO_RT_CONV_K_O] + ky * d[HLO_RT_CONV_K_H] +
                          kx * d[HLO_RT_CONV_K_W]];
        s += x;
        *mag += fabsl(x);
      }
  return s;
}

/* Builds the strides for the given layouts (nchw: input/output NCHW and kernel OIHW, else
 * NHWC and HWIO), fills random data, runs and checks every output element. */
static void run_case(const char *name, hlo_context *ctx, int nchw, int reversed, int64_t nb, int64_t groups,
                     int64_t kin, int64_t m, int64_t h, int64_t w, int64_t kh, int64_t kw, int64_t st, int64_t pad,
                     int64_t dil) {
  int64_t c = groups * kin, o = groups * m;
  int64_t ekh = (kh - 1) * dil + 1, ekw = (kw - 1) * dil + 1;
  int64_t oh = (h + 2 * pad - ekh) / st + 1, ow = (w + 2 * pad - ekw) / st + 1;
  int64_t d[HLO_RT_CONV_DESC_LEN] = {nb, o, oh, ow, h, w, kh, kw, kin, m};
  if (nchw) {
    int64_t in_s[4] = {c * h * w, h * w, w, 1}, k_s[4] = {kh * kw, kin * kh * kw, kw, 1},
            out_s[4] = {o * oh * ow, oh * ow, ow, 1};
    for (int i = 0; i < 4; i++)
      d[HLO_RT_CONV_IN_N + i] = in_s[i], d[HLO_RT_CONV_K_I + i] = k_s[i], d[HLO_RT_CONV_OUT_N + i] = out_s[i];
  } else {
    int64_t in_s[4] = {h * w * c, 1, w * c, c}, k_s[4] = {o, 1, kw * kin * o, kin * o},
            out_s[4] = {oh * ow * o, 1, ow * o, o};
    for (int i = 0; i < 4; i++)
      d[HLO_RT_CONV_IN_N + i] = in_s[i], d[HLO_RT_CONV_K_I + i] = k_s[i], d[HLO_RT_CONV_OUT_N + i] = out_s[i];
  }
  int64_t sp[6] = {st, st, pad, pad, dil, dil};
  for (int i = 0; i < 6; i++)
    d[HLO_RT_CONV_ST_H + i] = sp[i];
  int64_t in_n = nb * c * h * w, k_n = kin * o * kh * kw, out_n = nb * o * oh * ow;
  float *in = malloc(sizeof(float) * in_n), *k = malloc(sizeof(float) * k_n), *out = malloc(sizeof(float) * out_n);
  uint64_t seed = 0x9e3779b97f4a7c15ull;
  fill_random(in, in_n, &seed);
  fill_random(k, k_n, &seed);
  const float *kbase = k;
  if (reversed) { /* the window read backwards: k'(.., ky, kx) = k(.., kh-1-ky, kw-1-kx) */
    kbase = k + (kh - 1) * d[HLO_RT_CONV_K_H] + (kw - 1) * d[HLO_RT_CONV_K_W];
    d[HLO_RT_CONV_K_H] = -d[HLO_RT_CONV_K_H];
    d[HLO_RT_CONV_K_W] = -d[HLO_RT_CONV_K_W];
  }
  hlo_rt_conv_grouped_f32(ctx, d, in, kbase, out);
  int bad = 0;
  for (int64_t n = 0; n < nb && !bad; n++)
    for (int64_t f = 0; f < o && !bad; f++)
      for (int64_t y = 0; y < oh && !bad; y++)
        for (int64_t x = 0; x < ow && !bad; x++) {
          long double mag, want = reference(d, in, kbase, n, f, y, x, &mag);
          long double got = out[n * d[HLO_RT_CONV_OUT_N] + f * d[HLO_RT_CONV_OUT_O] + y * d[HLO_RT_CONV_OUT_H] +
                                x * d[HLO_RT_CONV_OUT_W]];
          if (fabsl(got - want) > (long double)(kin * kh * kw + 2) * FLT_EPSILON * mag + 1e-30L) {
            printf("FAIL %s: (%lld,%lld,%lld,%lld) got %.9Lg want %.9Lg\n", name, (long long)n, (long long)f,
                   (long long)y, (long long)x, got, want);
            bad = 1;
          }
        }
  failures += bad;
  free(in), free(k), free(out);
}

static void run_all(hlo_context *ctx) {
  run_case("dw nchw 3x3 pad1", ctx, 1, 0, 2, 16, 1, 1, 19, 23, 3, 3, 1, 1, 1);
  run_case("dw nchw stride2 dil2", ctx, 1, 0, 1, 5, 1, 1, 30, 33, 3, 3, 2, 2, 2);
  run_case("dw nhwc 3x3 pad1", ctx, 0, 0, 2, 37, 1, 1, 9, 7, 3, 3, 1, 1, 1);
  run_case("dw nhwc 5x5 stride2", ctx, 0, 0, 1, 24, 1, 1, 12, 13, 5, 5, 2, 2, 1);
  run_case("grouped nchw kin2 m2", ctx, 1, 0, 2, 3, 2, 2, 11, 17, 3, 2, 1, 1, 1);
  run_case("grouped nhwc kin2 m3", ctx, 0, 0, 1, 4, 2, 3, 8, 6, 3, 3, 1, 0, 1);
  run_case("dw nchw reversed", ctx, 1, 1, 1, 6, 1, 1, 10, 12, 3, 2, 1, 1, 1);
  run_case("dw nhwc reversed", ctx, 0, 1, 1, 6, 1, 1, 10, 12, 2, 3, 1, 1, 1);
  run_case("1-D dw nchw", ctx, 1, 0, 3, 8, 1, 1, 1, 40, 1, 5, 1, 2, 1);
  run_case("1x1 image", ctx, 0, 0, 1, 8, 1, 1, 1, 1, 3, 3, 1, 1, 1);
  run_case("dw nchw 56 wide", ctx, 1, 0, 1, 9, 1, 1, 7, 56, 3, 3, 1, 1, 1);
  run_case("grouped nchw kin3 stride2 wide", ctx, 1, 0, 1, 2, 3, 2, 6, 71, 3, 3, 2, 1, 1);
  run_case("1-D dw nchw window 19", ctx, 1, 0, 1, 4, 1, 1, 1, 64, 1, 19, 1, 9, 1);
  /* the plane path (depthwise, unit-stride width): a channel multiplier with stride 3, a
   * 5x5 window with dilation 3, few planes split into bands of rows, short rows as one flat
   * run per plane (64 planes and more; with dilation 2 and a reversed window), rows too wide
   * for its cache (5 rows of 4,002: the row path), and padding wider than the window */
  run_case("dw nchw multiplier 2 stride 3", ctx, 1, 0, 2, 5, 1, 2, 17, 29, 3, 3, 3, 0, 1);
  run_case("dw nchw 5x5 dil3", ctx, 1, 0, 1, 3, 1, 1, 26, 31, 5, 5, 1, 4, 3);
  run_case("dw nchw bands", ctx, 1, 1, 1, 2, 1, 1, 150, 40, 3, 3, 1, 1, 1);
  run_case("dw nchw 7x7 bands", ctx, 1, 0, 3, 11, 1, 1, 7, 7, 3, 3, 1, 1, 1);
  run_case("dw nchw 7x7 flat", ctx, 1, 0, 3, 24, 1, 1, 7, 7, 3, 3, 1, 1, 1);
  run_case("dw nchw 9x11 flat dil2", ctx, 1, 1, 2, 40, 1, 1, 9, 11, 3, 3, 1, 2, 2);
  run_case("dw nchw wide rows", ctx, 1, 0, 1, 2, 1, 1, 6, 4000, 5, 3, 1, 2, 1);
  run_case("dw nchw wide padding", ctx, 1, 0, 1, 3, 1, 1, 5, 6, 2, 2, 2, 3, 1);
}

/* hlo_rt_conv_dw_wgrad_f32 (a depthwise weight gradient) against the formula in long double:
 * images n, channels c, x planes h x w, dy planes oh x ow, taps kh x kw, window stride st
 * (between taps), window dilation dl (between dy positions), low padding pad; out laid out
 * as XLA's 01bf result [kh, kw, 1, c]. */
static void run_dw_wgrad(const char *name, hlo_context *ctx, int64_t n, int64_t c, int64_t h, int64_t w, int64_t oh,
                         int64_t ow, int64_t kh, int64_t kw, int64_t st, int64_t dl, int64_t pad_h, int64_t pad_w) {
  int64_t d[HLO_RT_DWG_DESC_LEN] = {n, c, h, w, oh, ow, kh, kw,
                                    /* x, dy: NCHW; out: [kh, kw, 1, c] */
                                    c * h * w, h * w, w, c * oh * ow, oh * ow, ow, 1, kw * c, c,
                                    st, st, dl, dl, pad_h, pad_w};
  int64_t xn = n * c * h * w, dyn = n * c * oh * ow, on = kh * kw * c;
  float *x = malloc(sizeof(float) * xn), *dy = malloc(sizeof(float) * dyn), *out = malloc(sizeof(float) * on);
  uint64_t seed = 0x51ed270b27f3c5a1ull;
  fill_random(x, xn, &seed);
  fill_random(dy, dyn, &seed);
  hlo_rt_conv_dw_wgrad_f32(ctx, d, x, dy, out);
  int bad = 0;
  for (int64_t ch = 0; ch < c && !bad; ch++)
    for (int64_t ky = 0; ky < kh && !bad; ky++)
      for (int64_t kx = 0; kx < kw && !bad; kx++) {
        long double want = 0, mag = 0;
        for (int64_t i = 0; i < n; i++)
          for (int64_t oy = 0; oy < oh; oy++)
            for (int64_t ox = 0; ox < ow; ox++) {
              int64_t iy = ky * st + oy * dl - pad_h, ix = kx * st + ox * dl - pad_w;
              if (iy < 0 || iy >= h || ix < 0 || ix >= w)
                continue;
              long double t = (long double)x[((i * c + ch) * h + iy) * w + ix] * dy[((i * c + ch) * oh + oy) * ow + ox];
              want += t;
              mag += fabsl(t);
            }
        long double got = out[ky * kw * c + kx * c + ch];
        if (fabsl(got - want) > (long double)(n * oh * ow + 2) * FLT_EPSILON * mag + 1e-30L) {
          printf("FAIL %s: (c %lld, %lld, %lld) got %.9Lg want %.9Lg\n", name, (long long)ch, (long long)ky,
                 (long long)kx, got, want);
          bad = 1;
        }
      }
  failures += bad;
  free(x), free(dy), free(out);
}

/* Depthwise weight gradients: stride 1 and 2 (window dilation), a dilated forward
 * convolution (window stride 2), rows with a tail past the 16 lanes, uneven and negative
 * padding, a 5x5 window, one channel, rows shorter than the lanes. */
static void run_dw_wgrad_all(hlo_context *ctx) {
  run_dw_wgrad("dw wgrad 3x3 pad1", ctx, 3, 5, 9, 8, 9, 8, 3, 3, 1, 1, 1, 1);
  run_dw_wgrad("dw wgrad stride2", ctx, 2, 4, 12, 10, 6, 5, 3, 3, 1, 2, 1, 1);
  run_dw_wgrad("dw wgrad stride2 wide", ctx, 2, 3, 11, 75, 6, 38, 3, 3, 1, 2, 1, 1);
  run_dw_wgrad("dw wgrad dilation2", ctx, 2, 3, 14, 37, 14, 37, 3, 3, 2, 1, 2, 2);
  run_dw_wgrad("dw wgrad 5x5 uneven pad", ctx, 1, 2, 13, 40, 11, 37, 5, 5, 1, 1, 1, 0);
  run_dw_wgrad("dw wgrad negative pad", ctx, 2, 2, 10, 21, 6, 17, 3, 3, 1, 1, -1, 0);
  run_dw_wgrad("dw wgrad stride3 one channel", ctx, 4, 1, 20, 50, 7, 17, 3, 2, 1, 3, 0, 1);
  run_dw_wgrad("dw wgrad 7x7 planes", ctx, 5, 9, 7, 7, 7, 7, 3, 3, 1, 1, 1, 1);
}

int main(void) {
  run_dw_wgrad_all(NULL);
  run_all(NULL);
  hlo_context_options o;
  hlo_context_options_init(&o);
  o.num_threads = 2;
  hlo_context *ctx = NULL;
  hlo_status st = hlo_context_create(&o, &ctx);
  if (st) {
    printf("cannot create a context\n");
    return 1;
  }
  run_all(ctx);
  run_dw_wgrad_all(ctx);
  hlo_context_destroy(ctx);
  printf("rt_conv_test: %s\n", failures ? "FAILED" : "ok");
  return failures != 0;
}
