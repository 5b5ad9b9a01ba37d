/* rt_gemm.c — dense matrix products for compiled dot instructions (hlo/rt.h): C = A·B in f32
 * and f64 (and f32 from f16), accumulating in the element type, with element strides for A
 * and B (transposed operands need no copy), a batch dimension and a dense row-major C.  GotoBLAS structure: B
 * panels (KC x NC) and A blocks (MC x KC) are packed into micro-panels and a register-tiled
 * micro-kernel (MR x NR accumulators in vector registers, GCC/Clang vector extensions) runs on
 * them; products of few columns read a row-major A in place instead (GEMM_DIRECT_MAX_PANELS),
 * and f32 products of few rows read B in place (rt_gemm_small.h).  The same packing and loop
 * nest also take bf16 and f16 operands, widened to f32 as they are packed (rt_gemm_internal.h:
 * hlo_rt_gemm_*_f16 here, rt_gemm_bf16.c's route without AMX).
 * The micro-kernel is built for AVX-512, AVX2+FMA and the baseline CPU and picked from
 * the running CPU (rt_isa.h), since libhlort is built once and runs on many machines.  On the context's
 * thread pool each thread computes its own rectangle of C (a grid of row and column slices,
 * rt_gemm_split) from start to end with its own packing buffers, or whole batches.
 * Measurements: docs/performance-gemm.md.  Tests: runtime/src/kernels/rt_gemm_test.c.
 */
#include <math.h>
#include <stdint.h>

#include "hlo/rt.h"
#include "hlo/rt_parallel.h"
#include "rt_gemm_internal.h"
#include "rt_gemm_small.h"
#include "rt_isa.h"

#if (defined(__x86_64__) || defined(__i386__)) && defined(__GNUC__)
#define GEMM_X86 1
#include <immintrin.h>
#else
#define GEMM_X86 0
#endif

/* Largest micro tile (elements): 14 rows x 32 f32 columns for AVX-512. */
#define GEMM_MAX_TILE (14 * 32)
#define GEMM_MAX_MR 14

typedef void (*gemm_micro_fn)(void);
typedef struct gemm_kernel {
  int mr, nr;          /* tile: mr rows of A by nr columns of B */
  gemm_micro_fn micro; /* cast back to the element type's signature before the call */
  /* edge[r]: the same tile cut to its first r rows (A micro-panels keep their mr-row
   * layout), for the last row tile of a block; NULL: the full kernel into a scratch tile. */
  gemm_micro_fn edge[GEMM_MAX_MR];
  /* For products of few columns (n <= GEMM_DIRECT_MAX_PANELS * dnr): a micro-kernel that reads
   * a row-major A where it lies (row stride lda) instead of a packed copy, dmr rows by dnr
   * columns, and its one-row form for the last rows; NULL where there is none. */
  gemm_micro_fn direct, direct1;
  int dmr, dnr;
  /* Rows of A per packed block, where the tile wants fewer than gemm_blocking's default
   * (0: the default).  The AVX2 tile's f32 blocks: 96 rows (96 x 256 x 4 = 96 KiB), half
   * the default, leaving room in the 256-512 KiB L2 of AVX2-only cores (AMD Zen 2/3, Intel
   * client parts); on an AMD EPYC family 25, 2 threads, alternating with OpenBLAS in one
   * process (tools/gemm_bench), nine pairs of runs: 2048^3 0.73-0.94x (mean 0.84) ->
   * 0.83-1.05x (mean 0.93) OpenBLAS's speed, better in seven; 1024^3 within the noise. */
  int mmax;
} gemm_kernel;

/* Column panels up to which A is read in place: packing A costs about as much as a pass of
 * the micro-kernel over one panel of 64 columns (an attention's P.V, 512 x 512 by 512 x 64:
 * packing A was 40% of the product's time on Intel model 167), and each further panel
 * reuses the packed copy. */
#define GEMM_DIRECT_MAX_PANELS 2

/* 2: AVX-512F, 1: AVX2 and FMA, 0: the baseline (rt_isa.h: the CPU's, capped by HLO_RT_ISA). */
static int gemm_isa(void) {
  int level = rt_isa_level();
  return level >= RT_ISA_AVX512 ? 2 : level == RT_ISA_AVX2 ? 1 : 0;
}

/* Threads worth using for an m x n x k product: about 2^18 multiply-adds each at least. */
static int gemm_threads(hlo_context *ctx, int64_t m, int64_t n, int64_t k) {
  int t = hlo_rt_num_threads(ctx);
  double work = (double)m * (double)n * (double)(k > 0 ? k : 1);
  double most = work / 262144.0;
  if (most < t)
    t = most < 1 ? 1 : (int)most;
  return t;
}

