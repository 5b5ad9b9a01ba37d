/* checks.c — evaluates a StableHLO file's check ops (check.expect_eq, expect_close,
 * expect_almost_eq) on the results of a run, as StableHLO's interpreter does
 * (CheckOps.cpp and StablehloTranslateMain.cpp in openxla/stablehlo): ULP distance for
 * expect_close, an absolute tolerance for expect_almost_eq, exact equality for expect_eq.
 * The translator (grammar/mlir.h) made each check's actual and expected values extra
 * results of the entry.  Tests: tests/stablehlo.cmake (testdata pass count, a corrupted
 * expected value).
 */
#include "checks.h"

#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ir/literal.h"
#include "ir/print.h"

static hlo_status slurp(const char *path, char **out, size_t *out_len) {
  FILE *f = fopen(path, "rb");
  if (!f)
    return hlo_status_make(HLO_NOT_FOUND, "%s: cannot open: %s", path, strerror(errno));
  char *buf = NULL;
  size_t n = 0, cap = 0;
  for (;;) {
    if (n + 65536 > cap) {
      cap = cap ? 2 * cap : 1 << 20;
      char *g = realloc(buf, cap);
      if (!g) {
        free(buf);
        fclose(f);
        return hlo_status_make(HLO_RESOURCE_EXHAUSTED, "%s: out of memory", path);
      }
      buf = g;
    }
    size_t k = fread(buf + n, 1, cap - n, f);
    n += k;
    if (k == 0)
      break;
  }
  bool bad = ferror(f);
  fclose(f);
  if (bad) {
    free(buf);
    return hlo_status_make(HLO_IO, "%s: read error", path);
  }
  *out = buf;
  *out_len = n;
  return NULL;
}

hlo_status checks_read(const char *path, mlir_checks *out) {
  memset(out, 0, sizeof *out);
  char *text = NULL;
  size_t len = 0;
  HLO_RETURN_IF_ERROR(slurp(path, &text, &len));
  size_t pn = strlen(path);
  hlo_status s = NULL;
  if ((pn > 5 && strcmp(path + pn - 5, ".mlir") == 0) || ir_text_is_mlir(text, len)) {
    ir_diag_list d;
    ir_diag_init(&d, path, text, len);
    char *hlo = NULL;
    s = ir_mlir_to_hlo(text, len, &d, &hlo, NULL, NULL, NULL, out);
    free(hlo);
    ir_diag_deinit(&d);
  }
  free(text);
  return s;
}

/* The interpreter's ULP difference: 0 for identical bits or two NaNs, the distance on the
 * magnitude line (through zero when the signs differ) for finite values, UINT64_MAX when
 * only one side is finite. */
static uint64_t ulp_diff(ir_etype et, const unsigned char *a, const unsigned char *b) {
  uint64_t x = ir_lit_float_bits(et, a), y = ir_lit_float_bits(et, b);
  if (x == y)
    return 0;
  double fa = ir_lit_decode_float(et, a), fb = ir_lit_decode_float(et, b);
  if (isnan(fa) && isnan(fb))
    return 0;
  if (!isfinite(fa) || !isfinite(fb))
    return UINT64_MAX;
  int w = ir_etype_table[et].bits;
  if (et == IR_F8E8M0FNU) /* no sign bit */
    return x > y ? x - y : y - x;
  uint64_t sign = 1ull << (w - 1), ma = x & (sign - 1), mb = y & (sign - 1);
  if ((x & sign) != (y & sign))
    return ma + mb;
  return ma > mb ? ma - mb : mb - ma;
}

/* areApproximatelyEqual: equal, or both NaN, or both finite within tol. */
static bool almost_eq(double f, double g, double tol) {
  if (f == g)
    return true;
  if (isnan(f) || isnan(g))
    return isnan(f) && isnan(g);
  if (!isfinite(f) || !isfinite(g))
    return false;
  return fabs(f - g) <= tol;
}

typedef struct check_worst {
  int64_t index, count;
  double score;  /* ULPs, |error|, or 1 for a mismatch */
} check_worst;

/* Does element i (component part) hold?  Sets *score to how far off it is. */
static bool element_holds(const mlir_check *c, ir_etype et, const unsigned char *a, const unsigned char *e,
                          double *score) {
  *score = 0;
  bool is_float = ir_etype_is_float(et);
  if (!is_float) {
    int nb = ir_etype_table[et].storage_bytes;
    *score = memcmp(a, e, (size_t)nb) ? 1 : 0;
    return *score == 0;
  }
  double fa = ir_lit_decode_float(et, a), fe = ir_lit_decode_float(et, e);
  if (c->kind == MLIR_CHECK_EQ) {
    *score = fa == fe ? 0 : isnan(fa) || isnan(fe) ? INFINITY : fabs(fa - fe);
    return fa == fe;
  }
  if (c->kind == MLIR_CHECK_ALMOST_EQ) {
    bool ok = almost_eq(fa, fe, c->tolerance);
    *score = ok ? 0 : isfinite(fa - fe) ? fabs(fa - fe) : INFINITY;
    return ok;
  }
  uint64_t d = ulp_diff(et, a, e);
  *score = d == UINT64_MAX ? INFINITY : (double)d;
  return d >= c->min_ulp && d <= c->max_ulp;
}

