/* rt_gemm_bf16.c — dense matrix products of bf16 operands for compiled dot instructions
 * (hlo/rt.h): C = A·B accumulated in f32 into a dense row-major f32 C, optionally rounded once
 * (to nearest even) into a bf16 result as each part of C becomes final.  A and B come with
 * element strides or offset tables and a batch dimension, as in rt_gemm.c.  A blocks and B
 * panels are packed straight from bf16 into the layout of AMX tiles (A: 16 rows x 32 depths
 * per tile; B: 16 depth pairs x 16 columns x 2), which is also what AVX512_BF16's vdpbf16ps
 * reads (a B tile row is one vector of 16 column pairs, an A pair one 32-bit broadcast).  A
 * 32 x 32 micro tile runs on AMX where the CPU and the kernel allow it; otherwise rt_gemm.c's
 * f32 kernels run on the operands widened as they are packed (rt_gemm_internal.h), or an
 * AVX512_BF16 kernel on the AMX layout where a probe finds that vdpbf16ps pays on this core
 * (rt_gemm_bf16_dot_gain; HLO_GEMM_BF16=f32|avx512 overrides).  Products of few rows read B
 * in place with f32 FMAs (rt_gemm_small.h), or on AMX go through the tiles with B read once in the memory's best
 * order (bf_rows_amx*: wide row panels, or the weights in place as the tiles' A operand).
 * Threads as in rt_gemm.c: each computes its own rectangle of C with its own buffers
 * (rt_gemm_split).  Numerics and timings: docs/performance-gemm.md.  Tests:
 * runtime/src/kernels/rt_gemm_test.c.
 */
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "hlo/rt.h"
#include "hlo/rt_parallel.h"
#include "rt_gemm_internal.h"
#include "rt_gemm_small.h"
#include "rt_isa.h"
#include "rt_transpose16.h"

#if defined(__x86_64__) && defined(__GNUC__) && defined(__linux__)
#define BF_X86 1
#include <cpuid.h>
#include <immintrin.h>
#include <sys/syscall.h>
#include <unistd.h>
#else
#define BF_X86 0
#endif

/* The micro tile: BF_T rows x BF_T columns of C; depths go in blocks of BF_KB (one tile). */
#define BF_T 32
#define BF_KB 32
#define BF_BLOCK (BF_T * BF_KB) /* elements of one packed depth block of a micro-panel */
/* Cache blocking: depth panels of at most BF_KC, row blocks of at most BF_MC (128 x 2048 of A,
 * 512 KiB, stays in L2), B panels of BF_NC columns.  The depth panel is deep because the AMX
 * kernel's cost beside its tile products is loading and storing its C tile once per panel (8 KB
 * strided rows): at 2048^3 on one core (CPU time, best of 5) KC 512 gave 450-470 GFLOP/s,
 * 1024 560-600, 2048 600-640 (docs/performance-gemm.md). */
#define BF_KC 2048
#define BF_MC 128
#define BF_NC 2048

enum { BF_ISA_F32 = 0, BF_ISA_AVX512 = 1, BF_ISA_AMX = 2 };

static int64_t bf_round_up(int64_t x, int64_t to) { return (x + to - 1) / to * to; }

/* float -> bf16 bits, round to nearest even; NaN stays a quiet NaN (as codegen's convert). */
static uint16_t bf_from_f32(float f) {
  uint32_t w;
  memcpy(&w, &f, 4);
  if (f != f)
    return (uint16_t)((w >> 16) | 0x40);
  return (uint16_t)((w + 0x7FFF + ((w >> 16) & 1)) >> 16);
}

/* ---- which kernel: the CPU, the OS (AMX needs a permission per process), HLO_GEMM_BF16 ---- */

#if BF_X86
/* Asks Linux for the AMX tile state (ARCH_REQ_XCOMP_PERM, XFEATURE_XTILEDATA); 1 if granted. */
static int bf_amx_permit(void) { return syscall(SYS_arch_prctl, 0x1023, 18) == 0; }

/* AMX-BF16 and AMX-TILE: CPUID leaf 7, EDX bits 22 and 24 (read directly: not every compiler's
 * __builtin_cpu_supports knows them; the OS side is bf_amx_permit). */
static int bf_cpu_amx(void) {
  unsigned a, b, c, d;
  return __get_cpuid_count(7, 0, &a, &b, &c, &d) && (d >> 22 & 1) && (d >> 24 & 1);
}
#endif

/* The best kernel this CPU and OS run (within HLO_RT_ISA: rt_isa.h), found once (the run-time
 * dispatch cache). */
static int bf_isa_host(void) {
  static _Atomic int cached = -1;
  int isa = atomic_load_explicit(&cached, memory_order_relaxed);
  if (isa >= 0)
    return isa;
  isa = BF_ISA_F32;
#if BF_X86
  int level = rt_isa_level();
  __builtin_cpu_init();
  if (level >= RT_ISA_AVX512 && __builtin_cpu_supports("avx512bf16") && __builtin_cpu_supports("avx512bw"))
    isa = BF_ISA_AVX512;
  if (isa == BF_ISA_AVX512 && level >= RT_ISA_AMX && bf_cpu_amx() && bf_amx_permit())
    isa = BF_ISA_AMX;
#endif
  atomic_store_explicit(&cached, isa, memory_order_relaxed);
  return isa;
}

#if BF_X86
/* ---- does vdpbf16ps pay on this core: a probe of its multiply-add rate against FMA's ---- */

#define BF_PROBE_CHAINS 16 /* independent accumulators: more than either instruction's latency x rate */
#define BF_PROBE_STEPS 1024
#define BF_PROBE_TRIES 7

static double bf_probe_now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec * 1e9 + (double)t.tv_nsec;
}

/* Nanoseconds for BF_PROBE_STEPS rounds of BF_PROBE_CHAINS vdpbf16ps (32 multiply-adds each)
 * or vfmadd231ps (16 each), register operands only.  The operands pass through an empty asm
 * so the compiler can neither fold nor shorten the chains; the sums stay zero (no denormal or
 * overflow assists). */
#define BF_PROBE(NAME, TARGET, TYPE, OP)                                                             \
  __attribute__((target(TARGET), noinline)) static double NAME(void) {                            \
    __m512 acc[BF_PROBE_CHAINS];                                                                    \
    for (int c = 0; c < BF_PROBE_CHAINS; c++)                                                       \
      acc[c] = _mm512_setzero_ps();                                                                 \
    TYPE x = (TYPE)_mm512_setzero_ps(), y = (TYPE)_mm512_setzero_ps();                              \
    __asm__ volatile("" : "+v"(x), "+v"(y));                                                        \
    double t0 = bf_probe_now();                                                                     \
    for (int s = 0; s < BF_PROBE_STEPS; s++)                                                        \
      _Pragma("GCC unroll 16") for (int c = 0; c < BF_PROBE_CHAINS; c++) acc[c] = OP;                \
    double t1 = bf_probe_now();                                                                     \
    __m512 sum = acc[0];                                                                            \
    for (int c = 1; c < BF_PROBE_CHAINS; c++)                                                       \
      sum = _mm512_add_ps(sum, acc[c]);                                                             \
    __asm__ volatile("" : : "v"(sum));                                                              \
    return t1 - t0;                                                                                 \
  }
BF_PROBE(bf_probe_dpbf16, "avx512f,avx512bf16", __m512bh, _mm512_dpbf16_ps(acc[c], x, y))
BF_PROBE(bf_probe_fma, "avx512f,fma", __m512, _mm512_fmadd_ps(x, y, acc[c]))
#undef BF_PROBE
#endif

