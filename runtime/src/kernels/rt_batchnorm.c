/* rt_batchnorm.c — f32 batch-norm-training, -inference and -grad (hlo/rt_abi.def), split over
 * the context's thread pool by feature.  x is row-major [outer, nf, inner]: the feature
 * dimension in the middle, everything before it folded into outer and after it into inner.
 * Each feature is summed by one thread in one fixed order, in f64: BN_LANES partial sums (the
 * element at position i of a row goes to lane i % BN_LANES, rows in order), added up pairwise
 * at the end, so the results are the same bits for any thread count and any CPU (the clones
 * below differ in vector width only; no FMA), and the lanes let the sums run at the speed of
 * memory instead of one f64 add latency per element.  The formulas are those of
 * compiler/codegen/batchnorm.c, which lowers the other element types (one sequential sum):
 *   training:  mean = sum(x) / N, var = sum((x - mean)^2) / N (two passes, never negative),
 *              y = (x - mean) / sqrt(var + eps) * scale + offset (mean, var rounded to f32 first);
 *   grad:      grad_offset = sum(dy), grad_scale = sum(dy * (x - mean)) / sqrt(var + eps),
 *              grad_x = scale / sqrt(var + eps) * (dy - sum(dy) / N
 *                       - (x - mean) * sum(dy * (x - mean)) / (N * (var + eps))).
 * Built with -ffp-contract=off (CMakeLists.txt): no fused multiply-adds, as the generated code.
 * Results of HLO_RT_NONTEMPORAL_MIN_BYTES or more (64 MiB) are written with streaming stores
 * where aligned (the same operations in the same order: the same bits), then an sfence.
 * Tests: the golden cases batch_norm_* (testdata/golden/make.py, numpy formulas) and the
 * mobilenet_v2 model run; cross_cpu.golden checks the bits against the other lowerings' CPUs;
 * nontemporal_batch_norm_* under golden_at.nontemporal(.avx2) stream their results.
 */
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "hlo/rt.h"
#include "rt_isa.h"

#if defined(__x86_64__) && defined(__GNUC__)
#define BN_X86 1
#include <immintrin.h>
#else
#define BN_X86 0
#endif

typedef struct bn_args {
  const float *x, *scale, *offset, *mean_in, *var_in, *dy;
  float *y, *mean, *var, *dscale, *doffset;
  int64_t outer, nf, inner;
  float eps;
  int stream; /* y's rows are written with streaming stores of this many floats (0: ordinary) */
} bn_args;

/* Elements per feature, at least 1 (the divisor of the means). */
static int64_t per_feature(const bn_args *a) {
  int64_t n = a->outer * a->inner;
  return n > 0 ? n : 1;
}

static const float *row(const float *p, const bn_args *a, int64_t o, int64_t f) { return p + (o * a->nf + f) * a->inner; }

/* Vector widths the kernels are built for; the results do not depend on the one chosen. */
#define BN_CLONES __attribute__((target_clones("avx512f", "avx2", "default")))

enum { BN_LANES = 16 };

/* The lanes added up in a fixed pairwise order. */
static double lanes_total(const double *acc) {
  double t[BN_LANES];
  for (int j = 0; j < BN_LANES; j++)
    t[j] = acc[j];
  for (int w = BN_LANES / 2; w >= 1; w /= 2)
    for (int j = 0; j < w; j++)
      t[j] = t[j] + t[j + w];
  return t[0];
}

/* Four f32 lanes widened to f64 (GCC/clang vector extensions: one instruction on AVX2 and
 * AVX-512, a few on older CPUs, the same values on all).  The 16 lanes are four vectors of
 * four: 256 bits, a register on AVX2 and AVX-512 alike (vectors of eight doubles were split
 * through the stack on AVX2 hosts: feature_sum ran at 8 GB/s on an AMD EPYC, half of a
 * mobilenet_v2 batch norm's time). */
typedef float bn_v4f __attribute__((vector_size(16)));
typedef double bn_v4d __attribute__((vector_size(32)));
typedef float bn_v4f_u __attribute__((vector_size(16), aligned(4), may_alias));
typedef double bn_v4d_u __attribute__((vector_size(32), aligned(8), may_alias));

