/* rt_batchnorm.c — f32 batch-norm-training, -inference and -grad (hlo/rt_abi.def), split over
 * the context's thread pool by feature.  x is row-major [outer, nf, inner]: the feature
 * dimension in the middle, everything before it folded into outer and after it into inner.
 * Each feature is summed by one thread in one fixed order (outer, then inner), in f64, so the
 * results are the same bits for any thread count and the same as compiler/codegen/batchnorm.c,
 * which lowers the other element types with the same formulas:
 *   training:  mean = sum(x) / N, var = sum((x - mean)^2) / N (two passes, never negative),
 *              y = (x - mean) / sqrt(var + eps) * scale + offset (mean, var rounded to f32 first);
 *   grad:      grad_offset = sum(dy), grad_scale = sum(dy * (x - mean)) / sqrt(var + eps),
 *              grad_x = scale / sqrt(var + eps) * (dy - sum(dy) / N
 *                       - (x - mean) * sum(dy * (x - mean)) / (N * (var + eps))).
 * Built with -ffp-contract=off (CMakeLists.txt): no fused multiply-adds, as the generated code.
 * Tests: the golden cases batch_norm_* (testdata/golden/make.py, numpy formulas) and the
 * mobilenet_v2 model run; cross_cpu.golden checks the bits against the other lowerings' CPUs.
 */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>

#include "hlo/rt.h"

typedef struct bn_args {
  const float *x, *scale, *offset, *mean_in, *var_in, *dy;
  float *y, *mean, *var, *dscale, *doffset;
  int64_t outer, nf, inner;
  float eps;
} bn_args;

/* Elements per feature, at least 1 (the divisor of the means). */
static int64_t per_feature(const bn_args *a) {
  int64_t n = a->outer * a->inner;
  return n > 0 ? n : 1;
}

static const float *row(const float *p, const bn_args *a, int64_t o, int64_t f) { return p + (o * a->nf + f) * a->inner; }

/* y over features [f0, f1) from the given per-feature mean and variance. */
static void normalize(const bn_args *a, const float *mean, const float *var, int64_t f0, int64_t f1) {
  for (int64_t o = 0; o < a->outer; o++)
    for (int64_t f = f0; f < f1; f++) {
      float m = mean[f], denom = sqrtf(var[f] + a->eps), sc = a->scale[f], off = a->offset[f];
      const float *x = row(a->x, a, o, f);
      float *y = a->y + (o * a->nf + f) * a->inner;
      for (int64_t i = 0; i < a->inner; i++)
        y[i] = (x[i] - m) / denom * sc + off;
    }
}

static void training_range(void *arg, int64_t f0, int64_t f1) {
  const bn_args *a = arg;
  double n = (double)per_feature(a);
  for (int64_t f = f0; f < f1; f++) {
    double sum = 0.0, sq = 0.0;
    for (int64_t o = 0; o < a->outer; o++) {
      const float *x = row(a->x, a, o, f);
      for (int64_t i = 0; i < a->inner; i++)
        sum += (double)x[i];
    }
    double mean = sum / n;
    for (int64_t o = 0; o < a->outer; o++) {
      const float *x = row(a->x, a, o, f);
      for (int64_t i = 0; i < a->inner; i++) {
        double d = (double)x[i] - mean;
        sq += d * d;
      }
    }
    a->mean[f] = (float)mean;
    a->var[f] = (float)(sq / n);
  }
  normalize(a, a->mean, a->var, f0, f1);
}

static void inference_range(void *arg, int64_t f0, int64_t f1) {
  const bn_args *a = arg;
  normalize(a, a->mean_in, a->var_in, f0, f1);
}

static void grad_range(void *arg, int64_t f0, int64_t f1) {
  const bn_args *a = arg;
  float n = (float)per_feature(a);
  for (int64_t f = f0; f < f1; f++) {
    float mean = a->mean_in[f];
    double sum_dy = 0.0, sum_dyxm = 0.0, mean_acc = (double)mean;
    for (int64_t o = 0; o < a->outer; o++) {
      const float *x = row(a->x, a, o, f), *dy = row(a->dy, a, o, f);
      for (int64_t i = 0; i < a->inner; i++) {
        double d = (double)dy[i];
        sum_dy += d;
        sum_dyxm += d * ((double)x[i] - mean_acc);
      }
    }
    float sdy = (float)sum_dy, sdyxm = (float)sum_dyxm;
    float var_eps = a->var_in[f] + a->eps;
    float rs = 1.0f / sqrtf(var_eps);
    a->doffset[f] = sdy;
    a->dscale[f] = sdyxm * rs;
    float c = sdyxm / (n * var_eps), d = sdy / n, g = a->scale[f] * rs;
    for (int64_t o = 0; o < a->outer; o++) {
      const float *x = row(a->x, a, o, f), *dy = row(a->dy, a, o, f);
      float *dx = a->y + (o * a->nf + f) * a->inner;
      for (int64_t i = 0; i < a->inner; i++)
        dx[i] = g * ((dy[i] - d) - c * (x[i] - mean));
    }
  }
}

HLO_RT_EXPORT void hlo_rt_batch_norm_training_f32(hlo_context *ctx, const float *x, const float *scale,
                                                  const float *offset, int64_t outer, int64_t nf, int64_t inner,
                                                  float eps, float *y, float *mean, float *var) {
  bn_args a = {.x = x, .scale = scale, .offset = offset, .y = y, .mean = mean, .var = var,
               .outer = outer, .nf = nf, .inner = inner, .eps = eps};
  hlo_rt_parallel_for(ctx, nf, training_range, &a);
}

HLO_RT_EXPORT void hlo_rt_batch_norm_inference_f32(hlo_context *ctx, const float *x, const float *scale,
                                                   const float *offset, const float *mean, const float *var,
                                                   int64_t outer, int64_t nf, int64_t inner, float eps, float *y) {
  bn_args a = {.x = x, .scale = scale, .offset = offset, .mean_in = mean, .var_in = var, .y = y,
               .outer = outer, .nf = nf, .inner = inner, .eps = eps};
  hlo_rt_parallel_for(ctx, nf, inference_range, &a);
}

HLO_RT_EXPORT void hlo_rt_batch_norm_grad_f32(hlo_context *ctx, const float *x, const float *scale, const float *mean,
                                              const float *var, const float *dy, int64_t outer, int64_t nf,
                                              int64_t inner, float eps, float *dx, float *dscale, float *doffset) {
  bn_args a = {.x = x, .scale = scale, .mean_in = mean, .var_in = var, .dy = dy, .y = dx, .dscale = dscale,
               .doffset = doffset, .outer = outer, .nf = nf, .inner = inner, .eps = eps};
  hlo_rt_parallel_for(ctx, nf, grad_range, &a);
}