double rt_gemm_bf16_dot_gain(void) {
#if BF_X86
  __builtin_cpu_init();
  if (rt_isa_level() < RT_ISA_AVX512 || !__builtin_cpu_supports("avx512bf16"))
    return 0;
  double dp = -1, fma = -1;
  for (int t = 0; t < BF_PROBE_TRIES; t++) { /* alternated, the best of each: interruptions only add */
    double a = bf_probe_dpbf16(), b = bf_probe_fma();
    dp = dp < 0 || a < dp ? a : dp;
    fma = fma < 0 || b < fma ? b : fma;
  }
  return dp > 0 ? 2.0 * fma / dp : 0;
#else
  return 0;
#endif
}

/* Whether the AVX512_BF16 kernel beats the f32 route here, asked once per process (the
 * run-time dispatch cache).  The gains CPUs have are far apart (this Intel model 167 about
 * 0.55; LLVM's scheduling models: Cooper Lake 2, Zen 4/5 0.67; 1 or above makes the kernel,
 * which reads half the bytes, at least as fast as the f32 route), so the gain against
 * RT_GEMM_BF16_DOT_PAYS reads the same way on every run of one CPU. */
static int bf_dot_pays(void) {
  static _Atomic int cached = -1;
  int pays = atomic_load_explicit(&cached, memory_order_relaxed);
  if (pays < 0) {
    pays = rt_gemm_bf16_dot_gain() >= RT_GEMM_BF16_DOT_PAYS;
    atomic_store_explicit(&cached, pays, memory_order_relaxed);
  }
  return pays;
}

/* The kernel for this call: AMX where the host has it; else the AVX512_BF16 kernel where the
 * probe finds vdpbf16ps retiring enough multiply-adds per cycle against f32 FMAs (not on the
 * Intel CPU measured, where it retires half as many: docs/performance-gemm.md); else the f32
 * route.  HLO_GEMM_BF16=avx512 picks the AVX512_BF16 kernel (where the host has it),
 * HLO_GEMM_BF16=f32 the f32 route. */
static int bf_isa(void) {
  int host = bf_isa_host();
  const char *want = getenv("HLO_GEMM_BF16");
  if (want && strcmp(want, "f32") == 0)
    return BF_ISA_F32;
  if (want && strcmp(want, "avx512") == 0)
    return host >= BF_ISA_AVX512 ? BF_ISA_AVX512 : BF_ISA_F32;
  if (host == BF_ISA_AMX)
    return BF_ISA_AMX;
  return host == BF_ISA_AVX512 && bf_dot_pays() ? BF_ISA_AVX512 : BF_ISA_F32;
}

/* ---- micro-kernels: C[32 x 32] (row stride ldc) = (add ? C : 0) + A-panel · B-panel ---- */

typedef void (*bf_micro_fn)(int64_t kcp, const uint16_t *a, const uint16_t *b, float *c, int64_t ldc, int add);

#if BF_X86
/* AMX: accumulator tiles 0-3 (C quadrants), A tiles 4-5 (rows 0-15, 16-31), B tiles 6-7
 * (columns 0-15, 16-31).  The tile configuration is loaded by bf_tiles_begin. */
__attribute__((target("amx-tile,amx-bf16"))) static void bf_micro_amx(int64_t kcp, const uint16_t *a,
                                                                     const uint16_t *b, float *c, int64_t ldc,
                                                                     int add) {
  size_t cs = (size_t)ldc * sizeof(float);
  if (add) {
    _tile_loadd(0, c, cs);
    _tile_loadd(1, c + 16, cs);
    _tile_loadd(2, c + 16 * ldc, cs);
    _tile_loadd(3, c + 16 * ldc + 16, cs);
  } else {
    _tile_zero(0);
    _tile_zero(1);
    _tile_zero(2);
    _tile_zero(3);
  }
  for (int64_t q = 0; q < kcp; q += BF_KB, a += BF_BLOCK, b += BF_BLOCK) {
    _tile_loadd(4, a, 64);
    _tile_loadd(6, b, 64);
    _tile_loadd(5, a + 512, 64);
    _tile_loadd(7, b + 512, 64);
    _tile_dpbf16ps(0, 4, 6);
    _tile_dpbf16ps(1, 4, 7);
    _tile_dpbf16ps(2, 5, 6);
    _tile_dpbf16ps(3, 5, 7);
  }
  _tile_stored(0, c, cs);
  _tile_stored(1, c + 16, cs);
  _tile_stored(2, c + 16 * ldc, cs);
  _tile_stored(3, c + 16 * ldc + 16, cs);
}

/* The tile configuration (palette 1: eight tiles of 16 rows x 64 bytes), loaded on the
 * calling thread before its AMX micro-kernels run. */
typedef struct bf_tilecfg {
  uint8_t palette, start_row, reserved[14];
  uint16_t colsb[16];
  uint8_t rows[16];
} bf_tilecfg;

static const bf_tilecfg bf_tiles = {.palette = 1,
                                   .colsb = {64, 64, 64, 64, 64, 64, 64, 64},
                                   .rows = {16, 16, 16, 16, 16, 16, 16, 16}};

/* A constant in memory: GCC 12's _tile_loadconfig tells the compiler it reads only a pointer's
 * worth of the configuration, so a local one's stores were dropped. */
__attribute__((target("amx-tile"))) static void bf_tiles_begin(void) { _tile_loadconfig(&bf_tiles); }

__attribute__((target("amx-tile"))) static void bf_tiles_end(void) { _tile_release(); }

/* AVX512_BF16: R rows of the tile (from the row the pointers are at) by 32 columns, 2R
 * accumulators; per depth pair two B vectors and R broadcast pairs of A. */
#define BF_MICRO_AVX(NAME, R)                                                                               \
  __attribute__((target("avx512bf16,avx512f,avx512bw,avx512vl"))) static void NAME(                         \
      int64_t kcp, const uint16_t *a, const uint16_t *b, float *c, int64_t ldc, int add) {                  \
    __m512 acc[R][2];                                                                                       \
    _Pragma("GCC unroll 16") for (int i = 0; i < R; i++) for (int v = 0; v < 2; v++) acc[i][v] =             \
        add ? _mm512_loadu_ps(c + i * ldc + 16 * v) : _mm512_setzero_ps();                                   \
    for (int64_t q = 0; q < kcp; q += BF_KB, a += BF_BLOCK, b += BF_BLOCK)                                  \
      for (int t = 0; t < 16; t++) {                                                                        \
        __m512bh b0 = (__m512bh)_mm512_loadu_si512(b + t * 32);                                              \
        __m512bh b1 = (__m512bh)_mm512_loadu_si512(b + 512 + t * 32);                                        \
        _Pragma("GCC unroll 16") for (int i = 0; i < R; i++) {                                              \
          int32_t pair;                                                                                     \
          memcpy(&pair, a + i * 32 + 2 * t, 4);                                                             \
          __m512bh av = (__m512bh)_mm512_set1_epi32(pair);                                                  \
          acc[i][0] = _mm512_dpbf16_ps(acc[i][0], av, b0);                                                  \
          acc[i][1] = _mm512_dpbf16_ps(acc[i][1], av, b1);                                                  \
        }                                                                                                   \
      }                                                                                                     \
    _Pragma("GCC unroll 16") for (int i = 0; i < R; i++) for (int v = 0; v < 2; v++)                        \
        _mm512_storeu_ps(c + i * ldc + 16 * v, acc[i][v]);                                                  \
  }
