/* mlir_parse.c — recursive-descent parser for MLIR text into the ml_op tree
 * (mlir_internal.h).  Reads the generic form ("dialect.op"(%a) <{props}> ({regions})
 * {attrs} : (types) -> types) and the pretty forms StableHLO, CHLO, func and builtin
 * print: keyword attributes (dims = [..], contracting_dims = [1] x [0]), bare enum words
 * (LT, FLOAT), slice ranges, reduce's `applies`/`reducer`, while's cond/do, func.func
 * signatures.  Each op ends at its type signature.  Nesting is bounded; every error is a
 * diagnostic at the token and parsing stops there.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "mlir_internal.h"

enum { ML_MAX_DEPTH = 64 };

typedef struct ml_parser {
  ml_ctx *c;
  ml_lexer lx;
  ml_tok tok;
  int depth;
} ml_parser;

static void next(ml_parser *p) { p->tok = ml_lex(&p->lx); }

static bool is_punct(const ml_parser *p, char ch) { return p->tok.kind == MT_PUNCT && p->tok.c == ch; }
static bool is_bare(const ml_parser *p, const char *w) {
  return p->tok.kind == MT_BARE && strlen(w) == p->tok.n && memcmp(p->tok.p, w, p->tok.n) == 0;
}
static ml_str tok_str(const ml_parser *p) { return (ml_str){p->tok.p, p->tok.n}; }

static bool fail(ml_parser *p, const char *what) {
  if (!ml_failed(p->c)) {
    if (p->tok.kind == MT_EOF)
      ml_error(p->c, p->tok.loc, "expected %s, found end of file", what);
    else if (p->tok.kind == MT_ERROR)
      ml_error(p->c, p->tok.loc, "invalid token '%.*s'", (int)(p->tok.n > 20 ? 20 : p->tok.n), p->tok.p);
    else
      ml_error(p->c, p->tok.loc, "expected %s, found '%.*s'", what, (int)(p->tok.n > 40 ? 40 : p->tok.n), p->tok.p);
  }
  return false;
}

static bool expect(ml_parser *p, char ch) {
  if (!is_punct(p, ch)) {
    char what[8] = {'\'', ch, '\'', 0};
    return fail(p, what);
  }
  next(p);
  return true;
}

static bool enter(ml_parser *p) {
  if (++p->depth > ML_MAX_DEPTH) {
    ml_error(p->c, p->tok.loc, "nesting deeper than %d", ML_MAX_DEPTH);
    return false;
  }
  return true;
}

/* ---- types ----------------------------------------------------------------------------- */

typedef struct etype_name { const char *mlir; ir_etype et; } etype_name;
static const etype_name etype_names[] = {
    {"i1", IR_PRED}, {"i2", IR_S2}, {"i4", IR_S4}, {"i8", IR_S8}, {"i16", IR_S16}, {"i32", IR_S32},
    {"i64", IR_S64}, {"si8", IR_S8}, {"si16", IR_S16}, {"si32", IR_S32}, {"si64", IR_S64},
    {"ui1", IR_U1}, {"ui2", IR_U2}, {"ui4", IR_U4}, {"ui8", IR_U8}, {"ui16", IR_U16}, {"ui32", IR_U32},
    {"ui64", IR_U64}, {"bf16", IR_BF16}, {"f16", IR_F16}, {"f32", IR_F32}, {"f64", IR_F64},
    {"f8E4M3FN", IR_F8E4M3FN}, {"f8E5M2", IR_F8E5M2}, {"f8E4M3", IR_F8E4M3}, {"f8E3M4", IR_F8E3M4},
    {"f8E4M3FNUZ", IR_F8E4M3FNUZ}, {"f8E5M2FNUZ", IR_F8E5M2FNUZ}, {"f8E4M3B11FNUZ", IR_F8E4M3B11FNUZ},
    {"f4E2M1FN", IR_F4E2M1FN}, {"f8E8M0FNU", IR_F8E8M0FNU}, {"complex<f32>", IR_C64},
    {"complex<f64>", IR_C128}, {"index", IR_S64},
};

static bool etype_of(const char *s, size_t n, ir_etype *out) {
  for (size_t i = 0; i < sizeof etype_names / sizeof *etype_names; i++)
    if (strlen(etype_names[i].mlir) == n && memcmp(etype_names[i].mlir, s, n) == 0) {
      *out = etype_names[i].et;
      return true;
    }
  return false;
}

ml_type *ml_tensor(ml_ctx *c, ir_etype et, int rank, const int64_t *dims) {
  ml_type *t = ml_alloc(c, sizeof *t);
  if (!t)
    return NULL;
  t->kind = MLT_TENSOR;
  t->et = et;
  t->rank = rank;
  t->dims = ml_alloc(c, sizeof(int64_t) * (size_t)(rank + 1));
  if (!t->dims)
    return NULL;
  for (int i = 0; i < rank; i++)
    t->dims[i] = dims[i];
  return t;
}