static int64_t round_up(int64_t x, int64_t to) { return (x + to - 1) / to * to; }

/* Cache blocking of one thread's rows x cols slice of C: kc deep panels (a kc x nr B
 * micro-panel stays in L1 while the A block streams past it; the depth is cut into even
 * panels, never a full one and a sliver), mc rows of A (the packed mc x kc block stays in L2)
 * and nc columns of B.  When all the slice's rows fit one A block of at most GEMM_SMALL_A
 * bytes, the B chunk is narrow (GEMM_SMALL_NC columns) so that it stays in L2 beside A; else
 * the rows come in blocks of one size (at most mmax: the kernel's mmax_tile when it sets one,
 * else 192 for f32 and 144 for f64) and B panels are wide. */
#define GEMM_SMALL_A (384 * 1024)
#define GEMM_SMALL_NC 256
/* Rows of a row-major B that packing prefetches ahead (packing alone a 2048 x 2048 B in
 * 256 x 256 chunks: 1.7-1.8 ms without, 1.2-1.4 ms with 4; docs/performance-gemm.md). */
#define GEMM_PF_ROWS 4
typedef struct gemm_blocks {
  int64_t mc, kc, nc;
} gemm_blocks;

static gemm_blocks gemm_blocking(int64_t rows, int64_t cols, int64_t k, int mr, int nr, int mmax_tile, int es) {
  int64_t kmax = es == 4 ? 256 : 192, nmax = es == 4 ? 3072 : 2048;
  int64_t mmax = mmax_tile > 0 ? mmax_tile : es == 4 ? 192 : 144;
  int64_t panels = (k + kmax - 1) / kmax;
  gemm_blocks b = {round_up(rows, mr), (k + panels - 1) / panels, 0};
  if (b.mc * b.kc * es <= GEMM_SMALL_A)
    nmax = GEMM_SMALL_NC;
  else {
    int64_t blocks = (rows + mmax - 1) / mmax;
    b.mc = round_up((rows + blocks - 1) / blocks, mr);
  }
  b.nc = round_up(cols < nmax ? cols : nmax, nr);
  return b;
}

/* What packing one element costs against one multiply-add, for the split over threads
 * (rt_gemm_split). */
#define GEMM_PACK_COST 16.0

#define GEMM_STR(x) #x
#define GEMM_PRAGMA_UNROLL(n) _Pragma(GEMM_STR(GCC unroll n))

/* The micro-kernels' `add` that writes the tile with non-temporal stores (C aligned to 64
 * bytes and its rows a multiple of 64 bytes long; GEMM_NAME(streams)), and those stores for
 * vectors of 16, 32 and 64 bytes (AVX-512's emulation on AVX2: two of 32). */
#define GEMM_STREAM 2
#if GEMM_X86
#define GEMM_NT16(p, x) _mm_stream_si128((__m128i *)(p), (__m128i)(x))
#define GEMM_NT32(p, x) _mm256_stream_si256((__m256i *)(p), (__m256i)(x))
#ifndef RT_ISA_EMULATE_AVX512
#define GEMM_NT64(p, x) _mm512_stream_si512((__m512i *)(p), (__m512i)(x))
#else
#define GEMM_NT64(p, x)                                                                              \
  do {                                                                                               \
    __m256i h_[2];                                                                                   \
    __builtin_memcpy(h_, &(x), 64);                                                                  \
    GEMM_NT32(p, h_[0]);                                                                             \
    GEMM_NT32((char *)(p) + 32, h_[1]);                                                              \
  } while (0)
#endif
#else
#define GEMM_NT16(p, x) (*(p) = (x))
#define GEMM_NT32(p, x) (*(p) = (x))
#define GEMM_NT64(p, x) (*(p) = (x))
#endif

/* A micro-kernel: C[MR x NV*lanes] (row stride ldc) = (add == 1 ? C : 0) + A-micro-panel ·
 * B-micro-panel over kc steps (add == GEMM_STREAM: written with non-temporal stores, NT), the A micro-panel holding AS >= MR rows per step, the depth
 * loop unrolled UNROLL times (the AVX2 kernel: 4, which took the 6 x 16 tile from 0.87x to
 * 1.02x OpenBLAS's single-thread speed on an AMD EPYC family 25, 1024^3, alternating in one
 * process; the others are as they were measured, 1).
 * Accumulators are an array of vectors the unrolled loops turn into registers; `x - (V){0}`
 * broadcasts a scalar exactly (it keeps -0, unlike `+ 0`) and folds away.  The C tile is
 * prefetched first (its rows are ldc apart, in L2 or L3 after the previous depth panel). */
