/* mlir_attr.c — reading attribute values of the op tree: dictionaries and keys, enum words
 * (#stablehlo<comparison_direction LT>), the bodies of #dialect.attr<k = v, ...> hash
 * attributes, integer lists (array<i64: ...>, [..], dense<[..]>), and dense<...> constants
 * decoded to element storage (hex little-endian with splats, nested lists, complex pairs,
 * float bit patterns), each value checked against its type.  Tests: grammar/mlir_test.c.
 */
#include <stdlib.h>
#include <string.h>

#include "ir/literal.h"
#include "mlir_internal.h"

/* ---- tree helpers ----------------------------------------------------------------------- */

bool ml_str_is(ml_str s, const char *z) { return strlen(z) == s.n && memcmp(s.p, z, s.n) == 0; }

const ml_attr *ml_dict_get(const ml_attr *dict, const char *key) {
  for (int i = 0; dict && i < dict->n; i++)
    if (ml_str_is(dict->kids[i]->key, key))
      return dict->kids[i];
  return NULL;
}

const ml_attr *ml_attr_get(const ml_op *op, const char *key) { return ml_dict_get(op->attrs, key); }

bool ml_word_has(const ml_op *op, const char *w) {
  for (int i = 0; i < op->n_words; i++)
    if (ml_str_is(op->words[i], w))
      return true;
  return false;
}

/* The body of X<...> (between the first '<' and the last '>'). */
static ml_str angle_body(ml_str t) {
  const char *lt = memchr(t.p, '<', t.n);
  if (!lt || t.n < 2 || t.p[t.n - 1] != '>')
    return (ml_str){t.p + t.n, 0};
  return (ml_str){lt + 1, (size_t)(t.p + t.n - 1 - (lt + 1))};
}

static ir_loc body_loc(const ml_attr *a, ml_str body) {
  ir_loc l = a->loc;
  l.col += (int)(body.p - a->text.p);
  return l;
}

/* -u or u as a two's-complement int64 (wrapping, never undefined). */
static int64_t signed_of(uint64_t u, bool neg) { return (int64_t)(neg ? 0 - u : u); }

ml_str ml_enum_word(const ml_attr *a) {
  if (!a)
    return (ml_str){"", 0};
  if (a->kind != MA_HASH)
    return a->text;
  ml_str b = angle_body(a->text);
  size_t i = b.n;
  while (i > 0 && b.p[i - 1] == ' ')
    i--;
  size_t e = i;
  while (i > 0 && b.p[i - 1] != ' ')
    i--;
  return (ml_str){b.p + i, e - i};
}

/* A tiny recursive-descent reader over a sub-lexer for hash bodies: k = v, ... */
ml_attr *ml_hash_dict(ml_ctx *c, const ml_attr *hash) {
  ml_attr *d = ml_alloc(c, sizeof *d);
  if (!d)
    return NULL;
  d->kind = MA_DICT;
  if (!hash || hash->kind != MA_HASH)
    return d;
  ml_str b = angle_body(hash->text);
  ml_lexer lx;
  ml_lexer_init(&lx, b.p, b.n, body_loc(hash, b));
  ml_tok t = ml_lex(&lx);
  while (t.kind == MT_BARE) {
    ml_attr *v = ml_alloc(c, sizeof *v);
    if (!v)
      return NULL;
    v->key = (ml_str){t.p, t.n};
    v->loc = t.loc;
    t = ml_lex(&lx);
    if (t.kind != MT_PUNCT || t.c != '=') {
      v->kind = MA_UNIT;
    } else {
      t = ml_lex(&lx);
      if (t.kind == MT_PUNCT && t.c == '[') {
        v->kind = MA_LIST;
        t = ml_lex(&lx);
        while (t.kind == MT_INT || t.kind == MT_BARE || (t.kind == MT_PUNCT && t.c == '-')) {
          bool neg = t.kind == MT_PUNCT;
          if (neg)
            t = ml_lex(&lx);
          ml_attr *k = ml_alloc(c, sizeof *k);
          if (!k)
            return NULL;
          k->kind = t.kind == MT_INT ? MA_INT : MA_WORD;
          k->i = signed_of(strtoull(t.p, NULL, 0), neg);
          k->text = (ml_str){t.p, t.n};
          if (!ml_push(c, (void ***)&v->kids, &v->n, k))
            return NULL;
          t = ml_lex(&lx);
          if (t.kind == MT_PUNCT && t.c == ',')
            t = ml_lex(&lx);
        }
        if (t.kind != MT_PUNCT || t.c != ']') {
          ml_error(c, t.loc, "malformed list in %.*s", (int)(hash->text.n > 40 ? 40 : hash->text.n), hash->text.p);
          return NULL;
        }
      } else if (t.kind == MT_INT || (t.kind == MT_PUNCT && t.c == '-')) {
        bool neg = t.kind == MT_PUNCT;
        if (neg)
          t = ml_lex(&lx);
        v->kind = MA_INT;
        v->i = signed_of(strtoull(t.p, NULL, 0), neg);
      } else {
        v->kind = t.kind == MT_STRING ? MA_STRING : MA_WORD;
        v->text = (ml_str){t.p, t.n};
      }
      t = ml_lex(&lx);
    }
    if (!ml_push(c, (void ***)&d->kids, &d->n, v))
      return NULL;
    if (t.kind == MT_PUNCT && t.c == ',')
      t = ml_lex(&lx);
  }
  return d;
}