static ml_type *parse_type_text(ml_parser *p, const char *s, size_t n, ir_loc loc);

/* "AxBx...xT" (and an optional ", #encoding" with bounds) -> tensor type. */
static ml_type *tensor_body(ml_parser *p, const char *s, size_t n, ir_loc loc) {
  int64_t dims[64] = {0};
  int rank = 0;
  size_t i = 0;
  while (i < n) {
    if (s[i] == '?' || (s[i] >= '0' && s[i] <= '9')) {
      int64_t d = -1;
      if (s[i] == '?') {
        i++;
      } else {
        d = 0;
        while (i < n && s[i] >= '0' && s[i] <= '9') {
          if (d > (INT64_MAX - 9) / 10) {
            ml_error(p->c, loc, "dimension too large");
            return NULL;
          }
          d = d * 10 + (s[i++] - '0');
        }
      }
      if (i >= n || s[i] != 'x' || rank >= 64) {
        ml_error(p->c, loc, "malformed tensor type '%.*s'", (int)(n > 60 ? 60 : n), s);
        return NULL;
      }
      dims[rank++] = d;
      i++;
      continue;
    }
    break;
  }
  size_t e = i;
  int angle = 0;
  while (e < n && (angle > 0 || s[e] != ',')) {
    angle += s[e] == '<' ? 1 : s[e] == '>' ? -1 : 0;
    e++;
  }
  ir_etype et;
  if (!etype_of(s + i, e - i, &et)) {
    ml_error(p->c, loc, "unsupported element type '%.*s'", (int)((e - i) > 40 ? 40 : e - i), s + i);
    return NULL;
  }
  ml_type *t = ml_tensor(p->c, et, rank, dims);
  if (t && e < n) { /* #stablehlo.bounds<8, ?> */
    const char *b = memchr(s + e, '<', n - e);
    if (b) {
      t->bounds = ml_alloc(p->c, sizeof(int64_t) * (size_t)(rank + 1));
      if (!t->bounds)
        return NULL;
      const char *q = b + 1, *end = s + n;
      for (int k = 0; k < rank && q < end; k++) {
        while (q < end && (*q == ' ' || *q == ','))
          q++;
        t->bounds[k] = *q == '?' ? -1 : strtoll(q, NULL, 10);
        while (q < end && *q != ',' && *q != '>')
          q++;
      }
    }
  }
  return t;
}

static ml_type *tuple_body(ml_parser *p, const char *s, size_t n, ir_loc loc) {
  ml_type *t = ml_alloc(p->c, sizeof *t);
  if (!t)
    return NULL;
  t->kind = MLT_TUPLE;
  size_t i = 0;
  while (i < n) {
    while (i < n && (s[i] == ' ' || s[i] == ','))
      i++;
    if (i >= n)
      break;
    size_t e = i;
    int angle = 0;
    while (e < n && (angle > 0 || s[e] != ',')) {
      angle += s[e] == '<' ? 1 : s[e] == '>' ? -1 : 0;
      e++;
    }
    ml_type *el = parse_type_text(p, s + i, e - i, loc);
    if (!el || !ml_push(p->c, (void ***)&t->elems, &t->n_elems, el))
      return NULL;
    i = e;
  }
  return t;
}

static ml_type *parse_type_text(ml_parser *p, const char *s, size_t n, ir_loc loc) {
  while (n && s[n - 1] == ' ')
    n--;
  while (n && *s == ' ')
    s++, n--;
  if (n > 7 && memcmp(s, "tensor<", 7) == 0 && s[n - 1] == '>')
    return tensor_body(p, s + 7, n - 8, loc);
  if (n > 6 && memcmp(s, "tuple<", 6) == 0 && s[n - 1] == '>')
    return tuple_body(p, s + 6, n - 7, loc);
  if (n >= 15 && memcmp(s, "!stablehlo.token", 16 > n ? n : 16) == 0) {
    ml_type *t = ml_alloc(p->c, sizeof *t);
    if (t)
      t->kind = MLT_TOKEN;
    return t;
  }
  ir_etype et;
  if (etype_of(s, n, &et)) /* a scalar type written bare: i64 in attributes */
    return ml_tensor(p->c, et, 0, NULL);
  ml_error(p->c, loc, "unsupported type '%.*s'", (int)(n > 60 ? 60 : n), s);
  return NULL;
}

/* A type at the current token (tensor<..>, tuple<..>, !stablehlo.token, f32, complex<f32>). */
static ml_type *parse_type(ml_parser *p) {
  if (p->tok.kind != MT_TYPE && p->tok.kind != MT_BARE) {
    fail(p, "a type");
    return NULL;
  }
  ml_type *t = parse_type_text(p, p->tok.p, p->tok.n, p->tok.loc);
  if (t)
    next(p);
  return t;
}

