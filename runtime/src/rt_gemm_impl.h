/* rt_gemm_impl.h — the element-type-dependent half of rt_gemm.c, included once per type with
 * GEMM_T (float or double) and GEMM_SUF (f32 or f64) defined: the micro-kernels for each
 * instruction set, packing of A blocks and B panels into micro-panels, the blocked loop nest
 * and the public entry points hlo_rt_gemm_SUF / hlo_rt_gemm_strided_SUF.  Not a header:
 * nothing else includes it.  Tests: runtime/src/rt_gemm_test.c.
 */
#define GEMM_CAT2(a, b) a##_##b
#define GEMM_CAT(a, b) GEMM_CAT2(a, b)
#define GEMM_NAME(x) GEMM_CAT(x, GEMM_SUF)

typedef GEMM_T GEMM_NAME(v16b) __attribute__((vector_size(16), aligned(sizeof(GEMM_T))));
typedef GEMM_T GEMM_NAME(v32b) __attribute__((vector_size(32), aligned(sizeof(GEMM_T))));
typedef GEMM_T GEMM_NAME(v64b) __attribute__((vector_size(64), aligned(sizeof(GEMM_T))));

GEMM_MICRO(GEMM_NAME(micro_base), , GEMM_T, GEMM_NAME(v16b), 4, 2)
#if GEMM_X86
GEMM_MICRO(GEMM_NAME(micro_avx2), __attribute__((target("avx2,fma"))), GEMM_T, GEMM_NAME(v32b), 6, 2)
GEMM_MICRO(GEMM_NAME(micro_avx512), __attribute__((target("avx512f,avx2,fma"))), GEMM_T, GEMM_NAME(v64b), 14, 2)
#endif

/* The micro-kernel for the running CPU and its tile (mr rows x nr columns). */
static gemm_kernel GEMM_NAME(pick_kernel)(void) {
  int isa = gemm_isa();
  gemm_kernel k = {4, (int)(2 * 16 / sizeof(GEMM_T)), (gemm_micro_fn)GEMM_NAME(micro_base)};
#if GEMM_X86
  if (isa == 2)
    k = (gemm_kernel){14, (int)(2 * 64 / sizeof(GEMM_T)), (gemm_micro_fn)GEMM_NAME(micro_avx512)};
  else if (isa == 1)
    k = (gemm_kernel){6, (int)(2 * 32 / sizeof(GEMM_T)), (gemm_micro_fn)GEMM_NAME(micro_avx2)};
#else
  (void)isa;
#endif
  return k;
}

typedef void (*GEMM_NAME(micro_fn))(int64_t kc, const GEMM_T *a, const GEMM_T *b, GEMM_T *c, int64_t ldc, int add);

/* Packs rows [0, mc) x columns [0, kc) of A into micro-panels of mr rows: panel r holds
 * (i = r*mr + ii, p) at dst[r*mr*kc + p*mr + ii]; rows past mc are zero.  Element (i, p) is
 * at a[row[i] + dep[p]] with offset tables, else at a[i*rs + p*cs]. */
static void GEMM_NAME(pack_a)(const GEMM_T *a, const int64_t *row, const int64_t *dep, int64_t rs, int64_t cs,
                              int64_t mc, int64_t kc, int mr, GEMM_T *dst) {
  for (int64_t i0 = 0; i0 < mc; i0 += mr, dst += (int64_t)mr * kc) {
    int64_t rows = mc - i0 < mr ? mc - i0 : mr;
    for (int64_t p = 0; p < kc; p++) {
      if (row)
        for (int64_t ii = 0; ii < rows; ii++)
          dst[p * mr + ii] = a[row[i0 + ii] + dep[p]];
      else
        for (int64_t ii = 0; ii < rows; ii++)
          dst[p * mr + ii] = a[(i0 + ii) * rs + p * cs];
      for (int64_t ii = rows; ii < mr; ii++)
        dst[p * mr + ii] = 0;
    }
  }
}