/* Reads the numbers of a dense/array body into an int list. */
static bool body_ints(ml_ctx *c, const ml_attr *a, ml_str b, int64_t **out, int *out_n) {
  ml_lexer lx;
  ml_lexer_init(&lx, b.p, b.n, body_loc(a, b));
  int64_t *v = ml_alloc(c, sizeof *v * (b.n / 2 + 2));
  if (!v)
    return false;
  int n = 0;
  bool neg = false;
  for (ml_tok t = ml_lex(&lx); t.kind != MT_EOF; t = ml_lex(&lx)) {
    if (t.kind == MT_PUNCT && t.c == '-') {
      neg = true;
    } else if (t.kind == MT_INT) {
      v[n++] = signed_of(strtoull(t.p, NULL, 0), neg);
      neg = false;
    } else if (t.kind == MT_BARE && (ml_str_is((ml_str){t.p, t.n}, "true") || ml_str_is((ml_str){t.p, t.n}, "false"))) {
      v[n++] = t.p[0] == 't';
    } else if (t.kind == MT_ERROR || t.kind == MT_FLOAT || t.kind == MT_STRING) {
      return false;
    }
  }
  *out = v;
  *out_n = n;
  return true;
}

bool ml_attr_ints(ml_ctx *c, const ml_attr *a, int64_t **out, int *out_n) {
  *out = NULL;
  *out_n = 0;
  if (!a)
    return false;
  if (a->kind == MA_INT) {
    *out = ml_alloc(c, sizeof(int64_t));
    if (!*out)
      return false;
    (*out)[0] = a->i;
    *out_n = 1;
    return true;
  }
  if (a->kind == MA_LIST) {
    int64_t *v = ml_alloc(c, sizeof *v * (size_t)(a->n + 1));
    if (!v)
      return false;
    for (int i = 0; i < a->n; i++) {
      if (a->kids[i]->kind != MA_INT)
        return false;
      v[i] = a->kids[i]->i;
    }
    *out = v;
    *out_n = a->n;
    return true;
  }
  if (a->kind == MA_DENSE) {
    ml_str b = angle_body(a->text);
    const char *colon = memchr(b.p, ':', b.n); /* array<i64: 1, 2> */
    if (colon && a->text.n > 5 && memcmp(a->text.p, "array", 5) == 0)
      b = (ml_str){colon + 1, (size_t)(b.p + b.n - colon - 1)};
    else if (a->text.n > 5 && memcmp(a->text.p, "array", 5) == 0)
      b.n = 0;
    return body_ints(c, a, b, out, out_n);
  }
  return false;
}

/* ---- dense constants ------------------------------------------------------------------------ */

static int hexval(char ch) {
  return ch >= '0' && ch <= '9' ? ch - '0' : ch >= 'a' && ch <= 'f' ? ch - 'a' + 10 : ch >= 'A' && ch <= 'F' ? ch - 'A' + 10 : -1;
}

static int64_t type_count(const ml_type *t) {
  int64_t n = 1;
  for (int i = 0; i < t->rank; i++) {
    if (t->dims[i] < 0)
      return -1;
    if (t->dims[i] && n > INT64_MAX / t->dims[i])
      return -1;
    n *= t->dims[i];
  }
  return n;
}

/* One scalar leaf of a list-form dense value into `out` (one component for complex). */
static bool encode_leaf(ml_ctx *c, ir_etype et, ml_tok t, bool neg, unsigned char *out) {
  char buf[80];
  size_t n = t.n < 79 ? t.n : 79;
  memcpy(buf, t.p, n);
  buf[n] = 0;
  ir_lit_status st = IR_LIT_OK;
  if (ir_etype_is_float(et)) {
    if (t.kind == MT_INT && n > 2 && buf[0] == '0' && buf[1] == 'x') { /* raw bits */
      uint64_t bits = strtoull(buf, NULL, 16);
      memcpy(out, &bits, (size_t)ir_etype_table[et].storage_bytes);
      return true;
    }
    double d;
    if (t.kind == MT_BARE && (strcmp(buf, "inf") == 0 || strcmp(buf, "nan") == 0))
      d = buf[0] == 'i' ? 1.0 / 0.0 : 0.0 / 0.0;
    else if (t.kind == MT_INT || t.kind == MT_FLOAT)
      d = strtod(buf, NULL);
    else
      return ml_error(c, t.loc, "expected a number, found '%s'", buf), false;
    st = ir_lit_encode_float(et, neg ? -d : d, 0, out);
  } else if (et == IR_PRED) {
    if (t.kind == MT_BARE && (strcmp(buf, "true") == 0 || strcmp(buf, "false") == 0))
      out[0] = buf[0] == 't';
    else if (t.kind == MT_INT)
      out[0] = strtoull(buf, NULL, 0) != 0;
    else
      return ml_error(c, t.loc, "expected true or false, found '%s'", buf), false;
  } else {
    if (t.kind != MT_INT)
      return ml_error(c, t.loc, "expected an integer, found '%s'", buf), false;
    uint64_t u = strtoull(buf, NULL, 0);
    if (neg && u > (1ull << 63))
      st = IR_LIT_OUT_OF_RANGE;
    else if (neg)
      st = ir_lit_encode_int(et, (int64_t)(0 - u), 0, false, out);
    else
      st = ir_lit_encode_int(et, (int64_t)u, u, true, out);
    int bits = ir_etype_table[et].bits;
    if (st != IR_LIT_OK && !neg && (bits >= 64 || u < (1ull << bits))) { /* a bit pattern (255 as i8) */
      memcpy(out, &u, (size_t)ir_etype_table[et].storage_bytes);
      st = IR_LIT_OK;
    }
  }
  if (st != IR_LIT_OK)
    return ml_error(c, t.loc, "value %s%s does not fit %s", neg ? "-" : "", buf, ir_etype_table[et].spelling), false;
  return true;
}