BF_MICRO_AVX(bf_micro_avx11, 11)
BF_MICRO_AVX(bf_micro_avx10, 10)
#undef BF_MICRO_AVX

/* The 32-row tile as rows 0-10, 11-21 and 22-31 (an A depth block holds row i at i*32): each
 * part keeps at least 20 accumulator chains in flight (vdpbf16ps's latency wants 12 at two per
 * cycle; the earlier 14 + 14 + 4 split left the last part 8, matmul 2048 4-7 % slower on an
 * AMD EPYC family 26). */
static void bf_micro_avx(int64_t kcp, const uint16_t *a, const uint16_t *b, float *c, int64_t ldc, int add) {
  bf_micro_avx11(kcp, a, b, c, ldc, add);
  bf_micro_avx11(kcp, a + 11 * 32, b, c + 11 * ldc, ldc, add);
  bf_micro_avx10(kcp, a + 22 * 32, b, c + 22 * ldc, ldc, add);
}

/* One depth pair (rows r0, r1) of a full 32-column group of a row-major B into its two tile
 * rows: d[0..31] = r0[0], r1[0], ..., r0[15], r1[15] and d[512..543] the same for columns
 * 16-31. */
__attribute__((target("avx512f,avx512bw"))) static void bf_pack_pair32(const uint16_t *r0, const uint16_t *r1,
                                                                     uint16_t *d) {
  static const uint16_t lo[32] = {0, 32, 1, 33, 2, 34, 3, 35, 4, 36, 5, 37, 6, 38, 7, 39,
                                  8, 40, 9, 41, 10, 42, 11, 43, 12, 44, 13, 45, 14, 46, 15, 47};
  __m512i x = _mm512_loadu_si512(r0), y = _mm512_loadu_si512(r1);
  __m512i il = _mm512_loadu_si512(lo), ih = _mm512_add_epi16(il, _mm512_set1_epi16(16));
  _mm512_storeu_si512(d, _mm512_permutex2var_epi16(x, il, y));
  _mm512_storeu_si512(d + 512, _mm512_permutex2var_epi16(x, ih, y));
}
#endif

/* ---- packing ---- */

#if BF_X86
/* One 32 x 32 block of an A whose rows are contiguous (a transposed A, or row offsets in runs):
 * depth pp of the block's 32 rows at src + off[pp] (32 adjacent elements) into the packed
 * block dst[ii*32 + pp].  Two depths interleaved make 16 pairs per 16 rows (as
 * bf_pack_pair32), then two 16 x 16 transposes of the pairs give each row its 32 depths. */
__attribute__((target("avx512f,avx512bw"))) static void bf_pack_a_block_t(const uint16_t *src, const int64_t *off,
                                                                        uint16_t *dst) {
  static const uint16_t lo[32] = {0, 32, 1, 33, 2, 34, 3, 35, 4, 36, 5, 37, 6, 38, 7, 39,
                                  8, 40, 9, 41, 10, 42, 11, 43, 12, 44, 13, 45, 14, 46, 15, 47};
  __m512i il = _mm512_loadu_si512(lo), ih = _mm512_add_epi16(il, _mm512_set1_epi16(16));
  __m512 r0[16], r1[16];
  for (int r = 0; r < 16; r++) {
    __m512i x = _mm512_loadu_si512(src + off[2 * r]), y = _mm512_loadu_si512(src + off[2 * r + 1]);
    r0[r] = _mm512_castsi512_ps(_mm512_permutex2var_epi16(x, il, y));
    r1[r] = _mm512_castsi512_ps(_mm512_permutex2var_epi16(x, ih, y));
  }
  rt_transpose16(r0);
  rt_transpose16(r1);
  for (int ii = 0; ii < 16; ii++) {
    _mm512_storeu_si512(dst + ii * 32, _mm512_castps_si512(r0[ii]));
    _mm512_storeu_si512(dst + (ii + 16) * 32, _mm512_castps_si512(r1[ii]));
  }
}
#endif

/* Packs rows [0, rows) x depths [0, depth) of A into micro-panels of 32 rows, each depth block
 * one AMX A tile pair: (i = r*32 + ii, p = q*32 + pp) at dst[r*32*kcp + q*1024 + ii*32 + pp];
 * rows and depths past the operand are zero (kcp: depth rounded up to 32).  Element (i, p)
 * is at a[row[i] + dep[p]] with offset tables, else at a[i*rs + p*cs].  fast: the CPU has
 * AVX512BW (whole 32 x 32 blocks of contiguous rows go through registers). */
static void bf_pack_a(const uint16_t *a, const int64_t *row, const int64_t *dep, int64_t rs, int64_t cs,
                      int64_t rows, int64_t depth, int fast, uint16_t *dst) {
  int64_t kcp = bf_round_up(depth, BF_KB), mp = bf_round_up(rows, BF_T);
  int64_t done = 0; /* rows packed through registers */
#if BF_X86
  if (fast && (row ? rows >= BF_T : rs == 1 && cs != 1)) {
    int64_t off[BF_KB];
    for (; done + BF_T <= rows; done += BF_T) {
      if (row && !gs_cols_contiguous(row + done, BF_T))
        break;
      int64_t first = row ? row[done] : done;
      uint16_t *d = dst + done * kcp;
      for (int64_t q = 0; q + BF_KB <= depth; q += BF_KB) {
        for (int pp = 0; pp < BF_KB; pp++)
          off[pp] = first + (dep ? dep[q + pp] : (q + pp) * cs);
        bf_pack_a_block_t(a, off, d + q * BF_T);
      }
      for (int64_t ii = 0; ii < BF_T; ii++) /* the depth tail, zero past the operand */
        for (int64_t p = depth / BF_KB * BF_KB; p < kcp; p++)
          d[(p / BF_KB) * BF_BLOCK + ii * BF_KB + p % BF_KB] =
              p >= depth ? 0 : a[first + ii + (dep ? dep[p] : p * cs)];
    }
  }
#else
  (void)fast;
#endif
  for (int64_t i = done; i < mp; i++) {
    uint16_t *d = dst + (i / BF_T) * BF_T * kcp + (i % BF_T) * BF_KB;
    if (i >= rows) {
      for (int64_t q = 0; q < kcp; q += BF_KB)
        memset(d + q * BF_T, 0, BF_KB * 2);
      continue;
    }
    if (!row && cs == 1) {
      const uint16_t *s = a + i * rs;
      for (int64_t q = 0; q < kcp; q += BF_KB) {
        int64_t n = depth - q < BF_KB ? depth - q : BF_KB;
        memcpy(d + q * BF_T, s + q, (size_t)n * 2);
        if (n < BF_KB)
          memset(d + q * BF_T + n, 0, (size_t)(BF_KB - n) * 2);
      }
      continue;
    }
    for (int64_t p = 0; p < kcp; p++)
      d[(p / BF_KB) * BF_BLOCK + p % BF_KB] =
          p >= depth ? 0 : row ? a[row[i] + dep[p]] : a[i * rs + p * cs];
  }
}

/* Where (p, j) of a B panel goes: micro-panel j/32, depth block p/32, tile (j%32)/16, tile
 * row (p%32)/2, column pair j%16, pair member p%2. */
static int64_t bf_b_at(int64_t p, int64_t j, int64_t kcp) {
  return (j / BF_T) * BF_T * kcp + (p / BF_KB) * BF_BLOCK + ((j % BF_T) / 16) * 512 + ((p % BF_KB) / 2) * 32 +
         (j % 16) * 2 + (p & 1);
}

