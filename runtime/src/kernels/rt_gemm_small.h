/* rt_gemm_small.h — products of few rows (at most GS_MAX_M rows of A) with B read where it
 * lies, for rt_gemm.c (f32) and rt_gemm_bf16.c (bf16): not a public header, and each file
 * instantiates the kernels for its own element type (GS_KERNELS).
 *
 * With few rows each element of B is used at most GS_MAX_M times, so packing B (a read and
 * a write of every element, zero padding, then a read of the copy) costs more than the
 * product: gemma3's call spent 55 % of its time packing B (docs/performance-gemm.md, "Fourth
 * round").  Here A's rows come as an f32 copy (`af`, zero rows padding it to the tile's
 * height) and B is read in place 16 elements at a time (bf16 widened exactly to f32) into
 * tiles of f32 FMA accumulators:
 * - along the depth when B's depth is contiguous (a transposed B: each result a dot product,
 *   its 16 lanes summed in a fixed tree; 4 x 4 tiles; the next 4 columns prefetched);
 * - along the columns when B's columns are contiguous (row-major, or offset tables whose
 *   columns come in runs): tiles of 4 x 64 to 16 x 16 (tall tiles: widening a bf16 vector
 *   takes two operations on the FMA ports), B's row GS_PF_ROWS ahead prefetched (rows lie a
 *   row stride apart, which no hardware streamer follows); the last columns, and tiles whose
 *   columns are not one run, one element at a time.
 * Each result sums in a fixed order and the callers split columns at multiples of GS_RUN,
 * so on one host the bits depend on the shape alone, not on the thread count.
 */
#ifndef HLOC_RT_GEMM_SMALL_H
#define HLOC_RT_GEMM_SMALL_H

#include <stdint.h>
#include <string.h>

#include "hlo/rt.h"
#include "hlo/rt_parallel.h"
#include "rt_isa.h"

#define GS_MAX_M HLO_RT_GEMM_FEW_ROWS /* rows of A up to which a product takes this path */
#define GS_RUN 64     /* columns: callers split at multiples; offset tables in runs of it */
#define GS_PF_ROWS 8  /* rows of a row-major B prefetched ahead */

typedef float gs_v16f __attribute__((vector_size(64), aligned(4)));
typedef uint16_t gs_v16h __attribute__((vector_size(32), aligned(2)));
typedef uint32_t gs_v16u __attribute__((vector_size(64)));

/* 16 elements at p as f32: loaded (f32), or widened (bf16 is the upper half of an f32).
 * Macros: a function returning a 64-byte vector has another ABI with and without AVX-512. */
#define GS_LOAD16_F32(p) (*(const gs_v16f *)(p))
#define GS_LOAD16_BF16(p)                                                                        \
  ({                                                                                             \
    gs_v16u w_ = __builtin_convertvector(*(const gs_v16h *)(p), gs_v16u) << 16;                  \
    gs_v16f f_;                                                                                  \
    memcpy(&f_, &w_, sizeof f_);                                                                 \
    f_;                                                                                          \
  })
#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
/* The same in one vpmovzxwd and one shift (GCC splits the generic conversion into 256-bit
 * halves and joins them again: 7 instructions). */
#define GS_LOAD16_BF16_AVX512(p)                                                                 \
  ((gs_v16f)_mm512_castsi512_ps(                                                                 \
      _mm512_slli_epi32(_mm512_cvtepu16_epi32(_mm256_loadu_si256((const __m256i *)(p))), 16)))
#endif

/* Where the kernels find B: element (p, j) at b[dep[p] + col[j]] with offset tables, else at
 * b[p*stride + j] (columns contiguous) or b[j*stride + p] (depth contiguous). */
typedef struct gs_b {
  const void *b;
  int64_t stride;
  const int64_t *dep, *col;
} gs_b;

/* C[rows x cols] (c at B's column c0, row stride ldc) = af[rows x k] · B's columns
 * [c0, c0 + cols); af holds a whole number of tiles of rows (row stride k). */