#define GEMM_MICRO_AS(NAME, ATTR, T, V, MR, AS, NV, UNROLL, NT)                                        \
  ATTR static void NAME(int64_t kc, const T *restrict a, const T *restrict b, T *restrict c, int64_t ldc, \
                        int add) {                                                                   \
    enum { lanes = sizeof(V) / sizeof(T) };                                                          \
    V acc[MR][NV];                                                                                   \
    if (add != GEMM_STREAM) /* the C tile arrives while we compute (streamed: never read) */        \
      _Pragma("GCC unroll 16") for (int i = 0; i < MR; i++)                                          \
        _Pragma("GCC unroll 4") for (int v = 0; v < NV * (int)sizeof(V); v += 64)                    \
          __builtin_prefetch((const char *)(c + i * ldc) + v, 1, 3);                                  \
    _Pragma("GCC unroll 16") for (int i = 0; i < MR; i++)                                            \
      _Pragma("GCC unroll 4") for (int v = 0; v < NV; v++) acc[i][v] = (V){0};                       \
    GEMM_PRAGMA_UNROLL(UNROLL) for (int64_t p = 0; p < kc; p++, a += AS, b += NV * lanes) {          \
      V bv[NV];                                                                                      \
      _Pragma("GCC unroll 4") for (int v = 0; v < NV; v++) bv[v] = *(const V *)(b + v * lanes);      \
      _Pragma("GCC unroll 16") for (int i = 0; i < MR; i++) {                                        \
        V av = a[i] - (V){0};                                                                        \
        _Pragma("GCC unroll 4") for (int v = 0; v < NV; v++) acc[i][v] += av * bv[v];                \
      }                                                                                              \
    }                                                                                                \
    _Pragma("GCC unroll 16") for (int i = 0; i < MR; i++)                                            \
      _Pragma("GCC unroll 4") for (int v = 0; v < NV; v++) {                                         \
        V *cp = (V *)(c + i * ldc + v * lanes);                                                      \
        if (add == GEMM_STREAM)                                                                      \
          NT(cp, acc[i][v]);                                                                         \
        else                                                                                         \
          *cp = add ? *cp + acc[i][v] : acc[i][v];                                                   \
      }                                                                                              \
  }
#define GEMM_MICRO(NAME, ATTR, T, V, MR, NV, UNROLL, NT) GEMM_MICRO_AS(NAME, ATTR, T, V, MR, MR, NV, UNROLL, NT)

/* The same for an A read in place: row i of the tile at a + i * lda, its depths contiguous. */
#define GEMM_MICRO_DIRECT(NAME, ATTR, T, V, MR, NV)                                                  \
  ATTR static void NAME(int64_t kc, const T *restrict a, int64_t lda, const T *restrict b, T *restrict c, \
                        int64_t ldc, int add) {                                                      \
    enum { lanes = sizeof(V) / sizeof(T) };                                                          \
    V acc[MR][NV];                                                                                   \
    _Pragma("GCC unroll 16") for (int i = 0; i < MR; i++)                                            \
      _Pragma("GCC unroll 8") for (int v = 0; v < NV; v++) acc[i][v] = (V){0};                       \
    for (int64_t p = 0; p < kc; p++, a++, b += NV * lanes) {                                         \
      V bv[NV];                                                                                      \
      _Pragma("GCC unroll 8") for (int v = 0; v < NV; v++) bv[v] = *(const V *)(b + v * lanes);      \
      _Pragma("GCC unroll 16") for (int i = 0; i < MR; i++) {                                        \
        V av = a[i * lda] - (V){0};                                                                  \
        _Pragma("GCC unroll 8") for (int v = 0; v < NV; v++) acc[i][v] += av * bv[v];                \
      }                                                                                              \
    }                                                                                                \
    _Pragma("GCC unroll 16") for (int i = 0; i < MR; i++)                                            \
      _Pragma("GCC unroll 8") for (int v = 0; v < NV; v++) {                                         \
        V *cp = (V *)(c + i * ldc + v * lanes);                                                      \
        *cp = add ? *cp + acc[i][v] : acc[i][v];                                                     \
      }                                                                                              \
  }