/* ( types ) or a single type; appends to arr. */
static bool parse_type_group(ml_parser *p, ml_type ***arr, int *n) {
  if (is_punct(p, '(')) {
    next(p);
    while (!is_punct(p, ')')) {
      ml_type *t = parse_type(p);
      if (!t || !ml_push(p->c, (void ***)arr, n, t))
        return false;
      if (is_punct(p, '{')) { /* result attributes */
        int d = 0;
        do {
          d += is_punct(p, '{') - is_punct(p, '}');
          if (p->tok.kind == MT_EOF)
            return fail(p, "'}'");
          next(p);
        } while (d > 0);
      }
      if (!is_punct(p, ','))
        break;
      next(p);
    }
    return expect(p, ')');
  }
  ml_type *t = parse_type(p);
  return t && ml_push(p->c, (void ***)arr, n, t);
}

/* After ':': "(A, B) -> R", "(A) -> (R, S)", "T", "T, U", "T -> U". */
static bool parse_signature(ml_parser *p, ml_op *op) {
  op->has_types = true;
  ml_type **list = NULL;
  int n = 0;
  bool paren = is_punct(p, '(');
  if (!parse_type_group(p, &list, &n))
    return false;
  while (!paren && is_punct(p, ',')) {
    next(p);
    ml_type *t = parse_type(p);
    if (!t || !ml_push(p->c, (void ***)&list, &n, t))
      return false;
  }
  if (p->tok.kind == MT_ARROW) {
    next(p);
    op->in_types = list;
    op->n_in = n;
    return parse_type_group(p, &op->out_types, &op->n_out);
  }
  op->out_types = list;
  op->n_out = n;
  return true;
}

/* ---- attributes ------------------------------------------------------------------------- */

static ml_attr *new_attr(ml_parser *p, ml_attr_kind k) {
  ml_attr *a = ml_alloc(p->c, sizeof *a);
  if (a) {
    a->kind = k;
    a->loc = p->tok.loc;
  }
  return a;
}

static ml_attr *parse_value_ex(ml_parser *p, bool typed);
static ml_attr *parse_value(ml_parser *p) { return parse_value_ex(p, true); }

static ml_attr *parse_list(ml_parser *p) {
  ml_attr *a = new_attr(p, MA_LIST);
  if (!a || !enter(p))
    return NULL;
  next(p); /* [ */
  bool ranges = false;
  while (!is_punct(p, ']')) {
    ml_attr *v = parse_value(p);
    if (!v)
      return NULL;
    if (is_punct(p, ':') && v->kind == MA_INT) { /* slice range a:b(:c) */
      ml_attr *r = new_attr(p, MA_LIST);
      if (!r || !ml_push(p->c, (void ***)&r->kids, &r->n, v))
        return NULL;
      while (is_punct(p, ':')) {
        next(p);
        ml_attr *w = parse_value(p);
        if (!w || w->kind != MA_INT || !ml_push(p->c, (void ***)&r->kids, &r->n, w))
          return w ? (fail(p, "an integer"), NULL) : NULL;
      }
      v = r;
      ranges = true;
    }
    if (!ml_push(p->c, (void ***)&a->kids, &a->n, v))
      return NULL;
    if (!is_punct(p, ','))
      break;
    next(p);
  }
  if (!expect(p, ']'))
    return NULL;
  if (ranges)
    a->kind = MA_RANGES;
  p->depth--;
  return a;
}

static bool parse_dict_into(ml_parser *p, ml_attr *dict, char close);

static ml_attr *parse_dict(ml_parser *p, char close) {
  ml_attr *a = new_attr(p, MA_DICT);
  if (!a || !enter(p))
    return NULL;
  next(p); /* { or <{ */
  if (!parse_dict_into(p, a, close))
    return NULL;
  p->depth--;
  return a;
}

static ml_attr *number(ml_parser *p, bool neg) {
  ml_attr *a = new_attr(p, p->tok.kind == MT_INT ? MA_INT : MA_FLOAT);
  if (!a)
    return NULL;
  a->text = tok_str(p);
  a->neg = neg;
  char buf[64];
  size_t n = p->tok.n < 63 ? p->tok.n : 63;
  memcpy(buf, p->tok.p, n);
  buf[n] = 0;
  errno = 0;
  if (a->kind == MA_INT) {
    unsigned long long u = strtoull(buf, NULL, 0);
    a->i = (int64_t)(neg ? 0 - (uint64_t)u : (uint64_t)u);
    a->f = neg ? -(double)u : (double)u;
  } else {
    a->f = strtod(buf, NULL);
    if (neg)
      a->f = -a->f;
  }
  next(p);
  return a;
}

/* A value: numbers, true/false, strings, words, @sym, [..], {..}, dense<..>, #x<..>, types;
 * "[a] x [b]" and "[a]x[b]->[c]" (dot and convolution dimension numbers) become MA_CROSS;
 * a trailing ": type" is read into a->type. */
