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
 *   its 16 lanes summed in a fixed tree; 4 x 4 tiles; the next 4 columns prefetched; blocks
 *   of columns that every row tile runs over in turn);
 * - along the columns when B's columns are contiguous (row-major, or offset tables whose
 *   columns come in runs): tiles of 4 x 64 to 16 x 16 (tall tiles: widening a bf16 vector
 *   takes two operations on the FMA ports), B's row GS_PF_ROWS ahead prefetched (rows lie a
 *   row stride apart, which no hardware streamer follows); the last columns, and tiles whose
 *   columns are not one run, one element at a time.  Hosts with 16 vector registers (AVX2,
 *   SSE) take 5 to 16 rows through a panel kernel instead: B widened once per block into an
 *   f32 buffer, then tiles of 6 or 4 rows (2 with SSE) by 16 columns from it.
 * Each result sums in a fixed order and the callers split columns at multiples of GS_RUN,
 * so on one host the bits depend on the shape alone, not on the thread count.  Products of
 * few columns (at most GS_MAX_M) and more rows run here too, transposed: C^T = B^T . A^T, A
 * read in place as the kernels' B, each thread's rows of C transposed back from a buffer
 * (gs_swap_pays, GS_SPLIT's SWAPPED).
 */
#ifndef HLOC_RT_GEMM_SMALL_H
#define HLOC_RT_GEMM_SMALL_H

#include <stdint.h>
#include <string.h>

#include "hlo/rt.h"
#include "hlo/rt_parallel.h"
#include "rt_gemm_internal.h"
#include "rt_isa.h"

#define GS_MAX_M 16   /* rows of A up to which a product takes this path */
#define GS_RUN 64     /* columns: callers split at multiples; offset tables in runs of it */
#define GS_DOTS_BLOCK_BYTES (128 * 1024) /* of B per column block of the dots kernels (in L2) */
#define GS_PF_ROWS 32 /* rows of a row-major B prefetched ahead (8: 11 x 6912 x 1152 from memory 20 % slower) */

/* Vectors of 16, 8 and 4 f32 lanes: one register of AVX-512, AVX2 and SSE.  Each kernel set
 * works on its CPU's own width (GCC keeps a generic vector wider than the CPU's registers in
 * memory: the AVX2 kernels on 16-lane vectors ran 6x slower than on 8-lane ones). */
typedef float gs_v16f __attribute__((vector_size(64), aligned(4)));
typedef float gs_v8f __attribute__((vector_size(32), aligned(4)));
typedef float gs_v4f __attribute__((vector_size(16), aligned(4)));
typedef uint16_t gs_v16h __attribute__((vector_size(32), aligned(2)));
typedef uint16_t gs_v8h __attribute__((vector_size(16), aligned(2)));
typedef uint16_t gs_v4h __attribute__((vector_size(8), aligned(2)));
typedef uint32_t gs_v16u __attribute__((vector_size(64)));
typedef uint32_t gs_v8u __attribute__((vector_size(32)));
typedef uint32_t gs_v4u __attribute__((vector_size(16)));

/* N elements at p as an N-lane f32 vector: loaded (f32), or widened (bf16 is the upper half of
 * an f32).  Macros: a function returning a wide vector has another ABI with and without the
 * wide registers. */
#define GS_LOAD_F32(N, p) (*(const gs_v##N##f *)(p))
#define GS_LOAD_BF16(N, p) GS_LOAD_BF16_##N(p)
#define GS_LOAD_BF16_4(p) GS_WIDEN_BF16(4, p)
#define GS_LOAD_BF16_16(p) GS_WIDEN_BF16(16, p)
#define GS_WIDEN_BF16(N, p)                                                                      \
  ({                                                                                             \
    gs_v##N##u w_ = __builtin_convertvector(*(const gs_v##N##h *)(p), gs_v##N##u) << 16;         \
    gs_v##N##f f_;                                                                               \
    memcpy(&f_, &w_, sizeof f_);                                                                 \
    f_;                                                                                          \
  })
#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
/* 16 bf16 in one vpmovzxwd and one shift (GCC splits the generic conversion into 256-bit
 * halves and joins them again: 7 instructions). */
#ifndef RT_ISA_EMULATE_AVX512
#define GS_LOAD_BF16_AVX512(N, p)                                                                \
  ((gs_v16f)_mm512_castsi512_ps(                                                                 \
      _mm512_slli_epi32(_mm512_cvtepu16_epi32(_mm256_loadu_si256((const __m256i *)(p))), 16)))
#else /* compiled for AVX2 (rt_isa.h): the generic widening, the same values */
#define GS_LOAD_BF16_AVX512(N, p) GS_WIDEN_BF16(16, p)
#endif
/* 8 bf16 in one vpmovzxwd and one shift (GCC's generic conversion takes 128-bit halves: 4 shuffles). */
#define GS_LOAD_BF16_8(p)                                                                        \
  ((gs_v8f)_mm256_castsi256_ps(_mm256_slli_epi32(_mm256_cvtepu16_epi32(_mm_loadu_si128((const __m128i *)(p))), 16)))
/* 8 and 16 f16 as f32: F16C's vcvtph2ps, exact, NaN quieted, as the scalar conversion. */
#define GS_LOAD_F16_8(p) ((gs_v8f)_mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)(p))))
#ifndef RT_ISA_EMULATE_AVX512
#define GS_LOAD_F16_AVX512(N, p) ((gs_v16f)_mm512_cvtph_ps(_mm256_loadu_si256((const __m256i *)(p))))
#else /* two 8-lane conversions, the same values */
#define GS_LOAD_F16_AVX512(N, p)                                                                 \
  ({                                                                                             \
    gs_v8f lo_ = GS_LOAD_F16_8(p), hi_ = GS_LOAD_F16_8((p) + 8);                                 \
    __builtin_shufflevector(lo_, hi_, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15);      \
  })
#endif
#endif

/* N f16 as f32: GS_LOAD_F16_N, with the instantiating file's scalar F16_TO_F32 for 4 lanes. */
#define GS_LOAD_F16(N, p) GS_LOAD_F16_##N(p)
#define GS_LOAD_F16_4(p)                                                                         \
  ((gs_v4f){F16_TO_F32((p)[0]), F16_TO_F32((p)[1]), F16_TO_F32((p)[2]), F16_TO_F32((p)[3])})

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

/* 16 lanes held as H = 16 / N vectors of N lanes (v[h] holds lanes h*N .. h*N + N-1) summed
 * as one fixed tree whatever N: t[i] = v[i] + v[i + 8], then t[i] += t[i + 4], then
 * (t[0] + t[2]) + (t[1] + t[3]).  In registers: a copy through memory (two 16-byte stores
 * read back as one 32-byte load) stalled store forwarding, 18 % of an 11-row product's time
 * on an AMD EPYC family 25.  Halving a vector (GS_HALF) and adding vectors H / 2 apart are
 * the tree's first steps in lane order. */
#define GS_HALF_16(v) (__builtin_shufflevector(v, v, 0, 1, 2, 3, 4, 5, 6, 7) + __builtin_shufflevector(v, v, 8, 9, 10, 11, 12, 13, 14, 15))
#define GS_HALF_8(v) (__builtin_shufflevector(v, v, 0, 1, 2, 3) + __builtin_shufflevector(v, v, 4, 5, 6, 7))
#define GS_HSUM16(N, v)                                                                          \
  ({                                                                                             \
    enum { H_ = 16 / N };                                                                        \
    gs_v##N##f w_[H_];                                                                           \
    memcpy(w_, v, sizeof w_);                                                                    \
    for (int s_ = H_ / 2; s_ >= 1; s_ /= 2)                                                      \
      for (int h_ = 0; h_ < s_; h_++)                                                            \
        w_[h_] += w_[h_ + s_];                                                                   \
    gs_v4f q_ = GS_TO4_##N(w_[0]);                                                               \
    (q_[0] + q_[2]) + (q_[1] + q_[3]);                                                           \
  })
#define GS_TO4_16(v) GS_HALF_8(GS_HALF_16(v))
#define GS_TO4_8(v) GS_HALF_8(v)
#define GS_TO4_4(v) (v)

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
 * columns are not one run.  One per instruction set (ATTR): compiled for the set's CPU, the
 * multiply-adds are the same fused ones as its vector kernels' (a tail compiled for the
 * baseline rounded each product: the last columns' bits then depended on where each set's
 * strips end, 16 columns with AVX2 and up to 64 with AVX-512). */
