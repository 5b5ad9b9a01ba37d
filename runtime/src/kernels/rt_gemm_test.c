/* rt_gemm_test.c — hlo_rt_gemm_f32/f64, hlo_rt_gemm_strided_f32/f64 (and _epi_f32 with a
 * bias + ReLU epilogue, every element visited once) and the indexed entries against a naive
 * triple loop in long double on pseudo-random data: edge sizes (1x1x1, 7x13x5, 64x64x64,
 * 129x67x250, k = 0, sizes across the cache blocks: one A block with several narrow B chunks,
 * several row blocks and B panels, slices of rows and of columns over the threads, every
 * height of the last row tile, products of at most one vector of columns), padded
 * lda/ldb/ldc (the padding must stay untouched), transposed operands through element
 * strides, batches, one thread and a 4-thread context.  Relative error bound:
 * k * eps * sum|a||b| per element.
 */
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hlo/rt.h"
#include "hlo/runtime.h"
#include "rt_gemm_internal.h"
#include "rt_isa.h"

static int failures, checks;

/* A deterministic generator (xorshift) of values in [-1, 1). */
static double next_value(uint64_t *s) {
  *s ^= *s << 13;
  *s ^= *s >> 7;
  *s ^= *s << 17;
  return (double)(*s >> 11) / (double)(1ull << 52) - 1.0;
}

/* Checks c (m x n, row stride ldc) against the exact product of a(i,p) = a[i*ars + p*acs]
 * and b(p,j) = b[p*brs + j*bcs]; eps is the element type's epsilon. */
#define CHECK_PRODUCT(T, what, m, n, k, a, ars, acs, b, brs, bcs, c, ldc, eps)                               \
  do {                                                                                                     \
    int bad_ = 0;                                                                                          \
    for (int64_t i_ = 0; i_ < (m) && !bad_; i_++)                                                          \
      for (int64_t j_ = 0; j_ < (n) && !bad_; j_++) {                                                      \
        long double s_ = 0, mag_ = 0;                                                                      \
        for (int64_t p_ = 0; p_ < (k); p_++) {                                                             \
          long double x_ = (long double)(a)[i_ * (ars) + p_ * (acs)] * (b)[p_ * (brs) + j_ * (bcs)];       \
          s_ += x_;                                                                                        \
          mag_ += fabsl(x_);                                                                               \
        }                                                                                                  \
        long double got_ = (c)[i_ * (ldc) + j_];                                                           \
        if (fabsl(got_ - s_) > (long double)((k) + 2) * (eps) * mag_ + 1e-300L) {                          \
          printf("FAIL %s: c[%lld][%lld] = %.9Lg, expected %.9Lg\n", what, (long long)i_, (long long)j_,   \
                 got_, s_);                                                                                \
          bad_ = 1;                                                                                        \
        }                                                                                                  \
      }                                                                                                    \
    failures += bad_;                                                                                      \
    checks++;                                                                                              \
  } while (0)

/* One row-major product with padded leading dimensions; the padding must keep its value. */
static void check_f32(hlo_context *ctx, int64_t m, int64_t n, int64_t k, int64_t pad, uint64_t seed) {
  int64_t lda = k + pad, ldb = n + pad, ldc = n + pad;
  float *a = malloc(sizeof(float) * (size_t)(m * lda + 1)), *b = malloc(sizeof(float) * (size_t)(k * ldb + 1));
  float *c = malloc(sizeof(float) * (size_t)(m * ldc + 1));
  for (int64_t i = 0; i < m * lda; i++)
    a[i] = (float)next_value(&seed);
  for (int64_t i = 0; i < k * ldb; i++)
    b[i] = (float)next_value(&seed);
  for (int64_t i = 0; i < m * ldc; i++)
    c[i] = 12345.0f;
  hlo_rt_gemm_f32(ctx, m, n, k, a, lda, b, ldb, c, ldc);
  char what[96];
  snprintf(what, sizeof what, "f32 %lldx%lldx%lld pad %lld", (long long)m, (long long)n, (long long)k,
           (long long)pad);
  CHECK_PRODUCT(float, what, m, n, k, a, lda, 1, b, ldb, 1, c, ldc, FLT_EPSILON);
  for (int64_t i = 0; i < m; i++)
    for (int64_t j = n; j < ldc; j++)
      if (c[i * ldc + j] != 12345.0f) {
        printf("FAIL %s: padding c[%lld][%lld] written\n", what, (long long)i, (long long)j);
        failures++;
        i = m;
        break;
      }
  checks++;
  free(a);
  free(b);
  free(c);
}

static void check_f64(hlo_context *ctx, int64_t m, int64_t n, int64_t k, int64_t pad, uint64_t seed) {
  int64_t lda = k + pad, ldb = n + pad, ldc = n + pad;
  double *a = malloc(sizeof(double) * (size_t)(m * lda + 1)), *b = malloc(sizeof(double) * (size_t)(k * ldb + 1));
  double *c = malloc(sizeof(double) * (size_t)(m * ldc + 1));
  for (int64_t i = 0; i < m * lda; i++)
    a[i] = next_value(&seed);
  for (int64_t i = 0; i < k * ldb; i++)
    b[i] = next_value(&seed);
  for (int64_t i = 0; i < m * ldc; i++)
    c[i] = -7.0;
  hlo_rt_gemm_f64(ctx, m, n, k, a, lda, b, ldb, c, ldc);
  char what[96];
  snprintf(what, sizeof what, "f64 %lldx%lldx%lld pad %lld", (long long)m, (long long)n, (long long)k,
           (long long)pad);
  CHECK_PRODUCT(double, what, m, n, k, a, lda, 1, b, ldb, 1, c, ldc, DBL_EPSILON);
  for (int64_t i = 0; i < m; i++)
    for (int64_t j = n; j < ldc; j++)
      if (c[i * ldc + j] != -7.0) {
        printf("FAIL %s: padding c[%lld][%lld] written\n", what, (long long)i, (long long)j);
        failures++;
        i = m;
        break;
      }
  checks++;
  free(a);
  free(b);
  free(c);
}

/* Batched, with A stored transposed (a[t][p][i]) and B transposed (b[t][j][p]). */
static void check_strided_f32(hlo_context *ctx, int64_t batch, int64_t m, int64_t n, int64_t k, uint64_t seed) {
  float *a = malloc(sizeof(float) * (size_t)(batch * m * k + 1)), *b = malloc(sizeof(float) * (size_t)(batch * k * n + 1));
  float *c = malloc(sizeof(float) * (size_t)(batch * m * n + 1));
  for (int64_t i = 0; i < batch * m * k; i++)
    a[i] = (float)next_value(&seed);
  for (int64_t i = 0; i < batch * k * n; i++)
    b[i] = (float)next_value(&seed);
  hlo_rt_gemm_strided_f32(ctx, batch, m, n, k, a, m * k, 1, m, b, k * n, 1, k, c);
  for (int64_t t = 0; t < batch; t++) {
    char what[96];
    snprintf(what, sizeof what, "f32 strided batch %lld/%lld %lldx%lldx%lld", (long long)t, (long long)batch,
             (long long)m, (long long)n, (long long)k);
    CHECK_PRODUCT(float, what, m, n, k, a + t * m * k, 1, m, b + t * k * n, 1, k, c + t * m * n, n, FLT_EPSILON);
  }
  free(a);
  free(b);
  free(c);
}

/* Batched f64 with A row-major and B transposed, batch stride larger than the matrix. */
static void check_strided_f64(hlo_context *ctx, int64_t batch, int64_t m, int64_t n, int64_t k, uint64_t seed) {
  int64_t abs_ = m * k + 3, bbs = k * n + 5;
  double *a = malloc(sizeof(double) * (size_t)(batch * abs_ + 1)), *b = malloc(sizeof(double) * (size_t)(batch * bbs + 1));
  double *c = malloc(sizeof(double) * (size_t)(batch * m * n + 1));
  for (int64_t i = 0; i < batch * abs_; i++)
    a[i] = next_value(&seed);
  for (int64_t i = 0; i < batch * bbs; i++)
    b[i] = next_value(&seed);
  hlo_rt_gemm_strided_f64(ctx, batch, m, n, k, a, abs_, k, 1, b, bbs, 1, k, c);
  for (int64_t t = 0; t < batch; t++) {
    char what[96];
    snprintf(what, sizeof what, "f64 strided batch %lld/%lld %lldx%lldx%lld", (long long)t, (long long)batch,
             (long long)m, (long long)n, (long long)k);
    CHECK_PRODUCT(double, what, m, n, k, a + t * abs_, k, 1, b + t * bbs, 1, k, c + t * m * n, n, DBL_EPSILON);
  }
  free(a);
  free(b);
  free(c);
}