static ml_attr *parse_value_ex(ml_parser *p, bool typed) {
  ml_attr *a = NULL;
  ml_tok t = p->tok;
  if (is_punct(p, '-')) {
    next(p);
    if (p->tok.kind != MT_INT && p->tok.kind != MT_FLOAT)
      return fail(p, "a number"), NULL;
    a = number(p, true);
  } else if (t.kind == MT_INT || t.kind == MT_FLOAT) {
    a = number(p, false);
  } else if (t.kind == MT_BARE && (is_bare(p, "true") || is_bare(p, "false"))) {
    a = new_attr(p, MA_BOOL);
    if (a)
      a->i = is_bare(p, "true");
    next(p);
  } else if (t.kind == MT_BARE && (is_bare(p, "unit"))) {
    a = new_attr(p, MA_UNIT);
    next(p);
  } else if (t.kind == MT_STRING || t.kind == MT_BARE || t.kind == MT_SYMBOL || t.kind == MT_HASH ||
             t.kind == MT_DENSE) {
    ir_etype et;
    if (t.kind == MT_BARE && etype_of(t.p, t.n, &et)) {
      a = new_attr(p, MA_TYPE);
      if (a)
        a->type = parse_type(p);
      return a && a->type ? a : NULL;
    }
    a = new_attr(p, t.kind == MT_STRING ? MA_STRING : t.kind == MT_BARE ? MA_WORD : t.kind == MT_SYMBOL ? MA_SYMBOL
                    : t.kind == MT_HASH ? MA_HASH : MA_DENSE);
    if (a)
      a->text = tok_str(p);
    next(p);
  } else if (t.kind == MT_TYPE || is_punct(p, '(')) {
    a = new_attr(p, MA_TYPE);
    if (!a)
      return NULL;
    if (is_punct(p, '(')) { /* a function type: () -> tensor<f32> */
      a->sig = ml_alloc(p->c, sizeof *a->sig);
      if (!a->sig || !parse_signature(p, a->sig))
        return NULL;
      return a;
    }
    a->type = parse_type(p);
    return a->type ? a : NULL;
  } else if (is_punct(p, '[')) {
    a = parse_list(p);
    if (a && ((p->tok.kind == MT_BARE && p->tok.n == 1 && p->tok.p[0] == 'x') || p->tok.kind == MT_ARROW)) {
      ml_attr *x = new_attr(p, MA_CROSS);
      if (!x || !ml_push(p->c, (void ***)&x->kids, &x->n, a))
        return NULL;
      while ((p->tok.kind == MT_BARE && p->tok.n == 1 && p->tok.p[0] == 'x') || p->tok.kind == MT_ARROW) {
        next(p);
        if (!is_punct(p, '['))
          return fail(p, "'['"), NULL;
        ml_attr *b = parse_list(p);
        if (!b || !ml_push(p->c, (void ***)&x->kids, &x->n, b))
          return NULL;
      }
      a = x;
    }
  } else if (is_punct(p, '{')) {
    a = parse_dict(p, '}');
  } else {
    return fail(p, "an attribute value"), NULL;
  }
  if (!a)
    return NULL;
  if (typed && is_punct(p, ':') && a->kind != MA_DICT && a->kind != MA_LIST) { /* 1 : i64, dense<..> : tensor<..> */
    ml_lexer save = p->lx;
    ml_tok save_tok = p->tok;
    next(p);
    if (p->tok.kind == MT_TYPE || (p->tok.kind == MT_BARE && etype_of(p->tok.p, p->tok.n, &(ir_etype){0}))) {
      a->type = parse_type(p);
      if (!a->type)
        return NULL;
    } else {
      p->lx = save;
      p->tok = save_tok;
    }
  }
  return a;
}

/* key = value, ... up to `close` ('}' or '>' of "}>"); keys may be quoted; a key alone is a
 * unit attribute. */
static bool parse_dict_into(ml_parser *p, ml_attr *dict, char close) {
  while (!is_punct(p, '}')) {
    if (p->tok.kind != MT_BARE && p->tok.kind != MT_STRING)
      return fail(p, "an attribute name");
    ml_str key = tok_str(p);
    ir_loc kl = p->tok.loc;
    next(p);
    ml_attr *v;
    if (is_punct(p, '=')) {
      next(p);
      v = parse_value(p);
    } else {
      v = new_attr(p, MA_UNIT);
    }
    if (!v)
      return false;
    v->key = key;
    v->loc = kl;
    if (!ml_push(p->c, (void ***)&dict->kids, &dict->n, v))
      return false;
    if (!is_punct(p, ','))
      break;
    next(p);
  }
  if (!expect(p, '}'))
    return false;
  if (close == '>')
    return expect(p, '>');
  return true;
}