#if GEMM_X86
#include "rt_transpose16.h"
/* Packs 16 (AVX-512) or 8 (AVX2) columns of a transposed f32 B (x . W^T: column j of B is a
 * row of W, its depths contiguous, cs apart) by depths [0, kc) into dst[p*nr + jj]: blocks of
 * as many depths go through registers (rt_transpose16.h), the last depths one at a time. */
#ifndef RT_ISA_EMULATE_AVX512
#define GEMM_PACK_BT16_ATTR __attribute__((target("avx512f")))
#else /* compiled for AVX2 (rt_isa.h): every depth one at a time, the same copy */
#define GEMM_PACK_BT16_ATTR
#endif
GEMM_PACK_BT16_ATTR static void gemm_pack_bt16_f32(const float *b, int64_t cs, int64_t kc, int nr, float *dst) {
  int64_t p0 = 0;
#ifndef RT_ISA_EMULATE_AVX512
  for (; p0 + 16 <= kc; p0 += 16) {
    __m512 r[16];
    for (int i = 0; i < 16; i++)
      r[i] = _mm512_loadu_ps(b + i * cs + p0);
    rt_transpose16(r);
    for (int q = 0; q < 16; q++) /* depth p0 + q of the 16 columns */
      _mm512_storeu_ps(dst + (p0 + q) * nr, r[q]);
  }
#endif
  for (; p0 < kc; p0++)
    for (int i = 0; i < 16; i++)
      dst[p0 * nr + i] = b[i * cs + p0];
}

__attribute__((target("avx2"))) static void gemm_pack_bt8_f32(const float *b, int64_t cs, int64_t kc, int nr,
                                                             float *dst) {
  int64_t p0 = 0;
  for (; p0 + 8 <= kc; p0 += 8) {
    __m256 r[8];
    for (int i = 0; i < 8; i++)
      r[i] = _mm256_loadu_ps(b + i * cs + p0);
    rt_transpose8(r);
    for (int q = 0; q < 8; q++)
      _mm256_storeu_ps(dst + (p0 + q) * nr, r[q]);
  }
  for (; p0 < kc; p0++)
    for (int i = 0; i < 8; i++)
      dst[p0 * nr + i] = b[i * cs + p0];
}

/* One micro-panel of nr columns of a transposed B: columns [0, cols) in register blocks of
 * the CPU's width, the rest and zeros past cols one element at a time.  1 when done, 0 on a
 * CPU without AVX2 (the caller's loop then packs). */
static int gemm_pack_bt_f32(const float *b, int64_t cs, int64_t kc, int64_t cols, int nr, float *dst) {
  int isa = gemm_isa(), w = isa == 2 ? 16 : isa == 1 ? 8 : 0;
  if (!w || nr % w)
    return 0;
  int64_t full = cols / w * w;
  for (int64_t j = 0; j < full; j += w)
    (w == 16 ? gemm_pack_bt16_f32 : gemm_pack_bt8_f32)(b + j * cs, cs, kc, nr, dst + j);
  for (int64_t p = 0; p < kc; p++)
    for (int64_t j = full; j < nr; j++)
      dst[p * nr + j] = j < cols ? b[j * cs + p] : 0.0f;
  return 1;
}
#define GEMM_PACK_BT gemm_pack_bt_f32
#endif

/* f32 products of few rows read B in place (rt_gemm_small.h); f64 ones keep the packed path. */
#define GS_AS_F32(x) (x)
GS_KERNELS(f32_small, float, GS_LOAD_F32, GS_LOAD_F32, GS_AS_F32)

#define GEMM_T float
#define GEMM_SUF f32
#define GEMM_SMALL f32_small_kernel
#include "rt_gemm_impl.h"
#undef GEMM_T
#undef GEMM_SUF
#undef GEMM_SMALL
#undef GEMM_PACK_BT

#define GEMM_T double
#define GEMM_SUF f64
#include "rt_gemm_impl.h"
#undef GEMM_T
#undef GEMM_SUF

/* bf16 operands widened while packed, on the f32 kernels (rt_gemm_internal.h). */
#define GEMM_WIDEN 1
#define GEMM_T float
#define GEMM_SRC uint16_t
#define GEMM_LD(x) rt_bf16_to_f32(x)
#define GEMM_SUF bf16
#define GEMM_KSUF f32
#include "rt_gemm_impl.h"
#undef GEMM_WIDEN
#undef GEMM_T
#undef GEMM_SRC
#undef GEMM_LD
#undef GEMM_SUF
#undef GEMM_KSUF

/* f16 operands the same way: an f16 element as f32, exactly, without branches (the packing
 * loops vectorize on any CPU): normals rebias their exponent, subnormals go through an
 * integer conversion (so that a caller's denormals-are-zero mode cannot flush them), and
 * NaN is quieted, as the hardware's vcvtph2ps does. */