#if BF_X86
/* One AMX B tile of a transposed B: 16 columns (cs apart, their depths contiguous) by 32
 * depths, i.e. 16 x 16 depth pairs, transposed in registers so that tile row r holds depth
 * pair r of the 16 columns (64 bytes a row). */
__attribute__((target("avx512f"))) static void bf_pack_bt_tile(const uint16_t *b, int64_t cs, uint16_t *tile) {
  __m512 r[16];
  for (int i = 0; i < 16; i++)
    r[i] = _mm512_castsi512_ps(_mm512_loadu_si512(b + i * cs));
  rt_transpose16(r);
  for (int q = 0; q < 16; q++)
    _mm512_storeu_si512(tile + q * 32, _mm512_castps_si512(r[q]));
}
#endif

/* Packs depths [0, depth) x columns [0, cols) of B into micro-panels of 32 columns, each depth
 * block two AMX B tiles (bf_b_at); zeros past the operand.  Element (p, j) is at
 * b[dep[p] + col[j]] with offset tables, else at b[p*rs + j*cs].  fast: the CPU has
 * AVX512BW (row-major B is interleaved 32 columns at a time). */
static void bf_pack_b(const uint16_t *b, const int64_t *dep, const int64_t *col, int64_t rs, int64_t cs,
                      int64_t depth, int64_t cols, int fast, uint16_t *dst) {
  int64_t kcp = bf_round_up(depth, BF_KB), np = bf_round_up(cols, BF_T);
  int64_t p = 0;
  if (!(fast && !col && cs == 1 && cols % BF_T == 0 && depth % BF_KB == 0))
    memset(dst, 0, (size_t)(kcp * np) * 2); /* padding; the copies below overwrite the rest */
#if BF_X86
  if (!col && cs == 1 && fast) { /* row-major: pairs of rows, 32 columns at a time */
    int64_t full = cols / BF_T * BF_T;
    for (; p + 1 < depth; p += 2)
      for (int64_t j = 0; j < full; j += BF_T)
        bf_pack_pair32(b + p * rs + j, b + (p + 1) * rs + j, dst + bf_b_at(p, j, kcp));
    for (int64_t q = 0; q < depth; q++) /* the columns past the last full group */
      for (int64_t j = full; j < cols; j++)
        dst[bf_b_at(q, j, kcp)] = b[q * rs + j];
  } else if (!col && rs == 1) { /* transposed: a depth pair of one column is 4 adjacent bytes */
    int64_t j16 = fast ? cols / 16 * 16 : 0, q32 = depth / BF_KB * BF_KB; /* whole tiles: registers */
    for (int64_t j = 0; j < j16; j += 16)
      for (int64_t q = 0; q < q32; q += BF_KB)
        bf_pack_bt_tile(b + j * cs + q, cs, dst + bf_b_at(q, j, kcp));
    for (int64_t j = 0; j < cols; j++)
      for (int64_t q = j < j16 ? q32 : 0; q + 1 < depth; q += 2)
        memcpy(dst + bf_b_at(q, j, kcp), b + j * cs + q, 4);
    p = depth / 2 * 2;
  }
#else
  (void)fast;
#endif
  for (; p < depth; p++)
    for (int64_t j = 0; j < cols; j++)
      dst[bf_b_at(p, j, kcp)] = col ? b[dep[p] + col[j]] : b[p * rs + j * cs];
}

/* ---- the blocked product ---- */

/* One product: operands, result, and the split over threads (rt_gemm_split's grid). */
typedef struct bf_job {
  bf_micro_fn micro;
  int amx;
  int round_fast; /* the BF_ROUND_* form bf_round takes (bf_fast_round) */
  int64_t m, n, kk;
  const uint16_t *a, *b;
  int64_t a_rs, a_cs, b_rs, b_cs;
  const int64_t *a_row, *a_dep, *b_dep, *b_col; /* offset tables (all four or none) */
  float *c;                                     /* m x n, row stride n */
  uint16_t *out;                                /* NULL, or the bf16 result (same layout) */
  rt_gemm_grid grid;
} bf_job;

/* Element (i, p) of the job's A and (p, x) of its B, through its strides or offset tables. */
static uint16_t bf_a_elem(const bf_job *j, int64_t i, int64_t p) {
  return j->a_row ? j->a[j->a_row[i] + j->a_dep[p]] : j->a[i * j->a_rs + p * j->a_cs];
}

static uint16_t bf_b_elem(const bf_job *j, int64_t p, int64_t x) {
  return j->b_col ? j->b[j->b_dep[p] + j->b_col[x]] : j->b[p * j->b_rs + x * j->b_cs];
}

#if BF_X86
/* n floats to bf16 as bf_from_f32 does, 16 at a time (same bits; denormals kept, unlike
 * vcvtneps2bf16, so that every kernel rounds alike). */
__attribute__((target("avx512f,avx512bw"))) static void bf_round_row(const float *s, uint16_t *d, int64_t n) {
  int64_t x = 0;
  const __m512i one = _mm512_set1_epi32(1), bias = _mm512_set1_epi32(0x7FFF), quiet = _mm512_set1_epi32(0x40);
  for (; x + 16 <= n; x += 16) {
    __m512 v = _mm512_loadu_ps(s + x);
    __m512i w = _mm512_castps_si512(v), hi = _mm512_srli_epi32(w, 16);
    __m512i r = _mm512_srli_epi32(_mm512_add_epi32(w, _mm512_add_epi32(bias, _mm512_and_si512(hi, one))), 16);
    r = _mm512_mask_or_epi32(r, _mm512_cmp_ps_mask(v, v, _CMP_UNORD_Q), hi, quiet);
    _mm256_storeu_si256((__m256i *)(d + x), _mm512_cvtepi32_epi16(r));
  }
  for (; x < n; x++)
    d[x] = bf_from_f32(s[x]);
}

/* The same with AVX2, 16 at a time (the scalar form's NaN branch keeps compilers from
 * vectorizing it: 11 % of ssd_mobilenet's bf16 convolutions on an AVX2 host). */
__attribute__((target("avx2"))) static void bf_round_row_avx2(const float *s, uint16_t *d, int64_t n) {
  int64_t x = 0;
  const __m256i one = _mm256_set1_epi32(1), bias = _mm256_set1_epi32(0x7FFF), quiet = _mm256_set1_epi32(0x40);
  __m256i r[2];
  for (; x + 16 <= n; x += 16) {
    for (int h = 0; h < 2; h++) {
      __m256 v = _mm256_loadu_ps(s + x + 8 * h);
      __m256i w = _mm256_castps_si256(v), hi = _mm256_srli_epi32(w, 16);
      __m256i t = _mm256_srli_epi32(_mm256_add_epi32(w, _mm256_add_epi32(bias, _mm256_and_si256(hi, one))), 16);
      __m256i nan = _mm256_castps_si256(_mm256_cmp_ps(v, v, _CMP_UNORD_Q));
      r[h] = _mm256_blendv_epi8(t, _mm256_or_si256(hi, quiet), nan);
    }
    /* packus interleaves the halves by 128-bit lane; the permute puts them back in order */
    __m256i packed = _mm256_permute4x64_epi64(_mm256_packus_epi32(r[0], r[1]), 0xD8);
    _mm256_storeu_si256((__m256i *)(d + x), packed);
  }
  for (; x < n; x++)
    d[x] = bf_from_f32(s[x]);
}
#endif

/* How bf_round rounds: one element at a time, or 16 with AVX2 or AVX512BW (the same bits). */
enum { BF_ROUND_SCALAR, BF_ROUND_AVX2, BF_ROUND_AVX512 };

/* Rounds rows x cols of f32 at s (row stride lds) into d (row stride ldd); fast: a
 * BF_ROUND_* form the CPU has. */