static bool add_attr(ml_parser *p, ml_op *op, ml_str key, ml_attr *v) {
  if (!op->attrs) {
    op->attrs = new_attr(p, MA_DICT);
    if (!op->attrs)
      return false;
  }
  v->key = key;
  return ml_push(p->c, (void ***)&op->attrs->kids, &op->attrs->n, v);
}

static bool merge_dict(ml_parser *p, ml_op *op, ml_attr *d) {
  for (int i = 0; i < d->n; i++)
    if (!add_attr(p, op, d->kids[i]->key, d->kids[i]))
      return false;
  return true;
}

/* ---- ops and regions -------------------------------------------------------------------- */

static ml_op *parse_op(ml_parser *p);

static bool add_use(ml_parser *p, ml_op *op) {
  ml_use u = {.name = tok_str(p), .index = -1, .loc = p->tok.loc};
  const char *h = memchr(u.name.p, '#', u.name.n);
  if (h) {
    u.index = atoi(h + 1);
    u.name.n = (size_t)(h - u.name.p);
  }
  ml_use *arr = ml_alloc(p->c, sizeof *arr * (size_t)(op->n_operands + 1));
  if (!arr)
    return false;
  if (op->n_operands)
    memcpy(arr, op->operands, sizeof *arr * (size_t)op->n_operands);
  arr[op->n_operands++] = u;
  op->operands = arr;
  next(p);
  return true;
}

/* Block arguments are kept as two parallel arrays; grow both. */
static bool push_arg(ml_parser *p, ml_region *r, ml_str name, ml_type *t) {
  ml_str *names = ml_alloc(p->c, sizeof *names * (size_t)(r->n_args + 1));
  ml_type **types = ml_alloc(p->c, sizeof *types * (size_t)(r->n_args + 1));
  if (!names || !types)
    return false;
  if (r->n_args) {
    memcpy(names, r->arg_names, sizeof *names * (size_t)r->n_args);
    memcpy(types, r->arg_types, sizeof *types * (size_t)r->n_args);
  }
  names[r->n_args] = name;
  types[r->n_args++] = t;
  r->arg_names = names;
  r->arg_types = types;
  return true;
}

/* (%a: T, %b: T {attrs}) */
static bool parse_arg_list(ml_parser *p, ml_region *r) {
  if (!expect(p, '('))
    return false;
  while (p->tok.kind == MT_VALUE) {
    ml_str name = tok_str(p);
    next(p);
    if (!expect(p, ':'))
      return false;
    ml_type *t = parse_type(p);
    if (!t || !push_arg(p, r, name, t))
      return false;
    if (is_punct(p, '{')) {
      ml_attr *ignored = parse_dict(p, '}');
      if (!ignored)
        return false;
    }
    if (!is_punct(p, ','))
      break;
    next(p);
  }
  return expect(p, ')');
}

/* { [^bb0(args):] ops } ; r may come with arguments already (pretty reduce/while/func). */
static bool parse_region_body(ml_parser *p, ml_region *r) {
  r->loc = p->tok.loc;
  if (!expect(p, '{') || !enter(p))
    return false;
  if (p->tok.kind == MT_BLOCK) {
    next(p);
    if (is_punct(p, '(') && !parse_arg_list(p, r))
      return false;
    if (!expect(p, ':'))
      return false;
  }
  while (!is_punct(p, '}')) {
    if (p->tok.kind == MT_BLOCK)
      return ml_error(p->c, p->tok.loc, "regions with more than one block are not supported"), false;
    ml_op *op = parse_op(p);
    if (!op || !ml_push(p->c, (void ***)&r->ops, &r->n_ops, op))
      return false;
  }
  next(p);
  p->depth--;
  return true;
}

static ml_region *new_region(ml_parser *p) { return ml_alloc(p->c, sizeof(ml_region)); }

static bool add_region(ml_parser *p, ml_op *op, ml_region *r) {
  return r && ml_push(p->c, (void ***)&op->regions, &op->n_regions, r);
}

/* Generic form after the name: (operands) <{props}> ({regions}) {attrs} : signature. */
static bool parse_generic(ml_parser *p, ml_op *op) {
  if (!expect(p, '('))
    return false;
  while (p->tok.kind == MT_VALUE) {
    if (!add_use(p, op))
      return false;
    if (!is_punct(p, ','))
      break;
    next(p);
  }
  if (!expect(p, ')'))
    return false;
  if (is_punct(p, '<')) {
    next(p);
    if (!is_punct(p, '{'))
      return fail(p, "'{'");
    ml_attr *d = parse_dict(p, '>');
    if (!d || !merge_dict(p, op, d))
      return false;
  }
  if (is_punct(p, '(')) {
    next(p);
    while (is_punct(p, '{')) {
      ml_region *r = new_region(p);
      if (!r || !parse_region_body(p, r) || !add_region(p, op, r))
        return false;
      if (!is_punct(p, ','))
        break;
      next(p);
    }
    if (!expect(p, ')'))
      return false;
  }
  if (is_punct(p, '{')) {
    ml_attr *d = parse_dict(p, '}');
    if (!d || !merge_dict(p, op, d))
      return false;
  }
  if (!expect(p, ':'))
    return false;
  return parse_signature(p, op);
}