static inline float gemm_f16_to_f32(uint16_t h) {
  uint32_t em = h & 0x7FFFu, w;
  uint32_t normal = (em << 13) + (112u << 23);
  uint32_t special = (em << 13) | 0x7F800000u | (em > 0x7C00u ? 0x00400000u : 0); /* inf, NaN */
  float sub = (float)(int32_t)em * 0x1p-24f; /* zero or subnormal: em units of 2^-24 */
  __builtin_memcpy(&w, &sub, sizeof w);
  w = em < 0x400u ? w : em >= 0x7C00u ? special : normal;
  w |= (uint32_t)(h & 0x8000u) << 16;
  float f;
  __builtin_memcpy(&f, &w, sizeof f);
  return f;
}
/* Few rows read an f16 B in place (rt_gemm_small.h), as f32 ones do: the same sums. */
#define F16_TO_F32(x) gemm_f16_to_f32(x)
GS_KERNELS(f16_small, uint16_t, GS_LOAD_F16, GS_LOAD_F16_AVX512, gemm_f16_to_f32)
#undef F16_TO_F32
#define GEMM_WIDEN 1
#define GEMM_T float
#define GEMM_SRC uint16_t
#define GEMM_LD(x) gemm_f16_to_f32(x)
#define GEMM_SUF f16
#define GEMM_KSUF f32
#define GEMM_SMALL f16_small_kernel
#include "rt_gemm_impl.h"
#undef GEMM_LD
#undef GEMM_SUF
#if GEMM_X86
/* The same with F16C's vcvtph2ps in the packing, for CPUs with AVX2 (rt_isa.h): the scalar
 * conversion above in packing loops cost 40 % of an f16 MLP's time. */
#define GEMM_PACK_ATTR __attribute__((target("avx2,fma,f16c")))
#define GEMM_LD(x) gemm_f16_to_f32(x)
#define GEMM_PACK_LD(x) _cvtsh_ss(x)
#define GEMM_LD8(d, s) _mm256_storeu_ps((d), _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)(s))))
#define GEMM_SUF f16c
#include "rt_gemm_impl.h"
#undef GEMM_PACK_ATTR
#undef GEMM_PACK_LD
#undef GEMM_LD
#undef GEMM_LD8
#undef GEMM_SUF
#endif
#undef GEMM_SMALL
#undef GEMM_WIDEN
#undef GEMM_T
#undef GEMM_SRC
#undef GEMM_KSUF

/* The f16 entries: the F16C packing where the CPU has it. */
static void gemm_widened_f16(hlo_context *ctx, int64_t batch, int64_t m, int64_t n, int64_t k, const uint16_t *a,
                             int64_t a_bs, int64_t a_rs, int64_t a_cs, const int64_t *a_off, const uint16_t *b,
                             int64_t b_bs, int64_t b_rs, int64_t b_cs, const int64_t *b_off, float *c) {
#if GEMM_X86
  if (rt_isa_level() >= RT_ISA_AVX2) {
    rt_gemm_widened_f16c(ctx, batch, m, n, k, a, a_bs, a_rs, a_cs, a_off, b, b_bs, b_rs, b_cs, b_off, c, NULL, NULL);
    return;
  }
#endif
  rt_gemm_widened_f16(ctx, batch, m, n, k, a, a_bs, a_rs, a_cs, a_off, b, b_bs, b_rs, b_cs, b_off, c, NULL, NULL);
}

HLO_RT_EXPORT void hlo_rt_gemm_strided_f16(hlo_context *ctx, int64_t batch, int64_t m, int64_t n, int64_t k,
                                           const uint16_t *a, int64_t a_bs, int64_t a_rs, int64_t a_cs,
                                           const uint16_t *b, int64_t b_bs, int64_t b_rs, int64_t b_cs, float *c) {
  gemm_widened_f16(ctx, batch, m, n, k, a, a_bs, a_rs, a_cs, NULL, b, b_bs, b_rs, b_cs, NULL, c);
}

HLO_RT_EXPORT void hlo_rt_gemm_indexed_f16(hlo_context *ctx, int64_t batch, int64_t m, int64_t n, int64_t k,
                                           const uint16_t *a, const int64_t *a_off, const uint16_t *b,
                                           const int64_t *b_off, float *c) {
  gemm_widened_f16(ctx, batch, m, n, k, a, 0, 0, 0, a_off, b, 0, 0, 0, b_off, c);
}