static bool dense_hex(ml_ctx *c, const ml_attr *a, ml_tok t, const ml_type *ty, int64_t count, unsigned char *out) {
  int eb = ir_etype_table[ty->et].storage_bytes;
  if (t.n < 2 || t.p[0] != '0' || (t.p[1] != 'x' && t.p[1] != 'X') || (t.n - 2) % 2)
    return ml_error(c, t.loc, "malformed hex constant"), false;
  size_t bytes = (t.n - 2) / 2;
  bool splat = bytes == (size_t)eb && count > 1;
  if (!splat && bytes != (size_t)(count * eb)) {
    ml_error(c, a->loc, "hex constant has %zu bytes, but %lld elements of %s need %lld", bytes, (long long)count,
             ir_etype_table[ty->et].spelling, (long long)(count * eb));
    return false;
  }
  for (size_t i = 0; i < bytes; i++) {
    int hi = hexval(t.p[2 + 2 * i]), lo = hexval(t.p[3 + 2 * i]);
    if (hi < 0 || lo < 0)
      return ml_error(c, t.loc, "malformed hex constant"), false;
    out[i] = (unsigned char)(hi * 16 + lo);
  }
  for (int64_t i = 1; splat && i < count; i++)
    memcpy(out + i * eb, out, (size_t)eb);
  return true;
}

bool ml_dense_bytes(ml_ctx *c, const ml_attr *a, const ml_type *t, unsigned char **out, int64_t *out_count) {
  if (!a || a->kind != MA_DENSE || !t || t->kind != MLT_TENSOR)
    return ml_error(c, a ? a->loc : (ir_loc){0, 0}, "expected a dense<...> value of a tensor type"), false;
  int64_t count = type_count(t);
  int eb = ir_etype_table[t->et].storage_bytes;
  if (count < 0 || (count && (uint64_t)count > ((uint64_t)1 << 40) / (uint64_t)eb))
    return ml_error(c, a->loc, "constant too large"), false;
  unsigned char *buf = ml_alloc(c, (size_t)(count * eb) + 16);
  if (!buf)
    return false;
  ml_str b = angle_body(a->text);
  ml_lexer lx;
  ml_lexer_init(&lx, b.p, b.n, body_loc(a, b));
  ml_tok t0 = ml_lex(&lx);
  if (t0.kind == MT_STRING) {
    if (!dense_hex(c, a, t0, t, count, buf))
      return false;
    *out = buf;
    *out_count = count;
    return true;
  }
  bool cplx = ir_etype_is_complex(t->et);
  ir_etype ct = ir_etype_component(t->et);
  int cb = ir_etype_table[ct].storage_bytes;
  int64_t n = 0; /* components written */
  int64_t total = count * (cplx ? 2 : 1);
  bool neg = false;
  for (ml_tok tk = t0; tk.kind != MT_EOF; tk = ml_lex(&lx)) {
    if (tk.kind == MT_PUNCT && tk.c == '-') {
      neg = true;
      continue;
    }
    if (tk.kind == MT_PUNCT)
      continue; /* [ ] ( ) , */
    if (tk.kind == MT_ERROR)
      return ml_error(c, tk.loc, "malformed dense value"), false;
    if (n >= total && n >= (cplx ? 2 : 1)) /* a splat of an empty tensor still has one element */
      return ml_error(c, tk.loc, "dense value has more than %lld elements", (long long)count), false;
    if (!encode_leaf(c, cplx ? ct : t->et, tk, neg, buf + n * (cplx ? cb : eb)))
      return false;
    neg = false;
    n++;
  }
  int64_t per = cplx ? 2 : 1;
  if (n == per && count != 1) {
    for (int64_t i = 1; i < count; i++)
      memcpy(buf + i * eb, buf, (size_t)eb);
  } else if (n != total) {
    return ml_error(c, a->loc, "dense value has %lld elements, its type needs %lld", (long long)(n / per),
                    (long long)count), false;
  }
  *out = buf;
  *out_count = count;
  return true;
}