static void index_text(const hlo_array_desc *d, int64_t linear, char *buf, size_t cap) {
  int64_t idx[64] = {0};
  for (int k = d->rank - 1; k >= 0; k--) {
    if (k < 64)
      idx[k] = d->dims[k] ? linear % d->dims[k] : 0;
    linear = d->dims[k] ? linear / d->dims[k] : 0;
  }
  size_t w = (size_t)snprintf(buf, cap, "[");
  for (int k = 0; k < d->rank && k < 64 && w < cap; k++)
    w += (size_t)snprintf(buf + w, cap - w, "%s%lld", k ? "," : "", (long long)idx[k]);
  if (w < cap)
    snprintf(buf + w, cap - w, "]");
}

static const char *kind_name(mlir_check_kind k) {
  return k == MLIR_CHECK_EQ ? "check.expect_eq" : k == MLIR_CHECK_CLOSE ? "check.expect_close" : "check.expect_almost_eq";
}

/* One check; prints its failure to err and returns false when it does not hold. */
static bool check_one(const char *model, const mlir_check *c, const hlo_array_desc *da, const void *pa,
                      const hlo_array_desc *de, const void *pe, FILE *err) {
  if (da->dtype != de->dtype || da->byte_size != de->byte_size) {
    fprintf(err, "%s:%d:%d: %s failed: actual and expected differ in type or size\n", model, c->line, c->col,
            kind_name(c->kind));
    return false;
  }
  ir_etype et = (ir_etype)da->dtype;
  int eb = ir_etype_table[et].storage_bytes;
  int parts = ir_etype_is_complex(et) ? 2 : 1;
  ir_etype ct = ir_etype_component(et);
  int64_t n = eb ? da->byte_size / eb : 0;
  check_worst w = {.index = -1};
  const unsigned char *a = pa, *e = pe;
  for (int64_t i = 0; i < n; i++) {
    double worst_part = 0;
    bool ok = true;
    for (int p = 0; p < parts; p++) {
      double s;
      ok &= element_holds(c, ct, a + i * eb + p * eb / parts, e + i * eb + p * eb / parts, &s);
      worst_part = s > worst_part || isnan(s) ? s : worst_part;
    }
    if (ok)
      continue;
    w.count++;
    if (w.index < 0 || worst_part > w.score) {
      w.index = i;
      w.score = worst_part;
    }
  }
  if (w.index < 0)
    return true;
  char where[512], got[160], want[160];
  index_text(da, w.index, where, sizeof where);
  ir_format_element(et, a + w.index * eb, got, sizeof got);
  ir_format_element(et, e + w.index * eb, want, sizeof want);
  char how[128] = "";
  if (c->kind == MLIR_CHECK_CLOSE && (ir_etype_is_float(et) || ir_etype_is_complex(et)))
    snprintf(how, sizeof how, " (ULP difference %.0f; allowed %llu to %llu)", w.score, (unsigned long long)c->min_ulp,
             (unsigned long long)c->max_ulp);
  else if (c->kind == MLIR_CHECK_ALMOST_EQ && (ir_etype_is_float(et) || ir_etype_is_complex(et)))
    snprintf(how, sizeof how, " (|difference| %.3g; tolerance %g)", w.score, c->tolerance);
  fprintf(err, "%s:%d:%d: %s failed: worst element %s actual %s expected %s%s; %lld of %lld element%s differ\n",
          model, c->line, c->col, kind_name(c->kind), where, got, want, how, (long long)w.count, (long long)n,
          n == 1 ? "" : "s");
  return false;
}

hlo_status checks_evaluate(const char *model, const mlir_checks *ch, const hlo_module_desc *desc,
                           void *const *results, FILE *out, FILE *err) {
  int failed = 0, first_line = 0;
  for (int i = 0; i < ch->n; i++) {
    const mlir_check *c = &ch->items[i];
    if (c->actual < 0 || c->expected < 0 || c->actual >= desc->num_results || c->expected >= desc->num_results)
      return hlo_status_make(HLO_INTERNAL, "%s:%d: the check's values are not results of the model", model, c->line);
    if (!check_one(model, c, &desc->results[c->actual], results[c->actual], &desc->results[c->expected],
                   results[c->expected], err)) {
      if (!failed++)
        first_line = c->line;
    }
  }
  if (failed)
    return hlo_status_make(HLO_FAILED_PRECONDITION, "%s: %d of %d check%s failed (the first at line %d)", model, failed,
                           ch->n, ch->n == 1 ? "" : "s", first_line);
  if (out)
    fprintf(out, "%d check%s passed\n", ch->n, ch->n == 1 ? "" : "s");
  return NULL;
}
