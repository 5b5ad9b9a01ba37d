/* alias_text.c — a small scanner for the module attributes input_output_alias and buffer_donor
 * (syntax as XLA's parser reads them, xla/hlo/parser/hlo_parser.cc): the IR keeps both as
 * written, but text XLA rejects (a name where a number belongs, a missing ':') is rejected
 * here too.  Tests: testdata/parse/err/alias_*.hlo, buffer_donor_*.hlo. */
#include "ir/alias_text.h"

#include <string.h>

#include "ir/ir.h"

typedef struct scan {
  const char *p, *end;
  /* Where the scan records what it reads (ir_alias_pairs); unused by the check. */
  long idx[2][16];
  int n_idx[2], which;
  long param;
} scan;

static void skip_ws(scan *s) {
  while (s->p < s->end && (*s->p == ' ' || *s->p == '\t' || *s->p == '\n' || *s->p == '\r'))
    s->p++;
}

static bool eat(scan *s, char c) {
  skip_ws(s);
  if (s->p < s->end && *s->p == c) {
    s->p++;
    return true;
  }
  return false;
}

/* Reads an integer into *out (saturating; a value is only used when it fits a shape). */
static bool number_value(scan *s, long *out) {
  skip_ws(s);
  const char *q = s->p;
  bool neg = q < s->end && *q == '-';
  if (neg)
    q++;
  const char *digits = q;
  long v = 0;
  while (q < s->end && *q >= '0' && *q <= '9') {
    v = v < 100000000 ? v * 10 + (*q - '0') : v;
    q++;
  }
  if (q == digits)
    return false;
  s->p = q;
  *out = neg ? -v : v;
  return true;
}

/* {} or {i, j, ...}: recorded in s->idx[s->which] */
static bool shape_index(scan *s) {
  s->n_idx[s->which] = 0;
  if (!eat(s, '{'))
    return false;
  if (eat(s, '}'))
    return true;
  do {
    long v;
    if (!number_value(s, &v))
      return false;
    if (s->n_idx[s->which] < 16)
      s->idx[s->which][s->n_idx[s->which]] = v;
    s->n_idx[s->which]++;
  } while (eat(s, ','));
  return eat(s, '}');
}

static bool alias_kind(scan *s) {
  skip_ws(s);
  static const char *const kinds[] = {"may-alias", "must-alias"};
  for (int i = 0; i < 2; i++) {
    size_t n = strlen(kinds[i]);
    if ((size_t)(s->end - s->p) >= n && memcmp(s->p, kinds[i], n) == 0) {
      s->p += n;
      return true;
    }
  }
  return false;
}

/* (PARAM, PARAM_INDEX[, kind]) */
static bool param_ref(scan *s, bool kind_allowed) {
  s->which = 1;
  if (!eat(s, '(') || !number_value(s, &s->param) || !eat(s, ',') || !shape_index(s))
    return false;
  if (kind_allowed && eat(s, ',') && !alias_kind(s))
    return false;
  return eat(s, ')');
}

static bool entry(scan *s, bool donor) {
  if (donor)
    return param_ref(s, false);
  s->which = 0;
  return shape_index(s) && eat(s, ':') && param_ref(s, true);
}

long ir_alias_text_check(const char *text, size_t n, bool donor) {
  scan s = {.p = text, .end = text + n};
  bool ok = eat(&s, '{');
  if (ok && !eat(&s, '}')) {
    do
      ok = entry(&s, donor);
    while (ok && eat(&s, ','));
    ok = ok && eat(&s, '}');
  }
  skip_ws(&s);
  return ok && s.p == s.end ? -1 : (long)(s.p - text);
}

/* The flat leaf number of the shape index idx[0..n) within s, or -1 when it names no leaf. */
static int leaf_number(const ir_shape *s, const long *idx, int n, const ir_shape **leaf) {
  int base = 0;
  for (int d = 0; d < n; d++) {
    if (s->et != IR_TUPLE || idx[d] < 0 || idx[d] >= s->n_elems)
      return -1;
    for (long j = 0; j < idx[d]; j++)
      base += ir_shape_count_leaves(s->elems[j]);
    s = s->elems[idx[d]];
  }
  *leaf = s;
  return s->et == IR_TUPLE ? -1 : base;
}

int ir_alias_pairs(const ir_module *m, int *result_donor) {
  const ir_computation *e = m->entry;
  int nr = ir_shape_count_leaves(e->root->shape), n = 0;
  for (int i = 0; i < nr; i++)
    result_donor[i] = -1;
  ir_str t = m->input_output_alias;
  if (!t.len || ir_alias_text_check(t.p, t.len, false) >= 0)
    return 0;
  scan s = {.p = t.p, .end = t.p + t.len};
  if (!eat(&s, '{') || eat(&s, '}'))
    return 0;
  do {
    if (!entry(&s, false))
      return n;
    if (s.n_idx[0] > 16 || s.n_idx[1] > 16 || s.param < 0 || s.param >= e->n_params)
      continue;
    const ir_shape *os = NULL, *ps = NULL;
    int out = leaf_number(e->root->shape, s.idx[0], s.n_idx[0], &os);
    int in = leaf_number(e->params[s.param]->shape, s.idx[1], s.n_idx[1], &ps);
    if (out < 0 || in < 0 || !ir_shape_equal(os, ps) || !ir_etype_is_array(os->et))
      continue;
    for (long p = 0; p < s.param; p++)
      in += ir_shape_count_leaves(e->params[p]->shape);
    result_donor[out] = in;
    n++;
  } while (eat(&s, ','));
  return n;
}