static void bf_round(const float *s, int64_t lds, uint16_t *d, int64_t ldd, int64_t rows, int64_t cols, int fast) {
  for (int64_t i = 0; i < rows; i++, s += lds, d += ldd) {
#if BF_X86
    if (fast == BF_ROUND_AVX512) {
      bf_round_row(s, d, cols);
      continue;
    }
    if (fast == BF_ROUND_AVX2) {
      bf_round_row_avx2(s, d, cols);
      continue;
    }
#else
    (void)fast;
#endif
    for (int64_t x = 0; x < cols; x++)
      d[x] = bf_from_f32(s[x]);
  }
}

/* The BF_ROUND_* form bf_round may take here (rt_isa.h). */
static int bf_fast_round(void) {
#if BF_X86
  __builtin_cpu_init();
  if (rt_isa_level() >= RT_ISA_AVX512 && __builtin_cpu_supports("avx512bw"))
    return BF_ROUND_AVX512;
  return rt_isa_level() >= RT_ISA_AVX2 ? BF_ROUND_AVX2 : BF_ROUND_SCALAR;
#else
  return BF_ROUND_SCALAR;
#endif
}

/* Rounds rows [i0, i0 + rows) x columns [c0, c0 + cols) of C, final now, into out. */
static void bf_finish(const bf_job *j, int64_t i0, int64_t rows, int64_t c0, int64_t cols) {
  if (j->out)
    bf_round(j->c + i0 * j->n + c0, j->n, j->out + i0 * j->n + c0, j->n, rows, cols, j->round_fast);
}

/* The reference loop nest (packing buffers could not be allocated): f32 accumulation. */
static void bf_naive(const bf_job *j, int64_t i0, int64_t rows, int64_t j0, int64_t cols) {
  for (int64_t i = i0; i < i0 + rows; i++)
    for (int64_t x = j0; x < j0 + cols; x++) {
      float s = 0;
      for (int64_t p = 0; p < j->kk; p++)
        s += rt_bf16_to_f32(bf_a_elem(j, i, p)) * rt_bf16_to_f32(bf_b_elem(j, p, x));
      j->c[i * j->n + x] = s;
    }
  bf_finish(j, i0, rows, j0, cols);
}

/* One packed A block (mc x kcp) times one packed B panel (kcp x nc) into C; add: accumulate
 * into C.  Partial tiles go through a local tile.  With `direct` (the whole depth in this
 * panel, a bf16 result) every tile goes through the local tile straight into the bf16 result
 * (the element C at c would be): C itself is never written. */
static void bf_macro(const bf_job *j, const uint16_t *ap, const uint16_t *bp, int64_t mc, int64_t nc, int64_t kcp,
                     float *c, int add, uint16_t *direct) {
  float tile[BF_T * BF_T] __attribute__((aligned(64)));
  for (int64_t j0 = 0; j0 < nc; j0 += BF_T) {
    int64_t cols = nc - j0 < BF_T ? nc - j0 : BF_T;
    for (int64_t i0 = 0; i0 < mc; i0 += BF_T) {
      int64_t rows = mc - i0 < BF_T ? mc - i0 : BF_T;
      const uint16_t *a = ap + i0 * kcp, *b = bp + j0 * kcp;
      float *cc = c + i0 * j->n + j0;
      if (direct) {
        j->micro(kcp, a, b, tile, BF_T, 0);
        bf_round(tile, BF_T, direct + i0 * j->n + j0, j->n, rows, cols, 1);
        continue;
      }
      if (rows == BF_T && cols == BF_T) {
        j->micro(kcp, a, b, cc, j->n, add);
        continue;
      }
      j->micro(kcp, a, b, tile, BF_T, 0);
      for (int64_t i = 0; i < rows; i++)
        for (int64_t x = 0; x < cols; x++)
          cc[i * j->n + x] = add ? cc[i * j->n + x] + tile[i * BF_T + x] : tile[i * BF_T + x];
    }
  }
}

/* Whether packing may use AVX512BW: both bf16 kernels imply it. */
static int bf_pack_fast(const bf_job *j) { return j->micro != NULL; }

/* Packs rows [i, i + rows) x depths [p, p + depth) of the job's A into dst. */
static void bf_pack_a_at(const bf_job *j, int64_t i, int64_t p, int64_t rows, int64_t depth, uint16_t *dst) {
  int fast = bf_pack_fast(j);
  if (j->a_row)
    bf_pack_a(j->a, j->a_row + i, j->a_dep + p, 0, 0, rows, depth, fast, dst);
  else
    bf_pack_a(j->a + i * j->a_rs + p * j->a_cs, NULL, NULL, j->a_rs, j->a_cs, rows, depth, fast, dst);
}

/* Packs depths [p, p + depth) x columns [x, x + cols) of the job's B into dst. */
static void bf_pack_b_at(const bf_job *j, int64_t p, int64_t x, int64_t depth, int64_t cols, uint16_t *dst) {
  int fast = bf_pack_fast(j);
  if (j->b_col)
    bf_pack_b(j->b, j->b_dep + p, j->b_col + x, 0, 0, depth, cols, fast, dst);
  else
    bf_pack_b(j->b + p * j->b_rs + x * j->b_cs, NULL, NULL, j->b_rs, j->b_cs, depth, cols, fast, dst);
}

/* Rows [i0, i0 + rows) x columns [j0, j0 + cols) of C on the calling thread, GotoBLAS order
 * (B panels of nc columns, depth panels of kc, A blocks of mc rows), its own buffers.  The
 * depth panels are even multiples of 32 and depend on k alone, so every element of C sees the
 * same sums in the same order whatever the split. */
static void bf_serial(const bf_job *j, int64_t i0, int64_t rows, int64_t j0, int64_t cols) {
  if (rows <= 0 || cols <= 0)
    return;
  int64_t panels = (j->kk + BF_KC - 1) / BF_KC, kc = bf_round_up((j->kk + panels - 1) / panels, BF_KB);
  int64_t blocks = (rows + BF_MC - 1) / BF_MC, mc = bf_round_up((rows + blocks - 1) / blocks, BF_T);
  int64_t nc = bf_round_up(cols < BF_NC ? cols : BF_NC, BF_T);
  uint16_t *ap = hlo_rt_alloc(NULL, 2 * mc * kc), *bp = ap ? hlo_rt_alloc(NULL, 2 * kc * nc) : NULL;
  int direct = j->out && panels == 1; /* a bf16 result from one depth panel skips C */
  if (!bp) {
    hlo_rt_free(NULL, ap);
    bf_naive(j, i0, rows, j0, cols);
    return;
  }
#if BF_X86
  if (j->amx)
    bf_tiles_begin();
#endif
  for (int64_t jc = 0; jc < cols; jc += nc) {
    int64_t ncur = cols - jc < nc ? cols - jc : nc;
    for (int64_t pc = 0; pc < j->kk; pc += kc) {
      int64_t kcur = j->kk - pc < kc ? j->kk - pc : kc, kcp = bf_round_up(kcur, BF_KB);
      bf_pack_b_at(j, pc, j0 + jc, kcur, ncur, bp);
      for (int64_t ic = 0; ic < rows; ic += mc) {
        int64_t mcur = rows - ic < mc ? rows - ic : mc;
        bf_pack_a_at(j, i0 + ic, pc, mcur, kcur, ap);
        int64_t at = (i0 + ic) * j->n + j0 + jc;
        bf_macro(j, ap, bp, mcur, ncur, kcp, j->c + at, pc > 0, direct ? j->out + at : NULL);
        if (pc + kcur == j->kk && !direct)
          bf_finish(j, i0 + ic, mcur, j0 + jc, ncur);
      }
    }
  }
#if BF_X86
  if (j->amx)
    bf_tiles_end();
#endif
  hlo_rt_free(NULL, ap);
  hlo_rt_free(NULL, bp);
}