/* Offset tables: A is stored [m1][k][m2] (rows i = i1*m2 + i2 are not one strided dimension)
 * and B [n][k] with batches 3 elements apart beyond the data; compared through dense copies. */
static void check_indexed_f32(hlo_context *ctx, int64_t batch, int64_t m1, int64_t m2, int64_t n, int64_t k,
                              uint64_t seed) {
  int64_t m = m1 * m2, asz = m * k + 3, bsz = k * n + 3;
  float *a = malloc(sizeof(float) * (size_t)(batch * asz)), *b = malloc(sizeof(float) * (size_t)(batch * bsz));
  float *c = malloc(sizeof(float) * (size_t)(batch * m * n + 1));
  float *ad = malloc(sizeof(float) * (size_t)(m * k + 1)), *bd = malloc(sizeof(float) * (size_t)(k * n + 1));
  int64_t *ao = malloc(sizeof(int64_t) * (size_t)(batch + m + k)), *bo = malloc(sizeof(int64_t) * (size_t)(batch + k + n));
  for (int64_t i = 0; i < batch * asz; i++)
    a[i] = (float)next_value(&seed);
  for (int64_t i = 0; i < batch * bsz; i++)
    b[i] = (float)next_value(&seed);
  for (int64_t t = 0; t < batch; t++)
    ao[t] = t * asz, bo[t] = t * bsz;
  for (int64_t i = 0; i < m; i++)
    ao[batch + i] = (i / m2) * k * m2 + i % m2;
  for (int64_t p = 0; p < k; p++)
    ao[batch + m + p] = p * m2, bo[batch + p] = p;
  for (int64_t j = 0; j < n; j++)
    bo[batch + k + j] = j * k;
  hlo_rt_gemm_indexed_f32(ctx, batch, m, n, k, a, ao, b, bo, c);
  for (int64_t t = 0; t < batch; t++) {
    for (int64_t i = 0; i < m; i++)
      for (int64_t p = 0; p < k; p++)
        ad[i * k + p] = a[t * asz + (i / m2) * k * m2 + p * m2 + i % m2];
    for (int64_t p = 0; p < k; p++)
      for (int64_t j = 0; j < n; j++)
        bd[p * n + j] = b[t * bsz + j * k + p];
    char what[96];
    snprintf(what, sizeof what, "f32 indexed batch %lld/%lld %lldx%lldx%lld", (long long)t, (long long)batch,
             (long long)m, (long long)n, (long long)k);
    CHECK_PRODUCT(float, what, m, n, k, ad, k, 1, bd, n, 1, c + t * m * n, n, FLT_EPSILON);
  }
  free(a), free(b), free(c), free(ad), free(bd), free(ao), free(bo);
}

/* One step of a sum's chain as the few-rows kernels take it: s + x * y fused where they run
 * at AVX2 or above, else a rounded product then a rounded sum. */
static float chain_step(int fused, float s, float x, float y) {
  if (fused)
    return fmaf(x, y, s);
  volatile float product = x * y;
  return s + product;
}

/* Fills A (m x k, dense) and B (k rows of `width` elements) with values, and the offset tables
 * of hlo_rt_gemm_indexed_* for them: A's rows and depths dense, B's depth a row apart and its
 * column j at column(j) of the row. */
static void fill_tables(int64_t m, int64_t n, int64_t k, int64_t width, int64_t (*column)(int64_t), uint64_t *seed,
                        float *a, float *b, int64_t *ao, int64_t *bo) {
  for (int64_t i = 0; i < m * k; i++)
    a[i] = (float)next_value(seed);
  for (int64_t i = 0; i < k * width; i++)
    b[i] = (float)next_value(seed);
  ao[0] = bo[0] = 0;
  for (int64_t i = 0; i < m; i++)
    ao[1 + i] = i * k;
  for (int64_t p = 0; p < k; p++)
    ao[1 + m + p] = p, bo[1 + p] = p * width;
  for (int64_t j = 0; j < n; j++)
    bo[1 + k + j] = column(j);
}

/* Columns in runs of 64, 3 elements apart (Flax's heads x h). */
static int64_t runs_of_64(int64_t j) { return j / 64 * 67 + j % 64; }

/* Two runs of 64, then runs of 10 (3 elements apart). */
static int64_t gappy_tail(int64_t j) { return j < 128 ? runs_of_64(j) : 2 * 67 + (j - 128) / 10 * 13 + (j - 128) % 10; }

/* Few rows (5 to 16) with B through offset tables whose columns come in runs of 64 with gaps
 * (Flax's x . W[heads, d, h]): every result must be one chain over the depths in order,
 * bit for bit, whatever kernel and tile the host picks (rt_gemm_small.h: the column kernels
 * on AVX-512, the panel kernel of 6- or 4-row tiles elsewhere): fused multiply-adds where the
 * kernels run at AVX2 or above, a rounded product then a rounded sum at the baseline.  The
 * depth crosses the panel's chunks (128) and the columns its blocks (256); the last 8
 * columns are the one-element-at-a-time tail (it rounded each product on FMA hosts until
 * 2026-11-28: the last columns' bits then depended on the vector width). */
static void check_chain_f32(hlo_context *ctx, int64_t m, uint64_t seed) {
  int64_t n = 2 * 256 + 64 + 40, k = 300, width = (n + 63) / 64 * 67;
  float *a = malloc(sizeof(float) * (size_t)(m * k)), *b = malloc(sizeof(float) * (size_t)(k * width));
  float *c = malloc(sizeof(float) * (size_t)(m * n));
  int64_t *ao = malloc(sizeof(int64_t) * (size_t)(1 + m + k)), *bo = malloc(sizeof(int64_t) * (size_t)(1 + k + n));
  fill_tables(m, n, k, width, runs_of_64, &seed, a, b, ao, bo);
  hlo_rt_gemm_indexed_f32(ctx, 1, m, n, k, a, ao, b, bo, c);
  int fused = rt_isa_level() >= RT_ISA_AVX2, bad = 0;
  for (int64_t i = 0; i < m && !bad; i++)
    for (int64_t j = 0; j < n && !bad; j++) {
      float s = 0;
      for (int64_t p = 0; p < k; p++)
        s = chain_step(fused, s, a[i * k + p], b[p * width + bo[1 + k + j]]);
      bad = memcmp(&s, &c[i * n + j], sizeof s) != 0;
      if (bad)
        printf("FAIL: few rows through tables, %lld rows: C[%lld][%lld] = %.9g, the depth-ordered chain %.9g\n",
               (long long)m, (long long)i, (long long)j, c[i * n + j], s);
    }
  checks++;
  failures += bad;
  free(a), free(b), free(c), free(ao), free(bo);
}

/* Few rows with B through tables whose first 128 columns come in two runs of 64 and whose last
 * 40 in runs of 10 (strips of 16 that are not one run: one element at a time), against the
 * exact product. */
static void check_gappy_tail_f32(hlo_context *ctx, int64_t m, uint64_t seed) {
  int64_t n = 128 + 40, k = 200, width = 2 * 67 + 4 * 13;
  float *a = malloc(sizeof(float) * (size_t)(m * k)), *b = malloc(sizeof(float) * (size_t)(k * width));
  float *c = malloc(sizeof(float) * (size_t)(m * n)), *bd = malloc(sizeof(float) * (size_t)(k * n));
  int64_t *ao = malloc(sizeof(int64_t) * (size_t)(1 + m + k)), *bo = malloc(sizeof(int64_t) * (size_t)(1 + k + n));
  fill_tables(m, n, k, width, gappy_tail, &seed, a, b, ao, bo);
  for (int64_t p = 0; p < k; p++)
    for (int64_t j = 0; j < n; j++)
      bd[p * n + j] = b[p * width + bo[1 + k + j]];
  hlo_rt_gemm_indexed_f32(ctx, 1, m, n, k, a, ao, b, bo, c);
  char what[96];
  snprintf(what, sizeof what, "f32 few rows, a tail in runs of 10, %lldx%lldx%lld", (long long)m, (long long)n,
           (long long)k);
  CHECK_PRODUCT(float, what, m, n, k, a, k, 1, bd, n, 1, c, n, FLT_EPSILON);
  free(a), free(b), free(c), free(bd), free(ao), free(bo);
}

/* Few rows by a B of contiguous depth (x . W^T): every result must be 16 chains over the
 * depths (lane l takes the depths l, l + 16, ...; fused multiply-adds at AVX2 and above, a
 * rounded product then a rounded sum at the baseline) summed as the fixed tree of
 * rt_gemm_small.h, bit for bit, whatever the host's vector width and tile.  The depth is a
 * multiple of 16 (no tail) and the columns cross the dots kernels' column blocks. */