typedef void (*gs_fn)(const float *af, int64_t rows, int64_t k, const gs_b *bb, int64_t c0, int64_t cols, float *c,
                      int64_t ldc);

/* The 16 lanes at v summed as a fixed tree. */
static inline float gs_hsum16(const float *v) {
  float t[8];
  for (int i = 0; i < 8; i++)
    t[i] = v[i] + v[i + 8];
  for (int i = 0; i < 4; i++)
    t[i] += t[i + 4];
  return (t[0] + t[2]) + (t[1] + t[3]);
}

/* Whether n offsets from col on follow one another (a contiguous run of columns). */
static inline int gs_cols_contiguous(const int64_t *col, int64_t n) {
  for (int64_t x = 1; x < n; x++)
    if (col[x] != col[0] + x)
      return 0;
  return 1;
}

/* Rows of the column kernel's tile for m rows: the shortest of 4, 8, 12, 16 that holds them. */
static inline int gs_tile_rows(int64_t m) { return m <= 4 ? 4 : m <= 8 ? 8 : m <= 12 ? 12 : 16; }

/* One element at a time (a gs_fn): the column kernel's last columns and its tiles whose
 * columns are not one run. */
#define GS_SCALAR(NAME, TB, TOF32)                                                                       \
  static void NAME(const float *af, int64_t rows, int64_t k, const gs_b *bb, int64_t c0, int64_t cols, float *c, \
                   int64_t ldc) {                                                                        \
    const TB *b = (const TB *)bb->b;                                                                     \
    for (int64_t i = 0; i < rows; i++)                                                                   \
      for (int64_t x = 0; x < cols; x++) {                                                               \
        float sum = 0;                                                                                   \
        int64_t at = bb->col ? bb->col[c0 + x] : c0 + x;                                                 \
        for (int64_t p = 0; p < k; p++)                                                                  \
          sum += af[i * k + p] * TOF32(b[(bb->dep ? bb->dep[p] : p * bb->stride) + at]);                 \
        c[i * ldc + x] = sum;                                                                            \
      }                                                                                                  \
  }

/* B's depth contiguous (column j at b + j*stride): 4 x 4 tiles of dot products; af holds a
 * multiple of 4 rows.  Columns past the last repeat it (their results are dropped). */
#define GS_DOTS(NAME, ATTR, TB, LOAD16, TOF32)                                                           \
  ATTR static void NAME(const float *af, int64_t rows, int64_t k, const gs_b *bb, int64_t c0, int64_t cols, \
                        float *c, int64_t ldc) {                                                         \
    const int64_t cs = bb->stride;                                                                       \
    const TB *b = (const TB *)bb->b + c0 * cs;                                                           \
    for (int64_t j = 0; j < cols; j += 4) {                                                              \
      const TB *col[4];                                                                                  \
      for (int x = 0; x < 4; x++)                                                                        \
        col[x] = b + (j + x < cols ? j + x : cols - 1) * cs;                                             \
      for (int64_t i = 0; i < rows; i += 4) {                                                            \
        gs_v16f acc[4][4];                                                                               \
        _Pragma("GCC unroll 4") for (int y = 0; y < 4; y++)                                              \
          _Pragma("GCC unroll 4") for (int x = 0; x < 4; x++) acc[y][x] = (gs_v16f){0};                  \
        int64_t p = 0;                                                                                   \
        for (; p + 16 <= k; p += 16) {                                                                   \
          gs_v16f bv[4];                                                                                 \
          _Pragma("GCC unroll 4") for (int x = 0; x < 4; x++) {                                          \
            __builtin_prefetch(col[x] + 4 * cs + p, 0, 3); /* the next 4 columns */                      \
            bv[x] = LOAD16(col[x] + p);                                                                  \
          }                                                                                              \
          _Pragma("GCC unroll 4") for (int y = 0; y < 4; y++) {                                          \
            gs_v16f av = *(const gs_v16f *)(af + (i + y) * k + p);                                       \
            _Pragma("GCC unroll 4") for (int x = 0; x < 4; x++) acc[y][x] += av * bv[x];                 \
          }                                                                                              \
        }                                                                                                \
        for (int y = 0; y < 4 && i + y < rows; y++)                                                      \
          for (int x = 0; x < 4 && j + x < cols; x++) {                                                  \
            float lanes[16];                                                                             \
            memcpy(lanes, &acc[y][x], sizeof lanes);                                                     \
            float sum = gs_hsum16(lanes);                                                                \
            for (int64_t q = p; q < k; q++)                                                              \
              sum += af[(i + y) * k + q] * TOF32(col[x][q]);                                             \
            c[(i + y) * ldc + j + x] = sum;                                                              \
          }                                                                                              \
      }                                                                                                  \
    }                                                                                                    \
  }