/* Packs rows [0, kc) x columns [0, nc) of B into micro-panels of nr columns: (p, j = r*nr + jj)
 * at dst[r*nr*kc + p*nr + jj]; columns past nc are zero.  Element (p, j) is at
 * b[dep[p] + col[j]] with offset tables, else at b[p*rs + j*cs]. */
static void GEMM_NAME(pack_b)(const GEMM_T *b, const int64_t *dep, const int64_t *col, int64_t rs, int64_t cs,
                              int64_t kc, int64_t nc, int nr, GEMM_T *dst) {
  if (!col && cs == 1) { /* row-major B: read each row once, front to back (not 8 KB strides) */
    for (int64_t p = 0; p < kc; p++)
      for (int64_t j0 = 0; j0 < nc; j0 += nr) {
        int64_t cols = nc - j0 < nr ? nc - j0 : nr;
        GEMM_T *d = dst + j0 * kc + p * nr;
        const GEMM_T *src = b + p * rs + j0;
        for (int64_t jj = 0; jj < cols; jj++)
          d[jj] = src[jj];
        for (int64_t jj = cols; jj < nr; jj++)
          d[jj] = 0;
      }
    return;
  }
  for (int64_t j0 = 0; j0 < nc; j0 += nr, dst += (int64_t)nr * kc) {
    int64_t cols = nc - j0 < nr ? nc - j0 : nr;
    for (int64_t p = 0; p < kc; p++) {
      GEMM_T *d = dst + p * nr;
      if (col)
        for (int64_t jj = 0; jj < cols; jj++)
          d[jj] = b[dep[p] + col[j0 + jj]];
      else if (cs == 1)
        for (int64_t jj = 0; jj < cols; jj++)
          d[jj] = b[p * rs + j0 + jj];
      else
        for (int64_t jj = 0; jj < cols; jj++)
          d[jj] = b[p * rs + (j0 + jj) * cs];
      for (int64_t jj = cols; jj < nr; jj++)
        d[jj] = 0;
    }
  }
}

/* One packed A block (mc x kc) times one packed B panel (kc x nc) into C (row stride ldc);
 * add: accumulate into C instead of overwriting it.  Partial tiles go through a local tile. */
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
      if (rows == k->mr && cols == k->nr) {
        micro(kc, a, b, cc, ldc, add);
        continue;
      }
      micro(kc, a, b, tile, k->nr, 0);
      for (int64_t i = 0; i < rows; i++)
        for (int64_t j = 0; j < cols; j++)
          cc[i * ldc + j] = add ? cc[i * ldc + j] + tile[i * k->nr + j] : tile[i * k->nr + j];
    }
  }
}

/* One product C = A·B, the arguments of the parallel loops over B micro-panels and over
 * blocks of MC rows. */
typedef struct GEMM_NAME(job) {
  gemm_kernel k;
  int64_t m, n, kk, mc, kc, nc;
  const GEMM_T *a, *b;
  int64_t a_rs, a_cs, b_rs, b_cs;
  /* Offset tables instead of strides (all four or none): A rows and depths, B depths and
   * columns. */
  const int64_t *a_row, *a_dep, *b_dep, *b_col;
  GEMM_T *c;
  int64_t ldc;
  /* The panel being worked on: columns [jc, jc + ncur) and depths [pc, pc + kcur), packed
   * into bp; parts: how many threads share the panel. */
  GEMM_T *bp;
  int64_t jc, ncur, pc, kcur, parts;
  int failed; /* an A block could not be allocated (written by any thread, only ever set to 1) */
} GEMM_NAME(job);

/* Packs parts [begin, end) of the current B panel, each a run of whole micro-panels (a
 * hlo_rt_range_fn). */