static void check_dots_f32(hlo_context *ctx, int64_t m, uint64_t seed) {
  int64_t n = 70, k = 16 * 130;
  float *a = malloc(sizeof(float) * (size_t)(m * k)), *b = malloc(sizeof(float) * (size_t)(k * n));
  float *c = malloc(sizeof(float) * (size_t)(m * n));
  for (int64_t i = 0; i < m * k; i++)
    a[i] = (float)next_value(&seed);
  for (int64_t i = 0; i < k * n; i++)
    b[i] = (float)next_value(&seed);
  hlo_rt_gemm_strided_f32(ctx, 1, m, n, k, a, 0, k, 1, b, 0, 1, k, c);
  int fused = rt_isa_level() >= RT_ISA_AVX2, bad = 0;
  for (int64_t i = 0; i < m && !bad; i++)
    for (int64_t j = 0; j < n && !bad; j++) {
      float v[16] = {0}, t[8];
      for (int64_t p = 0; p < k; p++)
        v[p % 16] = chain_step(fused, v[p % 16], a[i * k + p], b[j * k + p]);
      for (int l = 0; l < 8; l++)
        t[l] = v[l] + v[l + 8];
      for (int l = 0; l < 4; l++)
        t[l] += t[l + 4];
      float s = (t[0] + t[2]) + (t[1] + t[3]);
      bad = memcmp(&s, &c[i * n + j], sizeof s) != 0;
      if (bad)
        printf("FAIL: few rows by B^T, %lld rows: C[%lld][%lld] = %.9g, the 16-lane tree %.9g\n", (long long)m,
               (long long)i, (long long)j, c[i * n + j], s);
    }
  checks++;
  failures += bad;
  free(a), free(b), free(c);
}

/* The same for f64 with one batch: A [k][m] (depth-major) through tables, B dense. */
static void check_indexed_f64(hlo_context *ctx, int64_t m, int64_t n, int64_t k, uint64_t seed) {
  double *a = malloc(sizeof(double) * (size_t)(m * k + 1)), *b = malloc(sizeof(double) * (size_t)(k * n + 1));
  double *c = malloc(sizeof(double) * (size_t)(m * n + 1));
  int64_t *ao = malloc(sizeof(int64_t) * (size_t)(1 + m + k)), *bo = malloc(sizeof(int64_t) * (size_t)(1 + k + n));
  for (int64_t i = 0; i < m * k; i++)
    a[i] = next_value(&seed);
  for (int64_t i = 0; i < k * n; i++)
    b[i] = next_value(&seed);
  ao[0] = bo[0] = 0;
  for (int64_t i = 0; i < m; i++)
    ao[1 + i] = i;
  for (int64_t p = 0; p < k; p++)
    ao[1 + m + p] = p * m, bo[1 + p] = p * n;
  for (int64_t j = 0; j < n; j++)
    bo[1 + k + j] = j;
  hlo_rt_gemm_indexed_f64(ctx, 1, m, n, k, a, ao, b, bo, c);
  CHECK_PRODUCT(double, "f64 indexed", m, n, k, a, 1, m, b, n, 1, c, n, DBL_EPSILON);
  free(a), free(b), free(c), free(ao), free(bo);
}

/* The epilogue of hlo_rt_gemm_strided_epi_f32: c = max(c + bias[column], 0) on the given
 * elements; visits[e] counts the calls that covered element e. */
typedef struct epi_env {
  float *c;
  const float *bias;
  int64_t n;
  unsigned char *visits;
} epi_env;

static void bias_relu(void *arg, int64_t begin, int64_t end) {
  epi_env *e = arg;
  for (int64_t x = begin; x < end; x++) {
    float v = e->c[x] + e->bias[x % e->n];
    e->c[x] = v > 0 ? v : 0;
    e->visits[x]++;
  }
}

/* Batched row-major products with the bias + ReLU epilogue, against the long double product
 * with the epilogue applied after it; every element must be visited exactly once. */
static void check_epilogue_f32(hlo_context *ctx, int64_t batch, int64_t m, int64_t n, int64_t k, uint64_t seed) {
  int64_t total = batch * m * n;
  float *a = malloc(sizeof(float) * (size_t)(batch * m * k + 1)), *b = malloc(sizeof(float) * (size_t)(batch * k * n + 1));
  float *c = malloc(sizeof(float) * (size_t)(total + 1)), *bias = malloc(sizeof(float) * (size_t)(n + 1));
  unsigned char *visits = calloc((size_t)total + 1, 1);
  for (int64_t i = 0; i < batch * m * k; i++)
    a[i] = (float)next_value(&seed);
  for (int64_t i = 0; i < batch * k * n; i++)
    b[i] = (float)next_value(&seed);
  for (int64_t j = 0; j < n; j++)
    bias[j] = (float)next_value(&seed);
  epi_env env = {c, bias, n, visits};
  hlo_rt_gemm_strided_epi_f32(ctx, batch, m, n, k, a, m * k, k, 1, b, k * n, n, 1, c, bias_relu, &env);
  int bad = 0;
  for (int64_t t = 0; t < batch && !bad; t++)
    for (int64_t i = 0; i < m && !bad; i++)
      for (int64_t j = 0; j < n && !bad; j++) {
        long double sum = bias[j], mag = fabsl((long double)bias[j]);
        for (int64_t p = 0; p < k; p++) {
          long double x = (long double)a[t * m * k + i * k + p] * b[t * k * n + p * n + j];
          sum += x;
          mag += fabsl(x);
        }
        long double want = sum > 0 ? sum : 0, got = c[(t * m + i) * n + j];
        if (visits[(t * m + i) * n + j] != 1 || fabsl(got - want) > (long double)(k + 3) * FLT_EPSILON * mag + 1e-30L) {
          printf("FAIL epilogue %lldx%lldx%lldx%lld: c[%lld][%lld][%lld] = %.9Lg (visited %d times), expected %.9Lg\n",
                 (long long)batch, (long long)m, (long long)n, (long long)k, (long long)t, (long long)i, (long long)j,
                 got, visits[(t * m + i) * n + j], want);
          bad = 1;
        }
      }
  failures += bad;
  checks++;
  free(a), free(b), free(c), free(bias), free(visits);
}

/* k = 0: the product of empty sums is zero. */
static void check_empty(void) {
  float a[1] = {1}, b[1] = {1}, c[6] = {5, 5, 5, 5, 5, 5};
  hlo_rt_gemm_f32(NULL, 2, 3, 0, a, 0, b, 3, c, 3);
  for (int i = 0; i < 6; i++)
    if (c[i] != 0) {
      printf("FAIL k=0: c[%d] = %g\n", i, c[i]);
      failures++;
      break;
    }
  checks++;
}

/* Hand-computed: [[1,2],[3,4]] x [[5,6],[7,8]] = [[19,22],[43,50]]; infinities and NaN pass. */
static void check_hand(void) {
  float a[4] = {1, 2, 3, 4}, b[4] = {5, 6, 7, 8}, c[4];
  hlo_rt_gemm_f32(NULL, 2, 2, 2, a, 2, b, 2, c, 2);
  const float want[4] = {19, 22, 43, 50};
  for (int i = 0; i < 4; i++)
    if (c[i] != want[i]) {
      printf("FAIL hand: c[%d] = %g, expected %g\n", i, c[i], want[i]);
      failures++;
    }
  double x[2] = {INFINITY, 1}, y[2] = {1, NAN}, z[1];
  hlo_rt_gemm_f64(NULL, 1, 1, 2, x, 2, y, 1, z, 1);
  if (!isnan(z[0])) {
    printf("FAIL hand: inf*1 + 1*nan = %g\n", z[0]);
    failures++;
  }
  checks += 2;
}

/* ---- bf16 (rt_gemm_bf16.c) ---- */

/* bf16 bits of x, round to nearest even (written independently of the runtime's). */
static uint16_t to_bf16(double x) {
  float f = (float)x;
  uint32_t w;
  memcpy(&w, &f, 4);
  if (f != f)
    return (uint16_t)((w >> 16) | 0x40);
  uint32_t lsb = (w >> 16) & 1;
  return (uint16_t)((w + 0x7FFFu + lsb) >> 16);
}

/* The bf16 kernel the environment picks, for messages. */
static const char *bf16_kernel(void) {
  const char *k = getenv("HLO_GEMM_BF16");
  return k ? k : "best";
}

static double from_bf16(uint16_t h) {
  uint32_t w = (uint32_t)h << 16;
  float f;
  memcpy(&f, &w, 4);
  return f;
}

/* Checks one bf16 product's f32 result c (m x n) against the exact sum in long double, bound
 * (k + 2) * FLT_EPSILON * sum|a||b| (the products of bf16 values are exact in f32; only the
 * sums round), and the bf16 result out of a second call (if any) against c rounded once to
 * nearest even: the same sums, rounded once. */