/* Rectangles [begin, end) of the job's grid (rt_gemm_split), runs of whole BF_T tiles of rows
 * and columns (a hlo_rt_range_fn). */
static void bf_slices(void *arg, int64_t begin, int64_t end) {
  const bf_job *j = arg;
  for (int64_t t = begin; t < end; t++) {
    int64_t r0, r1, c0, c1;
    rt_gemm_slice(j->m, BF_T, t / j->grid.cols, j->grid.rows, &r0, &r1);
    rt_gemm_slice(j->n, BF_T, t % j->grid.cols, j->grid.cols, &c0, &c1);
    bf_serial(j, r0, r1 - r0, c0, c1 - c0);
  }
}

/* Threads worth using: about 2^20 multiply-adds each at least (the tiles are fast). */
static int bf_threads(hlo_context *ctx, int64_t m, int64_t n, int64_t k) {
  int t = hlo_rt_num_threads(ctx);
  double most = (double)m * (double)n * (double)(k > 0 ? k : 1) / 1048576.0;
  if (most < t)
    t = most < 1 ? 1 : (int)most;
  return t;
}

/* C = A·B on `threads` threads, one rectangle of C each (rt_gemm_split's grid for BF_T x BF_T
 * tiles). */
static void bf_gemm(hlo_context *ctx, int threads, bf_job *j) {
  if (j->m <= 0 || j->n <= 0)
    return;
  if (j->kk <= 0) {
    memset(j->c, 0, sizeof(float) * (size_t)(j->m * j->n));
    bf_finish(j, 0, j->m, 0, j->n);
    return;
  }
  j->grid = rt_gemm_split(j->m, j->n, j->kk, BF_T, BF_T, threads, 16.0, 0);
  hlo_rt_parallel_for(threads > 1 ? ctx : NULL, threads, bf_slices, j);
}

/* ---- batches, and the f32 route for CPUs without bf16 instructions ---- */

typedef struct bf_batch_job {
  bf_job proto;
  int64_t a_bs, b_bs;
  const int64_t *a_boff, *b_boff; /* batch offsets (tables) instead of a_bs, b_bs */
} bf_batch_job;

static bf_job bf_batch_at(const bf_batch_job *bj, int64_t t) {
  bf_job j = bj->proto;
  j.a += bj->a_boff ? bj->a_boff[t] : t * bj->a_bs;
  j.b += bj->b_boff ? bj->b_boff[t] : t * bj->b_bs;
  j.c += t * j.m * j.n;
  if (j.out)
    j.out += t * j.m * j.n;
  return j;
}

static void bf_batches(void *arg, int64_t begin, int64_t end) {
  const bf_batch_job *bj = arg;
  for (int64_t t = begin; t < end; t++) {
    bf_job j = bf_batch_at(bj, t);
    bf_gemm(NULL, 1, &j);
  }
}

/* A bf16 result's rounding as the f32 kernels' epilogue (a hlo_rt_range_fn over elements of
 * the whole dense result): each part rounded as it becomes final, still in cache. */
typedef struct bf_round_job {
  const float *c;
  uint16_t *out;
  int fast;
} bf_round_job;

static void bf_round_range(void *arg, int64_t begin, int64_t end) {
  const bf_round_job *r = arg;
  bf_round(r->c + begin, 0, r->out + begin, 0, 1, end - begin, r->fast);
}

/* Without bf16 instructions: the f32 kernels on the operands widened as they are packed
 * (rt_gemm_internal.h: the bits of an f32 product of f32 copies, without the copies), a bf16
 * result rounded part by part. */
static void bf_via_f32(hlo_context *ctx, int64_t batch, const bf_batch_job *bj) {
  const bf_job *p = &bj->proto;
  bf_round_job r = {.c = p->c, .out = p->out, .fast = p->round_fast};
  rt_gemm_widened_bf16(ctx, batch, p->m, p->n, p->kk, p->a, bj->a_bs, p->a_rs, p->a_cs, bj->a_boff, p->b, bj->b_bs,
                       p->b_rs, p->b_cs, bj->b_boff, p->c, p->out ? bf_round_range : NULL, &r);
}

/* ---- few rows: B read where it lies (rt_gemm_small.h) ---- */

GS_KERNELS(bf_small, uint16_t, GS_LOAD_BF16, GS_LOAD_BF16_AVX512, rt_bf16_to_f32)

/* Whether a job takes the few-rows path (gs_takes). */
static int bf_small_ok(const bf_job *p) {
  return gs_takes(p->m, p->n, p->kk, p->a_rs, p->a_cs, p->a_row, p->b_rs, p->b_cs, p->b_col);
}

/* bf_naive rounds a bf16 result itself; the driver's second finish then rounds it again
 * from the same f32 sums (the same bits). */
GS_DRIVER(bf_small, bf_job, bf_batch_job, rt_bf16_to_f32, bf_small_kernel, bf_batch_at, bf_finish, bf_naive, bf_threads)

#if BF_X86
/* Few rows on AMX.  The FMA kernels above spend 2m multiply-adds per 16 elements of B (and
 * walk a row-major B's rows a row stride apart); with 11 rows (a prompt) that, not reading
 * B, was their limit: gemma3 1B's 11-row products read their weights at 6-13 GB/s.  On AMX
 * the products cost four tile instructions per 32 depths of 64 columns, and what is left is
 * reading B once, in the order the memory streams best:
 * - a row-major B (or offset tables whose columns come in runs): packed BF_ROWS_KC depths at
 *   a time across up to BF_ROWS_WIDE columns, each of its rows read as one run, then each
 *   64-column part through four 16 x 16 accumulator tiles (bf_rows_amx_columns);
 * - a B of contiguous depth (x . W^T): the roles swapped, C^T = W . A^T, W read in place as
 *   the tile unit's A operand (bf_rows_amx_t_columns).
 * A's rows are packed once per call (zeros past m).  The sums are AMX's (pairs of products,
 * denormals flushed, as the big AMX kernel's), so they may differ from the FMA kernels' in
 * the last bits. */
enum { BF_ROWS_NC = 64 };

/* Rows from which a few-rows product takes AMX rather than the FMA kernels: below them those
 * read B as fast (11 x 6912 x 1152 on two threads: 1 row 16.3 ms against AMX's 17.4, 2 rows
 * 20.6 against 17.9; a B of contiguous depth, 1152 x 13824: 4 rows 20.1 against 19.7, 8 rows
 * 29.4 against 22.5; docs/performance-gemm.md). */
enum { BF_ROWS_AMX_MIN = 2, BF_ROWS_AMX_T_MIN = 4 };

__attribute__((target("amx-tile"))) static void bf_rows_amx_zero(void) {
  _tile_zero(0);
  _tile_zero(1);
  _tile_zero(2);
  _tile_zero(3);
}

/* One depth panel: kcp depths of the packed A (one 16-row tile per block, 1024 elements apart)
 * by the packed B panel (two 32-column micro-panels, kcp deep) into tiles 0-3. */