/* reduce(%a init: %b), (%c init: %d) [applies OP] across dimensions = [..] : sig
 * [reducer(%x: T, %y: T) (%z: T, %w: T) { body }] */
static bool parse_reduce(ml_parser *p, ml_op *op) {
  ml_use inits[64];
  int n_inits = 0;
  while (is_punct(p, '(')) {
    next(p);
    if (p->tok.kind != MT_VALUE || !add_use(p, op))
      return fail(p, "an operand");
    if (!is_bare(p, "init"))
      return fail(p, "'init'");
    next(p);
    if (!expect(p, ':'))
      return false;
    if (p->tok.kind != MT_VALUE || n_inits >= 64)
      return fail(p, "an init value");
    ml_op tmp = {0};
    if (!add_use(p, &tmp))
      return false;
    inits[n_inits++] = tmp.operands[0];
    if (!expect(p, ')'))
      return false;
    if (!is_punct(p, ','))
      break;
    next(p);
  }
  for (int i = 0; i < n_inits; i++) {
    ml_use *arr = ml_alloc(p->c, sizeof *arr * (size_t)(op->n_operands + 1));
    if (!arr)
      return false;
    memcpy(arr, op->operands, sizeof *arr * (size_t)op->n_operands);
    arr[op->n_operands++] = inits[i];
    op->operands = arr;
  }
  if (is_bare(p, "applies")) {
    next(p);
    if (p->tok.kind != MT_BARE)
      return fail(p, "an op name");
    op->words = ml_alloc(p->c, sizeof(ml_str));
    if (!op->words)
      return false;
    op->words[0] = tok_str(p);
    op->n_words = 1;
    next(p);
  }
  if (!is_bare(p, "across"))
    return fail(p, "'across'");
  next(p);
  if (!is_bare(p, "dimensions"))
    return fail(p, "'dimensions'");
  ml_str key = tok_str(p);
  next(p);
  if (!expect(p, '='))
    return false;
  ml_attr *dims = parse_value(p);
  if (!dims || !add_attr(p, op, key, dims))
    return false;
  if (is_punct(p, '{')) {
    ml_attr *d = parse_dict(p, '}');
    if (!d || !merge_dict(p, op, d))
      return false;
  }
  if (!expect(p, ':') || !parse_signature(p, op))
    return false;
  if (op->n_words)
    return true;
  if (!is_bare(p, "reducer"))
    return fail(p, "'reducer'");
  next(p);
  ml_region pairs = {0};
  while (is_punct(p, '(')) {
    if (!parse_arg_list(p, &pairs))
      return false;
  }
  ml_region *r = new_region(p);
  if (!r)
    return false;
  int groups = pairs.n_args / 2;
  for (int k = 0; k < 2; k++)
    for (int g = 0; g < groups; g++)
      if (!push_arg(p, r, pairs.arg_names[2 * g + k], pairs.arg_types[2 * g + k]))
        return false;
  return parse_region_body(p, r) && add_region(p, op, r);
}

/* while(%it = %init, ...) : T, U cond { } do { } */
static bool parse_while(ml_parser *p, ml_op *op) {
  if (!expect(p, '('))
    return false;
  ml_region *cond = new_region(p), *body = new_region(p);
  if (!cond || !body)
    return false;
  ml_str names[1024];
  int n = 0;
  while (p->tok.kind == MT_VALUE && n < 1024) {
    names[n++] = tok_str(p);
    next(p);
    if (!expect(p, '=') || p->tok.kind != MT_VALUE)
      return fail(p, "an operand");
    if (!add_use(p, op))
      return false;
    if (!is_punct(p, ','))
      break;
    next(p);
  }
  if (!expect(p, ')'))
    return false;
  if (is_bare(p, "attributes")) {
    next(p);
    ml_attr *d = parse_dict(p, '}');
    if (!d || !merge_dict(p, op, d))
      return false;
  }
  if (n && (!expect(p, ':') || !parse_signature(p, op)))
    return false;
  if (op->n_out != n)
    return ml_error(p->c, op->loc, "while has %d operands but %d types", n, op->n_out), false;
  for (int i = 0; i < n; i++)
    if (!push_arg(p, cond, names[i], op->out_types[i]) || !push_arg(p, body, names[i], op->out_types[i]))
      return false;
  if (!is_bare(p, "cond"))
    return fail(p, "'cond'");
  next(p);
  if (!parse_region_body(p, cond) || !add_region(p, op, cond))
    return false;
  if (!is_bare(p, "do"))
    return fail(p, "'do'");
  next(p);
  return parse_region_body(p, body) && add_region(p, op, body);
}