/* (Macros, not functions: a 256-bit vector passed by value warns of the AVX ABI in the
 * baseline clone.) */
#define BN_WIDEN4(p) __builtin_convertvector(*(const bn_v4f_u *)(p), bn_v4d)
#define BN_LOAD4(p) (*(const bn_v4d_u *)(p))
#define BN_STORE4(p, v) (*(bn_v4d_u *)(p) = (v))

/* Adds one row's n elements (x - shift, or its square) into the BN_LANES lanes of acc. */
__attribute__((always_inline)) static inline void row_into_lanes(double *acc, const float *x, int64_t n, double shift, bool squares) {
  bn_v4d s0 = BN_LOAD4(acc), s1 = BN_LOAD4(acc + 4), s2 = BN_LOAD4(acc + 8), s3 = BN_LOAD4(acc + 12), sh = (bn_v4d){0} + shift;
  int64_t i = 0;
  if (squares)
    for (; i + BN_LANES <= n; i += BN_LANES) {
      bn_v4d p0 = BN_WIDEN4(x + i) - sh, p1 = BN_WIDEN4(x + i + 4) - sh, p2 = BN_WIDEN4(x + i + 8) - sh,
             p3 = BN_WIDEN4(x + i + 12) - sh;
      s0 += p0 * p0, s1 += p1 * p1, s2 += p2 * p2, s3 += p3 * p3;
    }
  else
    for (; i + BN_LANES <= n; i += BN_LANES) {
      s0 += BN_WIDEN4(x + i) - sh, s1 += BN_WIDEN4(x + i + 4) - sh;
      s2 += BN_WIDEN4(x + i + 8) - sh, s3 += BN_WIDEN4(x + i + 12) - sh;
    }
  BN_STORE4(acc, s0), BN_STORE4(acc + 4, s1), BN_STORE4(acc + 8, s2), BN_STORE4(acc + 12, s3);
  for (int j = 0; i < n; i++, j++) {
    double d = (double)x[i] - shift;
    acc[j] += squares ? d * d : d;
  }
}

/* sum of (x - shift), or of its squares, over one feature. */
BN_CLONES static double feature_sum(const bn_args *a, const float *base, int64_t f, double shift, bool squares) {
  double acc[BN_LANES] = {0};
  for (int64_t o = 0; o < a->outer; o++)
    row_into_lanes(acc, row(base, a, o, f), a->inner, shift, squares);
  return lanes_total(acc);
}

/* sum(dy) and sum(dy * (x - mean)) over one feature, in the lanes of feature_sum. */
BN_CLONES static void grad_sums(const bn_args *a, int64_t f, double mean, double *sum_dy, double *sum_dyxm) {
  double s1[BN_LANES] = {0}, s2[BN_LANES] = {0};
  bn_v4d m = (bn_v4d){0} + mean;
  for (int64_t o = 0; o < a->outer; o++) {
    const float *x = row(a->x, a, o, f), *dy = row(a->dy, a, o, f);
    bn_v4d d0 = BN_LOAD4(s1), d1 = BN_LOAD4(s1 + 4), d2 = BN_LOAD4(s1 + 8), d3 = BN_LOAD4(s1 + 12);
    bn_v4d e0 = BN_LOAD4(s2), e1 = BN_LOAD4(s2 + 4), e2 = BN_LOAD4(s2 + 8), e3 = BN_LOAD4(s2 + 12);
    int64_t i = 0;
    for (; i + BN_LANES <= a->inner; i += BN_LANES) {
      bn_v4d g0 = BN_WIDEN4(dy + i), g1 = BN_WIDEN4(dy + i + 4), g2 = BN_WIDEN4(dy + i + 8), g3 = BN_WIDEN4(dy + i + 12);
      d0 += g0, d1 += g1, d2 += g2, d3 += g3;
      e0 += g0 * (BN_WIDEN4(x + i) - m), e1 += g1 * (BN_WIDEN4(x + i + 4) - m);
      e2 += g2 * (BN_WIDEN4(x + i + 8) - m), e3 += g3 * (BN_WIDEN4(x + i + 12) - m);
    }
    BN_STORE4(s1, d0), BN_STORE4(s1 + 4, d1), BN_STORE4(s1 + 8, d2), BN_STORE4(s1 + 12, d3);
    BN_STORE4(s2, e0), BN_STORE4(s2 + 4, e1), BN_STORE4(s2 + 8, e2), BN_STORE4(s2 + 12, e3);
    for (int j = 0; i < a->inner; i++, j++) {
      double d = (double)dy[i];
      s1[j] += d;
      s2[j] += d * ((double)x[i] - mean);
    }
  }
  *sum_dy = lanes_total(s1);
  *sum_dyxm = lanes_total(s2);
}

