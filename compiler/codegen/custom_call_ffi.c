/* custom_call_ffi.c — custom calls with api_version=API_VERSION_TYPED_FFI: the backend_config,
 * an MLIR attribute dictionary such as
 *   {alpha = 2.5 : f32, n = 3 : i64, name = "x", flag = true, arr = array<i64: 1, 2>}
 * is parsed here at compile time (malformed text stops with the line:col of the offending
 * character) and emitted as constant XLA_FFI_Attrs data laid out as hlo/xla_ffi.h declares
 * (names sorted, scalars as XLA_FFI_Scalar, arrays as XLA_FFI_Array, strings as
 * XLA_FFI_ByteSpan, nested dictionaries as XLA_FFI_Attrs); the call itself is one
 * hlo_rt_ffi_call (runtime/src/context/xla_ffi.c) with a constant description of every argument and
 * result leaf (XLA data type, rank, dims).  The attribute kinds accepted are those XLA's own
 * conversion (xla/ffi/attribute_map.cc) accepts: bool, i8..i64 / si / ui integers, f32, f64,
 * strings, array<T: ...> of i8..i64 / f32 / f64, dense<...> : tensor<...> of those and of
 * ui8..ui64, and dictionaries.  Tests: testdata/runtime/ffi_* (tests/runtime.cmake).
 */
#include <float.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "codegen/cg_internal.h"
#include "hlo/xla_ffi.h"

/* ---- the decoded dictionary -------------------------------------------------------------- */

typedef enum { FA_SCALAR, FA_ARRAY, FA_STRING, FA_DICT } fa_kind;

typedef struct fa_attr fa_attr;
typedef struct fa_dict {
  fa_attr *v;
  int n, cap;
} fa_dict;

struct fa_attr {
  char *name;
  size_t name_len, name_pos;
  fa_kind kind;
  XLA_FFI_DataType dtype;
  int width;           /* bytes per element (scalars, arrays) */
  unsigned char *data; /* scalar: one element; array: n elements; string: n bytes */
  size_t n;
  fa_dict dict;
};

static void dict_free(fa_dict *d) {
  for (int i = 0; i < d->n; i++) {
    free(d->v[i].name);
    free(d->v[i].data);
    dict_free(&d->v[i].dict);
  }
  free(d->v);
}

/* The element type written after ':' or in array<...>. */
typedef struct fa_type {
  XLA_FFI_DataType dtype;
  int width, bits;
  char cls; /* 'b' bool, 's' signed, 'l' signless, 'u' unsigned, 'f' float */
} fa_type;

typedef struct fa_num {
  bool neg, is_float;
  uint64_t mag;
  double f;
  size_t pos;
} fa_num;

typedef struct fa_parser {
  const char *s;
  size_t len, pos;
  bool failed;
  size_t err_pos;
  char err[300];
} fa_parser;

static bool fa_error(fa_parser *p, size_t pos, const char *fmt, ...) HLO_PRINTF(3, 4);
static bool fa_error(fa_parser *p, size_t pos, const char *fmt, ...) {
  if (p->failed)
    return false;
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(p->err, sizeof p->err, fmt, ap);
  va_end(ap);
  p->failed = true;
  p->err_pos = pos;
  return false;
}

static void ws(fa_parser *p) {
  while (p->pos < p->len && (p->s[p->pos] == ' ' || p->s[p->pos] == '\t' || p->s[p->pos] == '\n' ||
                             p->s[p->pos] == '\r'))
    p->pos++;
}

static char peek(fa_parser *p) {
  ws(p);
  return p->pos < p->len ? p->s[p->pos] : 0;
}

static bool accept(fa_parser *p, char c) {
  if (peek(p) != c)
    return false;
  p->pos++;
  return true;
}

static bool expect(fa_parser *p, char c, const char *what) {
  if (accept(p, c))
    return true;
  return fa_error(p, p->pos, "expected '%c' %s", c, what);
}