/* func.func [public|private] @name(args) -> results [attributes {..}] { body } */
static bool parse_func(ml_parser *p, ml_op *op) {
  if (is_bare(p, "public") || is_bare(p, "private") || is_bare(p, "nested")) {
    ml_attr *v = new_attr(p, MA_WORD);
    if (!v)
      return false;
    v->text = tok_str(p);
    if (!add_attr(p, op, (ml_str){"sym_visibility", 14}, v))
      return false;
    next(p);
  }
  if (p->tok.kind != MT_SYMBOL)
    return fail(p, "a function name");
  op->callee = tok_str(p);
  next(p);
  ml_region *r = new_region(p);
  if (!r || !parse_arg_list(p, r))
    return false;
  if (p->tok.kind == MT_ARROW) {
    next(p);
    if (!parse_type_group(p, &op->out_types, &op->n_out))
      return false;
  }
  op->has_types = true;
  if (is_bare(p, "attributes")) {
    next(p);
    ml_attr *d = parse_dict(p, '}');
    if (!d || !merge_dict(p, op, d))
      return false;
  }
  if (!is_punct(p, '{')) /* a declaration */
    return add_region(p, op, r);
  return parse_region_body(p, r) && add_region(p, op, r);
}

/* module [@name] [attributes {..}] { ops } */
static bool parse_module(ml_parser *p, ml_op *op) {
  if (p->tok.kind == MT_SYMBOL) {
    op->callee = tok_str(p);
    next(p);
  }
  if (is_bare(p, "attributes")) {
    next(p);
    ml_attr *d = parse_dict(p, '}');
    if (!d || !merge_dict(p, op, d))
      return false;
  }
  ml_region *r = new_region(p);
  return r && parse_region_body(p, r) && add_region(p, op, r);
}

/* The pretty form of everything else: operands, keyword attributes, bare words, slice
 * ranges, an attribute dict, up to ':' and the signature. */
static bool parse_pretty(ml_parser *p, ml_op *op) {
  bool is_return = ml_str_is(op->name, "return") || ml_str_is(op->name, "func.return") ||
                   ml_str_is(op->name, "stablehlo.return");
  if (p->tok.kind == MT_SYMBOL) {
    op->callee = tok_str(p);
    next(p);
  }
  if (is_return && p->tok.kind != MT_VALUE)
    return true;
  int paren = 0;
  for (;;) {
    if (p->tok.kind == MT_VALUE) {
      if (!add_use(p, op))
        return false;
    } else if (is_punct(p, ',')) {
      next(p);
    } else if (is_punct(p, '(')) {
      paren++;
      next(p);
    } else if (is_punct(p, ')') && paren > 0) {
      paren--;
      next(p);
    } else if (is_punct(p, ':') && paren == 0) {
      next(p);
      return parse_signature(p, op);
    } else if (is_punct(p, '{')) {
      ml_attr *d = parse_dict(p, '}');
      if (!d || !merge_dict(p, op, d))
        return false;
    } else if (p->tok.kind == MT_BARE) {
      ml_str w = tok_str(p);
      next(p);
      if (is_punct(p, '=')) {
        next(p);
        ml_attr *v = parse_value_ex(p, false);
        if (!v || !add_attr(p, op, w, v))
          return false;
      } else {
        ml_str *words = ml_alloc(p->c, sizeof *words * (size_t)(op->n_words + 1));
        if (!words)
          return false;
        if (op->n_words)
          memcpy(words, op->words, sizeof *words * (size_t)op->n_words);
        words[op->n_words++] = w;
        op->words = words;
      }
    } else if (is_punct(p, '[') || p->tok.kind == MT_DENSE || p->tok.kind == MT_HASH || p->tok.kind == MT_INT ||
               p->tok.kind == MT_FLOAT || p->tok.kind == MT_STRING || is_punct(p, '-')) {
      ml_attr *v = parse_value_ex(p, false);
      if (!v || !add_attr(p, op, (ml_str){v->kind == MA_RANGES ? "__ranges" : "value",
                                          v->kind == MA_RANGES ? 8 : 5}, v))
        return false;
    } else {
      return fail(p, "':' and the op's type");
    }
  }
}

/* Shardy's top-level definitions (sdy.mesh @mesh = <["x"=2]>): read and kept as an op the
 * translator ignores (sharding does not change what one device computes). */
static bool parse_symbol_def(ml_parser *p, ml_op *op) {
  op->callee = tok_str(p);
  next(p);
  if (!expect(p, '='))
    return false;
  if (!is_punct(p, '<')) {
    ml_attr *v = parse_value(p);
    return v != NULL;
  }
  int depth = 0;
  do {
    if (p->tok.kind == MT_EOF || p->tok.kind == MT_ERROR)
      return fail(p, "'>'");
    depth += is_punct(p, '<') - is_punct(p, '>');
    next(p);
  } while (depth > 0);
  return true;
}