/* B's columns contiguous: tiles of R rows by V vectors of 16 columns, each depth one B vector
 * per 16 columns and one broadcast of A per row; af holds a multiple of R rows. */
#define GS_COLS(NAME, ATTR, TB, LOAD16, SCALAR, R, V)                                                    \
  ATTR static void NAME(const float *af, int64_t rows, int64_t k, const gs_b *bb, int64_t c0, int64_t cols, \
                        float *c, int64_t ldc) {                                                         \
    enum { line = 64 / (16 * (int)sizeof(TB)) }; /* vectors per cache line */                           \
    int64_t full = cols / (16 * V) * (16 * V);                                                           \
    for (int64_t j = 0; j < full; j += 16 * V) {                                                         \
      if (bb->col && !gs_cols_contiguous(bb->col + c0 + j, 16 * V)) {                                    \
        SCALAR(af, rows, k, bb, c0 + j, 16 * V, c + j, ldc);                                             \
        continue;                                                                                        \
      }                                                                                                  \
      const TB *base = (const TB *)bb->b + (bb->col ? bb->col[c0 + j] : c0 + j);                         \
      for (int64_t i = 0; i < rows; i += R) {                                                            \
        gs_v16f acc[R][V];                                                                               \
        _Pragma("GCC unroll 16") for (int y = 0; y < R; y++)                                             \
          _Pragma("GCC unroll 4") for (int x = 0; x < V; x++) acc[y][x] = (gs_v16f){0};                  \
        for (int64_t p = 0; p < k; p++) {                                                                \
          int64_t ahead = p + GS_PF_ROWS < k ? p + GS_PF_ROWS : p;                                       \
          const TB *row = base + (bb->dep ? bb->dep[p] : p * bb->stride);                                \
          const TB *next = base + (bb->dep ? bb->dep[ahead] : ahead * bb->stride);                       \
          gs_v16f bv[V];                                                                                 \
          _Pragma("GCC unroll 4") for (int x = 0; x < V; x += line) __builtin_prefetch(next + 16 * x, 0, 3); \
          _Pragma("GCC unroll 4") for (int x = 0; x < V; x++) bv[x] = LOAD16(row + 16 * x);              \
          _Pragma("GCC unroll 16") for (int y = 0; y < R; y++) {                                         \
            gs_v16f av = af[(i + y) * k + p] - (gs_v16f){0};                                             \
            _Pragma("GCC unroll 4") for (int x = 0; x < V; x++) acc[y][x] += av * bv[x];                 \
          }                                                                                              \
        }                                                                                                \
        for (int y = 0; y < R && i + y < rows; y++)                                                      \
          memcpy(c + (i + y) * ldc + j, acc[y], sizeof acc[y]);                                          \
      }                                                                                                  \
    }                                                                                                    \
    SCALAR(af, rows, k, bb, c0 + full, cols - full, c + full, ldc);                                      \
  }

/* A row-major B (no tables) with at most 4 rows of A: B read row after row in blocks of
 * GS_GEMV_BLOCK columns, each row's block one contiguous run that the hardware prefetchers
 * follow, the rows of C accumulating in place (in L1); the column kernels instead walk down
 * B's rows a row stride apart, which a tall B (4096 x 8192 f32: 32 KB apart) makes the
 * memory's slow case.  Each element is the same FMA chain over the depths in order as in the
 * column kernels, so the bits are theirs. */