static bool is_id_start(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_'; }
static bool is_digit(char c) { return c >= '0' && c <= '9'; }
static bool is_id_char(char c) { return is_id_start(c) || is_digit(c) || c == '$' || c == '.'; }

/* A bare identifier at the current position: its length (0 when there is none). */
static size_t ident(fa_parser *p) {
  ws(p);
  size_t n = 0;
  if (p->pos < p->len && is_id_start(p->s[p->pos]))
    while (p->pos + n < p->len && is_id_char(p->s[p->pos + n]))
      n++;
  return n;
}

static bool ident_is(fa_parser *p, size_t n, const char *w) {
  return n == strlen(w) && memcmp(p->s + p->pos, w, n) == 0;
}

/* ---- element types and numbers ---- */

static bool parse_type(fa_parser *p, fa_type *t) {
  size_t n = ident(p), start = p->pos;
  const char *w = p->s + start;
  char cls = 0;
  int bits = 0, skip = 0;
  if (n >= 2 && w[0] == 'i')
    cls = 'l', skip = 1;
  else if (n >= 3 && w[0] == 's' && w[1] == 'i')
    cls = 's', skip = 2;
  else if (n >= 3 && w[0] == 'u' && w[1] == 'i')
    cls = 'u', skip = 2;
  else if (n >= 2 && w[0] == 'f')
    cls = 'f', skip = 1;
  for (size_t i = (size_t)skip; cls && i < n; i++)
    bits = is_digit(w[i]) && bits < 1000 ? bits * 10 + (w[i] - '0') : -1;
  bool ok = (cls == 'f' && (bits == 32 || bits == 64)) ||
            (cls && cls != 'f' && (bits == 8 || bits == 16 || bits == 32 || bits == 64)) || (cls == 'l' && bits == 1);
  if (!ok)
    return fa_error(p, start,
                    "unsupported attribute type '%.*s' (XLA's FFI takes i1, i8/i16/i32/i64, si8..si64, "
                    "ui8..ui64, f32 and f64)",
                    (int)(n ? n : 1), n ? w : "?");
  p->pos += n;
  static const XLA_FFI_DataType s[] = {XLA_FFI_DataType_S8, XLA_FFI_DataType_S16, XLA_FFI_DataType_S32,
                                       XLA_FFI_DataType_S64};
  static const XLA_FFI_DataType u[] = {XLA_FFI_DataType_U8, XLA_FFI_DataType_U16, XLA_FFI_DataType_U32,
                                       XLA_FFI_DataType_U64};
  int k = bits == 8 ? 0 : bits == 16 ? 1 : bits == 32 ? 2 : 3;
  if (bits == 1)
    *t = (fa_type){XLA_FFI_DataType_PRED, 1, 1, 'b'};
  else if (cls == 'f')
    *t = (fa_type){bits == 32 ? XLA_FFI_DataType_F32 : XLA_FFI_DataType_F64, bits / 8, bits, 'f'};
  else
    *t = (fa_type){cls == 'u' ? u[k] : s[k], bits / 8, bits, cls};
  return true;
}

/* An integer (decimal or 0x hex) or a float literal (digits '.' digits [e[+-]digits]). */
static bool parse_number(fa_parser *p, fa_num *n) {
  ws(p);
  *n = (fa_num){.pos = p->pos};
  size_t i = p->pos;
  if (i < p->len && (p->s[i] == '-' || p->s[i] == '+'))
    n->neg = p->s[i++] == '-';
  if (i >= p->len || !is_digit(p->s[i]))
    return fa_error(p, p->pos, "expected an attribute value");
  size_t digits = i;
  bool hex = p->s[i] == '0' && i + 1 < p->len && (p->s[i + 1] == 'x' || p->s[i + 1] == 'X');
  if (hex) {
    i += 2;
    size_t h0 = i;
    for (; i < p->len && strchr("0123456789abcdefABCDEF", p->s[i]) && p->s[i]; i++) {
      char c = p->s[i];
      int d = is_digit(c) ? c - '0' : (c | 32) - 'a' + 10;
      if (n->mag > (UINT64_MAX >> 4))
        return fa_error(p, n->pos, "integer literal is too large");
      n->mag = n->mag << 4 | (uint64_t)d;
    }
    if (i == h0)
      return fa_error(p, n->pos, "expected hex digits after 0x");
  } else {
    for (; i < p->len && is_digit(p->s[i]); i++) {
      uint64_t d = (uint64_t)(p->s[i] - '0');
      if (n->mag > (UINT64_MAX - d) / 10)
        n->is_float = true; /* decided below: a float literal may be long; an integer may not */
      else
        n->mag = n->mag * 10 + d;
    }
    bool frac = i < p->len && p->s[i] == '.';
    if (!frac && n->is_float)
      return fa_error(p, n->pos, "integer literal is too large");
    if (frac) {
      n->is_float = true;
      for (i++; i < p->len && is_digit(p->s[i]); i++)
        ;
      if (i < p->len && (p->s[i] == 'e' || p->s[i] == 'E')) {
        size_t e = i + 1;
        if (e < p->len && (p->s[e] == '+' || p->s[e] == '-'))
          e++;
        if (e >= p->len || !is_digit(p->s[e]))
          return fa_error(p, i, "expected exponent digits");
        for (i = e; i < p->len && is_digit(p->s[i]); i++)
          ;
      }
      char buf[128];
      size_t len = i - digits;
      if (len >= sizeof buf)
        return fa_error(p, n->pos, "float literal is too long");
      memcpy(buf, p->s + digits, len);
      buf[len] = 0;
      n->f = strtod(buf, NULL);
      if (n->neg)
        n->f = -n->f;
    }
  }
  if (i < p->len && is_id_char(p->s[i]))
    return fa_error(p, i, "unexpected character '%c' in a number", p->s[i]);
  p->pos = i;
  return true;
}

/* Writes n as one element of type t (little-endian, t->width bytes); checks its range.
 * int_for_float: an integer literal may give a float value (array elements). */
static bool store_number(fa_parser *p, const fa_num *n, const fa_type *t, bool int_for_float, unsigned char *out) {
  if (t->cls == 'f') {
    if (!n->is_float && !int_for_float)
      return fa_error(p, n->pos, "an integer literal cannot be a floating-point value (write it with a '.')");
    double d = n->is_float ? n->f : (n->neg ? -(double)n->mag : (double)n->mag);
    if (t->bits == 32) {
      if (d == d && (d > FLT_MAX || d < -FLT_MAX) && d - d == 0) /* finite, beyond f32 */
        return fa_error(p, n->pos, "%g does not fit in f32", d);
      float f = (float)d;
      memcpy(out, &f, 4);
    } else {
      memcpy(out, &d, 8);
    }
    return true;
  }
  if (n->is_float)
    return fa_error(p, n->pos, "a floating-point literal cannot be an integer value");
  int bits = t->bits;
  uint64_t umax = bits == 64 ? UINT64_MAX : (UINT64_C(1) << bits) - 1;
  uint64_t smax = umax >> 1, smin_mag = smax + 1;
  bool ok;
  if (t->cls == 'b')
    ok = !n->neg && n->mag <= 1;
  else if (t->cls == 'u')
    ok = !n->neg ? n->mag <= umax : n->mag == 0;
  else if (t->cls == 's')
    ok = n->neg ? n->mag <= smin_mag : n->mag <= smax;
  else /* signless: MLIR takes either reading of the bits */
    ok = n->neg ? n->mag <= smin_mag : n->mag <= umax;
  if (!ok)
    return fa_error(p, n->pos, "integer %s%llu does not fit in the attribute's %d-bit type", n->neg ? "-" : "",
                    (unsigned long long)n->mag, bits);
  uint64_t v = n->neg ? (uint64_t)0 - n->mag : n->mag;
  for (int k = 0; k < t->width; k++)
    out[k] = (unsigned char)(v >> (8 * k));
  return true;
}

/* ---- values ---- */

static bool parse_dict(fa_parser *p, fa_dict *d, int depth);

/* A "..." literal with MLIR's escapes (\" \\ \n \t and two hex digits); malloc'd bytes. */
static bool parse_string(fa_parser *p, unsigned char **out, size_t *out_len) {
  size_t open = p->pos++;
  unsigned char *b = malloc(p->len - p->pos + 1);
  size_t n = 0;
  if (!b)
    return fa_error(p, open, "out of memory");
  while (p->pos < p->len && p->s[p->pos] != '"') {
    char c = p->s[p->pos++];
    if (c == '\\' && p->pos < p->len) {
      char e = p->s[p->pos++];
      const char *hx = "0123456789abcdef";
      if (e == 'n')
        c = '\n';
      else if (e == 't')
        c = '\t';
      else if (e == '"' || e == '\\')
        c = e;
      else if (p->pos < p->len && e && strchr(hx, e | 32) && p->s[p->pos] && strchr(hx, p->s[p->pos] | 32)) {
        c = (char)((strchr(hx, e | 32) - hx) * 16 + (strchr(hx, p->s[p->pos] | 32) - hx));
        p->pos++;
      } else {
        free(b);
        return fa_error(p, p->pos - 2, "unknown escape '\\%c' in a string", e);
      }
    }
    b[n++] = (unsigned char)c;
  }
  if (p->pos >= p->len) {
    free(b);
    return fa_error(p, open, "unterminated string");
  }
  p->pos++;
  b[n] = 0;
  *out = b;
  *out_len = n;
  return true;
}

/* Appends element bytes, growing *buf (cap in elements). */
static bool push_elem(fa_parser *p, unsigned char **buf, size_t *n, size_t *cap, int width, const fa_num *num,
                      const fa_type *t) {
  if (*n == *cap) {
    size_t c = *cap ? *cap * 2 : 8;
    unsigned char *g = realloc(*buf, c * (size_t)width);
    if (!g)
      return fa_error(p, num->pos, "out of memory");
    *buf = g;
    *cap = c;
  }
  if (!store_number(p, num, t, true, *buf + *n * (size_t)width))
    return false;
  (*n)++;
  return true;
}

/* XLA converts arrays of i8..i64, f32 and f64 (dense<...> also of ui8..ui64), not of i1. */
static bool array_type_ok(fa_parser *p, const fa_type *t, size_t pos, bool dense) {
  if (t->cls == 'b' || (t->cls == 'u' && !dense))
    return fa_error(p, pos, "arrays of %s are not supported by XLA's FFI (i8..i64, f32 and f64 are)",
                    t->cls == 'b' ? "i1" : "unsigned integers");
  return true;
}

/* array<T> or array<T: v, v, ...> (after the word "array"). */
static bool parse_array(fa_parser *p, fa_attr *a) {
  if (!expect(p, '<', "after 'array'"))
    return false;
  ws(p);
  size_t tpos = p->pos;
  fa_type t;
  if (!parse_type(p, &t) || !array_type_ok(p, &t, tpos, false))
    return false;
  size_t cap = 0;
  a->kind = FA_ARRAY, a->dtype = t.dtype, a->width = t.width;
  if (accept(p, ':')) {
    do {
      fa_num num;
      if (!parse_number(p, &num) || !push_elem(p, &a->data, &a->n, &cap, t.width, &num, &t))
        return false;
    } while (accept(p, ','));
  }
  return expect(p, '>', "to close the array");
}

/* The numbers of dense<v> or dense<[v, ...]> (nested brackets flattened), after "dense":
 * malloc'd in *out (*n of them). */
static bool dense_values(fa_parser *p, fa_num **out, size_t *n) {
  size_t cap = 0;
  int depth = 0;
  bool ok = expect(p, '<', "after 'dense'");
  while (ok) {
    while (accept(p, '['))
      depth++;
    if (peek(p) == ']' && *n == 0)
      break;
    if (*n == cap) {
      cap = cap ? cap * 2 : 8;
      fa_num *g = realloc(*out, cap * sizeof *g);
      if (!g)
        return fa_error(p, p->pos, "out of memory");
      *out = g;
    }
    ok = parse_number(p, &(*out)[(*n)++]);
    while (ok && depth > 0 && accept(p, ']'))
      depth--;
    if (!accept(p, ','))
      break;
  }
  while (ok && depth > 0 && accept(p, ']'))
    depth--;
  return ok && (depth == 0 || fa_error(p, p->pos, "unbalanced '[' in a dense value")) &&
         expect(p, '>', "to close the dense value");
}

/* ": tensor<AxBx...xT>": the element count and type; *tpos is where T starts. */
static bool tensor_type(fa_parser *p, uint64_t *count, fa_type *t, size_t *tpos) {
  if (!expect(p, ':', "and a tensor type after dense<...>"))
    return false;
  size_t w = ident(p);
  if (!ident_is(p, w, "tensor"))
    return fa_error(p, p->pos, "expected 'tensor<...>' after dense<...> :");
  p->pos += w;
  if (!expect(p, '<', "after 'tensor'"))
    return false;
  const uint64_t limit = UINT64_C(1) << 24;
  *count = 1;
  while (is_digit(peek(p))) { /* the dims: NxMx... */
    uint64_t dim = 0;
    while (p->pos < p->len && is_digit(p->s[p->pos]) && dim <= limit)
      dim = dim * 10 + (uint64_t)(p->s[p->pos++] - '0');
    if (dim > limit || (dim && *count > limit / dim))
      return fa_error(p, p->pos, "dense value too large (more than 2^24 elements)");
    if (p->pos >= p->len || p->s[p->pos] != 'x')
      return fa_error(p, p->pos, "expected 'x' after a tensor dimension");
    p->pos++;
    *count *= dim;
  }
  *tpos = p->pos;
  return parse_type(p, t) && array_type_ok(p, t, *tpos, true) && expect(p, '>', "to close the tensor type");
}

/* dense<...> : tensor<...> as an array (a single value is a splat). */
static bool parse_dense(fa_parser *p, fa_attr *a) {
  fa_num *nums = NULL;
  size_t n = 0, tpos = 0;
  uint64_t count = 0;
  fa_type t;
  bool ok = dense_values(p, &nums, &n) && tensor_type(p, &count, &t, &tpos);
  if (ok && n != count && n != 1)
    ok = fa_error(p, tpos, "dense value has %zu elements but its tensor type has %llu", n, (unsigned long long)count);
  if (ok) {
    a->kind = FA_ARRAY, a->dtype = t.dtype, a->width = t.width;
    size_t cap = 0;
    for (uint64_t i = 0; ok && i < count; i++)
      ok = push_elem(p, &a->data, &a->n, &cap, t.width, &nums[n == 1 ? 0 : i], &t);
  }
  free(nums);
  return ok;
}

static bool parse_value(fa_parser *p, fa_attr *a, int depth) {
  char c = peek(p);
  if (c == '{') {
    a->kind = FA_DICT;
    return parse_dict(p, &a->dict, depth + 1);
  }
  if (c == '"') {
    a->kind = FA_STRING;
    return parse_string(p, &a->data, &a->n);
  }
  size_t w = ident(p);
  if (ident_is(p, w, "true") || ident_is(p, w, "false")) {
    a->kind = FA_SCALAR, a->dtype = XLA_FFI_DataType_PRED, a->width = 1, a->n = 1;
    a->data = malloc(1);
    if (!a->data)
      return fa_error(p, p->pos, "out of memory");
    a->data[0] = p->s[p->pos] == 't';
    p->pos += w;
    return true;
  }
  if (ident_is(p, w, "array")) {
    p->pos += w;
    return parse_array(p, a);
  }
  if (ident_is(p, w, "dense")) {
    p->pos += w;
    return parse_dense(p, a);
  }
  if (w)
    return fa_error(p, p->pos, "unsupported attribute value '%.*s' (XLA's FFI takes numbers, true/false, strings, "
                               "array<...>, dense<...> and dictionaries)", (int)w, p->s + p->pos);
  fa_num num;
  if (!parse_number(p, &num))
    return false;
  fa_type t = num.is_float ? (fa_type){XLA_FFI_DataType_F64, 8, 64, 'f'} : (fa_type){XLA_FFI_DataType_S64, 8, 64, 'l'};
  if (accept(p, ':') && !parse_type(p, &t))
    return false;
  a->kind = FA_SCALAR, a->dtype = t.dtype, a->width = t.width, a->n = 1;
  a->data = calloc(1, 8);
  if (!a->data)
    return fa_error(p, num.pos, "out of memory");
  return store_number(p, &num, &t, false, a->data);
}

static int cmp_attr(const void *x, const void *y) {
  const fa_attr *a = x, *b = y;
  size_t n = a->name_len < b->name_len ? a->name_len : b->name_len;
  int c = memcmp(a->name, b->name, n);
  return c ? c : (a->name_len > b->name_len) - (a->name_len < b->name_len);
}

/* One name = value entry appended to d. */
static bool parse_entry(fa_parser *p, fa_dict *d, int depth) {
  if (d->n == d->cap) {
    int cap = d->cap ? d->cap * 2 : 8;
    fa_attr *g = realloc(d->v, (size_t)cap * sizeof *g);
    if (!g)
      return fa_error(p, p->pos, "out of memory");
    d->v = g;
    d->cap = cap;
  }
  fa_attr *a = &d->v[d->n];
  *a = (fa_attr){.name_pos = p->pos};
  d->n++;
  if (peek(p) == '"') {
    a->name_pos = p->pos;
    if (!parse_string(p, (unsigned char **)&a->name, &a->name_len))
      return false;
  } else {
    size_t w = ident(p);
    a->name_pos = p->pos;
    if (!w)
      return fa_error(p, p->pos, "expected an attribute name");
    a->name = strndup(p->s + p->pos, w);
    a->name_len = w;
    p->pos += w;
    if (!a->name)
      return fa_error(p, a->name_pos, "out of memory");
  }
  if (peek(p) != '=')
    return fa_error(p, p->pos, "expected '=' after attribute name '%s' (XLA's FFI has no unit attributes)", a->name);
  p->pos++;
  return parse_value(p, a, depth);
}

static bool parse_dict(fa_parser *p, fa_dict *d, int depth) {
  if (depth > 64)
    return fa_error(p, p->pos, "dictionaries nested too deeply");
  if (!expect(p, '{', "to open an attribute dictionary"))
    return false;
  if (!accept(p, '}')) {
    do {
      if (!parse_entry(p, d, depth))
        return false;
    } while (accept(p, ','));
    if (!expect(p, '}', "or ',' in the attribute dictionary"))
      return false;
  }
  qsort(d->v, (size_t)d->n, sizeof *d->v, cmp_attr);
  for (int i = 1; i < d->n; i++)
    if (cmp_attr(&d->v[i - 1], &d->v[i]) == 0) {
      size_t at = d->v[i - 1].name_pos > d->v[i].name_pos ? d->v[i - 1].name_pos : d->v[i].name_pos;
      return fa_error(p, at, "duplicate attribute name '%s'", d->v[i].name);
    }
  return true;
}

/* ---- the text as written: unescaping and positions ------------------------------------------ */

/* backend_config as the handler's attributes are written: a quoted HLO string unescaped (off[i]
 * is where byte i stood in the raw text), anything else verbatim. */
static char *config_text(ir_str raw, size_t **off_out, size_t *len_out) {
  char *out = malloc(raw.len + 1);
  size_t *off = malloc((raw.len + 1) * sizeof *off);
  size_t n = 0;
  if (!out || !off) {
    free(out);
    free(off);
    return NULL;
  }
  bool quoted = raw.len >= 2 && raw.p[0] == '"';
  size_t i = quoted ? 1 : 0, end = quoted ? raw.len - 1 : raw.len;
  for (; i < end; i++) {
    off[n] = i;
    char c = raw.p[i];
    if (quoted && c == '\\' && i + 1 < end) {
      c = raw.p[++i];
      c = c == 'n' ? '\n' : c == 't' ? '\t' : c == 'r' ? '\r' : c;
    }
    out[n++] = c;
  }
  off[n] = end;
  out[n] = 0;
  *off_out = off;
  *len_out = n;
  return out;
}

/* The source position of raw byte k of a value that starts at base. */
static ir_loc raw_loc(ir_str raw, ir_loc base, size_t k) {
  ir_loc l = base;
  for (size_t i = 0; i < k && i < raw.len; i++) {
    if (raw.p[i] == '\n')
      l.line++, l.col = 1;
    else
      l.col++;
  }
  return l;
}

/* Parses in's backend_config into d; reports a failure on cm at the offending character. */
static bool decode_config(cg_module *cm, const ir_instr *in, fa_dict *d) {
  ir_str raw = in->common.backend_config;
  size_t *off = NULL, len = 0;
  char *text = config_text(raw, &off, &len);
  if (!text) {
    cg_fail(cm, in, "out of memory");
    return false;
  }
  fa_parser p = {.s = text, .len = len};
  if (peek(&p) && parse_dict(&p, d, 0) && peek(&p))
    fa_error(&p, p.pos, "unexpected text after the attribute dictionary");
  if (p.failed) {
    ir_loc base = in->common.backend_config_loc.line ? in->common.backend_config_loc : in->loc;
    ir_loc at = raw_loc(raw, base, off[p.err_pos < len ? p.err_pos : len]);
    cg_fail_at(cm, in, at, "backend_config of the typed-FFI custom call '%.*s': %s", (int)in->attrs.custom_text.len,
               in->attrs.custom_text.p, p.err);
  }
  free(text);
  free(off);
  return !p.failed;
}

/* ---- emitting XLA_FFI_Attrs as constant data ------------------------------------------------ */

static LLVMValueRef const_global(cg_module *cm, LLVMValueRef init, const char *name, unsigned align) {
  LLVMValueRef g = cg_const_global(cm, init, name);
  if (align)
    LLVMSetAlignment(g, align);
  return g;
}

static LLVMValueRef bytes_global(cg_module *cm, const unsigned char *b, size_t n, const char *name) {
  LLVMValueRef init = LLVMConstStringInContext(cm->ctx, n ? (const char *)b : "", (unsigned)n, 0); /* NUL added */
  return const_global(cm, init, name, 16);
}

static LLVMValueRef const_struct(cg_module *cm, LLVMValueRef *v, unsigned n, const char *name) {
  return const_global(cm, LLVMConstStructInContext(cm->ctx, v, n, 0), name, 8);
}

static LLVMValueRef i32c(cg_module *cm, int v) { return LLVMConstInt(cm->i32, (unsigned long long)v, 1); }

static LLVMValueRef emit_dict(cg_module *cm, const fa_dict *d);

static LLVMValueRef emit_value(cg_module *cm, const fa_attr *a) {
  switch (a->kind) {
  case FA_SCALAR:
    return const_struct(cm, (LLVMValueRef[]){i32c(cm, (int)a->dtype), bytes_global(cm, a->data, (size_t)a->width, "ffi.scalar")},
                        2, "ffi.scalar_t");
  case FA_ARRAY:
    return const_struct(cm, (LLVMValueRef[]){i32c(cm, (int)a->dtype), cg_i64(cm, (int64_t)a->n),
                                             bytes_global(cm, a->data, a->n * (size_t)a->width, "ffi.array")},
                        3, "ffi.array_t");
  case FA_STRING:
    return const_struct(cm, (LLVMValueRef[]){bytes_global(cm, a->data, a->n, "ffi.str"), cg_i64(cm, (int64_t)a->n)}, 2,
                        "ffi.span");
  case FA_DICT:
    return emit_dict(cm, &a->dict);
  }
  return LLVMConstNull(cm->ptr);
}

static LLVMValueRef ptr_array(cg_module *cm, LLVMValueRef *v, int n, const char *name) {
  return const_global(cm, LLVMConstArray2(cm->ptr, v, (uint64_t)n), name, 8);
}

/* An XLA_FFI_Attrs constant for d (already sorted by name). */
static LLVMValueRef emit_dict(cg_module *cm, const fa_dict *d) {
  static const XLA_FFI_AttrType kinds[] = {[FA_SCALAR] = XLA_FFI_AttrType_SCALAR, [FA_ARRAY] = XLA_FFI_AttrType_ARRAY,
                                          [FA_STRING] = XLA_FFI_AttrType_STRING, [FA_DICT] = XLA_FFI_AttrType_DICTIONARY};
  int n = d->n;
  LLVMValueRef *types = calloc((size_t)n + 1, sizeof *types), *names = calloc((size_t)n + 1, sizeof *names),
               *vals = calloc((size_t)n + 1, sizeof *vals);
  LLVMValueRef r = NULL;
  if (types && names && vals) {
    for (int i = 0; i < n; i++) {
      const fa_attr *a = &d->v[i];
      types[i] = i32c(cm, (int)kinds[a->kind]);
      names[i] = const_struct(cm, (LLVMValueRef[]){bytes_global(cm, (const unsigned char *)a->name, a->name_len, "ffi.name"),
                                                    cg_i64(cm, (int64_t)a->name_len)},
                              2, "ffi.name_span");
      vals[i] = emit_value(cm, a);
    }
    LLVMValueRef fields[6] = {
        cg_i64(cm, XLA_FFI_Attrs_STRUCT_SIZE),
        LLVMConstNull(cm->ptr),
        cg_i64(cm, n),
        const_global(cm, LLVMConstArray2(cm->i32, types, (uint64_t)n), "ffi.types", 4),
        ptr_array(cm, names, n, "ffi.names"),
        ptr_array(cm, vals, n, "ffi.attrs"),
    };
    r = const_struct(cm, fields, 6, "ffi.dict");
  } else {
    cg_fail(cm, NULL, "out of memory");
  }
  free(types);
  free(names);
  free(vals);
  return r ? r : LLVMConstNull(cm->ptr);
}

/* ---- the call -------------------------------------------------------------------------------- */

/* XLA's PrimitiveType number of an element type (XLA_FFI_DataType). */
static XLA_FFI_DataType xla_dtype(ir_etype et) {
  switch (et) {
  case IR_PRED: return XLA_FFI_DataType_PRED;
  case IR_S1: return XLA_FFI_DataType_S1;
  case IR_S2: return XLA_FFI_DataType_S2;
  case IR_S4: return XLA_FFI_DataType_S4;
  case IR_S8: return XLA_FFI_DataType_S8;
  case IR_S16: return XLA_FFI_DataType_S16;
  case IR_S32: return XLA_FFI_DataType_S32;
  case IR_S64: return XLA_FFI_DataType_S64;
  case IR_U1: return XLA_FFI_DataType_U1;
  case IR_U2: return XLA_FFI_DataType_U2;
  case IR_U4: return XLA_FFI_DataType_U4;
  case IR_U8: return XLA_FFI_DataType_U8;
  case IR_U16: return XLA_FFI_DataType_U16;
  case IR_U32: return XLA_FFI_DataType_U32;
  case IR_U64: return XLA_FFI_DataType_U64;
  case IR_F16: return XLA_FFI_DataType_F16;
  case IR_BF16: return XLA_FFI_DataType_BF16;
  case IR_F32: return XLA_FFI_DataType_F32;
  case IR_F64: return XLA_FFI_DataType_F64;
  case IR_C64: return XLA_FFI_DataType_C64;
  case IR_C128: return XLA_FFI_DataType_C128;
  case IR_F8E4M3FN: return XLA_FFI_DataType_F8E4M3FN;
  case IR_F8E5M2: return XLA_FFI_DataType_F8E5M2;
  case IR_F8E4M3: return XLA_FFI_DataType_F8E4M3;
  case IR_F8E3M4: return XLA_FFI_DataType_F8E3M4;
  case IR_F8E4M3FNUZ: return XLA_FFI_DataType_F8E4M3FNUZ;
  case IR_F8E5M2FNUZ: return XLA_FFI_DataType_F8E5M2FNUZ;
  case IR_F8E4M3B11FNUZ: return XLA_FFI_DataType_F8E4M3B11FNUZ;
  case IR_F4E2M1FN: return XLA_FFI_DataType_F4E2M1FN;
  case IR_F8E8M0FNU: return XLA_FFI_DataType_F8E8M0FNU;
  case IR_TOKEN: return XLA_FFI_DataType_TOKEN;
  default: return XLA_FFI_DataType_INVALID;
  }
}

static void push_leaf(int64_t *d, int *k, const ir_shape *s) {
  d[(*k)++] = xla_dtype(s->et);
  bool array = ir_etype_is_array(s->et);
  d[(*k)++] = array ? s->rank : 0;
  for (int i = 0; array && i < s->rank; i++)
    d[(*k)++] = s->dims[i];
}

/* [n_args, n_rets, then per argument and result leaf: dtype, rank, dims...] */
static LLVMValueRef buffers_desc(cg_function *f, const ir_instr *in, int n_op, const cg_value *res) {
  cg_module *cm = f->cm;
  int cap = 2;
  for (int i = 0; i < in->n_operands; i++) {
    cg_value o = f->values[in->operands[i]->id];
    for (int j = 0; j < o.n; j++)
      cap += 2 + o.shapes[j]->rank;
  }
  for (int j = 0; j < res->n; j++)
    cap += 2 + res->shapes[j]->rank;
  int64_t *d = malloc((size_t)cap * sizeof *d);
  LLVMValueRef *c = calloc((size_t)cap, sizeof *c);
  LLVMValueRef g = NULL;
  if (d && c) {
    int k = 0;
    d[k++] = n_op;
    d[k++] = res->n;
    for (int i = 0; i < in->n_operands; i++) {
      cg_value o = f->values[in->operands[i]->id];
      for (int j = 0; j < o.n; j++)
        push_leaf(d, &k, o.shapes[j]);
    }
    for (int j = 0; j < res->n; j++)
      push_leaf(d, &k, res->shapes[j]);
    for (int i = 0; i < k; i++)
      c[i] = cg_i64(cm, d[i]);
    g = const_global(cm, LLVMConstArray2(cm->i64, c, (uint64_t)k), "ffi.desc", 8);
  } else {
    cg_fail(cm, in, "out of memory");
  }
  free(d);
  free(c);
  return g;
}

static LLVMValueRef leaf_table(cg_function *f, LLVMValueRef *ptrs, int n, const char *name) {
  cg_module *cm = f->cm;
  LLVMValueRef arr = cg_entry_alloca(f, LLVMArrayType2(cm->ptr, (uint64_t)(n ? n : 1)), name);
  for (int i = 0; i < n; i++) {
    LLVMValueRef slot = LLVMBuildGEP2(cm->b, cm->ptr, arr, (LLVMValueRef[]){cg_i64(cm, i)}, 1, "slot");
    LLVMBuildStore(cm->b, ptrs[i] ? ptrs[i] : LLVMConstNull(cm->ptr), slot);
  }
  return arr;
}

static LLVMValueRef cstring(cg_module *cm, ir_str s, const char *name) {
  return const_global(cm, LLVMConstStringInContext(cm->ctx, s.p ? s.p : "", (unsigned)s.len, 0), name, 1);
}

void cg_lower_ffi_call(cg_function *f, ir_instr *in, LLVMValueRef *op_leaves, int n_op, cg_value *res) {
  cg_module *cm = f->cm;
  fa_dict dict = {0};
  if (!decode_config(cm, in, &dict)) {
    dict_free(&dict);
    return;
  }
  LLVMValueRef attrs = emit_dict(cm, &dict);
  dict_free(&dict);
  LLVMValueRef desc = buffers_desc(f, in, n_op, res);
  if (cm->error)
    return;
  LLVMValueRef args[7] = {
      f->ctx_arg,
      desc,
      cstring(cm, in->attrs.custom_text, "ffi.target"),
      cstring(cm, in->name, "ffi.instr"),
      attrs,
      leaf_table(f, op_leaves, n_op, "ffi.in"),
      leaf_table(f, res->leaves, res->n, "ffi.out"),
  };
  LLVMValueRef st = cg_runtime_call(cm, CG_RT_hlo_rt_ffi_call, args, 7, "st");
  cg_fail_if_status(f, st);
}