static void GEMM_NAME(pack_b_parts)(void *arg, int64_t begin, int64_t end) {
  GEMM_NAME(job) *j = arg;
  int64_t panels = (j->ncur + j->k.nr - 1) / j->k.nr;
  int64_t p0 = panels * begin / j->parts, p1 = panels * end / j->parts;
  int64_t j0 = p0 * j->k.nr, j1 = p1 * j->k.nr < j->ncur ? p1 * j->k.nr : j->ncur;
  if (j0 >= j1)
    return;
  GEMM_T *dst = j->bp + j0 * j->kcur;
  if (j->b_col)
    GEMM_NAME(pack_b)(j->b, j->b_dep + j->pc, j->b_col + j->jc + j0, 0, 0, j->kcur, j1 - j0, j->k.nr, dst);
  else
    GEMM_NAME(pack_b)(j->b + j->pc * j->b_rs + (j->jc + j0) * j->b_cs, NULL, NULL, j->b_rs, j->b_cs, j->kcur,
                      j1 - j0, j->k.nr, dst);
}

/* Parts [begin, end) of the current panel's row blocks: part t takes blocks t, t + parts,
 * t + 2 * parts, ... with one packing buffer (a hlo_rt_range_fn). */
static void GEMM_NAME(row_blocks)(void *arg, int64_t begin, int64_t end) {
  GEMM_NAME(job) *j = arg;
  GEMM_T *ap = hlo_rt_alloc(NULL, (int64_t)sizeof(GEMM_T) * j->mc * j->kc);
  if (!ap) {
    __atomic_store_n(&j->failed, 1, __ATOMIC_RELAXED);
    return;
  }
  int64_t blocks = (j->m + j->mc - 1) / j->mc;
  for (int64_t t = begin; t < end; t++)
    for (int64_t blk = t; blk < blocks; blk += j->parts) {
      int64_t ic = blk * j->mc, mcur = j->m - ic < j->mc ? j->m - ic : j->mc;
      if (j->a_row)
        GEMM_NAME(pack_a)(j->a, j->a_row + ic, j->a_dep + j->pc, 0, 0, mcur, j->kcur, j->k.mr, ap);
      else
        GEMM_NAME(pack_a)(j->a + ic * j->a_rs + j->pc * j->a_cs, NULL, NULL, j->a_rs, j->a_cs, mcur, j->kcur,
                          j->k.mr, ap);
      GEMM_NAME(macro_kernel)(&j->k, ap, j->bp, mcur, j->ncur, j->kcur, j->c + ic * j->ldc + j->jc, j->ldc,
                              j->pc > 0);
    }
  hlo_rt_free(NULL, ap);
}

/* The reference loop nest: used when packing buffers cannot be allocated. */
static void GEMM_NAME(naive)(const GEMM_NAME(job) *j) {
  for (int64_t i = 0; i < j->m; i++)
    for (int64_t jj = 0; jj < j->n; jj++) {
      GEMM_T s = 0;
      for (int64_t p = 0; p < j->kk; p++)
        s += j->a_row ? j->a[j->a_row[i] + j->a_dep[p]] * j->b[j->b_dep[p] + j->b_col[jj]]
                      : j->a[i * j->a_rs + p * j->a_cs] * j->b[p * j->b_rs + jj * j->b_cs];
      j->c[i * j->ldc + jj] = s;
    }
}

/* C = A·B on `threads` threads of ctx's pool (1: inline). */
static void GEMM_NAME(gemm)(hlo_context *ctx, int threads, GEMM_NAME(job) *j) {
  if (j->m <= 0 || j->n <= 0)
    return;
  if (j->kk <= 0) {
    for (int64_t i = 0; i < j->m; i++)
      for (int64_t jj = 0; jj < j->n; jj++)
        j->c[i * j->ldc + jj] = 0;
    return;
  }
  gemm_blocking(j->m, j->n, j->kk, j->k.mr, j->k.nr, (int)sizeof(GEMM_T), threads, &j->mc, &j->kc, &j->nc);
  GEMM_T *bp = hlo_rt_alloc(NULL, (int64_t)sizeof(GEMM_T) * j->kc * j->nc);
  hlo_context *pool = threads > 1 ? ctx : NULL;
  j->failed = 0;
  j->bp = bp;
  j->parts = threads;
  for (j->jc = 0; bp && j->jc < j->n; j->jc += j->nc) {
    j->ncur = j->n - j->jc < j->nc ? j->n - j->jc : j->nc;
    for (j->pc = 0; j->pc < j->kk; j->pc += j->kc) {
      j->kcur = j->kk - j->pc < j->kc ? j->kk - j->pc : j->kc;
      hlo_rt_parallel_for(pool, threads, GEMM_NAME(pack_b_parts), j);
      hlo_rt_parallel_for(pool, threads, GEMM_NAME(row_blocks), j);
      if (j->failed)
        break;
    }
    if (j->failed)
      break;
  }
  if (!bp || j->failed)
    GEMM_NAME(naive)(j);
  hlo_rt_free(NULL, bp);
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
  return j;
}