#define GS_GEMV_BLOCK 1024
#define GS_GEMV(NAME, ATTR, TB, LOAD16, SCALAR)                                                          \
  ATTR static void NAME(const float *af, int64_t rows, int64_t k, const gs_b *bb, int64_t c0, int64_t cols, \
                        float *c, int64_t ldc) {                                                         \
    const TB *b = (const TB *)bb->b + c0;                                                                \
    int64_t full = cols / 16 * 16;                                                                       \
    for (int64_t j0 = 0; j0 < full; j0 += GS_GEMV_BLOCK) {                                               \
      int64_t w = full - j0 < GS_GEMV_BLOCK ? full - j0 : GS_GEMV_BLOCK;                                 \
      for (int64_t i = 0; i < rows; i++)                                                                 \
        memset(c + i * ldc + j0, 0, sizeof(float) * (size_t)w);                                          \
      int64_t p = 0;                                                                                     \
      for (; p + 4 <= k; p += 4) { /* four rows of B per pass over C: a quarter of the C traffic */      \
        const TB *r0 = b + p * bb->stride + j0, *r1 = r0 + bb->stride, *r2 = r1 + bb->stride,              \
                 *r3 = r2 + bb->stride;                                                                  \
        for (int64_t i = 0; i < rows; i++) {                                                             \
          const float *a = af + i * k + p;                                                               \
          gs_v16f a0 = a[0] - (gs_v16f){0}, a1 = a[1] - (gs_v16f){0}, a2 = a[2] - (gs_v16f){0},          \
                  a3 = a[3] - (gs_v16f){0};                                                              \
          float *ci = c + i * ldc + j0;                                                                  \
          for (int64_t x = 0; x < w; x += 16) {                                                          \
            gs_v16f cv;                                                                                  \
            memcpy(&cv, ci + x, sizeof cv);                                                              \
            cv += a0 * LOAD16(r0 + x);                                                                   \
            cv += a1 * LOAD16(r1 + x);                                                                   \
            cv += a2 * LOAD16(r2 + x);                                                                   \
            cv += a3 * LOAD16(r3 + x);                                                                   \
            memcpy(ci + x, &cv, sizeof cv);                                                              \
          }                                                                                              \
        }                                                                                                \
      }                                                                                                  \
      for (; p < k; p++) {                                                                               \
        const TB *row = b + p * bb->stride + j0;                                                         \
        for (int64_t i = 0; i < rows; i++) {                                                             \
          gs_v16f av = af[i * k + p] - (gs_v16f){0};                                                     \
          float *ci = c + i * ldc + j0;                                                                  \
          for (int64_t x = 0; x < w; x += 16) {                                                          \
            gs_v16f cv;                                                                                  \
            memcpy(&cv, ci + x, sizeof cv);                                                              \
            cv += av * LOAD16(row + x);                                                                  \
            memcpy(ci + x, &cv, sizeof cv);                                                              \
          }                                                                                              \
        }                                                                                                \
      }                                                                                                  \
    }                                                                                                    \
    SCALAR(af, rows, k, bb, c0 + full, cols - full, c + full, ldc);                                      \
  }

/* One instruction set's kernels as the table PREFIX_SUF: the dots kernel, the column kernels
 * of 4, 8, 12 and 16 rows (index gs_tile_rows / 4), then the row-streaming one (index 5). */