__attribute__((target("amx-tile,amx-bf16"))) static void bf_rows_amx_panel(const uint16_t *a, const uint16_t *b,
                                                                           int64_t kcp) {
  const uint16_t *b2 = b + BF_T * kcp;
  for (int64_t q = 0; q < kcp; q += BF_KB, a += BF_BLOCK, b += BF_BLOCK, b2 += BF_BLOCK) {
    _tile_loadd(4, a, 64);
    _tile_loadd(5, b, 64);
    _tile_loadd(6, b + 512, 64);
    _tile_dpbf16ps(0, 4, 5);
    _tile_loadd(7, b2, 64);
    _tile_dpbf16ps(1, 4, 6);
    _tile_loadd(5, b2 + 512, 64);
    _tile_dpbf16ps(2, 4, 7);
    _tile_dpbf16ps(3, 4, 5);
  }
}

/* The row-major (or run-table) form: B packed BF_ROWS_KC depths at a time across up to
 * BF_ROWS_WIDE columns (512 KiB, in L2), so that each of its rows is read as one run (the
 * memory's fast case: 512-byte pieces of rows a row stride apart ran at two thirds of the
 * speed), the rows BF_ROWS_PF ahead prefetched; then each 64-column part of the block runs
 * through the tiles, its sums loaded from and stored to an f32 block between panels. */
enum { BF_ROWS_WIDE = 2048, BF_ROWS_KC = 128, BF_ROWS_PF = 16 };

__attribute__((target("amx-tile"))) static void bf_rows_amx_load(const float *c, int64_t ldc) {
  size_t cs = (size_t)ldc * sizeof(float);
  _tile_loadd(0, c, cs);
  _tile_loadd(1, c + 16, cs);
  _tile_loadd(2, c + 32, cs);
  _tile_loadd(3, c + 48, cs);
}

__attribute__((target("amx-tile"))) static void bf_rows_amx_save(float *c, int64_t ldc) {
  size_t cs = (size_t)ldc * sizeof(float);
  _tile_stored(0, c, cs);
  _tile_stored(1, c + 16, cs);
  _tile_stored(2, c + 32, cs);
  _tile_stored(3, c + 48, cs);
}

/* Depths [p, p + depth) x columns [x, x + cols) of the job's B into dst (bf_b_at's layout,
 * zeros past the operand): row pairs 32 columns at a time where the columns are one run. */
static void bf_rows_pack_b(const bf_job *j, int64_t p0, int64_t x0, int64_t depth, int64_t cols, uint16_t *dst) {
  int64_t kcp = bf_round_up(depth, BF_KB), groups = cols / BF_T;
  if (depth % 2 || cols % BF_T || kcp != depth)
    memset(dst, 0, (size_t)(kcp * bf_round_up(cols, BF_T)) * 2);
  int run = 1;
  for (int64_t g = 0; j->b_col && g < groups && run; g++)
    run = gs_cols_contiguous(j->b_col + x0 + g * BF_T, BF_T);
  if (!run || (j->b_cs != 1 && !j->b_col)) {
    bf_pack_b_at(j, p0, x0, depth, cols, dst);
    return;
  }
  int64_t off = j->b_col ? j->b_col[x0] : x0;
  for (int64_t p = 0; p + 1 < depth; p += 2) {
    int64_t d0 = j->b_dep ? j->b_dep[p0 + p] : (p0 + p) * j->b_rs, d1 = j->b_dep ? j->b_dep[p0 + p + 1] : d0 + j->b_rs;
    int64_t ahead = p + BF_ROWS_PF < depth ? p0 + p + BF_ROWS_PF : p0 + p;
    const uint16_t *pf = j->b + (j->b_dep ? j->b_dep[ahead] : ahead * j->b_rs) + off;
    for (int64_t e = 0; e < cols; e += 32)
      __builtin_prefetch(pf + e, 0, 1);
    for (int64_t g = 0; g < groups; g++) {
      int64_t c = j->b_col ? j->b_col[x0 + g * BF_T] : x0 + g * BF_T;
      bf_pack_pair32(j->b + d0 + c, j->b + d1 + c, dst + bf_b_at(p, g * BF_T, kcp));
    }
  }
  for (int64_t p = 0; p < depth; p++) /* the last columns, and an odd last depth */
    for (int64_t x = p < depth / 2 * 2 ? groups * BF_T : 0; x < cols; x++)
      dst[bf_b_at(p, x, kcp)] = bf_b_elem(j, p0 + p, x0 + x);
}

/* Columns [c0, c1) of a job of at most 16 rows (GS_SPLIT's COLUMNS): 0 when its buffers cannot
 * be allocated. */
static int bf_rows_amx_columns(const bf_job *j, int64_t c0, int64_t c1) {
  int64_t panels = (j->kk + BF_ROWS_KC - 1) / BF_ROWS_KC, kc = bf_round_up((j->kk + panels - 1) / panels, BF_KB);
  int64_t wide = bf_round_up(c1 - c0 < BF_ROWS_WIDE ? c1 - c0 : BF_ROWS_WIDE, BF_ROWS_NC);
  uint16_t *ap = hlo_rt_alloc(NULL, 2 * BF_T * bf_round_up(j->kk, BF_KB));
  uint16_t *bp = ap ? hlo_rt_alloc(NULL, 2 * kc * wide) : NULL;
  float *sums = bp ? hlo_rt_alloc(NULL, (int64_t)sizeof(float) * 16 * wide) : NULL;
  if (!sums) {
    hlo_rt_free(NULL, ap);
    hlo_rt_free(NULL, bp);
    return 0;
  }
  /* A last part of fewer than 64 columns reads past what the panel packed (old panels' data,
   * or these zeros, never unwritten memory); those columns' sums are dropped. */
  memset(bp, 0, (size_t)(2 * kc * wide));
  bf_pack_a_at(j, 0, 0, j->m, j->kk, ap);
  bf_tiles_begin();
  for (int64_t jc = c0; jc < c1; jc += wide) {
    int64_t cols = c1 - jc < wide ? c1 - jc : wide, parts = (cols + BF_ROWS_NC - 1) / BF_ROWS_NC;
    memset(sums, 0, sizeof(float) * 16 * (size_t)wide);
    for (int64_t pc = 0; pc < j->kk; pc += kc) {
      int64_t kcur = j->kk - pc < kc ? j->kk - pc : kc, kcp = bf_round_up(kcur, BF_KB);
      bf_rows_pack_b(j, pc, jc, kcur, cols, bp);
      for (int64_t s = 0; s < parts; s++) {
        bf_rows_amx_load(sums + s * BF_ROWS_NC, wide);
        bf_rows_amx_panel(ap + pc / BF_KB * BF_BLOCK, bp + 2 * s * BF_T * kcp, kcp);
        bf_rows_amx_save(sums + s * BF_ROWS_NC, wide);
      }
    }
    for (int64_t i = 0; i < j->m; i++)
      memcpy(j->c + i * j->n + jc, sums + i * wide, sizeof(float) * (size_t)cols);
  }
  bf_tiles_end();
  bf_finish(j, 0, j->m, c0, c1 - c0);
  hlo_rt_free(NULL, ap);
  hlo_rt_free(NULL, bp);
  hlo_rt_free(NULL, sums);
  return 1;
}

GS_SPLIT(bf_rows_amx, bf_job, bf_batch_job, bf_rows_amx_columns, NULL, bf_batch_at, bf_finish, bf_naive, bf_threads)

/* Few rows by a B whose depth is contiguous (x . W^T: W's rows are B's columns), on AMX with
 * the roles swapped: C^T = W . A^T.  W is the tile unit's A operand, read where it lies (a
 * tile is 16 rows of W by 32 depths, the rows a column stride apart), and A^T its B operand,
 * packed once (depth pairs by A's rows, 16 columns, zeros past m): nothing of W is copied.
 * Four accumulator tiles hold 64 columns of C^T over the whole depth; then they are
 * transposed into C's m rows.  A last partial depth block or column group goes through a
 * zero-padded copy, so nothing past W is read. */