/* ---- streaming stores for large results (rt_nontemporal_min_bytes) ---- */

/* The vector width in floats whose streaming stores write y's rows: 16 (AVX-512) or 8 (AVX2)
 * where y is at least rt_nontemporal_min_bytes(), aligned to the vector and its rows a
 * multiple of it; else 0.  The arithmetic is the same operations in the same order as the
 * ordinary loops, so the bits do not change. */
static int stream_width(const bn_args *a) {
#if BN_X86
  int64_t bytes = a->outer * a->nf * a->inner * (int64_t)sizeof(float);
  int level = rt_isa_level(), w = level >= RT_ISA_AVX512 ? 16 : level >= RT_ISA_AVX2 ? 8 : 0;
  int64_t min = rt_nontemporal_min_bytes();
  if (w && min >= 0 && bytes >= min && a->inner % w == 0 &&
      (uintptr_t)a->y % (uintptr_t)(w * sizeof(float)) == 0)
    return w;
#else
  (void)a;
#endif
  return 0;
}

#if BN_X86
/* normalize_rowW and grad_rowW: one row of y or grad_x, W floats per streaming store, the
 * arithmetic of normalize and grad_x in the same order (n a multiple of W, y aligned). */
#define BN_STREAM_ROWS(W, TARGET, V, P)                                                                     \
  __attribute__((target(TARGET))) static void normalize_row##W(const float *x, float *y, int64_t n, float m,  \
                                                                float denom, float sc, float off) {            \
    V vm = P##_set1_ps(m), vd = P##_set1_ps(denom), vs = P##_set1_ps(sc), vo = P##_set1_ps(off);           \
    for (int64_t i = 0; i < n; i += W)                                                                      \
      P##_stream_ps(y + i, P##_add_ps(P##_mul_ps(P##_div_ps(P##_sub_ps(P##_loadu_ps(x + i), vm), vd), vs), vo)); \
  }                                                                                                         \
  __attribute__((target(TARGET))) static void grad_row##W(const float *x, const float *dy, float *dx,       \
                                                          int64_t n, float mean, float c, float d, float g) { \
    V vm = P##_set1_ps(mean), vc = P##_set1_ps(c), vd = P##_set1_ps(d), vg = P##_set1_ps(g);                \
    for (int64_t i = 0; i < n; i += W) {                                                                    \
      V t = P##_mul_ps(vc, P##_sub_ps(P##_loadu_ps(x + i), vm));                                             \
      P##_stream_ps(dx + i, P##_mul_ps(vg, P##_sub_ps(P##_sub_ps(P##_loadu_ps(dy + i), vd), t)));            \
    }                                                                                                       \
  }
BN_STREAM_ROWS(16, "avx512f", __m512, _mm512)
BN_STREAM_ROWS(8, "avx2", __m256, _mm256)
#undef BN_STREAM_ROWS
#endif

/* After a thread's streaming stores: visible before the pool reports its part done. */
static void stream_end(const bn_args *a) {
#if BN_X86
  if (a->stream)
    _mm_sfence();
#else
  (void)a;
#endif
}

/* y over features [f0, f1) from the given per-feature mean and variance. */
BN_CLONES static void normalize(const bn_args *a, const float *mean, const float *var, int64_t f0, int64_t f1) {
  for (int64_t o = 0; o < a->outer; o++)
    for (int64_t f = f0; f < f1; f++) {
      float m = mean[f], denom = sqrtf(var[f] + a->eps), sc = a->scale[f], off = a->offset[f];
      const float *restrict x = row(a->x, a, o, f);
      float *restrict y = a->y + (o * a->nf + f) * a->inner;
#if BN_X86
      if (a->stream) {
        (a->stream == 16 ? normalize_row16 : normalize_row8)(x, y, a->inner, m, denom, sc, off);
        continue;
      }
#endif
      for (int64_t i = 0; i < a->inner; i++)
        y[i] = (x[i] - m) / denom * sc + off;
    }
  stream_end(a);
}