static void check_bf16_result(const char *what, int64_t m, int64_t n, int64_t k, const uint16_t *a, const int64_t *ai,
                              const int64_t *ap, const uint16_t *b, const int64_t *bp, const int64_t *bj,
                              const float *c, const uint16_t *out) {
  int bad = 0;
  for (int64_t i = 0; i < m && !bad; i++)
    for (int64_t j = 0; j < n && !bad; j++) {
      long double s = 0, mag = 0;
      for (int64_t p = 0; p < k; p++) {
        long double x = (long double)from_bf16(a[ai[i] + ap[p]]) * from_bf16(b[bp[p] + bj[j]]);
        s += x;
        mag += fabsl(x);
      }
      long double got = c[i * n + j];
      if (fabsl(got - s) > (long double)(k + 2) * FLT_EPSILON * mag + 1e-30L) {
        printf("FAIL %s: c[%lld][%lld] = %.9Lg, expected %.9Lg\n", what, (long long)i, (long long)j, got, s);
        bad = 1;
      }
      if (out && out[i * n + j] != to_bf16(c[i * n + j])) {
        printf("FAIL %s: out[%lld][%lld] = 0x%04x, c rounds to 0x%04x\n", what, (long long)i, (long long)j,
               out[i * n + j], to_bf16(c[i * n + j]));
        bad = 1;
      }
    }
  failures += bad;
  checks++;
}

/* Offsets of a strided group: v[x] = x * stride. */
static int64_t *stride_table(int64_t n, int64_t stride) {
  int64_t *v = malloc(sizeof *v * (size_t)(n + 1));
  for (int64_t x = 0; x < n; x++)
    v[x] = x * stride;
  return v;
}

/* One batched bf16 product through hlo_rt_gemm_strided_bf16: A row-major or transposed
 * (ta), B row-major or transposed (tb), each with `pad` extra elements per row and per
 * batch; with a bf16 result when with_out. */
static void check_bf16(hlo_context *ctx, int64_t batch, int64_t m, int64_t n, int64_t k, int ta, int tb, int64_t pad,
                       int with_out, uint64_t seed) {
  int64_t ars = ta ? 1 : k + pad, acs = ta ? m + pad : 1, brs = tb ? 1 : n + pad, bcs = tb ? k + pad : 1;
  int64_t abs_ = (ta ? k : m) * (ta ? m + pad : k + pad) + pad, bbs = (tb ? n : k) * (tb ? k + pad : n + pad) + pad;
  uint16_t *a = malloc(2 * (size_t)(batch * abs_ + 1)), *b = malloc(2 * (size_t)(batch * bbs + 1));
  float *c = malloc(sizeof(float) * (size_t)(batch * m * n + 1));
  uint16_t *out = with_out ? malloc(2 * (size_t)(batch * m * n + 1)) : NULL;
  for (int64_t i = 0; i < batch * abs_; i++)
    a[i] = to_bf16(next_value(&seed));
  for (int64_t i = 0; i < batch * bbs; i++)
    b[i] = to_bf16(next_value(&seed));
  hlo_rt_gemm_strided_bf16(ctx, batch, m, n, k, a, abs_, ars, acs, b, bbs, brs, bcs, c, NULL);
  if (out) { /* the same sums rounded once: into out, with c scratch the kernel may skip */
    float *scratch = malloc(sizeof(float) * (size_t)(batch * m * n + 1));
    hlo_rt_gemm_strided_bf16(ctx, batch, m, n, k, a, abs_, ars, acs, b, bbs, brs, bcs, scratch, out);
    free(scratch);
  }
  int64_t *ai = stride_table(m, ars), *ap = stride_table(k, acs), *bp = stride_table(k, brs), *bj = stride_table(n, bcs);
  for (int64_t t = 0; t < batch; t++) {
    char what[128];
    snprintf(what, sizeof what, "bf16 [%s] batch %lld/%lld %lldx%lldx%lld ta %d tb %d pad %lld",
             bf16_kernel(), (long long)t, (long long)batch,
             (long long)m, (long long)n, (long long)k, ta, tb, (long long)pad);
    check_bf16_result(what, m, n, k, a + t * abs_, ai, ap, b + t * bbs, bp, bj, c + t * m * n,
                      out ? out + t * m * n : NULL);
  }
  free(ai);
  free(ap);
  free(bp);
  free(bj);
  free(a);
  free(b);
  free(c);
  free(out);
}

/* hlo_rt_gemm_indexed_bf16 with rows of A and columns of B in reverse order (no strides). */
static void check_indexed_bf16(hlo_context *ctx, int64_t batch, int64_t m, int64_t n, int64_t k, uint64_t seed) {
  uint16_t *a = malloc(2 * (size_t)(batch * m * k + 1)), *b = malloc(2 * (size_t)(batch * k * n + 1));
  float *c = malloc(sizeof(float) * (size_t)(batch * m * n + 1));
  uint16_t *out = malloc(2 * (size_t)(batch * m * n + 1));
  int64_t *ao = malloc(sizeof(int64_t) * (size_t)(batch + m + k)), *bo = malloc(sizeof(int64_t) * (size_t)(batch + k + n));
  for (int64_t i = 0; i < batch * m * k; i++)
    a[i] = to_bf16(next_value(&seed));
  for (int64_t i = 0; i < batch * k * n; i++)
    b[i] = to_bf16(next_value(&seed));
  for (int64_t t = 0; t < batch; t++) {
    ao[t] = t * m * k;
    bo[t] = t * k * n;
  }
  for (int64_t i = 0; i < m; i++)
    ao[batch + i] = (m - 1 - i) * k;
  for (int64_t p = 0; p < k; p++) {
    ao[batch + m + p] = p;
    bo[batch + p] = p * n;
  }
  for (int64_t j = 0; j < n; j++)
    bo[batch + k + j] = n - 1 - j;
  hlo_rt_gemm_indexed_bf16(ctx, batch, m, n, k, a, ao, b, bo, c, NULL);
  float *scratch = malloc(sizeof(float) * (size_t)(batch * m * n + 1));
  hlo_rt_gemm_indexed_bf16(ctx, batch, m, n, k, a, ao, b, bo, scratch, out);
  free(scratch);
  for (int64_t t = 0; t < batch; t++) {
    char what[128];
    snprintf(what, sizeof what, "bf16 indexed [%s] batch %lld/%lld %lldx%lldx%lld",
             bf16_kernel(), (long long)t, (long long)batch,
             (long long)m, (long long)n, (long long)k);
    check_bf16_result(what, m, n, k, a + ao[t], ao + batch, ao + batch + m, b + bo[t], bo + batch, bo + batch + k,
                      c + t * m * n, out + t * m * n);
  }
  free(a);
  free(b);
  free(c);
  free(out);
  free(ao);
  free(bo);
}

/* A bf16 product through offset tables whose B columns come in runs of `run` contiguous
 * elements with gaps between runs (Flax's x . W[heads, d, h]: columns heads x h), few rows or
 * many: the few-rows kernel reads such runs in place when they are 64 long or longer.  With
 * a_run > 0, A's rows come in runs of a_run contiguous elements too, its depth a row stride
 * apart (Flax's W[c, d, h] . x: rows c x h), which A's packing reads 32 rows at a time. */
static void check_runs_bf16(hlo_context *ctx, int64_t m, int64_t n, int64_t k, int64_t run, int64_t a_run,
                            uint64_t seed) {
  int64_t groups = (n + run - 1) / run, width = groups * (run + 3);
  int64_t a_width = a_run + 5, a_size = a_run ? (m + a_run - 1) / a_run * k * a_width : m * k;
  uint16_t *a = malloc(2 * (size_t)(a_size + 1)), *b = malloc(2 * (size_t)(k * width + 1));
  float *c = malloc(sizeof(float) * (size_t)(m * n + 1));
  uint16_t *out = malloc(2 * (size_t)(m * n + 1));
  int64_t *ao = malloc(sizeof(int64_t) * (size_t)(1 + m + k)), *bo = malloc(sizeof(int64_t) * (size_t)(1 + k + n));
  for (int64_t i = 0; i < a_size; i++)
    a[i] = to_bf16(next_value(&seed));
  for (int64_t i = 0; i < k * width; i++)
    b[i] = to_bf16(next_value(&seed));
  ao[0] = bo[0] = 0;
  for (int64_t i = 0; i < m; i++)
    ao[1 + i] = a_run ? i / a_run * k * a_width + i % a_run : i * k;
  for (int64_t p = 0; p < k; p++) {
    ao[1 + m + p] = a_run ? p * a_width : p;
    bo[1 + p] = p * width;
  }
  for (int64_t j = 0; j < n; j++)
    bo[1 + k + j] = j / run * (run + 3) + j % run;
  float *scratch = malloc(sizeof(float) * (size_t)(m * n + 1));
  hlo_rt_gemm_indexed_bf16(ctx, 1, m, n, k, a, ao, b, bo, c, NULL);
  hlo_rt_gemm_indexed_bf16(ctx, 1, m, n, k, a, ao, b, bo, scratch, out);
  char what[128];
  snprintf(what, sizeof what, "bf16 runs of %lld (A %lld) [%s] %lldx%lldx%lld", (long long)run, (long long)a_run,
           bf16_kernel(), (long long)m, (long long)n, (long long)k);
  check_bf16_result(what, m, n, k, a, ao + 1, ao + 1 + m, b, bo + 1, bo + 1 + k, c, out);
  free(scratch);
  free(a);
  free(b);
  free(c);
  free(out);
  free(ao);
  free(bo);
}