static void GEMM_NAME(batches)(void *arg, int64_t begin, int64_t end) {
  const GEMM_NAME(batch_job) *bj = arg;
  for (int64_t t = begin; t < end; t++) {
    GEMM_NAME(job) j = GEMM_NAME(batch_at)(bj, t);
    GEMM_NAME(gemm)(NULL, 1, &j);
  }
}

/* Runs every batch of bj: batches in parallel when there are enough of them, else one after
 * the other with each product's row blocks in parallel. */
static void GEMM_NAME(run_batches)(hlo_context *ctx, int64_t batch, GEMM_NAME(batch_job) *bj) {
  const GEMM_NAME(job) *p = &bj->proto;
  if (batch <= 0 || p->m <= 0 || p->n <= 0)
    return;
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

HLO_RT_EXPORT void GEMM_NAME(hlo_rt_gemm_strided)(hlo_context *ctx, int64_t batch, int64_t m, int64_t n,
                                                  int64_t k, const GEMM_T *a, int64_t a_bs, int64_t a_rs,
                                                  int64_t a_cs, const GEMM_T *b, int64_t b_bs, int64_t b_rs,
                                                  int64_t b_cs, GEMM_T *c) {
  GEMM_NAME(batch_job) bj = {
      .proto = {.k = GEMM_NAME(pick_kernel)(), .m = m, .n = n, .kk = k, .a = a, .b = b, .a_rs = a_rs,
                .a_cs = a_cs, .b_rs = b_rs, .b_cs = b_cs, .c = c, .ldc = n},
      .a_bs = a_bs,
      .b_bs = b_bs};
  GEMM_NAME(run_batches)(ctx, batch, &bj);
}

HLO_RT_EXPORT void GEMM_NAME(hlo_rt_gemm_indexed)(hlo_context *ctx, int64_t batch, int64_t m, int64_t n, int64_t k,
                                                  const GEMM_T *a, const int64_t *a_off, const GEMM_T *b,
                                                  const int64_t *b_off, GEMM_T *c) {
  GEMM_NAME(batch_job) bj = {
      .proto = {.k = GEMM_NAME(pick_kernel)(), .m = m, .n = n, .kk = k, .a = a, .b = b, .a_row = a_off + batch,
                .a_dep = a_off + batch + m, .b_dep = b_off + batch, .b_col = b_off + batch + k, .c = c, .ldc = n},
      .a_boff = a_off,
      .b_boff = b_off};
  GEMM_NAME(run_batches)(ctx, batch, &bj);
}

HLO_RT_EXPORT void GEMM_NAME(hlo_rt_gemm)(hlo_context *ctx, int64_t m, int64_t n, int64_t k, const GEMM_T *a,
                                          int64_t lda, const GEMM_T *b, int64_t ldb, GEMM_T *c, int64_t ldc) {
  GEMM_NAME(job) j = {.k = GEMM_NAME(pick_kernel)(), .m = m, .n = n, .kk = k, .a = a, .b = b, .a_rs = lda,
                      .a_cs = 1, .b_rs = ldb, .b_cs = 1, .c = c, .ldc = ldc};
  if (m <= 0 || n <= 0)
    return;
  GEMM_NAME(gemm)(ctx, gemm_threads(ctx, m, n, k), &j);
}

#undef GEMM_NAME
#undef GEMM_CAT
#undef GEMM_CAT2
