/* rt_gemm_impl.h — the element-type-dependent half of rt_gemm.c, included once per type with
 * GEMM_T (float or double) and GEMM_SUF (f32 or f64) defined: the micro-kernels for each
 * instruction set, packing of A blocks and B panels into micro-panels, the blocked loop nest
 * and the public entry points hlo_rt_gemm_SUF, hlo_rt_gemm_strided_SUF (with an epilogue:
 * hlo_rt_gemm_strided_epi_SUF) and hlo_rt_gemm_indexed_SUF.
 * With GEMM_WIDEN defined the operands are stored as GEMM_SRC and widened to GEMM_T by
 * GEMM_LD(x) as they are packed: the packing and loop nest of another suffix, the f32
 * micro-kernels of GEMM_KSUF, A never read in place, and instead of the public entry points
 * GEMM_NAME(rt_gemm_widened) (rt_gemm_internal.h); GEMM_PACK_ATTR, if defined, is the packing
 * functions' target attribute, GEMM_PACK_LD(x) their widening of one element and
 * GEMM_LD8(d, s) of 8 elements at s into d (conversions that attribute allows).  Not a header: nothing else includes it.
 * Tests: runtime/src/kernels/rt_gemm_test.c.
 */
#define GEMM_CAT2(a, b) a##_##b
#define GEMM_CAT(a, b) GEMM_CAT2(a, b)
#define GEMM_NAME(x) GEMM_CAT(x, GEMM_SUF)
#ifndef GEMM_WIDEN
#define GEMM_SRC GEMM_T
#define GEMM_LD(x) (x)
#define GEMM_KSUF GEMM_SUF
#endif
#ifndef GEMM_PACK_ATTR
#define GEMM_PACK_ATTR
#define GEMM_PACK_LD(x) GEMM_LD(x)
#define GEMM_PACK_ATTR_DEFAULT
#endif
#define GEMM_KNAME(x) GEMM_CAT(x, GEMM_KSUF) /* the micro-kernels' names */

#ifndef GEMM_WIDEN

typedef GEMM_T GEMM_NAME(v16b) __attribute__((vector_size(16), aligned(sizeof(GEMM_T))));
typedef GEMM_T GEMM_NAME(v32b) __attribute__((vector_size(32), aligned(sizeof(GEMM_T))));
typedef GEMM_T GEMM_NAME(v64b) __attribute__((vector_size(64), aligned(sizeof(GEMM_T))));

GEMM_MICRO(GEMM_NAME(micro_base), , GEMM_T, GEMM_NAME(v16b), 4, 2, 1, GEMM_NT16)
#if GEMM_X86
GEMM_MICRO(GEMM_NAME(micro_avx2), __attribute__((target("avx2,fma"))), GEMM_T, GEMM_NAME(v32b), 6, 2, 4, GEMM_NT32)
GEMM_MICRO(GEMM_NAME(micro_avx512), RT_TARGET_AVX512, GEMM_T, GEMM_NAME(v64b), 14, 2, 1, GEMM_NT64)
/* The AVX-512 tile's last-row-tile kernels, 1 to 13 rows (256 = 18 x 14 + 4 rows: without
 * them the last tile computes 14 rows for 4). */