/* The rounding of a bf16 result (every form: scalar, AVX2, AVX512BW) on sums that land on
 * ties, carry into the exponent, overflow in the rounding, cancel, or are NaN or infinite:
 * C = [1 1] . B, so each column's sum is b0 + b1, exact in f32.  The pairs repeat across 40
 * columns (two vectors of 16 and a tail), over m rows (m = 1: the few-rows path). */
static void check_bf16_rounding(hlo_context *ctx, int64_t m) {
  static const uint16_t pairs[][2] = {
      {0x3F80, 0x3B80}, /* 1 + 2^-8: a tie, to even 1.0 */
      {0x3F81, 0x3B80}, /* (1 + 2^-7) + 2^-8: a tie, to even 1 + 2^-6 */
      {0x3F81, 0x3B00}, /* (1 + 2^-7) + 2^-9: below the tie */
      {0x3FFF, 0x3B80}, /* (2 - 2^-7) + 2^-8: a tie carried into the exponent, 2.0 */
      {0xBF80, 0xBB80}, /* -1 - 2^-8: a negative tie */
      {0x7F80, 0xFF80}, /* inf - inf: NaN */
      {0x7FC1, 0x3F80}, /* NaN + 1 */
      {0x7F80, 0x3F80}, /* inf + 1 */
      {0x7F7F, 0x7B00}, /* the largest bf16 + half its ulp: a tie that rounds to inf */
      {0x3F80, 0xBF80}, /* +0 */
      {0x8000, 0x8000}, /* -0 - 0: +0, the sum starting from +0 */
      {0x4049, 0x3A8F}, /* 3.140625 + 0.00109100...: not a tie */
  };
  enum { N = 40 };
  int64_t npairs = sizeof pairs / sizeof pairs[0];
  uint16_t *a = malloc(2 * (size_t)(m * 2)), b[2 * N], *out = malloc(2 * (size_t)(m * N));
  float *c = malloc(sizeof(float) * (size_t)(m * N)), *scratch = malloc(sizeof(float) * (size_t)(m * N));
  for (int64_t i = 0; i < 2 * m; i++)
    a[i] = 0x3F80;
  for (int64_t j = 0; j < N; j++)
    b[j] = pairs[j % npairs][0], b[N + j] = pairs[j % npairs][1];
  hlo_rt_gemm_strided_bf16(ctx, 1, m, N, 2, a, 0, 2, 1, b, 0, N, 1, c, NULL);
  hlo_rt_gemm_strided_bf16(ctx, 1, m, N, 2, a, 0, 2, 1, b, 0, N, 1, scratch, out);
  int64_t *ai = stride_table(m, 2), *ap = stride_table(2, 1), *bp = stride_table(2, N), *bj = stride_table(N, 1);
  char what[96];
  snprintf(what, sizeof what, "bf16 [%s] rounding of special sums, %lld rows", bf16_kernel(), (long long)m);
  check_bf16_result(what, m, N, 2, a, ai, ap, b, bp, bj, c, out);
  /* hand-computed results of the first rows' first pairs, independent of to_bf16 */
  static const uint16_t expect[] = {0x3F80, 0x3F82, 0x3F81, 0x4000, 0xBF80};
  for (int j = 0; j < 5; j++) {
    checks++;
    if (out[j] != expect[j] || out[(m - 1) * N + npairs + j] != expect[j]) {
      printf("FAIL %s: column %d rounds to 0x%04x, expected 0x%04x\n", what, j, out[j], expect[j]);
      failures++;
    }
  }
  checks++;
  if (out[8] != 0x7F80 || out[9] != 0x0000 || out[10] != 0x0000 || (out[5] & 0x7FFF) <= 0x7F80 || out[7] != 0x7F80) {
    printf("FAIL %s: largest+half ulp 0x%04x, 1-1 0x%04x, -0-0 0x%04x, inf-inf 0x%04x, inf+1 0x%04x\n", what,
           out[8], out[9], out[10], out[5], out[7]);
    failures++;
  }
  free(ai), free(ap), free(bp), free(bj), free(a), free(out), free(c), free(scratch);
}

/* The bf16 cases on one kernel: edges of the 32 x 32 tile and the 32-deep blocks, several
 * depth panels (k > 2048), B panels (n > 2048), row blocks (m > 128), transposed operands,
 * padded strides, batches, offset tables, k = 0, with and without the bf16 result. */
static void run_bf16(hlo_context *ctx) {
  static const int64_t sizes[][3] = {{1, 1, 1},     {7, 13, 5},     {32, 32, 32},   {33, 31, 65},  {64, 64, 64},
                                     {129, 67, 250}, {31, 33, 600},  {300, 40, 800}, {40, 700, 300}, {500, 70, 37},
                                     {256, 10, 700}, {2, 1100, 1030}, {97, 65, 1}, {5, 3, 0},   {33, 40, 2100}, {3, 2100, 40},
                                     /* few rows (B read in place): 16 and 17 rows, a depth tail,
                                      * partial column groups, one row by many columns */
                                     {11, 262, 1152}, {16, 130, 77}, {17, 64, 64}, {1, 4099, 33}};
  uint64_t seed = 0x2545f4914f6cdd1dull;
  for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++)
    for (int layout = 0; layout < 4; layout++)
      check_bf16(ctx, 1, sizes[i][0], sizes[i][1], sizes[i][2], layout & 1, layout >> 1, layout == 3 ? 3 : 0,
                 (int)(i + layout) % 2, seed + i * 4 + (uint64_t)layout);
  check_bf16(ctx, 3, 45, 50, 70, 0, 0, 5, 1, seed + 100);
  check_bf16(ctx, 5, 64, 96, 130, 1, 1, 0, 1, seed + 101);
  check_bf16(ctx, 2, 200, 300, 100, 0, 1, 1, 0, seed + 102);
  check_bf16(ctx, 6, 7, 90, 50, 0, 1, 2, 1, seed + 105); /* few rows, batches over the threads */
  check_bf16(ctx, 2, 9, 300, 70, 1, 0, 0, 0, seed + 106);
  check_indexed_bf16(ctx, 2, 35, 40, 70, seed + 103);
  check_indexed_bf16(ctx, 1, 100, 200, 550, seed + 104);
  check_runs_bf16(ctx, 11, 4 * 256, 300, 256, 0, seed + 107); /* few rows, runs read in place */
  check_runs_bf16(ctx, 3, 2 * 64 + 40, 70, 64, 0, seed + 108); /* a short last run */
  check_runs_bf16(ctx, 5, 3 * 96, 50, 96, 0, seed + 109);     /* runs of 96: tiles would straddle */
  check_runs_bf16(ctx, 40, 2 * 128, 33, 128, 0, seed + 110);  /* many rows: the packed path */
  check_runs_bf16(ctx, 2 * 256, 11, 1000, 64, 256, seed + 116); /* A's rows in runs (gemma3's kv) */
  check_runs_bf16(ctx, 100, 40, 70, 64, 48, seed + 117);       /* runs of 48: a 32-row group straddles */
  /* Few rows on AMX (rt_gemm_bf16.c bf_rows_amx*: from 2 rows by a row-major B, from 4 by a B
   * of contiguous depth; elsewhere the FMA kernels): padded strides, wide panels of B (more
   * than 2048 columns), depth and column tails, batches, both results. */
  check_bf16(ctx, 2, 2, 2100, 1000, 0, 0, 3, 1, seed + 111);
  check_bf16(ctx, 1, 3, 4500, 130, 1, 0, 0, 0, seed + 112);
  check_bf16(ctx, 2, 4, 1000, 1000, 0, 1, 5, 1, seed + 113);
  check_bf16(ctx, 1, 16, 70, 2100, 1, 1, 0, 0, seed + 114);
  check_bf16(ctx, 3, 13, 33, 31, 0, 1, 1, 1, seed + 115);
  check_bf16_rounding(ctx, 1);
  check_bf16_rounding(ctx, 70);
}