static void training_range(void *arg, int64_t f0, int64_t f1) {
  const bn_args *a = arg;
  double n = (double)per_feature(a);
  for (int64_t f = f0; f < f1; f++) {
    double mean = feature_sum(a, a->x, f, 0.0, false) / n;
    a->mean[f] = (float)mean;
    a->var[f] = (float)(feature_sum(a, a->x, f, mean, true) / n);
  }
  normalize(a, a->mean, a->var, f0, f1);
}

static void inference_range(void *arg, int64_t f0, int64_t f1) {
  const bn_args *a = arg;
  normalize(a, a->mean_in, a->var_in, f0, f1);
}

BN_CLONES static void grad_x(const bn_args *a, int64_t f, float mean, float c, float d, float g) {
  for (int64_t o = 0; o < a->outer; o++) {
    const float *restrict x = row(a->x, a, o, f), *restrict dy = row(a->dy, a, o, f);
    float *restrict dx = a->y + (o * a->nf + f) * a->inner;
#if BN_X86
    if (a->stream) {
      (a->stream == 16 ? grad_row16 : grad_row8)(x, dy, dx, a->inner, mean, c, d, g);
      continue;
    }
#endif
    for (int64_t i = 0; i < a->inner; i++)
      dx[i] = g * ((dy[i] - d) - c * (x[i] - mean));
  }
}

static void grad_range(void *arg, int64_t f0, int64_t f1) {
  const bn_args *a = arg;
  float n = (float)per_feature(a);
  for (int64_t f = f0; f < f1; f++) {
    float mean = a->mean_in[f];
    double sum_dy, sum_dyxm;
    grad_sums(a, f, (double)mean, &sum_dy, &sum_dyxm);
    float sdy = (float)sum_dy, sdyxm = (float)sum_dyxm;
    float var_eps = a->var_in[f] + a->eps;
    float rs = 1.0f / sqrtf(var_eps);
    a->doffset[f] = sdy;
    a->dscale[f] = sdyxm * rs;
    grad_x(a, f, mean, sdyxm / (n * var_eps), sdy / n, a->scale[f] * rs);
  }
  stream_end(a);
}

HLO_RT_EXPORT void hlo_rt_batch_norm_training_f32(hlo_context *ctx, const float *x, const float *scale,
                                                  const float *offset, int64_t outer, int64_t nf, int64_t inner,
                                                  float eps, float *y, float *mean, float *var) {
  bn_args a = {.x = x, .scale = scale, .offset = offset, .y = y, .mean = mean, .var = var,
               .outer = outer, .nf = nf, .inner = inner, .eps = eps};
  a.stream = stream_width(&a);
  hlo_rt_parallel_for(ctx, nf, training_range, &a);
}

HLO_RT_EXPORT void hlo_rt_batch_norm_inference_f32(hlo_context *ctx, const float *x, const float *scale,
                                                   const float *offset, const float *mean, const float *var,
                                                   int64_t outer, int64_t nf, int64_t inner, float eps, float *y) {
  bn_args a = {.x = x, .scale = scale, .offset = offset, .mean_in = mean, .var_in = var, .y = y,
               .outer = outer, .nf = nf, .inner = inner, .eps = eps};
  a.stream = stream_width(&a);
  hlo_rt_parallel_for(ctx, nf, inference_range, &a);
}

HLO_RT_EXPORT void hlo_rt_batch_norm_grad_f32(hlo_context *ctx, const float *x, const float *scale, const float *mean,
                                              const float *var, const float *dy, int64_t outer, int64_t nf,
                                              int64_t inner, float eps, float *dx, float *dscale, float *doffset) {
  bn_args a = {.x = x, .scale = scale, .mean_in = mean, .var_in = var, .dy = dy, .y = dx, .dscale = dscale,
               .doffset = doffset, .outer = outer, .nf = nf, .inner = inner, .eps = eps};
  a.stream = stream_width(&a);
  hlo_rt_parallel_for(ctx, nf, grad_range, &a);
}