#define GEMM_EDGE512(R)                                                                              \
  GEMM_MICRO_AS(GEMM_NAME(edge512_##R), RT_TARGET_AVX512, GEMM_T, GEMM_NAME(v64b), R, \
                14, 2, 1, GEMM_NT64)
GEMM_EDGE512(1)
GEMM_EDGE512(2)
GEMM_EDGE512(3)
GEMM_EDGE512(4)
GEMM_EDGE512(5)
GEMM_EDGE512(6)
GEMM_EDGE512(7)
GEMM_EDGE512(8)
GEMM_EDGE512(9)
GEMM_EDGE512(10)
GEMM_EDGE512(11)
GEMM_EDGE512(12)
GEMM_EDGE512(13)
#undef GEMM_EDGE512
/* One vector of columns (16 f32, 8 f64) for products that narrow (the MLP's last layer has
 * 10 columns: the 2-vector tile computed 32 for them). */
GEMM_MICRO(GEMM_NAME(micro_avx512_narrow), RT_TARGET_AVX512, GEMM_T, GEMM_NAME(v64b), 14, 1,
           1, GEMM_NT64)
/* A read in place: 6 rows by 4 vectors (64 f32 or 32 f64 columns), and one row. */
GEMM_MICRO_DIRECT(GEMM_NAME(direct_avx512), RT_TARGET_AVX512, GEMM_T, GEMM_NAME(v64b), 6,
                  4)
GEMM_MICRO_DIRECT(GEMM_NAME(direct1_avx512), RT_TARGET_AVX512, GEMM_T, GEMM_NAME(v64b),
                  1, 4)
#endif

/* The micro-kernel for the running CPU and a product of n columns, and its tile (mr rows x
 * nr columns). */
static gemm_kernel GEMM_NAME(pick_kernel)(int64_t n) {
  int isa = gemm_isa();
  gemm_kernel k = {.mr = 4, .nr = (int)(2 * 16 / sizeof(GEMM_T)), .micro = (gemm_micro_fn)GEMM_NAME(micro_base)};
#if GEMM_X86
  if (isa == 2 && n <= (int64_t)(64 / sizeof(GEMM_T)))
    k = (gemm_kernel){.mr = 14, .nr = (int)(64 / sizeof(GEMM_T)), .micro = (gemm_micro_fn)GEMM_NAME(micro_avx512_narrow)};
  else if (isa == 2) {
    k = (gemm_kernel){.mr = 14, .nr = (int)(2 * 64 / sizeof(GEMM_T)), .micro = (gemm_micro_fn)GEMM_NAME(micro_avx512),
                      .edge = {NULL, (gemm_micro_fn)GEMM_NAME(edge512_1), (gemm_micro_fn)GEMM_NAME(edge512_2),
                       (gemm_micro_fn)GEMM_NAME(edge512_3), (gemm_micro_fn)GEMM_NAME(edge512_4),
                       (gemm_micro_fn)GEMM_NAME(edge512_5), (gemm_micro_fn)GEMM_NAME(edge512_6),
                       (gemm_micro_fn)GEMM_NAME(edge512_7), (gemm_micro_fn)GEMM_NAME(edge512_8),
                       (gemm_micro_fn)GEMM_NAME(edge512_9), (gemm_micro_fn)GEMM_NAME(edge512_10),
                       (gemm_micro_fn)GEMM_NAME(edge512_11), (gemm_micro_fn)GEMM_NAME(edge512_12),
                       (gemm_micro_fn)GEMM_NAME(edge512_13)}};
    k.direct = (gemm_micro_fn)GEMM_NAME(direct_avx512);
    k.direct1 = (gemm_micro_fn)GEMM_NAME(direct1_avx512);
    k.dmr = 6;
    k.dnr = (int)(4 * 64 / sizeof(GEMM_T));
  } else if (isa == 1)
    k = (gemm_kernel){.mr = 6, .nr = (int)(2 * 32 / sizeof(GEMM_T)), .micro = (gemm_micro_fn)GEMM_NAME(micro_avx2),
                      .mmax = sizeof(GEMM_T) == 4 ? 96 : 0};
#else
  (void)isa;
  (void)n;
#endif
  return k;
}
#endif /* GEMM_WIDEN */

typedef void (*GEMM_NAME(micro_fn))(int64_t kc, const GEMM_T *a, const GEMM_T *b, GEMM_T *c, int64_t ldc, int add);
typedef void (*GEMM_NAME(direct_fn))(int64_t kc, const GEMM_T *a, int64_t lda, const GEMM_T *b, GEMM_T *c,
                                     int64_t ldc, int add);

/* One full micro-panel of A: mr rows, row ii at a + ii*ri, by kc depths, depth p at offset
 * dep[p] (tables) or p*cs, into dst[p*mr + ii].  Two layouts take it: a row-major A (ri the
 * row stride, cs = 1) and one whose rows lie side by side (ri = 1: x^T . y, Flax's
 * W[c, d, h] . x; the generic loop below read those one by one through the tables, 72 % of
 * gemma3's key/value einsum).  Inlined with a constant mr, the rows' pointers stay in
 * registers and each depth is mr loads and stores (half the time of the generic loop). */
GEMM_PACK_ATTR static inline void GEMM_NAME(pack_a_full)(const GEMM_SRC *restrict a, int64_t ri, const int64_t *dep,
                                                         int64_t cs, int64_t kc, int mr, GEMM_T *restrict dst) {
  const GEMM_SRC *r[GEMM_MAX_MR];
  for (int ii = 0; ii < mr; ii++)
    r[ii] = a + ii * ri;
  for (int64_t p = 0; p < kc; p++, dst += mr) {
    int64_t at = dep ? dep[p] : p * cs;
    _Pragma("GCC unroll 14") for (int ii = 0; ii < mr; ii++) dst[ii] = GEMM_PACK_LD(r[ii][at]);
  }
}

/* Whether rows [i0, i0 + mr) of A lie side by side (row offsets, or the row stride, one apart). */
static inline int GEMM_NAME(rows_adjacent)(const int64_t *row, int64_t rs, int64_t i0, int mr) {
  if (!row)
    return rs == 1;
  for (int ii = 1; ii < mr; ii++)
    if (row[i0 + ii] != row[i0] + ii)
      return 0;
  return 1;
}

/* Packs rows [0, mc) x columns [0, kc) of A into micro-panels of mr rows: panel r holds
 * (i = r*mr + ii, p) at dst[r*mr*kc + p*mr + ii]; rows past mc are zero.  Element (i, p) is
 * at a[row[i] + dep[p]] with offset tables, else at a[i*rs + p*cs]. */
GEMM_PACK_ATTR static void GEMM_NAME(pack_a)(const GEMM_SRC *a, const int64_t *row, const int64_t *dep, int64_t rs, int64_t cs,
                              int64_t mc, int64_t kc, int mr, GEMM_T *dst) {
  for (int64_t i0 = 0; i0 < mc; i0 += mr, dst += (int64_t)mr * kc) {
    int64_t rows = mc - i0 < mr ? mc - i0 : mr;
    int full = rows == mr && (mr == 14 || mr == 6 || mr == 4), row_major = !row && cs == 1;
    if (full && (row_major || GEMM_NAME(rows_adjacent)(row, rs, i0, mr))) {
      const GEMM_SRC *first = row ? a + row[i0] : a + i0 * rs;
      int64_t ri = row_major ? rs : 1;
      if (mr == 14) /* a constant mr for each inlined copy */
        GEMM_NAME(pack_a_full)(first, ri, dep, cs, kc, 14, dst);
      else if (mr == 6)
        GEMM_NAME(pack_a_full)(first, ri, dep, cs, kc, 6, dst);
      else
        GEMM_NAME(pack_a_full)(first, ri, dep, cs, kc, 4, dst);
      continue;
    }
    for (int64_t p = 0; p < kc; p++) {
      if (row)
        for (int64_t ii = 0; ii < rows; ii++)
          dst[p * mr + ii] = GEMM_PACK_LD(a[row[i0 + ii] + dep[p]]);
      else
        for (int64_t ii = 0; ii < rows; ii++)
          dst[p * mr + ii] = GEMM_PACK_LD(a[(i0 + ii) * rs + p * cs]);
      for (int64_t ii = rows; ii < mr; ii++)
        dst[p * mr + ii] = 0;
    }
  }
}

/* Copies one row of a B micro-panel: n (<= nr) elements, zeros up to nr.  A full row of a
 * known width is one fixed-size copy the compiler inlines as vector moves (a loop of a
 * run-time count became a call of memmove per row). */
GEMM_PACK_ATTR static inline void GEMM_NAME(copy_row)(GEMM_T *restrict d, const GEMM_SRC *restrict s, int64_t n, int nr) {
#ifndef GEMM_WIDEN
  if (n == nr) {
    switch (nr * (int)sizeof(GEMM_T)) {
    case 128: __builtin_memcpy(d, s, 128); return;
    case 64: __builtin_memcpy(d, s, 64); return;
    case 32: __builtin_memcpy(d, s, 32); return;
    default: break;
    }
  }
#else
  if (n == nr && nr % 8 == 0) { /* whole vectors of a count the compiler sees */
    for (int64_t j0 = 0; j0 < nr; j0 += 8) {
#ifdef GEMM_LD8
      GEMM_LD8(d + j0, s + j0);
#else
      _Pragma("GCC unroll 8") for (int jj = 0; jj < 8; jj++) d[j0 + jj] = GEMM_PACK_LD(s[j0 + jj]);
#endif
    }
    return;
  }
#endif
  for (int64_t jj = 0; jj < n; jj++)
    d[jj] = GEMM_PACK_LD(s[jj]);
  for (int64_t jj = n; jj < nr; jj++)
    d[jj] = 0;
}

/* Packs rows [0, kc) x columns [0, nc) of B into micro-panels of nr columns: (p, j = r*nr + jj)
 * at dst[r*nr*kc + p*nr + jj]; columns past nc are zero.  Element (p, j) is at
 * b[dep[p] + col[j]] with offset tables, else at b[p*rs + j*cs]. */
GEMM_PACK_ATTR static void GEMM_NAME(pack_b)(const GEMM_SRC *b, const int64_t *dep, const int64_t *col, int64_t rs, int64_t cs,
                              int64_t kc, int64_t nc, int nr, GEMM_T *dst) {
  if (!col && cs == 1) { /* row-major B: read each row once, front to back (not 8 KB strides) */
    for (int64_t p = 0; p < kc; p++) {
      if (p + GEMM_PF_ROWS < kc) /* each row is a short run in another page: prefetch ahead */
        for (int64_t x = 0; x < nc; x += 64 / (int64_t)sizeof(GEMM_SRC))
          __builtin_prefetch(b + (p + GEMM_PF_ROWS) * rs + x, 0, 3);
      for (int64_t j0 = 0; j0 < nc; j0 += nr)
        GEMM_NAME(copy_row)(dst + j0 * kc + p * nr, b + p * rs + j0, nc - j0 < nr ? nc - j0 : nr, nr);
    }
    return;
  }
#ifdef GEMM_PACK_BT
  if (!col && rs == 1) { /* transposed B (x . W^T): 16 x 16 blocks through registers */
    int done = 1;
    for (int64_t j0 = 0; j0 < nc && done; j0 += nr)
      done = GEMM_PACK_BT(b + j0 * cs, cs, kc, nc - j0 < nr ? nc - j0 : nr, nr, dst + j0 * kc);
    if (done)
      return;
  }
#endif
  for (int64_t j0 = 0; j0 < nc; j0 += nr, dst += (int64_t)nr * kc) {
    int64_t cols = nc - j0 < nr ? nc - j0 : nr;
    for (int64_t p = 0; p < kc; p++) {
      GEMM_T *d = dst + p * nr;
      if (col)
        for (int64_t jj = 0; jj < cols; jj++)
          d[jj] = GEMM_PACK_LD(b[dep[p] + col[j0 + jj]]);
      else
        for (int64_t jj = 0; jj < cols; jj++)
          d[jj] = GEMM_PACK_LD(b[p * rs + (j0 + jj) * cs]);
      for (int64_t jj = cols; jj < nr; jj++)
        d[jj] = 0;
    }
  }
}

/* One packed A block (mc x kc) times one packed B panel (kc x nc) into C (row stride ldc);
 * add: 1 accumulates into C, 0 overwrites it, GEMM_STREAM overwrites it with non-temporal
 * stores.  Partial tiles go through a local tile (ordinary stores). */
static void GEMM_NAME(macro_kernel)(const gemm_kernel *k, const GEMM_T *ap, const GEMM_T *bp, int64_t mc,
                                    int64_t nc, int64_t kc, GEMM_T *c, int64_t ldc, int add) {
  GEMM_NAME(micro_fn) micro = (GEMM_NAME(micro_fn))k->micro;
  GEMM_T tile[GEMM_MAX_TILE] __attribute__((aligned(64)));
  for (int64_t j0 = 0; j0 < nc; j0 += k->nr) {
    int64_t cols = nc - j0 < k->nr ? nc - j0 : k->nr;
    for (int64_t i0 = 0; i0 < mc; i0 += k->mr) {
      int64_t rows = mc - i0 < k->mr ? mc - i0 : k->mr;
      const GEMM_T *a = ap + i0 * kc, *b = bp + j0 * kc;
      GEMM_T *cc = c + i0 * ldc + j0;
      if (cols == k->nr && (rows == k->mr || k->edge[rows])) {
        (rows == k->mr ? micro : (GEMM_NAME(micro_fn))k->edge[rows])(kc, a, b, cc, ldc, add);
        continue;
      }
      micro(kc, a, b, tile, k->nr, 0);
      for (int64_t i = 0; i < rows; i++)
        for (int64_t j = 0; j < cols; j++)
          cc[i * ldc + j] = add == 1 ? cc[i * ldc + j] + tile[i * k->nr + j] : tile[i * k->nr + j];
    }
  }
}

/* One product C = A·B: operands, and the split over threads (rt_gemm_split's grid). */
typedef struct GEMM_NAME(job) {
  gemm_kernel k;
  int64_t m, n, kk;
  const GEMM_SRC *a, *b;
  int64_t a_rs, a_cs, b_rs, b_cs;
  /* Offset tables instead of strides (all four or none): A rows and depths, B depths and
   * columns. */
  const int64_t *a_row, *a_dep, *b_dep, *b_col;
  GEMM_T *c;
  int64_t ldc;
  /* The epilogue (may be NULL): applied to each finished part of C, one row segment per call,
   * as epi(epi_arg, begin, end) over elements [begin, end) of the whole result, which starts
   * c_off elements before c. */
  hlo_rt_range_fn epi;
  void *epi_arg;
  int64_t c_off;
  int stream; /* C written once with non-temporal stores where it is final (GEMM_NAME(streams)) */
  rt_gemm_grid grid;
} GEMM_NAME(job);

/* Packs rows [i, i + rows) x depths [p, p + depth) of the job's A into dst. */
static void GEMM_NAME(pack_a_at)(const GEMM_NAME(job) *j, int64_t i, int64_t p, int64_t rows, int64_t depth,
                                 GEMM_T *dst) {
  if (j->a_row)
    GEMM_NAME(pack_a)(j->a, j->a_row + i, j->a_dep + p, 0, 0, rows, depth, j->k.mr, dst);
  else
    GEMM_NAME(pack_a)(j->a + i * j->a_rs + p * j->a_cs, NULL, NULL, j->a_rs, j->a_cs, rows, depth, j->k.mr, dst);
}

/* Packs depths [p, p + depth) x columns [col, col + cols) of the job's B into dst, in
 * micro-panels of nr columns. */
static void GEMM_NAME(pack_b_at)(const GEMM_NAME(job) *j, int64_t p, int64_t col, int64_t depth, int64_t cols,
                                 int nr, GEMM_T *dst) {
  if (j->b_col)
    GEMM_NAME(pack_b)(j->b, j->b_dep + p, j->b_col + col, 0, 0, depth, cols, nr, dst);
  else
    GEMM_NAME(pack_b)(j->b + p * j->b_rs + col * j->b_cs, NULL, NULL, j->b_rs, j->b_cs, depth, cols, nr, dst);
}

/* Runs the job's epilogue on rows [i0, i0 + rows) x columns [c0, c0 + cols) of C, final now
 * and still in cache. */
static void GEMM_NAME(finish)(const GEMM_NAME(job) *j, int64_t i0, int64_t rows, int64_t c0, int64_t cols) {
  if (!j->epi)
    return;
  for (int64_t i = i0; i < i0 + rows; i++) {
    int64_t at = j->c_off + i * j->ldc + c0;
    j->epi(j->epi_arg, at, at + cols);
  }
}

/* The micro-kernels' `add` for the depth panel [pc, pc + kcur): accumulate after the first;
 * the first overwrites, with non-temporal stores when it is also the last and the job streams. */
static int GEMM_NAME(store_mode)(const GEMM_NAME(job) *j, int64_t pc, int64_t kcur) {
  if (pc > 0)
    return 1;
  return j->stream && kcur == j->kk ? GEMM_STREAM : 0;
}

/* The reference loop nest on rows [i0, i0 + rows) x columns [j0, j0 + cols): used when
 * packing buffers cannot be allocated. */
static void GEMM_NAME(naive)(const GEMM_NAME(job) *j, int64_t i0, int64_t rows, int64_t j0, int64_t cols) {
  for (int64_t i = i0; i < i0 + rows; i++)
    for (int64_t jj = j0; jj < j0 + cols; jj++) {
      GEMM_T s = 0;
      for (int64_t p = 0; p < j->kk; p++)
        s += j->a_row ? GEMM_LD(j->a[j->a_row[i] + j->a_dep[p]]) * GEMM_LD(j->b[j->b_dep[p] + j->b_col[jj]])
                      : GEMM_LD(j->a[i * j->a_rs + p * j->a_cs]) * GEMM_LD(j->b[p * j->b_rs + jj * j->b_cs]);
      j->c[i * j->ldc + jj] = s;
    }
}

/* Rows [i0, i0 + rows) x columns [j0, j0 + cols) of C on the calling thread, with its own
 * packing buffers.  Few rows (the packed A of one depth panel fits in L2 beside a B chunk): A
 * is packed once per depth panel and B in chunks of ncs columns that stay in L2 while the
 * whole A streams past them.  Many rows: the GotoBLAS order, B panels of nc columns and
 * blocks of mc rows. */
/* Whether the job reads A in place (GEMM_DIRECT_MAX_PANELS): a row-major A, without offset
 * tables, and few columns, which fill the direct kernel's panels to at least 80% (64 or 128
 * f32 columns; not 96, where the 32-column kernel on a packed A wastes less). */
static int GEMM_NAME(direct_a)(const GEMM_NAME(job) *j) {
#ifdef GEMM_WIDEN
  (void)j;
  return 0; /* the direct kernels read A as GEMM_T */
#else
  int64_t nr = j->k.dnr, n = j->n;
  return j->k.direct && !j->a_row && j->a_cs == 1 && n <= (int64_t)GEMM_DIRECT_MAX_PANELS * nr &&
         4 * (round_up(n, nr) - n) <= n;
#endif
}

#ifndef GEMM_WIDEN
/* serial() for a job that reads A in place: per depth panel and chunk of B, the direct
 * micro-kernel runs down the rows (dmr at a time, then one at a time), B packed in panels of
 * dnr columns; partial column panels go through a local tile. */
static void GEMM_NAME(serial_direct)(const GEMM_NAME(job) *j, int64_t i0, int64_t rows, int64_t j0, int64_t cols,
                                     GEMM_T *bp, int64_t kc, int64_t nc) {
  GEMM_NAME(direct_fn) micro = (GEMM_NAME(direct_fn))j->k.direct, micro1 = (GEMM_NAME(direct_fn))j->k.direct1;
  const int mr = j->k.dmr, nr = j->k.dnr;
  GEMM_T tile[GEMM_MAX_TILE] __attribute__((aligned(64)));
  for (int64_t pc = 0; pc < j->kk; pc += kc) {
    int64_t kcur = j->kk - pc < kc ? j->kk - pc : kc;
    for (int64_t jc = 0; jc < cols; jc += nc) {
      int64_t ncur = cols - jc < nc ? cols - jc : nc;
      GEMM_NAME(pack_b_at)(j, pc, j0 + jc, kcur, ncur, nr, bp);
      for (int64_t jr = 0; jr < ncur; jr += nr) {
        int64_t w = ncur - jr < nr ? ncur - jr : nr;
        const GEMM_T *b = bp + jr * kcur;
        for (int64_t i = 0; i < rows;) {
          int step = rows - i >= mr ? mr : 1;
          const GEMM_T *a = j->a + (i0 + i) * j->a_rs + pc;
          GEMM_T *c = j->c + (i0 + i) * j->ldc + j0 + jc + jr;
          if (w == nr)
            (step == mr ? micro : micro1)(kcur, a, j->a_rs, b, c, j->ldc, pc > 0);
          else {
            (step == mr ? micro : micro1)(kcur, a, j->a_rs, b, tile, nr, 0);
            for (int r = 0; r < step; r++)
              for (int64_t x = 0; x < w; x++)
                c[r * j->ldc + x] = pc > 0 ? c[r * j->ldc + x] + tile[r * nr + x] : tile[r * nr + x];
          }
          i += step;
        }
      }
      if (pc + kcur == j->kk)
        GEMM_NAME(finish)(j, i0, rows, j0 + jc, ncur);
    }
  }
}

#endif

static void GEMM_NAME(serial)(const GEMM_NAME(job) *j, int64_t i0, int64_t rows, int64_t j0, int64_t cols) {
  if (rows <= 0 || cols <= 0)
    return;
#ifndef GEMM_WIDEN
  if (GEMM_NAME(direct_a)(j)) {
    const int es = (int)sizeof(GEMM_T);
    gemm_blocks bl = gemm_blocking(rows, cols, j->kk, j->k.dmr, j->k.dnr, 0, es);
    GEMM_T *bp = hlo_rt_alloc(NULL, (int64_t)es * bl.kc * bl.nc);
    if (bp) {
      GEMM_NAME(serial_direct)(j, i0, rows, j0, cols, bp, bl.kc, bl.nc);
      hlo_rt_free(NULL, bp);
      return;
    }
  }
#endif
  const int mr = j->k.mr, nr = j->k.nr, es = (int)sizeof(GEMM_T);
  gemm_blocks bl = gemm_blocking(rows, cols, j->kk, mr, nr, j->k.mmax, es);
  GEMM_T *ap = hlo_rt_alloc(NULL, (int64_t)es * bl.mc * bl.kc);
  GEMM_T *bp = ap ? hlo_rt_alloc(NULL, (int64_t)es * bl.kc * bl.nc) : NULL;
  GEMM_T *c = j->c + i0 * j->ldc + j0;
  if (!bp) {
    hlo_rt_free(NULL, ap);
    GEMM_NAME(naive)(j, i0, rows, j0, cols);
    GEMM_NAME(finish)(j, i0, rows, j0, cols);
    return;
  }
  if (bl.mc >= rows) { /* one row block */
    for (int64_t pc = 0; pc < j->kk; pc += bl.kc) {
      int64_t kcur = j->kk - pc < bl.kc ? j->kk - pc : bl.kc;
      GEMM_NAME(pack_a_at)(j, i0, pc, rows, kcur, ap);
      for (int64_t jc = 0; jc < cols; jc += bl.nc) {
        int64_t ncur = cols - jc < bl.nc ? cols - jc : bl.nc;
        GEMM_NAME(pack_b_at)(j, pc, j0 + jc, kcur, ncur, j->k.nr, bp);
        GEMM_NAME(macro_kernel)(&j->k, ap, bp, rows, ncur, kcur, c + jc, j->ldc, GEMM_NAME(store_mode)(j, pc, kcur));
        if (pc + kcur == j->kk)
          GEMM_NAME(finish)(j, i0, rows, j0 + jc, ncur);
      }
    }
  } else {
    for (int64_t jc = 0; jc < cols; jc += bl.nc) {
      int64_t ncur = cols - jc < bl.nc ? cols - jc : bl.nc;
      for (int64_t pc = 0; pc < j->kk; pc += bl.kc) {
        int64_t kcur = j->kk - pc < bl.kc ? j->kk - pc : bl.kc;
        GEMM_NAME(pack_b_at)(j, pc, j0 + jc, kcur, ncur, j->k.nr, bp);
        for (int64_t ic = 0; ic < rows; ic += bl.mc) {
          int64_t mcur = rows - ic < bl.mc ? rows - ic : bl.mc;
          GEMM_NAME(pack_a_at)(j, i0 + ic, pc, mcur, kcur, ap);
          GEMM_NAME(macro_kernel)(&j->k, ap, bp, mcur, ncur, kcur, c + ic * j->ldc + jc, j->ldc,
                                  GEMM_NAME(store_mode)(j, pc, kcur));
          if (pc + kcur == j->kk)
            GEMM_NAME(finish)(j, i0 + ic, mcur, j0 + jc, ncur);
        }
      }
    }
  }
#if GEMM_X86
  if (j->stream) /* the streamed tiles visible before the pool reports this part done */
    _mm_sfence();
#endif
  hlo_rt_free(NULL, ap);
  hlo_rt_free(NULL, bp);
}

/* Rectangles [begin, end) of the job's grid: rectangle t is row slice t / grid.cols and column
 * slice t % grid.cols, runs of whole micro tiles, computed start to end on one thread (a
 * hlo_rt_range_fn). */
static void GEMM_NAME(slices)(void *arg, int64_t begin, int64_t end) {
  const GEMM_NAME(job) *j = arg;
  int64_t row_step = GEMM_NAME(direct_a)(j) ? j->k.dmr : j->k.mr;
  for (int64_t t = begin; t < end; t++) {
    int64_t r0, r1, c0, c1;
    rt_gemm_slice(j->m, row_step, t / j->grid.cols, j->grid.rows, &r0, &r1);
    rt_gemm_slice(j->n, j->k.nr, t % j->grid.cols, j->grid.cols, &c0, &c1);
    GEMM_NAME(serial)(j, r0, r1 - r0, c0, c1 - c0);
  }
}

/* C = A·B on `threads` threads of ctx's pool (1: inline).  Each thread computes its own
 * rectangle of C from start to end with its own packing buffers, so the threads never wait
 * for each other (rt_gemm_split: the grid whose busiest thread has the fewest micro tiles
 * plus packing). */
static void GEMM_NAME(gemm)(hlo_context *ctx, int threads, GEMM_NAME(job) *j) {
  if (j->m <= 0 || j->n <= 0)
    return;
  if (j->kk <= 0) {
    for (int64_t i = 0; i < j->m; i++)
      for (int64_t jj = 0; jj < j->n; jj++)
        j->c[i * j->ldc + jj] = 0;
    GEMM_NAME(finish)(j, 0, j->m, 0, j->n);
    return;
  }
  /* A read in place costs nothing to split by rows, and its few columns stay whole. */
  j->grid = rt_gemm_split(j->m, j->n, j->kk, j->k.mr, j->k.nr, threads, GEMM_PACK_COST, GEMM_NAME(direct_a)(j));
  hlo_rt_parallel_for(threads > 1 ? ctx : NULL, threads, GEMM_NAME(slices), j);
}

/* Batched products split over the pool: batches [begin, end), each on one thread. */
typedef struct GEMM_NAME(batch_job) {
  GEMM_NAME(job) proto;
  int64_t a_bs, b_bs;
  const int64_t *a_boff, *b_boff; /* batch offsets (tables) instead of a_bs, b_bs */
} GEMM_NAME(batch_job);

/* The product of batch t. */
static GEMM_NAME(job) GEMM_NAME(batch_at)(const GEMM_NAME(batch_job) *bj, int64_t t) {
  GEMM_NAME(job) j = bj->proto;
  j.a += bj->a_boff ? bj->a_boff[t] : t * bj->a_bs;
  j.b += bj->b_boff ? bj->b_boff[t] : t * bj->b_bs;
  j.c += t * j.m * j.n;
  j.c_off = t * j.m * j.n;
  return j;
}

static void GEMM_NAME(batches)(void *arg, int64_t begin, int64_t end) {
  const GEMM_NAME(batch_job) *bj = arg;
  for (int64_t t = begin; t < end; t++) {
    GEMM_NAME(job) j = GEMM_NAME(batch_at)(bj, t);
    GEMM_NAME(gemm)(NULL, 1, &j);
  }
}

#ifdef GEMM_SMALL
/* ---- few rows: B read in place (rt_gemm_small.h; GEMM_SMALL picks the kernel) ---- */

/* Whether a job takes the few-rows path (gs_takes). */
static int GEMM_NAME(small_ok)(const GEMM_NAME(job) *p) {
  return gs_takes(p->m, p->n, p->kk, p->a_rs, p->a_cs, p->a_row, p->b_rs, p->b_cs, p->b_col);
}

#define GEMM_SMALL_A_F32(x) ((float)GEMM_LD(x))
GS_DRIVER_EXPANDED(GEMM_NAME(small), GEMM_NAME(job), GEMM_NAME(batch_job), GEMM_SMALL_A_F32, GEMM_SMALL,
                   GEMM_NAME(batch_at), GEMM_NAME(finish), GEMM_NAME(naive), gemm_threads)
#undef GEMM_SMALL_A_F32
#endif

/* Whether the batch products' C (batch x m x ldc elements) is written with non-temporal stores
 * where each tile is final at its first write (one depth panel): a result of
 * rt_nontemporal_min_bytes() or more, which would not stay in the cache for its next reader
 * anyway, without an epilogue (which reads C back), 64-byte aligned with rows of a multiple
 * of 64 bytes (every full tile's vectors aligned).  Reading each line of C for ownership
 * before writing it doubled the memory traffic of products of short depth (a 1x1 convolution,
 * 32 x 192 at 28 x 28 x 96: docs/performance.md); the sums are the same. */
static int GEMM_NAME(streams)(const GEMM_NAME(job) *p, int64_t batch) {
  int64_t min = rt_nontemporal_min_bytes(), es = (int64_t)sizeof(GEMM_T);
  return GEMM_X86 && min >= 0 && !p->epi && batch * p->m * p->ldc * es >= min && (uintptr_t)p->c % 64 == 0 &&
         p->ldc * es % 64 == 0;
}

/* Runs every batch of bj: batches in parallel when there are enough of them, else one after
 * the other with each product's row blocks in parallel. */
static void GEMM_NAME(run_batches)(hlo_context *ctx, int64_t batch, GEMM_NAME(batch_job) *bj) {
  const GEMM_NAME(job) *p = &bj->proto;
  if (batch <= 0 || p->m <= 0 || p->n <= 0)
    return;
#ifdef GEMM_SMALL
  if (GEMM_NAME(small_ok)(p)) {
    GEMM_CAT(GEMM_NAME(small), batches)(ctx, batch, bj);
    return;
  }
#endif
  bj->proto.stream = GEMM_NAME(streams)(p, batch);
  int threads = gemm_threads(ctx, p->m, p->n, p->kk);
  if (batch > 1 && (batch >= threads || threads == 1)) {
    hlo_rt_parallel_for(threads > 1 ? ctx : NULL, batch, GEMM_NAME(batches), bj);
    return;
  }
  for (int64_t t = 0; t < batch; t++) {
    GEMM_NAME(job) j = GEMM_NAME(batch_at)(bj, t);
    GEMM_NAME(gemm)(ctx, threads, &j);
  }
}

#ifndef GEMM_WIDEN
HLO_RT_EXPORT void GEMM_NAME(hlo_rt_gemm_strided_epi)(hlo_context *ctx, int64_t batch, int64_t m, int64_t n,
                                                      int64_t k, const GEMM_T *a, int64_t a_bs, int64_t a_rs,
                                                      int64_t a_cs, const GEMM_T *b, int64_t b_bs, int64_t b_rs,
                                                      int64_t b_cs, GEMM_T *c, hlo_rt_range_fn epi, void *epi_arg) {
  GEMM_NAME(batch_job) bj = {
      .proto = {.k = GEMM_NAME(pick_kernel)(n), .m = m, .n = n, .kk = k, .a = a, .b = b, .a_rs = a_rs,
                .a_cs = a_cs, .b_rs = b_rs, .b_cs = b_cs, .c = c, .ldc = n, .epi = epi, .epi_arg = epi_arg},
      .a_bs = a_bs,
      .b_bs = b_bs};
  GEMM_NAME(run_batches)(ctx, batch, &bj);
}

HLO_RT_EXPORT void GEMM_NAME(hlo_rt_gemm_strided)(hlo_context *ctx, int64_t batch, int64_t m, int64_t n,
                                                  int64_t k, const GEMM_T *a, int64_t a_bs, int64_t a_rs,
                                                  int64_t a_cs, const GEMM_T *b, int64_t b_bs, int64_t b_rs,
                                                  int64_t b_cs, GEMM_T *c) {
  GEMM_NAME(hlo_rt_gemm_strided_epi)(ctx, batch, m, n, k, a, a_bs, a_rs, a_cs, b, b_bs, b_rs, b_cs, c, NULL, NULL);
}

HLO_RT_EXPORT void GEMM_NAME(hlo_rt_gemm_indexed)(hlo_context *ctx, int64_t batch, int64_t m, int64_t n, int64_t k,
                                                  const GEMM_T *a, const int64_t *a_off, const GEMM_T *b,
                                                  const int64_t *b_off, GEMM_T *c) {
  GEMM_NAME(batch_job) bj = {
      .proto = {.k = GEMM_NAME(pick_kernel)(n), .m = m, .n = n, .kk = k, .a = a, .b = b, .a_row = a_off + batch,
                .a_dep = a_off + batch + m, .b_dep = b_off + batch, .b_col = b_off + batch + k, .c = c, .ldc = n},
      .a_boff = a_off,
      .b_boff = b_off};
  GEMM_NAME(run_batches)(ctx, batch, &bj);
}

HLO_RT_EXPORT void GEMM_NAME(hlo_rt_gemm)(hlo_context *ctx, int64_t m, int64_t n, int64_t k, const GEMM_T *a,
                                          int64_t lda, const GEMM_T *b, int64_t ldb, GEMM_T *c, int64_t ldc) {
  GEMM_NAME(job) j = {.k = GEMM_NAME(pick_kernel)(n), .m = m, .n = n, .kk = k, .a = a, .b = b, .a_rs = lda,
                      .a_cs = 1, .b_rs = ldb, .b_cs = 1, .c = c, .ldc = ldc};
  if (m <= 0 || n <= 0)
    return;
  j.stream = GEMM_NAME(streams)(&j, 1);
  GEMM_NAME(gemm)(ctx, gemm_threads(ctx, m, n, k), &j);
}
#else
void GEMM_NAME(rt_gemm_widened)(hlo_context *ctx, int64_t batch, int64_t m, int64_t n, int64_t k, const GEMM_SRC *a,
                                int64_t a_bs, int64_t a_rs, int64_t a_cs, const int64_t *a_off, const GEMM_SRC *b,
                                int64_t b_bs, int64_t b_rs, int64_t b_cs, const int64_t *b_off, GEMM_T *c,
                                hlo_rt_range_fn epi, void *epi_arg) {
  GEMM_NAME(batch_job) bj = {.proto = {.k = GEMM_KNAME(pick_kernel)(n), .m = m, .n = n, .kk = k, .a = a, .b = b,
                                       .a_rs = a_rs, .a_cs = a_cs, .b_rs = b_rs, .b_cs = b_cs, .c = c, .ldc = n,
                                       .epi = epi, .epi_arg = epi_arg},
                             .a_bs = a_bs,
                             .b_bs = b_bs};
  if (a_off) {
    bj.proto.a_row = a_off + batch, bj.proto.a_dep = a_off + batch + m;
    bj.proto.b_dep = b_off + batch, bj.proto.b_col = b_off + batch + k;
    bj.a_boff = a_off, bj.b_boff = b_off;
  }
  GEMM_NAME(run_batches)(ctx, batch, &bj);
}
#endif

#undef GEMM_KNAME
#undef GEMM_NAME
#undef GEMM_CAT
#undef GEMM_CAT2
#ifndef GEMM_WIDEN
#undef GEMM_SRC
#undef GEMM_LD
#undef GEMM_KSUF
#endif
#ifdef GEMM_PACK_ATTR_DEFAULT
#undef GEMM_PACK_ATTR
#undef GEMM_PACK_LD
#undef GEMM_PACK_ATTR_DEFAULT
#endif