#define GS_SET(PREFIX, SUF, ATTR, TB, LOAD16, TOF32, SCALAR)                                             \
  GS_DOTS(PREFIX##_dots_##SUF, ATTR, TB, LOAD16, TOF32)                                                  \
  GS_COLS(PREFIX##_cols4_##SUF, ATTR, TB, LOAD16, SCALAR, 4, 4)                                          \
  GS_COLS(PREFIX##_cols8_##SUF, ATTR, TB, LOAD16, SCALAR, 8, 2)                                          \
  GS_COLS(PREFIX##_cols12_##SUF, ATTR, TB, LOAD16, SCALAR, 12, 2)                                        \
  GS_COLS(PREFIX##_cols16_##SUF, ATTR, TB, LOAD16, SCALAR, 16, 1)                                        \
  GS_GEMV(PREFIX##_gemv_##SUF, ATTR, TB, LOAD16, SCALAR)                                                 \
  static const gs_fn PREFIX##_##SUF[6] = {PREFIX##_dots_##SUF,   PREFIX##_cols4_##SUF,  PREFIX##_cols8_##SUF, \
                                          PREFIX##_cols12_##SUF, PREFIX##_cols16_##SUF, PREFIX##_gemv_##SUF};

/* Every kernel for the element type TB (TOF32: one element as f32; LOAD16_512: the AVX-512
 * form of LOAD16) and PREFIX_kernel(index into the table), which picks the host's. */
#if defined(__x86_64__) && defined(__GNUC__)
#define GS_KERNELS(PREFIX, TB, LOAD16, LOAD16_512, TOF32)                                                \
  GS_SCALAR(PREFIX##_scalar, TB, TOF32)                                                                  \
  GS_SET(PREFIX, base, , TB, LOAD16, TOF32, PREFIX##_scalar)                                             \
  GS_SET(PREFIX, avx2, __attribute__((target("avx2,fma"))), TB, LOAD16, TOF32, PREFIX##_scalar)          \
  GS_SET(PREFIX, avx512, __attribute__((target("avx512f,avx2,fma"))), TB, LOAD16_512, TOF32, PREFIX##_scalar) \
  static gs_fn PREFIX##_kernel(int at) {                                                                 \
    int level = rt_isa_level();                                                                          \
    return level >= RT_ISA_AVX512 ? PREFIX##_avx512[at]                                                  \
           : level == RT_ISA_AVX2 ? PREFIX##_avx2[at]                                                    \
                                  : PREFIX##_base[at];                                                   \
  }
#else
#define GS_KERNELS(PREFIX, TB, LOAD16, LOAD16_512, TOF32)                                                \
  GS_SCALAR(PREFIX##_scalar, TB, TOF32)                                                                  \
  GS_SET(PREFIX, base, , TB, LOAD16, TOF32, PREFIX##_scalar)                                             \
  static gs_fn PREFIX##_kernel(int at) { return PREFIX##_base[at]; }
#endif

/* Whether B (strides, or offset tables when col is not NULL) suits the kernels: its depth or
 * its columns contiguous, or tables whose columns come in runs of GS_RUN. */
static inline int gs_b_ok(int64_t n, int64_t rs, int64_t cs, const int64_t *col) {
  if (!col)
    return rs == 1 || cs == 1;
  for (int64_t j = 0; j + GS_RUN <= n; j += GS_RUN)
    if (!gs_cols_contiguous(col + j, GS_RUN))
      return 0;
  return 1;
}

/* Slice u of `parts` of n columns, at multiples of GS_RUN: [*c0, *c1). */
static inline void gs_slice(int64_t n, int64_t u, int64_t parts, int64_t *c0, int64_t *c1) {
  int64_t runs = (n + GS_RUN - 1) / GS_RUN;
  *c0 = runs * u / parts * GS_RUN;
  *c1 = runs * (u + 1) / parts * GS_RUN;
  *c1 = *c1 < n ? *c1 : n;
}

/* The driver of the few-rows path for one GEMM file's job types (a template, as
 * rt_gemm_impl.h): PREFIX_columns (columns [c0, c1) of one product: A's rows widened into an
 * f32 copy padded with zero rows to the tile, the kernel, then FINISH on the finished part),
 * PREFIX_run (a hlo_rt_range_fn over batches, or over slices of one batch's columns cut at
 * multiples of GS_RUN) and PREFIX_batches (every batch: in parallel when there are enough,
 * else each batch's columns over the threads).  JOB has the fields m, n, kk, a, a_rs, a_cs,
 * a_row, a_dep, b, b_rs, b_cs, b_dep, b_col and c (f32, dense: row stride n); A_F32(x)
 * widens an element of A; KERNEL(index) picks the kernel; BATCH_AT, FINISH, NAIVE and
 * THREADS are the file's own functions. */
#define GS_DRIVER(PREFIX, JOB, BATCH_JOB, A_F32, KERNEL, BATCH_AT, FINISH, NAIVE, THREADS)                \
  static int PREFIX##_columns(const JOB *j, int64_t c0, int64_t c1) {                                    \
    int dots = !j->b_col && j->b_rs == 1, tile = dots ? 4 : gs_tile_rows(j->m);                          \
    int at = dots ? 0 : !j->b_col && j->m <= 4 ? 5 : tile / 4;                                           \
    int64_t padded = (j->m + tile - 1) / tile * tile;                                                    \
    float *af = hlo_rt_alloc(NULL, (int64_t)sizeof(float) * padded * j->kk);                             \
    if (!af)                                                                                             \
      return 0;                                                                                          \
    for (int64_t i = 0; i < padded; i++)                                                                 \
      for (int64_t p = 0; p < j->kk; p++)                                                                \
        af[i * j->kk + p] = i >= j->m    ? 0.0f                                                          \
                            : j->a_row   ? A_F32(j->a[j->a_row[i] + j->a_dep[p]])                        \
                                         : A_F32(j->a[i * j->a_rs + p * j->a_cs]);                       \
    gs_b bb = {.b = j->b, .stride = dots ? j->b_cs : j->b_rs, .dep = j->b_dep, .col = j->b_col};          \
    KERNEL(at)(af, j->m, j->kk, &bb, c0, c1 - c0, (float *)j->c + c0, j->n);                             \
    FINISH(j, 0, j->m, c0, c1 - c0);                                                                     \
    hlo_rt_free(NULL, af);                                                                               \
    return 1;                                                                                            \
  }                                                                                                      \
  typedef struct PREFIX##_job {                                                                          \
    const BATCH_JOB *bj;                                                                                 \
    int64_t parts, t; /* parts > 0: slices of batch t's columns; else whole batches */                   \
  } PREFIX##_job;                                                                                        \
  static void PREFIX##_run(void *arg, int64_t begin, int64_t end) {                                      \
    const PREFIX##_job *s = arg;                                                                         \
    for (int64_t u = begin; u < end; u++) {                                                              \
      JOB j = BATCH_AT(s->bj, s->parts ? s->t : u);                                                      \
      int64_t c0 = 0, c1 = j.n;                                                                          \
      if (s->parts)                                                                                      \
        gs_slice(j.n, u, s->parts, &c0, &c1);                                                            \
      if (c1 > c0 && !PREFIX##_columns(&j, c0, c1)) {                                                    \
        NAIVE(&j, 0, j.m, c0, c1 - c0);                                                                  \
        FINISH(&j, 0, j.m, c0, c1 - c0);                                                                 \
      }                                                                                                  \
    }                                                                                                    \
  }                                                                                                      \
  static void PREFIX##_batches(hlo_context *ctx, int64_t batch, const BATCH_JOB *bj) {                   \
    int threads = THREADS(ctx, bj->proto.m, bj->proto.n, bj->proto.kk);                                  \
    PREFIX##_job s = {.bj = bj};                                                                         \
    if (batch > 1 && (batch >= threads || threads == 1)) {                                               \
      hlo_rt_parallel_for(threads > 1 ? ctx : NULL, batch, PREFIX##_run, &s);                            \
      return;                                                                                            \
    }                                                                                                    \
    s.parts = threads;                                                                                   \
    for (s.t = 0; s.t < batch; s.t++)                                                                    \
      hlo_rt_parallel_for(threads > 1 ? ctx : NULL, threads, PREFIX##_run, &s);                          \
  }
/* GS_DRIVER with its arguments expanded first (a PREFIX written as a macro call). */
#define GS_DRIVER_EXPANDED(...) GS_DRIVER(__VA_ARGS__)

#endif