__attribute__((target("amx-tile,amx-bf16"))) static void bf_rows_amx_t_block(const uint16_t *w, int64_t ws,
                                                                             const uint16_t *at, int64_t blocks) {
  size_t stride = (size_t)ws * 2;
  for (int64_t q = 0; q < blocks; q++, w += BF_KB, at += 512) {
    _tile_loadd(6, at, 64);
    _tile_loadd(4, w, stride);
    _tile_loadd(5, w + 16 * ws, stride);
    _tile_dpbf16ps(0, 4, 6);
    _tile_loadd(7, w + 32 * ws, stride);
    _tile_dpbf16ps(1, 5, 6);
    _tile_loadd(4, w + 48 * ws, stride);
    _tile_dpbf16ps(2, 7, 6);
    _tile_dpbf16ps(3, 4, 6);
  }
}

/* Columns [c0, c1) of a job whose B has contiguous depth (GS_SPLIT's COLUMNS). */
static int bf_rows_amx_t_columns(const bf_job *j, int64_t c0, int64_t c1) {
  int64_t k = j->kk, full = k / BF_KB, blocks = (k + BF_KB - 1) / BF_KB, ws = j->b_cs;
  int needs_pad = full < blocks || (c1 - c0) % BF_ROWS_NC;
  uint16_t *at = hlo_rt_alloc(NULL, 2 * 512 * blocks);
  uint16_t *pad = at && needs_pad ? hlo_rt_alloc(NULL, 2 * BF_ROWS_NC * BF_KB * blocks) : NULL;
  if (!at || (needs_pad && !pad)) {
    hlo_rt_free(NULL, at);
    hlo_rt_free(NULL, pad);
    return 0;
  }
  /* A^T: block q, tile row r (depth pair), column i (A's row), pair member e. */
  for (int64_t q = 0; q < blocks; q++)
    for (int64_t r = 0; r < 16; r++)
      for (int64_t i = 0; i < 16; i++)
        for (int e = 0; e < 2; e++) {
          int64_t p = q * BF_KB + 2 * r + e;
          at[q * 512 + r * 32 + i * 2 + e] = i >= j->m || p >= k ? 0 : bf_a_elem(j, i, p);
        }
  float sums[BF_ROWS_NC * 16] __attribute__((aligned(64)));
  bf_tiles_begin();
  for (int64_t jc = c0; jc < c1; jc += BF_ROWS_NC) {
    int64_t cols = c1 - jc < BF_ROWS_NC ? c1 - jc : BF_ROWS_NC;
    const uint16_t *w = j->b + jc * ws;
    bf_rows_amx_zero();
    if (cols == BF_ROWS_NC && full > 0)
      bf_rows_amx_t_block(w, ws, at, full);
    if (cols < BF_ROWS_NC || full < blocks) { /* the rest through a zero-padded copy of W */
      int64_t q0 = cols == BF_ROWS_NC ? full : 0, depth = (blocks - q0) * BF_KB;
      for (int64_t x = 0; x < BF_ROWS_NC; x++)
        for (int64_t p = 0; p < depth; p++)
          pad[x * depth + p] = x < cols && q0 * BF_KB + p < k ? w[x * ws + q0 * BF_KB + p] : 0;
      bf_rows_amx_t_block(pad, depth, at + q0 * 512, blocks - q0);
    }
    bf_rows_amx_save(sums, BF_ROWS_NC); /* tile t: C^T rows 16t + r at sums[r][16t + i] */
    for (int64_t x = 0; x < cols; x++)
      for (int64_t i = 0; i < j->m; i++)
        j->c[i * j->n + jc + x] = sums[(x % 16) * BF_ROWS_NC + (x / 16) * 16 + i];
  }
  bf_tiles_end();
  bf_finish(j, 0, j->m, c0, c1 - c0);
  hlo_rt_free(NULL, at);
  hlo_rt_free(NULL, pad);
  return 1;
}

GS_SPLIT(bf_rows_amx_t, bf_job, bf_batch_job, bf_rows_amx_t_columns, NULL, bf_batch_at, bf_finish, bf_naive, bf_threads)
#endif

/* Runs every batch: batches in parallel when there are enough of them, else one after the
 * other with each product split over the threads. */
static void bf_run_batches(hlo_context *ctx, int64_t batch, bf_batch_job *bj) {
  bf_job *p = &bj->proto;
  if (batch <= 0 || p->m <= 0 || p->n <= 0)
    return;
  int isa = bf_isa();
  p->round_fast = bf_fast_round();
#if BF_X86
  p->micro = isa == BF_ISA_AMX ? bf_micro_amx : isa == BF_ISA_AVX512 ? bf_micro_avx : NULL;
#endif
  if (bf_small_ok(p)) {
#if BF_X86
    int depth_contiguous = !p->b_col && p->b_rs == 1;
    if (isa == BF_ISA_AMX && p->m <= GS_MAX_M && p->m >= (depth_contiguous ? BF_ROWS_AMX_T_MIN : BF_ROWS_AMX_MIN)) {
      if (depth_contiguous)
        bf_rows_amx_t_batches(ctx, batch, bj);
      else
        bf_rows_amx_batches(ctx, batch, bj);
      return;
    }
#endif
    bf_small_batches(ctx, batch, bj);
    return;
  }
  if (isa == BF_ISA_F32) {
    bf_via_f32(ctx, batch, bj);
    return;
  }
  p->amx = isa == BF_ISA_AMX;
  int threads = bf_threads(ctx, p->m, p->n, p->kk);
  if (batch > 1 && (batch >= threads || threads == 1)) {
    hlo_rt_parallel_for(threads > 1 ? ctx : NULL, batch, bf_batches, bj);
    return;
  }
  for (int64_t t = 0; t < batch; t++) {
    bf_job j = bf_batch_at(bj, t);
    bf_gemm(ctx, threads, &j);
  }
}

HLO_RT_EXPORT void hlo_rt_gemm_strided_bf16(hlo_context *ctx, int64_t batch, int64_t m, int64_t n, int64_t k,
                                            const uint16_t *a, int64_t a_bs, int64_t a_rs, int64_t a_cs,
                                            const uint16_t *b, int64_t b_bs, int64_t b_rs, int64_t b_cs, float *c,
                                            uint16_t *out) {
  bf_batch_job bj = {.proto = {.m = m, .n = n, .kk = k, .a = a, .b = b, .a_rs = a_rs, .a_cs = a_cs, .b_rs = b_rs,
                               .b_cs = b_cs, .c = c, .out = out},
                     .a_bs = a_bs,
                     .b_bs = b_bs};
  bf_run_batches(ctx, batch, &bj);
}

HLO_RT_EXPORT void hlo_rt_gemm_indexed_bf16(hlo_context *ctx, int64_t batch, int64_t m, int64_t n, int64_t k,
                                            const uint16_t *a, const int64_t *a_off, const uint16_t *b,
                                            const int64_t *b_off, float *c, uint16_t *out) {
  bf_batch_job bj = {.proto = {.m = m, .n = n, .kk = k, .a = a, .b = b, .a_row = a_off + batch,
                               .a_dep = a_off + batch + m, .b_dep = b_off + batch, .b_col = b_off + batch + k,
                               .c = c, .out = out},
                     .a_boff = a_off,
                     .b_boff = b_off};
  bf_run_batches(ctx, batch, &bj);
}