static bool parse_results(ml_parser *p, ml_op *op) {
  while (p->tok.kind == MT_VALUE) {
    ml_str name = tok_str(p);
    int count = 1;
    next(p);
    if (is_punct(p, ':')) {
      next(p);
      if (p->tok.kind != MT_INT)
        return fail(p, "a result count");
      count = atoi(p->tok.p);
      if (count < 1 || count > 100000)
        return ml_error(p->c, p->tok.loc, "bad result count"), false;
      next(p);
    }
    ml_str *names = ml_alloc(p->c, sizeof *names * (size_t)(op->n_result_groups + 1));
    int *counts = ml_alloc(p->c, sizeof *counts * (size_t)(op->n_result_groups + 1));
    if (!names || !counts)
      return false;
    if (op->n_result_groups) {
      memcpy(names, op->results, sizeof *names * (size_t)op->n_result_groups);
      memcpy(counts, op->result_counts, sizeof *counts * (size_t)op->n_result_groups);
    }
    names[op->n_result_groups] = name;
    counts[op->n_result_groups++] = count;
    op->results = names;
    op->result_counts = counts;
    op->n_results += count;
    if (!is_punct(p, ','))
      break;
    next(p);
  }
  return expect(p, '=');
}

static ml_op *parse_op(ml_parser *p) {
  ml_op *op = ml_alloc(p->c, sizeof *op);
  if (!op || !enter(p))
    return NULL;
  op->loc = p->tok.loc;
  if (p->tok.kind == MT_VALUE && !parse_results(p, op))
    return NULL;
  bool ok;
  if (p->tok.kind == MT_STRING) {
    op->name = tok_str(p);
    next(p);
    ok = parse_generic(p, op);
  } else if (p->tok.kind == MT_BARE) {
    op->name = tok_str(p);
    next(p);
    if (op->name.n > 4 && memcmp(op->name.p, "sdy.", 4) == 0 && p->tok.kind == MT_SYMBOL)
      ok = parse_symbol_def(p, op);
    else if (ml_str_is(op->name, "stablehlo.reduce") && is_punct(p, '('))
      ok = parse_reduce(p, op);
    else if (ml_str_is(op->name, "stablehlo.while"))
      ok = parse_while(p, op);
    else if (ml_str_is(op->name, "func.func"))
      ok = parse_func(p, op);
    else if (ml_str_is(op->name, "module") || ml_str_is(op->name, "builtin.module"))
      ok = parse_module(p, op);
    else
      ok = parse_pretty(p, op);
  } else {
    fail(p, "an operation");
    return NULL;
  }
  p->depth--;
  return ok ? op : NULL;
}

ml_op *ml_parse(ml_ctx *c, const char *text, size_t len) {
  ml_parser p = {.c = c};
  ml_lexer_init(&p.lx, text, len, (ir_loc){0, 0});
  next(&p);
  /* #alias = ... definitions before the module */
  while (p.tok.kind == MT_HASH) {
    next(&p);
    if (!expect(&p, '='))
      return NULL;
    if (p.tok.kind != MT_HASH && !is_bare(&p, "module") && p.tok.kind != MT_EOF && p.tok.kind != MT_STRING &&
        !parse_value(&p))
      return NULL;
  }
  ml_op *m = NULL;
  ml_region *top = new_region(&p);
  if (!top)
    return NULL;
  while (p.tok.kind != MT_EOF) {
    if (p.tok.kind == MT_HASH) { /* #loc = ... lines anywhere at the top level */
      next(&p);
      if (!expect(&p, '='))
        return NULL;
      if (p.tok.kind != MT_HASH && p.tok.kind != MT_EOF && !is_bare(&p, "module") && !is_bare(&p, "func.func") &&
          !parse_value(&p))
        return NULL;
      continue;
    }
    ml_op *op = parse_op(&p);
    if (!op || !ml_push(c, (void ***)&top->ops, &top->n_ops, op))
      return NULL;
    if (!ml_str_is(op->name, "module") && !ml_str_is(op->name, "builtin.module") &&
        !ml_str_is(op->name, "func.func")) {
      ml_error(c, op->loc, "expected a module or a func.func at the top level");
      return NULL;
    }
  }
  if (top->n_ops == 1 && !ml_str_is(top->ops[0]->name, "func.func"))
    return top->ops[0];
  if (top->n_ops == 0) {
    ml_error(c, p.tok.loc, "expected a module, found end of file");
    return NULL;
  }
  m = ml_alloc(c, sizeof *m);
  if (!m || !ml_push(c, (void ***)&m->regions, &m->n_regions, top))
    return NULL;
  m->name = (ml_str){"module", 6};
  m->loc = top->ops[0]->loc;
  return m;
}