/* ---- f16 (hlo_rt_gemm_*_f16: widened while packed) ---- */

/* An f16 value, decoded independently of the runtime (normals, zeros and subnormals). */
static float f16_decode(uint16_t h) {
  int e = h >> 10 & 0x1F;
  float v = e ? ldexpf((float)(1024 + (h & 0x3FF)), e - 25) : ldexpf((float)(h & 0x3FF), -24);
  return h & 0x8000 ? -v : v;
}

/* Random finite f16 bits of magnitude below 2 (exponents 0 to 15, subnormals included). */
static uint16_t f16_random(uint64_t *s) {
  double x = next_value(s);
  uint16_t e = (uint16_t)((uint64_t)((x + 1.0) * 1e6) % 16), m = (uint16_t)((uint64_t)((x + 1.0) * 1e9) % 1024);
  return (uint16_t)((x < 0 ? 0x8000 : 0) | e << 10 | m);
}

/* bf16 through the f32 route (HLO_GEMM_BF16=f32) and f16 widen while they pack
 * (rt_gemm_internal.h): their f32 result must have the bits of hlo_rt_gemm_strided_f32 on
 * exact f32 copies, whose kernels differ (A read in place for 64 columns, transposed B packed
 * through registers, few rows with B in place). */
static void check_widened_bits(hlo_context *ctx, int f16, int64_t batch, int64_t m, int64_t n, int64_t k, int tb,
                               uint64_t seed) {
  int64_t na = batch * m * k, nb = batch * k * n, nc = batch * m * n;
  uint16_t *a = malloc(sizeof *a * na), *b = malloc(sizeof *b * nb);
  float *af = malloc(sizeof *af * na), *bf = malloc(sizeof *bf * nb);
  float *c = malloc(sizeof *c * nc), *cf = malloc(sizeof *cf * nc);
  for (int64_t i = 0; i < na + nb; i++) {
    uint16_t h = f16 ? f16_random(&seed) : to_bf16(next_value(&seed));
    float v = f16 ? f16_decode(h) : (float)from_bf16(h);
    if (i < na)
      a[i] = h, af[i] = v;
    else
      b[i - na] = h, bf[i - na] = v;
  }
  int64_t brs = tb ? 1 : n, bcs = tb ? k : 1; /* tb: B stored n x k */
  if (f16)
    hlo_rt_gemm_strided_f16(ctx, batch, m, n, k, a, m * k, k, 1, b, k * n, brs, bcs, c);
  else {
    setenv("HLO_GEMM_BF16", "f32", 1);
    hlo_rt_gemm_strided_bf16(ctx, batch, m, n, k, a, m * k, k, 1, b, k * n, brs, bcs, c, NULL);
    unsetenv("HLO_GEMM_BF16");
  }
  hlo_rt_gemm_strided_f32(ctx, batch, m, n, k, af, m * k, k, 1, bf, k * n, brs, bcs, cf);
  checks++;
  if (memcmp(c, cf, sizeof *c * nc) != 0) {
    printf("FAIL: %s widened while packed, %lldx%lldx%lld (batch %lld, B %s): not the f32 GEMM's bits\n",
           f16 ? "f16" : "bf16", (long long)m, (long long)n, (long long)k, (long long)batch,
           tb ? "transposed" : "row-major");
    failures++;
  }
  free(a), free(b), free(af), free(bf), free(c), free(cf);
}

/* Infinity, NaN and the smallest subnormal through the widening (one depth: C = A). */
static void check_f16_specials(hlo_context *ctx) {
  const uint16_t a[4] = {0x7C00, 0xFC00, 0x7E01, 0x0001}, one[1] = {0x3C00};
  float c[4];
  hlo_rt_gemm_strided_f16(ctx, 1, 4, 1, 1, a, 4, 1, 1, one, 1, 1, 1, c);
  checks++;
  if (!(isinf(c[0]) && c[0] > 0 && isinf(c[1]) && c[1] < 0 && isnan(c[2]) && c[3] == 0x1p-24f)) {
    printf("FAIL: f16 specials widened to %g %g %g %g\n", c[0], c[1], c[2], c[3]);
    failures++;
  }
  const int64_t off[1 + 4 + 1] = {0, 0, 1, 2, 3, 0}, boff[1 + 1 + 1] = {0, 0, 0}; /* the same through tables */
  float d[4];
  hlo_rt_gemm_indexed_f16(ctx, 1, 4, 1, 1, a, off, one, boff, d);
  checks++;
  if (memcmp(c, d, sizeof c) != 0) {
    printf("FAIL: f16 specials through offset tables differ from strides\n");
    failures++;
  }
}

static void run_f16(hlo_context *ctx) {
  check_widened_bits(ctx, 1, 1, 300, 64, 700, 0, 301);
  check_widened_bits(ctx, 1, 2, 70, 300, 520, 1, 302);
  check_widened_bits(ctx, 1, 3, 9, 200, 700, 0, 303); /* few rows: B read in place (f16_small) */
  check_widened_bits(ctx, 1, 2, 5, 300, 520, 1, 304); /* few rows, transposed B: dot products */
  check_widened_bits(ctx, 1, 1, 3, 2100, 37, 0, 305); /* at most 4 rows: B's rows streamed */
  check_f16_specials(ctx);
}

/* Every bf16 kernel this host has: the default (AMX; without it the AVX512_BF16 kernel where
 * the probe finds that it pays, else the f32 route), the AVX512_BF16 kernel (the f32 route
 * where the host lacks it), the f32 route. */
static void run_bf16_kernels(hlo_context *ctx) {
  static const char *kernels[] = {NULL, "avx512", "f32"};
  for (size_t i = 0; i < sizeof kernels / sizeof kernels[0]; i++) {
    if (kernels[i])
      setenv("HLO_GEMM_BF16", kernels[i], 1);
    else
      unsetenv("HLO_GEMM_BF16");
    run_bf16(ctx);
  }
  unsetenv("HLO_GEMM_BF16");
  check_widened_bits(ctx, 0, 1, 300, 64, 700, 0, 201); /* the f32 GEMM reads A in place here */
  check_widened_bits(ctx, 0, 2, 70, 300, 520, 1, 202); /* transposed B, two depth panels */
  check_widened_bits(ctx, 0, 3, 40, 200, 90, 0, 203);  /* batches */
  run_f16(ctx);
}

static void run_sizes(hlo_context *ctx) {
  static const int64_t sizes[][3] = {{1, 1, 1},     {7, 13, 5},    {64, 64, 64},  {129, 67, 250}, {3, 1, 17},
                                     {1, 100, 9},   {33, 2, 400},  {200, 33, 1},  {17, 31, 385},  {150, 150, 150},
                                     {97, 3100, 7}, {300, 40, 800}, {500, 70, 600}, {40, 700, 300}, {2000, 20, 30},
                                     {56, 16, 300}, {42, 8, 64}, {256, 10, 700},
                                     /* A read in place (64 or 128 f32 columns, 32 or 64 f64):
                                      * one row, depth panels, partial column panels */
                                     {1, 64, 700},  {131, 128, 600}, {37, 60, 300}, {250, 120, 513}, {6, 64, 257},
                                     /* at most 4 rows, row-major B streamed: blocks, depth remainders */
                                     {3, 2100, 37}, {4, 1024, 5}};
  uint64_t seed = 0x9e3779b97f4a7c15ull;
  for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++)
    for (int64_t pad = 0; pad <= 3; pad += 3) {
      check_f32(ctx, sizes[i][0], sizes[i][1], sizes[i][2], pad, seed + i);
      check_f64(ctx, sizes[i][0], sizes[i][1], sizes[i][2], pad, seed + 7 * i);
    }
  check_f64(ctx, 300, 2100, 340, 0, seed + 99); /* row blocks and two B panels in f64 */
  for (int64_t m = 15; m <= 28; m++) { /* every height of the last row tile (1 to 14 rows) */
    check_f32(ctx, m, 64, 33, 0, seed + 100 + m);
    check_f64(ctx, m, 32, 33, 1, seed + 200 + m);
  }
  check_strided_f32(ctx, 3, 7, 13, 5, seed);
  check_strided_f32(ctx, 5, 65, 70, 130, seed + 1);
  check_strided_f32(ctx, 1, 200, 100, 300, seed + 2);
  check_strided_f64(ctx, 2, 9, 11, 3, seed + 3);
  check_strided_f64(ctx, 6, 40, 50, 60, seed + 4);
  check_indexed_f32(ctx, 2, 3, 5, 7, 11, seed + 5);
  check_indexed_f32(ctx, 1, 20, 13, 150, 90, seed + 6);
  check_indexed_f32(ctx, 5, 4, 30, 33, 400, seed + 7);
  for (int64_t m = 5; m <= 16; m++) /* both tile heights of the panel kernel, partial tiles */
    check_chain_f32(ctx, m, seed + 300 + (uint64_t)m);
  check_gappy_tail_f32(ctx, 7, seed + 500);
  check_gappy_tail_f32(ctx, 12, seed + 501);
  for (int64_t m = 1; m <= 16; m++) /* every dots tile, and every choice of tile by rows */
    check_dots_f32(ctx, m, seed + 400 + (uint64_t)m);
  check_indexed_f64(ctx, 70, 130, 300, seed + 8);
  check_epilogue_f32(ctx, 1, 256, 300, 100, seed + 9);  /* one A block, B in chunks */
  check_epilogue_f32(ctx, 1, 500, 70, 600, seed + 10); /* row blocks */
  check_epilogue_f32(ctx, 3, 20, 10, 40, seed + 11);   /* batches, a narrow tile */
  check_epilogue_f32(ctx, 2, 5, 7, 0, seed + 12);      /* k = 0: the epilogue of zeros */
  check_epilogue_f32(ctx, 2, 300, 64, 520, seed + 13); /* A read in place, two depth panels */
  check_strided_f32(ctx, 4, 70, 64, 90, seed + 14);
  check_strided_f32(ctx, 3, 11, 300, 77, seed + 16);   /* few rows, B's depth contiguous */
  check_strided_f32(ctx, 1, 1, 1000, 1152, seed + 17); /* one row: a logits-shaped product */
  check_epilogue_f32(ctx, 2, 9, 130, 70, seed + 18);   /* few rows, row-major B, epilogue */
  check_epilogue_f32(ctx, 1, 16, 64, 300, seed + 19);
  check_strided_f64(ctx, 3, 50, 30, 270, seed + 15);
  run_bf16_kernels(ctx);
}