#define GS_SCALAR(NAME, ATTR, TB, TOF32)                                                                 \
  ATTR static void NAME(const float *af, int64_t rows, int64_t k, const gs_b *bb, int64_t c0, int64_t cols, float *c, \
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

/* The kernels below take the CPU's vector width N (16, 8 or 4 lanes: VT = gs_vNf) and LOAD(N, p),
 * N elements of B as f32.  A result's sums never depend on N: a column kernel's element is one
 * FMA chain over the depths in order, and a dot product keeps 16 lanes (16 / N vectors). */

/* Columns of B a dots kernel takes as one block: every row tile runs over the block before
 * the next, so the block (bytes_per_column each) is read from memory once and then from L2,
 * and each tile's rows of A stay in L1. */
static inline int64_t gs_dots_block(int64_t bytes_per_column, int dc) {
  int64_t block = (int64_t)GS_DOTS_BLOCK_BYTES / (bytes_per_column > 0 ? bytes_per_column : 1);
  return block < dc ? dc : block / dc * dc;
}

/* B's depth contiguous (column j at b + j*stride): tiles of R rows by DC columns of dot products
 * (each set's tiles: gs_dots_set below); af holds a multiple of R rows.  Columns past the last
 * repeat it (their results are dropped).  Each dot product is 16 lanes over the depths in
 * order, then a fixed tree, whatever the tile. */
#define GS_DOTS(NAME, ATTR, TB, LOAD, N, TOF32, R, DC)                                                   \
  ATTR static void NAME(const float *af, int64_t rows, int64_t k, const gs_b *bb, int64_t c0, int64_t cols, \
                        float *c, int64_t ldc) {                                                         \
    enum { H = 16 / N }; /* vectors per 16 lanes */                                                      \
    const int64_t cs = bb->stride;                                                                       \
    const TB *b = (const TB *)bb->b + c0 * cs;                                                           \
    int64_t block = gs_dots_block(k * (int64_t)sizeof(TB), DC);                                          \
    /* blocks of columns; in each, every row tile over the block's columns */                            \
    for (int64_t j0 = 0; j0 < cols; j0 += block)                                                         \
    for (int64_t i = 0; i < rows; i += R)                                                                \
    for (int64_t j = j0; j < j0 + block && j < cols; j += DC) {                                          \
      const TB *col[DC];                                                                                 \
      for (int x = 0; x < DC; x++)                                                                       \
        col[x] = b + (j + x < cols ? j + x : cols - 1) * cs;                                             \
      gs_v##N##f acc[R][DC][H];                                                                         \
      _Pragma("GCC unroll 16") for (int y = 0; y < R; y++)                                              \
        _Pragma("GCC unroll 4") for (int x = 0; x < DC; x++)                                            \
          _Pragma("GCC unroll 4") for (int h = 0; h < H; h++) acc[y][x][h] = (gs_v##N##f){0};           \
      int64_t p = 0;                                                                                    \
      for (; p + 16 <= k; p += 16) {                                                                    \
        gs_v##N##f bv[DC][H];                                                                           \
        _Pragma("GCC unroll 4") for (int x = 0; x < DC; x++) {                                          \
          __builtin_prefetch(col[x] + 4 * cs + p, 0, 3); /* 4 columns ahead */                          \
          _Pragma("GCC unroll 4") for (int h = 0; h < H; h++) bv[x][h] = LOAD(N, col[x] + p + h * N);   \
        }                                                                                               \
        _Pragma("GCC unroll 16") for (int y = 0; y < R; y++)                                            \
          _Pragma("GCC unroll 4") for (int h = 0; h < H; h++) {                                         \
            gs_v##N##f av = GS_LOAD_F32(N, af + (i + y) * k + p + h * N);                               \
            _Pragma("GCC unroll 4") for (int x = 0; x < DC; x++) acc[y][x][h] += av * bv[x][h];         \
          }                                                                                             \
      }                                                                                                 \
      for (int y = 0; y < R && i + y < rows; y++)                                                       \
        for (int x = 0; x < DC && j + x < cols; x++) {                                                  \
          float sum = GS_HSUM16(N, acc[y][x]);                                                          \
          for (int64_t q = p; q < k; q++)                                                               \
            sum += af[(i + y) * k + q] * TOF32(col[x][q]);                                              \
          c[(i + y) * ldc + j + x] = sum;                                                               \
        }                                                                                               \
    }                                                                                                    \
  }

/* B's columns contiguous: tiles of R rows by V runs of 16 columns (16 V / N vectors), each
 * depth one B vector per N columns and one broadcast of A per row; af holds a multiple of R
 * rows. */
#define GS_COLS(NAME, ATTR, TB, LOAD, N, SCALAR, R, V)                                                   \
  ATTR static void NAME(const float *af, int64_t rows, int64_t k, const gs_b *bb, int64_t c0, int64_t cols, \
                        float *c, int64_t ldc) {                                                         \
    enum { W = 16 * V / N, line = 64 / (int)sizeof(TB) }; /* vectors per tile row; elements per line */ \
    int64_t full = cols / (16 * V) * (16 * V);                                                           \
    for (int64_t j = 0; j < full; j += 16 * V) {                                                         \
      if (bb->col && !gs_cols_contiguous(bb->col + c0 + j, 16 * V)) {                                    \
        SCALAR(af, rows, k, bb, c0 + j, 16 * V, c + j, ldc);                                             \
        continue;                                                                                        \
      }                                                                                                  \
      const TB *base = (const TB *)bb->b + (bb->col ? bb->col[c0 + j] : c0 + j);                         \
      for (int64_t i = 0; i < rows; i += R) {                                                            \
        gs_v##N##f acc[R][W];                                                                            \
        _Pragma("GCC unroll 16") for (int y = 0; y < R; y++)                                             \
          _Pragma("GCC unroll 16") for (int x = 0; x < W; x++) acc[y][x] = (gs_v##N##f){0};              \
        /* the element GS_PF_ROWS depths ahead: in this strip, or past its last depth in the */         \
        /* strips to come (short depths: the next strip's rows; none past the last strip) */              \
        int64_t pf_row = GS_PF_ROWS % k, pf_at = j + GS_PF_ROWS / k * 16 * V;                            \
        for (int64_t p = 0; p < k; p++, pf_row++) {                                                      \
          if (pf_row == k)                                                                               \
            pf_row = 0, pf_at += 16 * V;                                                                 \
          const TB *row = base + (bb->dep ? bb->dep[p] : p * bb->stride);                                \
          int64_t pf_off = bb->dep ? bb->dep[pf_row] : pf_row * bb->stride;                              \
          const TB *next = pf_at == j                 ? base + pf_off                                    \
                           : pf_at < full && !bb->col ? (const TB *)bb->b + c0 + pf_at + pf_off          \
                                                      : row;                                             \
          gs_v##N##f bv[W];                                                                              \
          _Pragma("GCC unroll 4") for (int e = 0; e < 16 * V; e += line) __builtin_prefetch(next + e, 0, 3); \
          _Pragma("GCC unroll 16") for (int x = 0; x < W; x++) bv[x] = LOAD(N, row + N * x);             \
          _Pragma("GCC unroll 16") for (int y = 0; y < R; y++) {                                         \
            gs_v##N##f av = af[(i + y) * k + p] - (gs_v##N##f){0};                                       \
            _Pragma("GCC unroll 16") for (int x = 0; x < W; x++) acc[y][x] += av * bv[x];                \
          }                                                                                              \
        }                                                                                                \
        for (int y = 0; y < R && i + y < rows; y++)                                                      \
          memcpy(c + (i + y) * ldc + j, acc[y], sizeof acc[y]);                                          \
      }                                                                                                  \
    }                                                                                                    \
    SCALAR(af, rows, k, bb, c0 + full, cols - full, c + full, ldc);                                      \
  }

/* B's columns contiguous, for hosts with 16 vector registers (AVX2, SSE), 5 to 16 rows: B
 * widened to f32 GS_PANEL_KC depths at a time across up to GS_PANEL_NB columns into a
 * buffer (in L2; each row's piece read as one run, the rows GS_PF_ROWS ahead prefetched),
 * then tiles of R rows by 16 columns run from it: per depth 16 / N loads of B, R broadcasts of
 * A and 16 R / N FMAs, where the column kernels' 4 x 16 tiles widen every element of B again
 * for every 4 rows and walk its rows a row stride apart.  C holds the sums between depth
 * chunks (stored and reloaded exactly), so each element is one FMA chain over the depths in
 * order: the column kernels' bits.  A last tile past `rows` repeats the last row (its sums
 * are dropped); 16-column strips that are not one run in B's offset tables, and the last
 * columns, go one element at a time. */
#define GS_PANEL_KC 128
#define GS_PANEL_NB 256
#define GS_PANEL(NAME, ATTR, TB, LOAD, N, SCALAR, R)                                                     \
  ATTR static void NAME(const float *af, int64_t rows, int64_t k, const gs_b *bb, int64_t c0, int64_t cols, \
                        float *c, int64_t ldc) {                                                         \
    enum { W = 16 / N }; /* vectors per 16-column strip */                                               \
    typedef gs_v##N##f vt;                                                                               \
    int64_t full = cols / 16 * 16;                                                                       \
    float *buf = full ? hlo_rt_alloc(NULL, (int64_t)sizeof(float) * GS_PANEL_KC * GS_PANEL_NB) : NULL;    \
    if (!buf) {                                                                                          \
      SCALAR(af, rows, k, bb, c0, cols, c, ldc);                                                         \
      return;                                                                                            \
    }                                                                                                    \
    const TB *b = (const TB *)bb->b;                                                                     \
    for (int64_t j = 0; j < full; j += GS_PANEL_NB) {                                                    \
      int64_t nb = full - j < GS_PANEL_NB ? full - j : GS_PANEL_NB;                                      \
      int64_t at[GS_PANEL_NB / 16]; /* each strip's column offset in B, or -1: not one run */           \
      for (int64_t s = 0; s < nb / 16; s++) {                                                            \
        const int64_t *col = bb->col ? bb->col + c0 + j + 16 * s : NULL;                                 \
        at[s] = !col ? c0 + j + 16 * s : gs_cols_contiguous(col, 16) ? col[0] : -1;                      \
      }                                                                                                  \
      for (int64_t p0 = 0; p0 < k; p0 += GS_PANEL_KC) {                                                  \
        int64_t kc = k - p0 < GS_PANEL_KC ? k - p0 : GS_PANEL_KC;                                        \
        for (int64_t p = p0; p < p0 + kc; p++) {                                                         \
          int64_t ahead = p + GS_PF_ROWS < k ? p + GS_PF_ROWS : p;                                       \
          const TB *row = b + (bb->dep ? bb->dep[p] : p * bb->stride);                                   \
          const TB *next = b + (bb->dep ? bb->dep[ahead] : ahead * bb->stride);                          \
          float *to = buf + (p - p0) * nb;                                                               \
          for (int64_t s = 0; s < nb / 16; s++) {                                                        \
            if (at[s] < 0)                                                                               \
              continue;                                                                                  \
            __builtin_prefetch(next + at[s], 0, 2); /* into L2: the buffer's writes pass through L1 */   \
            _Pragma("GCC unroll 4") for (int w = 0; w < W; w++)                                          \
              *(vt *)(to + 16 * s + N * w) = LOAD(N, row + at[s] + N * w);                               \
          }                                                                                              \
        }                                                                                                \
        for (int64_t i = 0; i < rows; i += R) {                                                          \
          const float *ar[R];                                                                            \
          for (int y = 0; y < R; y++)                                                                    \
            ar[y] = af + (i + y < rows ? i + y : rows - 1) * k;                                          \
          for (int64_t s = 0; s < nb / 16; s++) {                                                        \
            if (at[s] < 0)                                                                               \
              continue;                                                                                  \
            float *cs = c + j + 16 * s;                                                                  \
            vt acc[R][W];                                                                                \
            _Pragma("GCC unroll 16") for (int y = 0; y < R; y++)                                         \
              _Pragma("GCC unroll 4") for (int w = 0; w < W; w++)                                        \
                acc[y][w] = p0 && i + y < rows ? *(const vt *)(cs + (i + y) * ldc + N * w) : (vt){0};    \
            const float *from = buf + 16 * s;                                                            \
            for (int64_t p = 0; p < kc; p++, from += nb) {                                               \
              vt bv[W];                                                                                  \
              _Pragma("GCC unroll 4") for (int w = 0; w < W; w++) bv[w] = *(const vt *)(from + N * w);   \
              _Pragma("GCC unroll 16") for (int y = 0; y < R; y++) {                                     \
                vt av = ar[y][p0 + p] - (vt){0};                                                         \
                _Pragma("GCC unroll 4") for (int w = 0; w < W; w++) acc[y][w] += av * bv[w];             \
              }                                                                                          \
            }                                                                                            \
            for (int y = 0; y < R && i + y < rows; y++)                                                  \
              memcpy(cs + (i + y) * ldc, acc[y], sizeof acc[y]);                                         \
          }                                                                                              \
        }                                                                                                \
      }                                                                                                  \
      for (int64_t s = 0; s < nb / 16; s++)                                                              \
        if (at[s] < 0)                                                                                   \
          SCALAR(af, rows, k, bb, c0 + j + 16 * s, 16, c + j + 16 * s, ldc);                             \
    }                                                                                                    \
    hlo_rt_free(NULL, buf);                                                                              \
    SCALAR(af, rows, k, bb, c0 + full, cols - full, c + full, ldc);                                      \
  }

/* NAME: the panel kernel NAME_r (tiles of R rows) or NAME_r2 (R2 rows), whichever computes fewer
 * padded rows for `rows` (R on a tie): with R = 6 and R2 = 4, 6 rows by 1024 x 1152 (B in
 * offset tables) 1.3x faster than the 4 x 16 column kernel, 8 rows 0.84x with 6-row tiles
 * and 1.05x with 4-row ones (AMD EPYC family 25, one thread). */
#define GS_PANEL_PICK(NAME, R, R2)                                                                       \
  static void NAME(const float *af, int64_t rows, int64_t k, const gs_b *bb, int64_t c0, int64_t cols, float *c, \
                   int64_t ldc) {                                                                        \
    int64_t padded = (rows + R - 1) / R * R, padded2 = (rows + R2 - 1) / R2 * R2;                        \
    (padded2 < padded ? NAME##_r2 : NAME##_r)(af, rows, k, bb, c0, cols, c, ldc);                        \
  }

/* A row-major B (no tables) with at most 4 rows of A: B read row after row in blocks of
 * GS_GEMV_BLOCK columns, each row's block one contiguous run that the hardware prefetchers
 * follow, the rows of C accumulating in place (in L1); the column kernels instead walk down
 * B's rows a row stride apart, which a tall B (4096 x 8192 f32: 32 KB apart) makes the
 * memory's slow case.  Each element is the same FMA chain over the depths in order as in the
 * column kernels, so the bits are theirs. */
#define GS_GEMV_BLOCK 1024
#define GS_GEMV(NAME, ATTR, TB, LOAD, N, SCALAR)                                                         \
  ATTR static void NAME(const float *af, int64_t rows, int64_t k, const gs_b *bb, int64_t c0, int64_t cols, \
                        float *c, int64_t ldc) {                                                         \
    typedef gs_v##N##f vt;                                                                               \
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
          vt a0 = a[0] - (vt){0}, a1 = a[1] - (vt){0}, a2 = a[2] - (vt){0}, a3 = a[3] - (vt){0};         \
          float *ci = c + i * ldc + j0;                                                                  \
          for (int64_t x = 0; x < w; x += 16) /* 16 columns a step: 16 / N chains */                     \
            _Pragma("GCC unroll 4") for (int64_t e = x; e < x + 16; e += N) {                            \
              vt cv = *(vt *)(ci + e); /* vt is aligned(4): any float address */                         \
              cv += a0 * LOAD(N, r0 + e);                                                                \
              cv += a1 * LOAD(N, r1 + e);                                                                \
              cv += a2 * LOAD(N, r2 + e);                                                                \
              cv += a3 * LOAD(N, r3 + e);                                                                \
              *(vt *)(ci + e) = cv;                                                                      \
            }                                                                                            \
        }                                                                                                \
      }                                                                                                  \
      for (; p < k; p++) {                                                                               \
        const TB *row = b + p * bb->stride + j0;                                                         \
        for (int64_t i = 0; i < rows; i++) {                                                             \
          vt av = af[i * k + p] - (vt){0};                                                               \
          float *ci = c + i * ldc + j0;                                                                  \
          for (int64_t x = 0; x < w; x += N) {                                                           \
            *(vt *)(ci + x) += av * LOAD(N, row + x);                                                    \
          }                                                                                              \
        }                                                                                                \
      }                                                                                                  \
    }                                                                                                    \
    SCALAR(af, rows, k, bb, c0 + full, cols - full, c + full, ldc);                                      \
  }

/* The dots kernels of one instruction set (B's depth contiguous): by_rows[r] takes tiles of r
 * rows (NULL where the set has none), rows[m] is the tile for m rows of A.  Each result's bits
 * are the same whatever the tile (GS_DOTS), so the tables are free to follow the speed. */
#define GS_DOTS_MAX_ROWS 8
typedef struct gs_dots_set {
  gs_fn by_rows[GS_DOTS_MAX_ROWS + 1];
  unsigned char rows[GS_MAX_M + 1];
} gs_dots_set;

/* One instruction set's kernels as the table PREFIX_SUF (GS_TABLE entries: the row-streaming
 * kernel at index 0, the column kernels for tiles of 4, 8, 12 and 16 rows at gs_tile_rows / 4)
 * and its dots kernels as PREFIX_SUF_dots.  GS_SET_WIDE, for AVX-512's 32 registers of 16
 * lanes: tiles of up to 24 accumulators; dots tiles of 1 x 8 and 2 x 4 for 1 and 2 rows,
 * 8 x 2 for 5 to 8 (8 rows of 11 x 1152 x 13824 from memory 29.4 -> 24.5 ms), else 4 x 4
 * (taller tiles were no faster for 11 rows and slower for 16).
 * GS_SET_NARROW, for AVX2's and SSE's 16 registers of 8 or 4 lanes: 4 rows by 16 columns
 * (8 registers of AVX2), a panel kernel, and the dots tiles of GS_DOTS_NARROW_##DOTS. */
#define GS_TABLE 5
#define GS_SET_WIDE(PREFIX, SUF, ATTR, TB, LOAD, N, TOF32, SCALAR)                                       \
  GS_DOTS(PREFIX##_dots1_##SUF, ATTR, TB, LOAD, N, TOF32, 1, 8)                                          \
  GS_DOTS(PREFIX##_dots2_##SUF, ATTR, TB, LOAD, N, TOF32, 2, 4)                                          \
  GS_DOTS(PREFIX##_dots4_##SUF, ATTR, TB, LOAD, N, TOF32, 4, 4)                                          \
  GS_DOTS(PREFIX##_dots8_##SUF, ATTR, TB, LOAD, N, TOF32, 8, 2)                                          \
  GS_COLS(PREFIX##_cols4_##SUF, ATTR, TB, LOAD, N, SCALAR, 4, 4)                                         \
  GS_COLS(PREFIX##_cols8_##SUF, ATTR, TB, LOAD, N, SCALAR, 8, 2)                                         \
  GS_COLS(PREFIX##_cols12_##SUF, ATTR, TB, LOAD, N, SCALAR, 12, 2)                                       \
  GS_COLS(PREFIX##_cols16_##SUF, ATTR, TB, LOAD, N, SCALAR, 16, 1)                                       \
  GS_GEMV(PREFIX##_gemv_##SUF, ATTR, TB, LOAD, N, SCALAR)                                                \
  static const gs_fn PREFIX##_##SUF[GS_TABLE] = {PREFIX##_gemv_##SUF, PREFIX##_cols4_##SUF,              \
                                                 PREFIX##_cols8_##SUF, PREFIX##_cols12_##SUF,            \
                                                 PREFIX##_cols16_##SUF};                                 \
  static const gs_dots_set PREFIX##_##SUF##_dots = {                                                     \
      {[1] = PREFIX##_dots1_##SUF, [2] = PREFIX##_dots2_##SUF, [4] = PREFIX##_dots4_##SUF,               \
       [8] = PREFIX##_dots8_##SUF},                                                                      \
      {0, 1, 2, 4, 4, 8, 8, 8, 8, 4, 4, 4, 4, 4, 4, 4, 4}};
#define GS_SET_NARROW(PREFIX, SUF, ATTR, TB, LOAD, N, TOF32, SCALAR, PANEL_R, PANEL_R2, DOTS)           \
  GS_DOTS_NARROW_##DOTS(PREFIX, SUF, ATTR, TB, LOAD, N, TOF32)                                           \
  GS_COLS(PREFIX##_cols_##SUF, ATTR, TB, LOAD, N, SCALAR, 4, 1)                                         \
  GS_PANEL(PREFIX##_panel_##SUF##_r, ATTR, TB, LOAD, N, SCALAR, PANEL_R)                                \
  GS_PANEL(PREFIX##_panel_##SUF##_r2, ATTR, TB, LOAD, N, SCALAR, PANEL_R2)                              \
  GS_PANEL_PICK(PREFIX##_panel_##SUF, PANEL_R, PANEL_R2)                                                \
  GS_GEMV(PREFIX##_gemv_##SUF, ATTR, TB, LOAD, N, SCALAR)                                               \
  static const gs_fn PREFIX##_##SUF[GS_TABLE] = {PREFIX##_gemv_##SUF, PREFIX##_cols_##SUF,               \
                                                 PREFIX##_panel_##SUF, PREFIX##_panel_##SUF,            \
                                                 PREFIX##_panel_##SUF};
/* SSE's 4-lane vectors: a dot product is 4 vectors; one tile, 4 x 1 (not measured against others). */
#define GS_DOTS_NARROW_4(PREFIX, SUF, ATTR, TB, LOAD, N, TOF32)                                         \
  GS_DOTS(PREFIX##_dots4_##SUF, ATTR, TB, LOAD, N, TOF32, 4, 1)                                          \
  static const gs_dots_set PREFIX##_##SUF##_dots = {{[4] = PREFIX##_dots4_##SUF},                        \
                                                    {0, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4}};
/* AVX2's 8-lane vectors, a dot product in 2 registers: tiles of 1 to 6 rows, at most 12
 * accumulators and the widened B beside them.  Every row of a 4-row tile for 1 to 3 rows was
 * computed (zero rows of A), and 11 rows took 3 passes over B; now the tile is the rows
 * themselves up to 6, and above 6 the one of 4, 5 or 6 rows that pads least, then passes least. */
#define GS_DOTS_NARROW_8(PREFIX, SUF, ATTR, TB, LOAD, N, TOF32)                                         \
  GS_DOTS(PREFIX##_dots1_##SUF, ATTR, TB, LOAD, N, TOF32, 1, 4)                                          \
  GS_DOTS(PREFIX##_dots2_##SUF, ATTR, TB, LOAD, N, TOF32, 2, 2)                                          \
  GS_DOTS(PREFIX##_dots3_##SUF, ATTR, TB, LOAD, N, TOF32, 3, 1)                                          \
  GS_DOTS(PREFIX##_dots4_##SUF, ATTR, TB, LOAD, N, TOF32, 4, 1)                                          \
  GS_DOTS(PREFIX##_dots5_##SUF, ATTR, TB, LOAD, N, TOF32, 5, 1)                                          \
  GS_DOTS(PREFIX##_dots6_##SUF, ATTR, TB, LOAD, N, TOF32, 6, 1)                                          \
  static const gs_dots_set PREFIX##_##SUF##_dots = {                                                     \
      {[1] = PREFIX##_dots1_##SUF, [2] = PREFIX##_dots2_##SUF, [3] = PREFIX##_dots3_##SUF,               \
       [4] = PREFIX##_dots4_##SUF, [5] = PREFIX##_dots5_##SUF, [6] = PREFIX##_dots6_##SUF},              \
      {0, 1, 2, 3, 4, 5, 6, 4, 4, 5, 5, 6, 6, 5, 5, 5, 4}};

/* Every kernel for the element type TB (LOAD(N, p): N elements as f32; LOAD_512: its AVX-512
 * form; TOF32: one element as f32) and PREFIX_kernel(index into the table), which picks the
 * host's (rt_isa.h). */
#if defined(__x86_64__) && defined(__GNUC__)
#define GS_KERNELS(PREFIX, TB, LOAD, LOAD_512, TOF32)                                                    \
  GS_SCALAR(PREFIX##_scalar, , TB, TOF32)                                                                \
  GS_SCALAR(PREFIX##_scalar_avx2, __attribute__((target("avx2,fma,f16c"))), TB, TOF32)                   \
  GS_SCALAR(PREFIX##_scalar_avx512, RT_TARGET_AVX512, TB, TOF32)              \
  GS_SET_NARROW(PREFIX, base, , TB, LOAD, 4, TOF32, PREFIX##_scalar, 2, 2, 4)                            \
  GS_SET_NARROW(PREFIX, avx2, __attribute__((target("avx2,fma,f16c"))), TB, LOAD, 8, TOF32,              \
                PREFIX##_scalar_avx2, 6, 4, 8)                                                           \
  GS_SET_WIDE(PREFIX, avx512, RT_TARGET_AVX512, TB, LOAD_512, 16, TOF32,      \
              PREFIX##_scalar_avx512)                                                                    \
  static gs_fn PREFIX##_kernel(int at) {                                                                 \
    int level = rt_isa_level();                                                                          \
    return level >= RT_ISA_AVX512 ? PREFIX##_avx512[at]                                                  \
           : level == RT_ISA_AVX2 ? PREFIX##_avx2[at]                                                    \
                                  : PREFIX##_base[at];                                                   \
  }                                                                                                      \
  static const gs_dots_set *PREFIX##_kernel_dots(void) {                                                 \
    int level = rt_isa_level();                                                                          \
    return level >= RT_ISA_AVX512 ? &PREFIX##_avx512_dots                                                \
           : level == RT_ISA_AVX2 ? &PREFIX##_avx2_dots                                                  \
                                  : &PREFIX##_base_dots;                                                 \
  }
#else
#define GS_KERNELS(PREFIX, TB, LOAD, LOAD_512, TOF32)                                                    \
  GS_SCALAR(PREFIX##_scalar, , TB, TOF32)                                                                \
  GS_SET_NARROW(PREFIX, base, , TB, LOAD, 4, TOF32, PREFIX##_scalar, 2, 2, 4)                            \
  static gs_fn PREFIX##_kernel(int at) { return PREFIX##_base[at]; }                                     \
  static const gs_dots_set *PREFIX##_kernel_dots(void) { return &PREFIX##_base_dots; }
#endif

/* Whether the few-rows path beats the packed kernels for m rows by a B of row stride rs,
 * column stride cs and offset tables col on this host: always with AVX-512's wide tiles;
 * with AVX2's and SSE's narrow ones (4 rows by 16 columns) for up to 4 rows (the
 * row-streaming kernel), or for a B of contiguous depth or in offset tables, but not for 5 to
 * 16 rows by a row-major B: there the packed kernels were 1.2-2x faster on an AMD EPYC
 * family 25 (f32 11 x 1152 x 13824 14.3 -> 8.4 ms, bf16 9.7 -> 4.8 ms; 11 x 1152 x 256
 * 0.13 -> 0.11 ms; gemma3 1B's call 410 -> 390 ms), the narrow tiles walking B's rows a row
 * stride apart for every 16 columns.  The panel kernel (2026-11-28) did not change that: against
 * the packed path, one thread, alternating in one process, bf16 11 x 1152 x 6912 1.07-1.15x,
 * 11 x 13824 x 1152 0.87-0.95x, 8 x 4096 x 4096 0.86-0.91x; its row pieces (512 bytes a row
 * stride apart) stream at half the speed of whole rows on that host. */
static inline int gs_rows_pay(int64_t m, int64_t rs, int64_t cs, const int64_t *col) {
  return m <= 4 || rt_isa_level() >= RT_ISA_AVX512 || col || cs != 1 || rs == 1;
}

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

/* Whether a product of few columns and more rows (m > GS_MAX_M >= n) runs transposed,
 * C^T = B^T . A^T, on the few-rows kernels with A read in place as their B (GS_SPLIT's
 * SWAPPED), rather than packed: A of rows rs and depths cs apart (or offset tables row),
 * whose every element the packed path would copy to use it n times.  Measured on AVX2 (AMD
 * EPYC family 25, docs/performance-gemm.md "Ninth round") and AVX-512 (AMD EPYC family 26:
 * 8192 x 1024 by 1 to 16 columns, f32 and bf16, A row-major or depth-major, 2 threads: 1.2-10x
 * the packed path's speed, bf16 depth-major with 16 columns a tie).  With AMX, bf16 products
 * of few columns so leave the tiles; not measured there. */
static inline int gs_swap_pays(int64_t m, int64_t n, int64_t rs, int64_t cs, const int64_t *row) {
  return m > GS_MAX_M && n <= GS_MAX_M && gs_b_ok(m, cs, rs, row) && gs_rows_pay(n, cs, rs, row);
}

/* Whether a product (m x n x kk; A of rows rs and depths cs apart or through the table
 * a_row, B likewise) takes this path: at most GS_MAX_M rows and a B the kernels read in place,
 * or few columns and an A they read in place (transposed, gs_swap_pays). */
static inline int gs_takes(int64_t m, int64_t n, int64_t kk, int64_t a_rs, int64_t a_cs, const int64_t *a_row,
                           int64_t b_rs, int64_t b_cs, const int64_t *b_col) {
  return kk > 0 && ((m <= GS_MAX_M && gs_b_ok(n, b_rs, b_cs, b_col) && gs_rows_pay(m, b_rs, b_cs, b_col)) ||
                    gs_swap_pays(m, n, a_rs, a_cs, a_row));
}

/* The driver of the few-rows path for one GEMM file's job types (a template, as
 * rt_gemm_impl.h): PREFIX_product (columns [c0, c1) of one product: A's rows widened into an
 * f32 copy padded with zero rows to the tile, then the kernel), PREFIX_columns (that, then
 * FINISH on the finished part), PREFIX_rows_swapped (rows of a product of few columns, run
 * transposed) and GS_SPLIT's functions around them.  JOB has the fields m, n, kk, a, a_rs,
 * a_cs, a_row, a_dep, b, b_rs, b_cs, b_dep, b_col and c (f32, dense: row stride n); A_F32(x)
 * widens an element of A (of B too: both have one element type); KERNEL(index) picks the
 * kernel and KERNEL_dots() the dots set; BATCH_AT, FINISH, NAIVE and THREADS are the file's
 * own functions. */
#define GS_DRIVER(PREFIX, JOB, BATCH_JOB, A_F32, KERNEL, BATCH_AT, FINISH, NAIVE, THREADS)                \
  GS_COLUMNS(PREFIX, JOB, A_F32, KERNEL, FINISH)                                                         \
  GS_SPLIT(PREFIX, JOB, BATCH_JOB, PREFIX##_columns, PREFIX##_rows_swapped, BATCH_AT, FINISH, NAIVE, THREADS)

#define GS_COLUMNS(PREFIX, JOB, A_F32, KERNEL, FINISH)                                                   \
  /* Columns [c0, c1) of the product into c (at column c0, row stride ldc); 0: no memory. */            \
  static int PREFIX##_product(const JOB *j, int64_t c0, int64_t c1, float *c, int64_t ldc) {             \
    int dots = !j->b_col && j->b_rs == 1;                                                                \
    const gs_dots_set *ds = KERNEL##_dots();                                                             \
    int tile = dots ? ds->rows[j->m] : gs_tile_rows(j->m);                                               \
    gs_fn kernel = dots ? ds->by_rows[tile] : KERNEL(!j->b_col && j->m <= 4 ? 0 : tile / 4);             \
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
    kernel(af, j->m, j->kk, &bb, c0, c1 - c0, c, ldc);                                                   \
    hlo_rt_free(NULL, af);                                                                               \
    return 1;                                                                                            \
  }                                                                                                      \
  static int PREFIX##_columns(const JOB *j, int64_t c0, int64_t c1) {                                    \
    if (!PREFIX##_product(j, c0, c1, (float *)j->c + c0, j->n))                                          \
      return 0;                                                                                          \
    FINISH(j, 0, j->m, c0, c1 - c0);                                                                     \
    return 1;                                                                                            \
  }                                                                                                      \
  /* Rows [r0, r1) of a product of few columns (gs_swap_pays): C^T = B^T . A^T by the kernels, */     \
  /* A read in place as their B, then transposed into C. */                                              \
  static int PREFIX##_rows_swapped(const JOB *j, int64_t r0, int64_t r1) {                               \
    JOB t = *j;                                                                                          \
    t.m = j->n, t.n = j->m, t.a = j->b, t.b = j->a;                                                      \
    t.a_rs = j->b_cs, t.a_cs = j->b_rs, t.b_rs = j->a_cs, t.b_cs = j->a_rs;                              \
    t.a_row = j->b_col, t.a_dep = j->b_dep, t.b_dep = j->a_dep, t.b_col = j->a_row;                      \
    int64_t w = r1 - r0;                                                                                 \
    float *ct = hlo_rt_alloc(NULL, (int64_t)sizeof(float) * j->n * w), *c = (float *)j->c;               \
    if (!ct || !PREFIX##_product(&t, r0, r1, ct, w)) {                                                   \
      hlo_rt_free(NULL, ct);                                                                             \
      return 0;                                                                                          \
    }                                                                                                    \
    for (int64_t i = 0; i < w; i++)                                                                      \
      for (int64_t x = 0; x < j->n; x++)                                                                 \
        c[(r0 + i) * j->n + x] = ct[x * w + i];                                                         \
    hlo_rt_free(NULL, ct);                                                                               \
    FINISH(j, r0, w, 0, j->n);                                                                           \
    return 1;                                                                                            \
  }

/* PREFIX_run (a hlo_rt_range_fn over batches, or over slices of one batch's columns cut at
 * multiples of GS_RUN, each through COLUMNS(job, c0, c1), which returns 0 when it could not
 * allocate: NAIVE and FINISH then) and PREFIX_batches (every batch: in parallel when there
 * are enough, else each batch's columns over the threads).  SWAPPED (or NULL): the same for
 * slices of rows of a product of more than GS_MAX_M rows (gs_swap_pays), the slices' rows
 * then cut at multiples of GS_RUN. */
#define GS_SPLIT(PREFIX, JOB, BATCH_JOB, COLUMNS, SWAPPED, BATCH_AT, FINISH, NAIVE, THREADS)               \
  typedef struct PREFIX##_job {                                                                          \
    const BATCH_JOB *bj;                                                                                 \
    int64_t parts, t; /* parts > 0: slices of batch t's columns (rows if swap); else whole batches */    \
    int swap;                                                                                            \
  } PREFIX##_job;                                                                                        \
  static void PREFIX##_run(void *arg, int64_t begin, int64_t end) {                                      \
    const PREFIX##_job *s = arg;                                                                         \
    int (*swapped)(const JOB *, int64_t, int64_t) = SWAPPED;                                             \
    for (int64_t u = begin; u < end; u++) {                                                              \
      JOB j = BATCH_AT(s->bj, s->parts ? s->t : u);                                                      \
      int64_t len = s->swap ? j.m : j.n, c0 = 0, c1 = len;                                               \
      if (s->parts)                                                                                      \
        rt_gemm_slice(len, GS_RUN, u, s->parts, &c0, &c1);                                               \
      if (c1 <= c0)                                                                                      \
        continue;                                                                                        \
      if (s->swap && swapped) {                                                                          \
        if (!swapped(&j, c0, c1)) {                                                                      \
          NAIVE(&j, c0, c1 - c0, 0, j.n);                                                                \
          FINISH(&j, c0, c1 - c0, 0, j.n);                                                               \
        }                                                                                                \
      } else if (!COLUMNS(&j, c0, c1)) {                                                                 \
        NAIVE(&j, 0, j.m, c0, c1 - c0);                                                                  \
        FINISH(&j, 0, j.m, c0, c1 - c0);                                                                 \
      }                                                                                                  \
    }                                                                                                    \
  }                                                                                                      \
  static void PREFIX##_batches(hlo_context *ctx, int64_t batch, const BATCH_JOB *bj) {                   \
    int (*swapped)(const JOB *, int64_t, int64_t) = SWAPPED;                                             \
    int threads = THREADS(ctx, bj->proto.m, bj->proto.n, bj->proto.kk);                                  \
    PREFIX##_job s = {.bj = bj, .swap = swapped && bj->proto.m > GS_MAX_M};                              \
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
