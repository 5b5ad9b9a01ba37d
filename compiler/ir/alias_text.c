/* alias_text.c — a small scanner for the module attributes input_output_alias and buffer_donor
 * (syntax as XLA's parser reads them, xla/hlo/parser/hlo_parser.cc): the IR keeps both as
 * written, but text XLA rejects (a name where a number belongs, a missing ':') is rejected
 * here too.  Tests: testdata/parse/err/alias_*.hlo, buffer_donor_*.hlo. */
#include "ir/alias_text.h"

#include <string.h>

typedef struct scan {
  const char *p, *end;
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

static bool number(scan *s) {
  skip_ws(s);
  const char *q = s->p;
  if (q < s->end && *q == '-')
    q++;
  const char *digits = q;
  while (q < s->end && *q >= '0' && *q <= '9')
    q++;
  if (q == digits)
    return false;
  s->p = q;
  return true;
}

/* {} or {i, j, ...} */
static bool shape_index(scan *s) {
  if (!eat(s, '{'))
    return false;
  if (eat(s, '}'))
    return true;
  do {
    if (!number(s))
      return false;
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
  if (!eat(s, '(') || !number(s) || !eat(s, ',') || !shape_index(s))
    return false;
  if (kind_allowed && eat(s, ',') && !alias_kind(s))
    return false;
  return eat(s, ')');
}

static bool entry(scan *s, bool donor) {
  if (donor)
    return param_ref(s, false);
  return shape_index(s) && eat(s, ':') && param_ref(s, true);
}

long ir_alias_text_check(const char *text, size_t n, bool donor) {
  scan s = {text, text + n};
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