/* HLO_RT_ISA holds the kernels to a smaller CPU's forms (tests/runtime_isa.cmake runs this test
 * so); the cap must take: the level is at most the one named. */
static void check_isa_cap(void) {
  static const char *names[] = {"baseline", "avx2", "avx512", "amx"};
  const char *want = getenv("HLO_RT_ISA");
  int level = rt_isa_level();
  checks++;
  for (int i = 0; want && i < 4; i++)
    if (strcmp(want, names[i]) == 0 && level > i) {
      printf("FAIL: HLO_RT_ISA=%s, yet the kernels run at level %d\n", want, level);
      failures++;
    }
  printf("rt_gemm_test: kernels at level %d (%s)\n", level, names[level]);
}

/* The default bf16 kernel gives the bits of the one named (HLO_GEMM_BF16=name). */
static void check_bf16_default(const char *name) {
  int64_t m = 96, n = 64, k = 300;
  uint64_t seed = 41;
  uint16_t *a = malloc(2 * (size_t)(m * k)), *b = malloc(2 * (size_t)(k * n));
  float *c0 = malloc(sizeof(float) * (size_t)(m * n)), *c1 = malloc(sizeof(float) * (size_t)(m * n));
  for (int64_t i = 0; i < m * k; i++)
    a[i] = to_bf16(next_value(&seed));
  for (int64_t i = 0; i < k * n; i++)
    b[i] = to_bf16(next_value(&seed));
  unsetenv("HLO_GEMM_BF16");
  hlo_rt_gemm_strided_bf16(NULL, 1, m, n, k, a, 0, k, 1, b, 0, n, 1, c0, NULL);
  setenv("HLO_GEMM_BF16", name, 1);
  hlo_rt_gemm_strided_bf16(NULL, 1, m, n, k, a, 0, k, 1, b, 0, n, 1, c1, NULL);
  unsetenv("HLO_GEMM_BF16");
  checks++;
  if (memcmp(c0, c1, sizeof(float) * (size_t)(m * n)) != 0) {
    printf("FAIL: the default bf16 kernel is not the %s one the probe picks\n", name);
    failures++;
  }
  free(a);
  free(b);
  free(c0);
  free(c1);
}

/* The probe behind the default bf16 kernel without AMX (rt_gemm_bf16_dot_gain): 0 exactly where
 * the kernels may not use AVX512_BF16, else a positive rate that falls on the same side of
 * RT_GEMM_BF16_DOT_PAYS every time it is measured (the choice, and so the bits, must not
 * change from run to run on one CPU). */
static void check_bf16_probe(void) {
  int usable = 0;
#if defined(__x86_64__) && defined(__GNUC__)
  __builtin_cpu_init();
  usable = rt_isa_level() >= RT_ISA_AVX512 && __builtin_cpu_supports("avx512bf16");
#endif
  double first = rt_gemm_bf16_dot_gain();
  for (int t = 0; t < 5; t++) {
    double g = rt_gemm_bf16_dot_gain();
    checks++;
    if (!(g >= 0 && g < 100) || (g > 0) != usable || (g >= RT_GEMM_BF16_DOT_PAYS) != (first >= RT_GEMM_BF16_DOT_PAYS)) {
      printf("FAIL: vdpbf16ps probe: gain %.3f after %.3f (AVX512_BF16 usable: %d)\n", g, first, usable);
      failures++;
    }
  }
  printf("rt_gemm_test: vdpbf16ps multiply-adds per cycle over FMA's: %.2f (the AVX512_BF16 kernel %s)\n", first,
         first >= RT_GEMM_BF16_DOT_PAYS ? "pays" : "does not pay");
  if (usable && rt_isa_level() < RT_ISA_AMX) /* no AMX: the default is the kernel the probe picks */
    check_bf16_default(first >= RT_GEMM_BF16_DOT_PAYS ? "avx512" : "f32");
}

/* The split over threads (rt_gemm_split): two threads cut the long side as before; many threads
 * on a square product take a grid of row and column slices; a product that reads A in place
 * keeps its columns whole; a prime thread count gives a single row or column of slices. */
static void check_split(void) {
  struct {
    int64_t m, n, k;
    int threads, rows_only, rows, cols; /* rows 0: any grid with both sides above 1 */
  } cases[] = {
      {4096, 64, 512, 2, 0, 2, 1},  {64, 4096, 512, 2, 0, 1, 2},   {2048, 2048, 2048, 16, 0, 0, 0},
      {4096, 64, 64, 4, 1, 4, 1},   {1024, 1024, 1024, 4, 0, 2, 2}, {1000, 1000, 300, 7, 0, -1, -1},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    rt_gemm_grid g = rt_gemm_split(cases[i].m, cases[i].n, cases[i].k, 14, 32, cases[i].threads, 16.0,
                                   cases[i].rows_only);
    int ok = g.rows * g.cols == cases[i].threads;
    if (cases[i].rows > 0)
      ok = ok && g.rows == cases[i].rows && g.cols == cases[i].cols;
    else if (cases[i].rows == 0)
      ok = ok && g.rows > 1 && g.cols > 1;
    else
      ok = ok && (g.rows == 1 || g.cols == 1);
    checks++;
    if (!ok) {
      printf("FAIL split %lldx%lldx%lld on %d threads: grid %d x %d\n", (long long)cases[i].m,
             (long long)cases[i].n, (long long)cases[i].k, cases[i].threads, g.rows, g.cols);
      failures++;
    }
  }
}

/* The same bits on 1, 4 and 6 threads (grids 2 x 2 and 2 x 3 or 3 x 2 for these shapes), f32
 * and bf16: each C element's sum runs over the same depth panels in the same order whatever
 * rectangle holds it. */
static void check_grid_bits(hlo_context *ctx4, hlo_context *ctx6) {
  int64_t m = 900, n = 700, k = 333;
  uint64_t seed = 77;
  float *a = malloc(sizeof(float) * (size_t)(m * k)), *b = malloc(sizeof(float) * (size_t)(k * n));
  uint16_t *ah = malloc(2 * (size_t)(m * k)), *bh = malloc(2 * (size_t)(k * n));
  float *c[3];
  for (int64_t i = 0; i < m * k; i++)
    a[i] = (float)next_value(&seed), ah[i] = to_bf16(next_value(&seed));
  for (int64_t i = 0; i < k * n; i++)
    b[i] = (float)next_value(&seed), bh[i] = to_bf16(next_value(&seed));
  hlo_context *ctxs[3] = {NULL, ctx4, ctx6};
  for (int form = 0; form < 2; form++) {
    for (int t = 0; t < 3; t++) {
      c[t] = malloc(sizeof(float) * (size_t)(m * n));
      if (form == 0)
        hlo_rt_gemm_f32(ctxs[t], m, n, k, a, k, b, n, c[t], n);
      else
        hlo_rt_gemm_strided_bf16(ctxs[t], 1, m, n, k, ah, 0, k, 1, bh, 0, n, 1, c[t], NULL);
    }
    for (int t = 1; t < 3; t++) {
      checks++;
      if (memcmp(c[0], c[t], sizeof(float) * (size_t)(m * n)) != 0) {
        printf("FAIL %s %lldx%lldx%lld: %d threads give other bits than one\n", form ? "bf16" : "f32",
               (long long)m, (long long)n, (long long)k, t == 1 ? 4 : 6);
        failures++;
      }
    }
    for (int t = 0; t < 3; t++)
      free(c[t]);
  }
  free(a);
  free(b);
  free(ah);
  free(bh);
}

/* Few columns and many rows (run transposed, A read in place:
 * rt_gemm_small.h gs_swap_pays): f32 and bf16, A row-major (dot products) and A with its rows
 * side by side (depth-major), every column count to 16, with the bf16 result rounded; each
 * against the exact product, and the same bits on 1, 4 and 6 threads. */
static void check_few_columns(hlo_context *ctx4, hlo_context *ctx6) {
  int64_t m = 300, k = 200;
  uint64_t seed = 991;
  float *a = malloc(sizeof(float) * (size_t)(m * k)), *b = malloc(sizeof(float) * (size_t)(k * 16));
  uint16_t *ah = malloc(2 * (size_t)(m * k)), *bh = malloc(2 * (size_t)(k * 16)), *out = malloc(2 * (size_t)(m * 16));
  float *c[3], *scratch = malloc(sizeof(float) * (size_t)(m * 16));
  for (int64_t i = 0; i < m * k; i++)
    ah[i] = to_bf16(next_value(&seed)), a[i] = (float)from_bf16(ah[i]);
  for (int64_t i = 0; i < k * 16; i++)
    bh[i] = to_bf16(next_value(&seed)), b[i] = (float)from_bf16(bh[i]);
  hlo_context *ctxs[3] = {NULL, ctx4, ctx6};
  for (int64_t n = 1; n <= 16; n++)
    for (int form = 0; form < 4; form++) {
      int bf = form >= 2, depth_major = form % 2;
      int64_t ars = depth_major ? 1 : k, acs = depth_major ? m : 1;
      for (int t = 0; t < 3; t++) {
        c[t] = malloc(sizeof(float) * (size_t)(m * n));
        if (bf)
          hlo_rt_gemm_strided_bf16(ctxs[t], 1, m, n, k, ah, 0, ars, acs, bh, 0, n, 1, c[t], NULL);
        else
          hlo_rt_gemm_strided_f32(ctxs[t], 1, m, n, k, a, 0, ars, acs, b, 0, n, 1, c[t]);
      }
      char what[96];
      snprintf(what, sizeof what, "%s few columns, A %s, %lldx%lldx%lld", bf ? "bf16" : "f32",
               depth_major ? "depth-major" : "row-major", (long long)m, (long long)n, (long long)k);
      CHECK_PRODUCT(float, what, m, n, k, a, ars, acs, b, n, 1, c[0], n, FLT_EPSILON);
      /* With a bf16 result, c is scratch the kernel may leave unwritten (hlo/rt_abi.def): the
       * rounded result is checked against the f32 sums of the call without one. */
      if (bf)
        hlo_rt_gemm_strided_bf16(NULL, 1, m, n, k, ah, 0, ars, acs, bh, 0, n, 1, scratch, out);
      for (int64_t i = 0; bf && i < m * n; i++)
        if (out[i] != to_bf16(c[0][i])) {
          printf("FAIL %s: out[%lld] = 0x%04x, the rounded sum 0x%04x\n", what, (long long)i, out[i],
                 to_bf16(c[0][i]));
          failures++;
          break;
        }
      for (int t = 1; t < 3; t++) {
        checks++;
        if (memcmp(c[0], c[t], sizeof(float) * (size_t)(m * n)) != 0) {
          printf("FAIL %s: %d threads give other bits than one\n", what, t == 1 ? 4 : 6);
          failures++;
        }
      }
      for (int t = 0; t < 3; t++)
        free(c[t]);
    }
  free(a), free(b), free(ah), free(bh), free(out), free(scratch);
}

/* Results written with non-temporal stores (rt_gemm_impl.h `streams`: a C of
 * HLO_RT_NONTEMPORAL_MIN_BYTES or more, 64-byte aligned, rows a multiple of 64 bytes, one depth
 * panel; unit.rt_gemm_test.nontemporal sets the size to 1 byte so that these small products
 * stream): batched f32 and f64 products of full, edge and partial tiles, and a plain f32
 * product, into an aligned C and into the same C one element off (never streamed); each
 * against the exact product, and the two the same bits. */
static void check_streamed(hlo_context *ctx) {
  static const int64_t shapes[][4] = {{3, 192, 48, 32}, {2, 30, 96, 200}, {1, 20, 32, 7}, {4, 17, 80, 300}};
  uint64_t seed = 4242;
  for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++)
    for (int wide = 0; wide < 2; wide++) {
      int64_t batch = shapes[s][0], m = shapes[s][1], n = shapes[s][2], k = shapes[s][3], cn = batch * m * n;
      size_t es = wide ? sizeof(double) : sizeof(float);
      double *ad = malloc(sizeof(double) * (size_t)(m * k)), *bd = malloc(sizeof(double) * (size_t)(batch * k * n));
      float *af = malloc(sizeof(float) * (size_t)(m * k)), *bf = malloc(sizeof(float) * (size_t)(batch * k * n));
      char *aligned = aligned_alloc(64, (size_t)(cn + 16) * es), *off = aligned_alloc(64, (size_t)(cn + 16) * es);
      for (int64_t i = 0; i < m * k; i++)
        ad[i] = next_value(&seed), af[i] = (float)ad[i];
      for (int64_t i = 0; i < batch * k * n; i++)
        bd[i] = next_value(&seed), bf[i] = (float)bd[i];
      char *outs[2] = {aligned, off + es};
      for (int o = 0; o < 2; o++)
        if (wide)
          hlo_rt_gemm_strided_f64(ctx, batch, m, n, k, ad, 0, k, 1, bd, k * n, n, 1, (double *)outs[o]);
        else if (batch == 1 && o == 0)
          hlo_rt_gemm_f32(ctx, m, n, k, af, k, bf, n, (float *)outs[o], n);
        else
          hlo_rt_gemm_strided_f32(ctx, batch, m, n, k, af, 0, k, 1, bf, k * n, n, 1, (float *)outs[o]);
      char what[96];
      snprintf(what, sizeof what, "streamed %s %lldx%lldx%lldx%lld", wide ? "f64" : "f32", (long long)batch,
               (long long)m, (long long)n, (long long)k);
      for (int64_t t = 0; t < batch; t++)
        if (wide)
          CHECK_PRODUCT(double, what, m, n, k, ad, k, 1, bd + t * k * n, n, 1, (double *)aligned + t * m * n, n,
                        DBL_EPSILON);
        else
          CHECK_PRODUCT(float, what, m, n, k, af, k, 1, bf + t * k * n, n, 1, (float *)aligned + t * m * n, n,
                        FLT_EPSILON);
      checks++;
      if (memcmp(outs[0], outs[1], (size_t)cn * es) != 0) {
        printf("FAIL %s: the aligned (streamed) and unaligned results differ\n", what);
        failures++;
      }
      free(ad), free(bd), free(af), free(bf), free(aligned), free(off);
    }
}

int main(void) {
  check_isa_cap();
  check_empty();
  check_hand();
  run_sizes(NULL);
  hlo_context *ctx = NULL;
  hlo_context_options opts;
  hlo_context_options_init(&opts);
  opts.num_threads = 4;
  hlo_status st = hlo_context_create(&opts, &ctx);
  if (st) {
    printf("FAIL: context: %s\n", hlo_status_message(st));
    hlo_status_free(st);
    return 1;
  }
  run_sizes(ctx);
  hlo_context *ctx6 = NULL;
  opts.num_threads = 6;
  st = hlo_context_create(&opts, &ctx6);
  if (st) {
    printf("FAIL: context: %s\n", hlo_status_message(st));
    hlo_status_free(st);
    return 1;
  }
  check_split();
  check_bf16_probe();
  check_grid_bits(ctx, ctx6);
  check_few_columns(ctx, ctx6);
  check_streamed(ctx);
  check_streamed(NULL);
  hlo_context_destroy(ctx6);
  hlo_context_destroy(ctx);
  printf("rt_gemm_test: %d checks, %d failures\n", checks, failures);
  return failures ? 1 : 0;
}
