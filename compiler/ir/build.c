/* build.c — turns what the grammar parsed into IR (build.h): shapes and layouts, the module
 * header, computations, instructions with resolved operands (nested instructions and %x#1
 * tuple accesses made explicit), and literals converted to element storage.  Names are looked
 * up in per-computation hash tables; computation references are resolved at the end, so a
 * computation may be used before it is defined.  Attributes are interpreted in attributes.c,
 * the text forms XLA's parser rewrites are rewritten in desugar.c.  Every problem is a
 * diagnostic at the exact line:col; nothing here aborts.  Tests: testdata/parse/{ok,err}.
 */
#include "ir/build.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ir/alias_text.h"
#include "ir/build_internal.h"
#include "ir/literal.h"

/* ---- a small string -> pointer hash table in the arena ---------------------------------- */

static uint64_t hash_str(ir_str s) {
  uint64_t h = 1469598103934665603ull;
  for (size_t i = 0; i < s.len; i++)
    h = (h ^ (unsigned char)s.p[i]) * 1099511628211ull;
  return h;
}

name_slot *irb_map_find(name_map *m, ir_str key) {
  if (!m->cap)
    return NULL;
  for (size_t i = hash_str(key) & (m->cap - 1);; i = (i + 1) & (m->cap - 1)) {
    name_slot *s = &m->slots[i];
    if (!s->key.p)
      return NULL;
    if (s->key.len == key.len && memcmp(s->key.p, key.p, key.len) == 0)
      return s;
  }
}

/* Inserts into a table with room to spare. */
static name_slot *map_insert(name_map *m, name_slot slot) {
  size_t i = hash_str(slot.key) & (m->cap - 1);
  while (m->slots[i].key.p)
    i = (i + 1) & (m->cap - 1);
  m->slots[i] = slot;
  m->n++;
  return &m->slots[i];
}

name_slot *irb_map_put_slot(ir_arena *a, name_map *m, name_slot slot) {
  if ((m->n + 1) * 2 > m->cap) {
    size_t cap = m->cap ? m->cap * 2 : 64;
    name_slot *slots = ir_arena_alloc_array(a, cap, sizeof *slots);
    if (!slots)
      return NULL;
    name_map bigger = {slots, cap, 0};
    for (size_t i = 0; i < m->cap; i++)
      if (m->slots[i].key.p)
        map_insert(&bigger, m->slots[i]);
    *m = bigger;
  }
  return map_insert(m, slot);
}

bool irb_map_put(ir_arena *a, name_map *m, ir_str key, void *value, ir_loc loc) {
  return irb_map_put_slot(a, m, (name_slot){key, value, loc, false}) != NULL;
}

ir_builder *irb_create(ir_module *m, ir_diag_list *diags, const char *text, size_t len) {
  ir_builder *b = ir_arena_alloc(&m->arena, sizeof *b);
  if (!b)
    return NULL;
  b->m = m;
  b->diags = diags;
  b->text = text;
  b->len = len;
  return b;
}

ir_module *irb_module(ir_builder *b) { return b->m; }
ir_diag_list *irb_diags(ir_builder *b) { return b->diags; }
bool irb_failed(ir_builder *b) { return b->oom || b->diags->n_errors > 0; }

void irb_error(ir_builder *b, ir_loc loc, const char *fmt, ...) {
  char msg[1024];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  ir_diag_error(b->diags, loc, "%s", msg);
}

void irb_oom(ir_builder *b, ir_loc loc) {
  if (!b->oom)
    irb_error(b, loc, "out of memory");
  b->oom = true;
}

ir_av *irb_av(ir_builder *b, ir_av_kind kind, ir_loc loc, size_t start, size_t end) {
  ir_av *v = ir_arena_alloc(&b->m->arena, sizeof *v);
  if (!v) {
    irb_oom(b, loc);
    return NULL;
  }
  v->kind = kind;
  v->loc = loc;
  v->start = start;
  v->end = end;
  return v;
}

ir_av *irb_av_append(ir_builder *b, ir_av *list, ir_av *item) {
  if (!list || !item)
    return NULL;
  if (list->n == list->cap) {
    int cap = list->cap ? list->cap * 2 : 4;
    ir_av **kids = ir_arena_alloc_array(&b->m->arena, (size_t)cap, sizeof *kids);
    if (!kids) {
      irb_oom(b, list->loc);
      return NULL;
    }
    if (list->n)
      memcpy(kids, list->kids, (size_t)list->n * sizeof *kids);
    list->kids = kids;
    list->cap = cap;
  }
  list->kids[list->n++] = item;
  return list;
}

void irb_attr_append(ir_builder *b, ir_attr_list *list, ir_str name, ir_loc loc, ir_av *value) {
  if (!value)
    return;
  if (list->n == list->cap) {
    int cap = list->cap ? list->cap * 2 : 4;
    ir_attr_in *items = ir_arena_alloc_array(&b->m->arena, (size_t)cap, sizeof *items);
    if (!items) {
      irb_oom(b, loc);
      return;
    }
    if (list->n)
      memcpy(items, list->items, (size_t)list->n * sizeof *items);
    list->items = items;
    list->cap = cap;
  }
  list->items[list->n++] = (ir_attr_in){name, loc, value};
}

ir_str irb_text(ir_builder *b, size_t start, size_t end) {
  if (end > b->len)
    end = b->len;
  if (start > end)
    start = end;
  ir_str s = ir_intern(b->m, b->text + start, end - start);
  if (!s.p)
    irb_oom(b, (ir_loc){0, 0});
  return s;
}

ir_str irb_bare_name(ir_str s) {
  if (s.len && s.p[0] == '%')
    return (ir_str){s.p + 1, s.len - 1};
  return s;
}

ir_str irb_av_text(ir_builder *b, const ir_av *v) { return irb_text(b, v->start, v->end); }

/* ---- numbers ------------------------------------------------------------------------- */

/* Reads an AV_INT token's text: magnitude into *mag, sign into *neg; false on overflow. */
static bool int_text(const ir_av *v, uint64_t *mag, bool *neg) {
  const char *s = v->s.p;
  *neg = s[0] == '-';
  if (*neg)
    s++;
  errno = 0;
  char *end;
  unsigned long long x = strtoull(s, &end, 10);
  if (errno == ERANGE)
    return false;
  *mag = x;
  return true;
}

bool irb_av_i64(ir_builder *b, const ir_av *v, int64_t *out) {
  if (!v || v->kind != AV_INT) {
    irb_error(b, v ? v->loc : (ir_loc){0, 0}, "expected an integer");
    return false;
  }
  uint64_t mag;
  bool neg;
  if (!int_text(v, &mag, &neg) || mag > (neg ? (uint64_t)INT64_MAX + 1 : (uint64_t)INT64_MAX)) {
    irb_error(b, v->loc, "integer %s is out of range", v->s.p);
    return false;
  }
  *out = neg ? (int64_t)(0 - mag) : (int64_t)mag;
  return true;
}

bool irb_av_i64_list(ir_builder *b, const ir_av *v, ir_i64_list *out) {
  if (v->kind == AV_INT) { /* a single number where a list is allowed, e.g. dimensions=0 */
    int64_t x;
    if (!irb_av_i64(b, v, &x))
      return false;
    *out = ir_i64_list_copy(b->m, &x, 1);
    return true;
  }
  if (v->kind != AV_LIST) {
    irb_error(b, v->loc, "expected a list of integers like {0,1}");
    return false;
  }
  out->n = v->n;
  out->v = v->n ? ir_arena_alloc_array(&b->m->arena, (size_t)v->n, sizeof(int64_t)) : NULL;
  if (v->n && !out->v) {
    irb_oom(b, v->loc);
    return false;
  }
  for (int i = 0; i < v->n; i++)
    if (!irb_av_i64(b, v->kids[i], &out->v[i]))
      return false;
  return true;
}

bool irb_av_bool(ir_builder *b, const ir_av *v, bool *out) {
  if (v->kind == AV_BOOL) {
    *out = v->s.p[0] == 't';
    return true;
  }
  if (v->kind == AV_INT && (ir_str_eq(v->s, "0") || ir_str_eq(v->s, "1"))) {
    *out = v->s.p[0] == '1';
    return true;
  }
  irb_error(b, v->loc, "expected true or false");
  return false;
}

/* Unescapes a quoted string token (C escapes, as absl::CUnescape). */
ir_str irb_unquote(ir_builder *b, const ir_av *v) {
  ir_str raw = v->s;
  if (raw.len < 2)
    return raw;
  char *out = ir_arena_alloc(&b->m->arena, raw.len);
  if (!out) {
    irb_oom(b, v->loc);
    return (ir_str){"", 0};
  }
  size_t n = 0;
  for (size_t i = 1; i + 1 < raw.len; i++) {
    char c = raw.p[i];
    if (c != '\\' || i + 2 >= raw.len) {
      out[n++] = c;
      continue;
    }
    char e = raw.p[++i];
    switch (e) {
    case 'n': out[n++] = '\n'; break;
    case 't': out[n++] = '\t'; break;
    case 'r': out[n++] = '\r'; break;
    case '0': case '1': case '2': case '3': case '4': case '5': case '6': case '7': {
      int val = e - '0', k = 0;
      while (k < 2 && i + 2 < raw.len && raw.p[i + 1] >= '0' && raw.p[i + 1] <= '7') {
        val = val * 8 + (raw.p[++i] - '0');
        k++;
      }
      out[n++] = (char)val;
      break;
    }
    case 'x': {
      int val = 0, k = 0;
      while (i + 2 < raw.len && k < 2) {
        char h = raw.p[i + 1];
        int d = h >= '0' && h <= '9' ? h - '0' : h >= 'a' && h <= 'f' ? h - 'a' + 10
                : h >= 'A' && h <= 'F' ? h - 'A' + 10 : -1;
        if (d < 0)
          break;
        val = val * 16 + d;
        i++;
        k++;
      }
      out[n++] = (char)val;
      break;
    }
    default: out[n++] = e; break;  /* \" \' \\ \? */
    }
  }
  out[n] = 0;
  return (ir_str){out, n};
}

/* ---- shapes -------------------------------------------------------------------------- */

/* Reads layout items after ':' (T(8,128)(2,1) E(16) S(1); others kept verbatim). */
/* D(...): dim level types, each D, C, S or H with an optional '+' then '~' (XLA's
 * ParseDimLevelTypes); *sparse is set when one is not D. */
static bool dim_level_types_ok(ir_builder *b, const char *g, size_t n, ir_loc loc, bool *sparse) {
  size_t k = 1; /* past '(' */
  while (k < n) {
    while (k < n && g[k] == ' ')
      k++;
    if (k >= n || !g[k] || !strchr("DCSH", g[k])) {
      irb_error(b, loc, "layout D(...): expected a dim level type D, C, S or H");
      return false;
    }
    *sparse |= g[k] != 'D';
    k++;
    if (k < n && g[k] == '+')
      k++;
    if (k < n && g[k] == '~')
      k++;
    while (k < n && g[k] == ' ')
      k++;
    if (k < n && g[k] == ')')
      return true;
    if (k >= n || g[k] != ',') {
      irb_error(b, loc, "layout D(...): expected a dim level type D, C, S or H");
      return false;
    }
    k++;
  }
  return true;
}

static void parse_layout_tail(ir_builder *b, ir_layout *l, const char *s, size_t n, ir_loc loc) {
  char other[512];
  size_t on = 0;
  size_t i = 0;
  bool sparse = false, has_physical = false;
  while (i < n) {
    while (i < n && (s[i] == ' ' || s[i] == '\t'))
      i++;
    if (i >= n)
      break;
    size_t item = i;
    while (i < n && s[i] != '(')
      i++;
    size_t head_len = i - item;
    static const char *const heads[] = {"D", "T", "L", "E", "S", "SC", "P", "M", "#", "*"};
    bool known = false;
    for (size_t h = 0; h < sizeof heads / sizeof *heads; h++)
      if (strlen(heads[h]) == head_len && memcmp(heads[h], s + item, head_len) == 0)
        known = true;
    if (!known || i >= n || s[i] != '(') {
      irb_error(b, loc, "malformed layout item '%.*s' (expected T(..), E(..), S(..), L(..), D(..), ...)",
                (int)(head_len > 20 ? 20 : head_len), s + item);
      return;
    }
    /* groups: (...)(...), each without nested parentheses */
    size_t groups_start = i;
    int n_groups = 0;
    while (i < n && s[i] == '(') {
      size_t close = i + 1;
      while (close < n && s[close] != ')' && s[close] != '(')
        close++;
      if (close >= n || s[close] != ')') {
        irb_error(b, loc, "malformed layout item: unbalanced parentheses");
        return;
      }
      i = close + 1;
      n_groups++;
    }
    if (head_len == 1 && s[item] == 'D' && !dim_level_types_ok(b, s + groups_start, i - groups_start, loc, &sparse))
      return;
    has_physical |= head_len == 1 && s[item] == 'P';
    if (head_len == 1 && s[item] == 'T' && n_groups > 0) {
      l->tiles = ir_arena_alloc_array(&b->m->arena, (size_t)n_groups, sizeof(ir_i64_list));
      if (!l->tiles) {
        irb_oom(b, loc);
        return;
      }
      l->n_tiles = 0;
      for (size_t k = groups_start; k < i;) {
        int64_t vals[16];
        int nv = 0;
        k++; /* ( */
        while (s[k] != ')') {
          if (s[k] == '*' || (s[k] >= '0' && s[k] <= '9')) {
            int64_t v = -1;
            if (s[k] == '*')
              k++;
            else
              for (v = 0; s[k] >= '0' && s[k] <= '9'; k++) {
                if (v > (INT64_C(1) << 40)) {
                  irb_error(b, loc, "layout tile size is too large");
                  return;
                }
                v = v * 10 + (s[k] - '0');
              }
            if (nv == 16) {
              irb_error(b, loc, "a layout tile has more than 16 dimensions");
              return;
            }
            vals[nv++] = v;
          } else if (s[k] == ',' || s[k] == ' ') {
            k++;
          } else {
            irb_error(b, loc, "malformed layout tile: expected numbers or '*'");
            return;
          }
        }
        k++; /* ) */
        l->tiles[l->n_tiles++] = ir_i64_list_copy(b->m, vals, nv);
      }
    } else if (head_len == 1 && (s[item] == 'E' || s[item] == 'S') && n_groups == 1) {
      int64_t v = strtoll(s + groups_start + 1, NULL, 10);
      if (s[item] == 'E')
        l->element_size_bits = v;
      else
        l->memory_space = v;
    } else {
      size_t len = i - item;
      if (on + len >= sizeof other) {
        irb_error(b, loc, "layout items are too long");
        return;
      }
      memcpy(other + on, s + item, len);
      on += len;
    }
    if (i == item) /* no progress: skip one char */
      i++;
  }
  if (has_physical && !sparse) {
    irb_error(b, loc, "layout P(...) gives a physical shape, which only a sparse layout (D(...) with C, S or H) has");
    return;
  }
  if (on)
    l->other = ir_intern(b->m, other, on);
}

static ir_layout *make_layout(ir_builder *b, ir_av *lv, int rank) {
  ir_layout *l = ir_arena_alloc(&b->m->arena, sizeof *l);
  if (!l) {
    irb_oom(b, lv->loc);
    return NULL;
  }
  ir_av ints = *lv;
  ints.kind = AV_LIST; /* a layout with items after ':' arrives as AV_RAW holding the ints */
  if (!irb_av_i64_list(b, &ints, &l->minor_to_major))
    return NULL;
  if (lv->kind == AV_RAW)
    parse_layout_tail(b, l, b->text + lv->start, lv->end - lv->start, lv->loc);
  if (l->minor_to_major.n != rank && !(l->minor_to_major.n == 0 && rank == 0)) {
    irb_error(b, lv->loc, "layout has %d dimension%s but the shape has rank %d",
              l->minor_to_major.n, l->minor_to_major.n == 1 ? "" : "s", rank);
    return NULL;
  }
  uint64_t seen = 0;
  for (int i = 0; i < l->minor_to_major.n; i++) {
    int64_t d = l->minor_to_major.v[i];
    if (d < 0 || d >= rank || (d < 64 && (seen >> d) & 1)) {
      irb_error(b, lv->loc, "layout {...} must be a permutation of 0..%d", rank - 1);
      return NULL;
    }
    seen |= 1ull << d;
  }
  return l;
}

ir_shape *irb_array_shape(ir_builder *b, ir_av *etype, ir_av *dims, ir_av *layout) {
  if (!etype || !dims)
    return NULL;
  ir_etype et;
  if (!ir_etype_from_name(etype->s.p, etype->s.len, &et)) {
    irb_error(b, etype->loc, "unknown element type '%s'", etype->s.p);
    return NULL;
  }
  if (dims->n > 64) {
    irb_error(b, dims->loc, "rank %d is too large (at most 64)", dims->n);
    return NULL;
  }
  int64_t d[64];
  uint8_t dyn[64];
  bool any_dyn = false;
  for (int i = 0; i < dims->n; i++) {
    ir_av *v = dims->kids[i];
    dyn[i] = IR_DIM_STATIC;
    if (v->kind == AV_SPECIAL) {
      d[i] = -1;
      dyn[i] = IR_DIM_UNBOUNDED;
      any_dyn = true;
      continue;
    }
    ir_av tmp = *v;
    tmp.kind = AV_INT;
    if (!irb_av_i64(b, &tmp, &d[i]))
      return NULL;
    if (d[i] < 0) {
      irb_error(b, v->loc, "dimension size %lld is negative", (long long)d[i]);
      return NULL;
    }
    if (v->kind == AV_BOUNDED) {
      dyn[i] = IR_DIM_BOUNDED;
      any_dyn = true;
    }
  }
  ir_shape *s = ir_shape_array(b->m, et, dims->n, d);
  if (!s) {
    irb_oom(b, etype->loc);
    return NULL;
  }
  if (any_dyn)
    s->dyn = ir_arena_dup(&b->m->arena, dyn, (size_t)dims->n);
  int64_t bytes;
  if (!ir_shape_byte_size(s, &bytes) || bytes > (INT64_C(1) << 50)) {
    irb_error(b, etype->loc, "shape %s[...] is too large: its size overflows", etype->s.p);
    return NULL;
  }
  if (layout && !(s->layout = make_layout(b, layout, dims->n)))
    return NULL;
  return s;
}

ir_shape *irb_tuple_shape(ir_builder *b, ir_av *elems, ir_loc loc) {
  int n = elems ? elems->n : 0;
  ir_shape *tmp[256];
  ir_shape **arr = n <= 256 ? tmp : ir_arena_alloc_array(&b->m->arena, (size_t)n, sizeof *arr);
  if (!arr) {
    irb_oom(b, loc);
    return NULL;
  }
  for (int i = 0; i < n; i++) {
    arr[i] = elems->kids[i]->shape;
    if (!arr[i])
      return NULL;
  }
  ir_shape *s = ir_shape_tuple(b->m, arr, n);
  if (!s)
    irb_oom(b, loc);
  return s;
}

ir_shape *irb_buffer_shape(ir_builder *b, ir_shape *inner) {
  if (!inner)
    return NULL;
  inner->is_buffer = true;
  return inner;
}

/* ---- literals ------------------------------------------------------------------------ */

static bool special_value(const ir_av *v, double *d, uint64_t *payload) {
  ir_str s = v->s;
  *payload = 0;
  bool neg = s.len && s.p[0] == '-';
  const char *t = s.p + neg;
  if (strcmp(t, "inf") == 0) {
    *d = neg ? -INFINITY : INFINITY;
    return true;
  }
  if (strcmp(t, "nan") == 0) {
    *d = neg ? -NAN : NAN;
    return true;
  }
  if (strncmp(t, "nan(0x", 6) == 0) {
    *payload = strtoull(t + 6, NULL, 16);
    *d = neg ? -NAN : NAN;
    return true;
  }
  return false;
}

static bool element_from_av(ir_builder *b, ir_etype et, const ir_av *v, unsigned char *out) {
  if (v->kind == AV_SHAPED)
    v = v->kids[0];
  ir_lit_status st = IR_LIT_OK;
  if (v->kind == AV_LIST || (v->kind == AV_TUPLE && !ir_etype_is_complex(et))) {
    irb_error(b, v->loc, "expected one %s value here, found %s", ir_etype_table[et].spelling,
              v->kind == AV_LIST ? "a {...} list (more levels of braces than the shape has dimensions)"
                                 : "a (...) tuple");
    return false;
  }
  if (ir_etype_is_complex(et)) {
    if (v->kind != AV_TUPLE || v->n != 2) {
      irb_error(b, v->loc, "expected a complex value (re, im)");
      return false;
    }
    ir_etype ct = ir_etype_component(et);
    int half = ir_etype_table[et].storage_bytes / 2;
    return element_from_av(b, ct, v->kids[0], out) && element_from_av(b, ct, v->kids[1], out + half);
  }
  if (et == IR_PRED || ir_etype_is_int(et)) {
    if (v->kind == AV_BOOL) {
      st = ir_lit_encode_int(et, v->s.p[0] == 't', 0, false, out);
    } else if (v->kind == AV_INT) {
      uint64_t mag;
      bool neg;
      if (!int_text(v, &mag, &neg)) {
        st = IR_LIT_OUT_OF_RANGE;
      } else if (neg && mag > (uint64_t)INT64_MAX + 1) {
        st = IR_LIT_OUT_OF_RANGE;
      } else if (neg && et == IR_U64) {
        st = ir_lit_encode_int(et, 0, 0 - mag, true, out); /* as XLA: u64 reads int64 text, -1 wraps */
      } else if (neg) {
        st = ir_lit_encode_int(et, (int64_t)(0 - mag), 0, false, out);
      } else {
        st = ir_lit_encode_int(et, 0, mag, true, out);
      }
    } else {
      irb_error(b, v->loc, "expected %s value, found '%s'", et == IR_PRED ? "a pred (true/false)" : "an integer",
                v->s.p ? v->s.p : "(...)");
      return false;
    }
  } else if (ir_etype_is_float(et)) {
    double d = 0;
    uint64_t payload = 0;
    if (v->kind == AV_INT) {
      uint64_t mag;
      bool neg;
      d = int_text(v, &mag, &neg) ? (neg ? -(double)mag : (double)mag) : strtod(v->s.p, NULL);
      if (d == 0)
        d = 0.0; /* XLA reads -0 as the integer 0: +0.0 */
      if (isinf(d))
        st = IR_LIT_OUT_OF_RANGE; /* digits beyond f64's range */
    } else if (v->kind == AV_FLOAT) {
      d = strtod(v->s.p, NULL);
      if (isinf(d))
        st = IR_LIT_OUT_OF_RANGE; /* 1e400: finite text beyond f64's range, never inf */
    } else if ((v->kind == AV_SPECIAL || v->kind == AV_NAME) && special_value(v, &d, &payload)) {
    } else if (v->kind == AV_BOOL) {
      d = v->s.p[0] == 't';
    } else {
      irb_error(b, v->loc, "expected a floating-point value, found '%s'", v->s.p ? v->s.p : "(...)");
      return false;
    }
    if (st == IR_LIT_OK)
      st = ir_lit_encode_float(et, d, payload, out);
  } else {
    irb_error(b, v->loc, "a constant of element type %s cannot have a value", ir_etype_table[et].spelling);
    return false;
  }
  if (st == IR_LIT_OUT_OF_RANGE) {
    irb_error(b, v->loc, "value %s is out of range for %s", v->s.p ? v->s.p : "", ir_etype_table[et].spelling);
    return false;
  }
  if (st == IR_LIT_BAD_PAYLOAD) {
    irb_error(b, v->loc, "NaN payload %s does not fit %s", v->s.p, ir_etype_table[et].spelling);
    return false;
  }
  return st == IR_LIT_OK;
}

typedef struct lit_walk {
  const ir_shape *shape;
  unsigned char *data;
  int64_t next;  /* next element index */
  int eb;
} lit_walk;

static bool fill_array(ir_builder *b, lit_walk *w, const ir_av *v, int dim) {
  if (v->kind == AV_SHAPED)
    v = v->kids[0];
  if (dim == w->shape->rank)
    return element_from_av(b, w->shape->et, v, w->data + w->next++ * w->eb);
  if (v->kind != AV_LIST) {
    irb_error(b, v->loc, "expected '{' for dimension %d of the literal", dim);
    return false;
  }
  if (v->n != w->shape->dims[dim]) {
    irb_error(b, v->loc, "literal dimension %d expects %lld elements but has %d", dim,
              (long long)w->shape->dims[dim], v->n);
    return false;
  }
  for (int i = 0; i < v->n; i++)
    if (!fill_array(b, w, v->kids[i], dim + 1))
      return false;
  return true;
}

ir_literal *irb_literal_from_av(ir_builder *b, const ir_shape *shape, const ir_av *v) {
  ir_literal *lit = ir_arena_alloc(&b->m->arena, sizeof *lit);
  if (!lit) {
    irb_oom(b, v->loc);
    return NULL;
  }
  lit->shape = (ir_shape *)shape;
  if (v->kind == AV_SHAPED)
    v = v->kids[0];
  if (shape->et == IR_TUPLE) {
    if (v->kind != AV_TUPLE || v->n != shape->n_elems) {
      irb_error(b, v->loc, "tuple literal needs %d elements in ( )", shape->n_elems);
      return NULL;
    }
    lit->n_elems = v->n;
    lit->elems = ir_arena_alloc_array(&b->m->arena, (size_t)(v->n ? v->n : 1), sizeof(ir_literal *));
    if (!lit->elems)
      return NULL;
    for (int i = 0; i < v->n; i++)
      if (!(lit->elems[i] = irb_literal_from_av(b, shape->elems[i], v->kids[i])))
        return NULL;
    return lit;
  }
  if (v->kind == AV_ELLIPSIS) {
    lit->elided = true;
    return lit;
  }
  if (!ir_etype_is_array(shape->et)) {
    irb_error(b, v->loc, "a %s constant has no value", ir_etype_table[shape->et].spelling);
    return NULL;
  }
  int64_t bytes;
  if (!ir_shape_byte_size(shape, &bytes)) {
    irb_error(b, v->loc, "literal is too large");
    return NULL;
  }
  /* The text must hold at least one character per element: refuse absurd sizes early. */
  int64_t count;
  ir_shape_num_elements(shape, &count);
  if (count > (int64_t)(v->end - v->start) + 1) {
    irb_error(b, v->loc, "literal has fewer values than its shape needs (%lld elements)",
              (long long)count);
    return NULL;
  }
  lit->nbytes = bytes;
  lit->data = ir_arena_alloc(&b->m->arena, (size_t)(bytes ? bytes : 1));
  if (!lit->data) {
    irb_oom(b, v->loc);
    return NULL;
  }
  lit_walk w = {shape, lit->data, 0, ir_etype_table[shape->et].storage_bytes};
  if (!fill_array(b, &w, v, 0))
    return NULL;
  return lit;
}

/* ---- module and computations --------------------------------------------------------- */

static bool header_entry_layout(ir_builder *b, ir_av *v) {
  if (v->kind != AV_LIST || v->n != 1 || v->kids[0]->kind != AV_SIGNATURE) {
    irb_error(b, v->loc, "expected entry_computation_layout={(shapes)->shape}");
    return false;
  }
  ir_av *sig = v->kids[0];
  ir_av *params = sig->n ? sig->kids[0] : NULL;
  int n = params ? params->n : 0;
  ir_module *m = b->m;
  m->entry_layout_params = ir_arena_alloc_array(&m->arena, (size_t)(n ? n : 1), sizeof(ir_shape *));
  if (!m->entry_layout_params)
    return false;
  for (int i = 0; i < n; i++)
    m->entry_layout_params[i] = params->kids[i]->shape;
  m->n_entry_layout_params = n;
  m->entry_layout_result = sig->shape;
  m->has_entry_layout = true;
  return true;
}

/* Appends to an arena array whose capacity is implied by its length (4, then each power of
 * two), so that n appends cost O(n) time and memory. */
void irb_add_raw(ir_builder *b, ir_raw_attr **arr, int *n, ir_str name, ir_str value) {
  if (*n == 0 || (*n >= 4 && (*n & (*n - 1)) == 0)) {
    ir_raw_attr *p = ir_arena_alloc_array(&b->m->arena, *n ? (size_t)*n * 2 : 4, sizeof *p);
    if (!p) {
      irb_oom(b, (ir_loc){0, 0});
      return;
    }
    if (*n)
      memcpy(p, *arr, (size_t)*n * sizeof *p);
    *arr = p;
  }
  (*arr)[*n] = (ir_raw_attr){name, value};
  (*n)++;
}

/* input_output_alias / buffer_donor: kept as written once their syntax is checked; an error
 * points at the first character that does not fit. */
static ir_str alias_text(ir_builder *b, const ir_av *v, bool donor) {
  ir_str t = irb_av_text(b, v);
  long bad = ir_alias_text_check(t.p ? t.p : "", t.len, donor);
  if (bad < 0)
    return t;
  ir_loc at = v->loc;
  for (long i = 0; i < bad; i++)
    at = t.p[i] == '\n' ? (ir_loc){at.line + 1, 1} : (ir_loc){at.line, at.col + 1};
  irb_error(b, at, donor ? "buffer_donor: expected {(PARAM, {INDEX...}), ...}"
                         : "input_output_alias: expected {{OUTPUT_INDEX...}: (PARAM, {INDEX...}[, may-alias|must-alias]), ...}");
  return t;
}

/* debug_attributes={ {"instr"}:({log_mode=default,callback_id=1,partitioned=true,op_id=2}), ... }
 * (XLA's ParseDebugAttributes): kept as written once every key is one XLA knows and every
 * log_mode is default or fusion_debugger. */
static bool debug_attributes_ok(ir_builder *b, const ir_av *v) {
  ir_str t = irb_av_text(b, v);
  static const char *const keys[] = {"log_mode", "callback_id", "partitioned", "op_id"};
  for (size_t i = 0; i < t.len; i++) {
    if (t.p[i] != '{' && t.p[i] != ',')
      continue;
    size_t k = i + 1;
    while (k < t.len && (t.p[k] == ' ' || t.p[k] == '\n' || t.p[k] == '\r' || t.p[k] == '\t'))
      k++;
    size_t name = k;
    while (k < t.len && (isalnum((unsigned char)t.p[k]) || t.p[k] == '_'))
      k++;
    if (k == name || k >= t.len || t.p[k] != '=')
      continue; /* not key=value (an instruction-name list, a nested brace) */
    size_t len = k - name;
    bool known = false;
    for (size_t j = 0; j < sizeof keys / sizeof *keys; j++)
      known |= strlen(keys[j]) == len && memcmp(keys[j], t.p + name, len) == 0;
    size_t val = k + 1, end = val;
    while (end < t.len && (isalnum((unsigned char)t.p[end]) || t.p[end] == '_' || t.p[end] == '-'))
      end++;
    if (!known) {
      irb_error(b, v->loc, "Unknown debug attribute: %.*s", (int)len, t.p + name);
      return false;
    }
    if (len == 8 && memcmp(t.p + name, "log_mode", 8) == 0 &&
        !((end - val == 7 && memcmp(t.p + val, "default", 7) == 0) ||
          (end - val == 15 && memcmp(t.p + val, "fusion_debugger", 15) == 0))) {
      irb_error(b, v->loc, "Invalid debug_log_mode value: %.*s", (int)(end - val), t.p + val);
      return false;
    }
  }
  return true;
}

void irb_module_header(ir_builder *b, ir_av *name, ir_attr_list *attrs) {
  ir_module *m = b->m;
  if (!name)
    return;
  m->name = irb_bare_name(name->s);
  for (int i = 0; i < attrs->n; i++) {
    ir_attr_in *a = &attrs->items[i];
    ir_av *v = a->value;
    bool flag;
    if (ir_str_eq(a->name, "entry_computation_layout")) {
      header_entry_layout(b, v);
    } else if (ir_str_eq(a->name, "is_scheduled") && irb_av_bool(b, v, &flag)) {
      m->is_scheduled = flag;
    } else if (ir_str_eq(a->name, "alias_passthrough_params") && irb_av_bool(b, v, &flag)) {
      m->alias_passthrough_params = flag;
    } else if (ir_str_eq(a->name, "replica_count")) {
      irb_av_i64(b, v, &m->replica_count);
    } else if (ir_str_eq(a->name, "num_partitions")) {
      irb_av_i64(b, v, &m->num_partitions);
    } else if (ir_str_eq(a->name, "input_output_alias")) {
      m->input_output_alias = alias_text(b, v, false);
    } else if (ir_str_eq(a->name, "buffer_donor")) {
      m->buffer_donor = alias_text(b, v, true);
    } else if (ir_str_eq(a->name, "frontend_attributes")) {
      m->frontend_attributes = irb_av_text(b, v);
    } else if (ir_str_eq(a->name, "debug_attributes")) {
      if (debug_attributes_ok(b, v))
        irb_add_raw(b, &m->header_unknown, &m->n_header_unknown, a->name, irb_av_text(b, v));
    } else {
      irb_add_raw(b, &m->header_unknown, &m->n_header_unknown, a->name, irb_av_text(b, v));
    }
  }
}

void irb_stack_frames(ir_builder *b, size_t start, size_t end) {
  /* Keep the block without its trailing blank lines. */
  while (end > start && (b->text[end - 1] == '\n' || b->text[end - 1] == '\r' ||
                         b->text[end - 1] == ' '))
    end--;
  b->m->stack_frames = irb_text(b, start, end);
}

/* Keeps the written signature "(params) -> result" on the computation for the verifier, which
 * checks it again once omitted shapes have been inferred. */
static bool keep_signature(ir_builder *b, ir_computation *c, const ir_av *params, ir_shape *result) {
  c->sig_result = result;
  if (params->n == 0)
    return true;
  c->sig_params = ir_arena_alloc_array(&b->m->arena, (size_t)params->n, sizeof *c->sig_params);
  if (!c->sig_params)
    return false;
  for (int i = 0; i < params->n; i++)
    c->sig_params[i] = params->kids[i]->shape;
  c->n_sig_params = params->n;
  return true;
}

void irb_begin_computation(ir_builder *b, ir_av *name, bool entry, ir_av *params, ir_shape *result) {
  b->sig = params;
  b->cur = NULL;
  b->cur_has_root = false;
  b->instrs = (name_map){0};
  b->n_ctrl_refs = 0;
  b->ctrl_base = 0;
  if (!name)
    return;
  ir_str n = irb_bare_name(name->s);
  name_slot *prev = irb_map_find(&b->comps, n);
  if (prev) {
    irb_error(b, name->loc, "computation %%%s is already defined at line %d", n.p, prev->loc.line);
    return;
  }
  if (entry && b->saw_entry) {
    irb_error(b, name->loc, "only one computation may be ENTRY");
    return;
  }
  ir_computation *c = ir_computation_add(b->m, n);
  if (!c || !irb_map_put(&b->m->arena, &b->comps, n, c, name->loc)) {
    irb_oom(b, name->loc);
    return;
  }
  c->is_entry = entry;
  c->loc = name->loc;
  c->has_signature = params != NULL;
  if (params && !keep_signature(b, c, params, result)) {
    irb_oom(b, name->loc);
    return;
  }
  if (entry) {
    b->saw_entry = true;
    b->m->entry = c;
  }
  b->cur = c;
}

/* Fills c->params by parameter number.  The table has one slot per parameter instruction
 * (plus one), never one per number written: parameter(99999999) alone cannot make it big. */
static void resolve_params(ir_builder *b, ir_computation *c) {
  int max = -1, n_p = 0;
  for (int i = 0; i < c->n_instrs; i++)
    if (c->instrs[i]->op == IR_OP_PARAMETER) {
      n_p++;
      if (c->instrs[i]->attrs.u.parameter_number > max)
        max = (int)c->instrs[i]->attrs.u.parameter_number;
    }
  if (max < 0)
    return;
  ir_instr **slots = ir_arena_alloc_array(&b->m->arena, (size_t)n_p + 1, sizeof(ir_instr *));
  if (!slots) {
    irb_oom(b, c->loc);
    return;
  }
  for (int i = 0; i < c->n_instrs; i++) {
    ir_instr *in = c->instrs[i];
    if (in->op != IR_OP_PARAMETER)
      continue;
    int64_t k = in->attrs.u.parameter_number;
    if (k > n_p)
      continue; /* then some number in 0..n_p is missing: reported below */
    if (slots[k]) {
      irb_error(b, in->loc, "%%%s: parameter number %lld is already used by %%%s", in->name.p,
                (long long)k, slots[k]->name.p);
      return;
    }
    slots[k] = in;
  }
  for (int k = 0; k <= max && k <= n_p; k++)
    if (!slots[k]) {
      irb_error(b, c->loc, "computation %%%s has no parameter(%d) but has parameter(%d)",
                c->name.p, k, max);
      return;
    }
  c->params = slots;
  c->n_params = max + 1;
}

/* A written signature must agree with the body (layouts aside): XLA checks the result
 * against the root; hloc also checks the parameters, since the printer rebuilds the
 * signature from the body and would otherwise change the module's meaning silently. */
static void check_signature(ir_builder *b, ir_computation *c, const ir_av *sig) {
  char want[256], have[256];
  if (sig->n != c->n_params) {
    irb_error(b, c->loc, "computation %%%s: the signature lists %d parameter%s but the body has %d",
              c->name.p, sig->n, sig->n == 1 ? "" : "s", c->n_params);
    return;
  }
  for (int i = 0; i < sig->n; i++) {
    const ir_shape *ps = c->params[i]->shape;
    if (!sig->kids[i]->shape || !ps || ir_shape_equal(sig->kids[i]->shape, ps))
      continue;
    ir_shape_format(sig->kids[i]->shape, false, want, sizeof want);
    ir_shape_format(ps, false, have, sizeof have);
    irb_error(b, sig->kids[i]->loc, "signature parameter %d is %s but parameter(%d) %%%s is %s", i, want, i,
              c->params[i]->name.p, have);
    return;
  }
  if (sig->shape && c->root && c->root->shape && !ir_shape_equal(sig->shape, c->root->shape)) {
    ir_shape_format(sig->shape, false, want, sizeof want);
    ir_shape_format(c->root->shape, false, have, sizeof have);
    irb_error(b, c->loc, "computation %%%s returns %s by its signature but its root %%%s is %s", c->name.p,
              want, c->root->name.p, have);
  }
}

void irb_end_computation(ir_builder *b, ir_attr_list *attrs) {
  ir_computation *c = b->cur;
  if (!c)
    return;
  for (int i = 0; i < attrs->n; i++) {
    ir_attr_in *a = &attrs->items[i];
    if (ir_str_eq(a->name, "execution_thread") && a->value->kind == AV_STRING)
      c->execution_thread = irb_unquote(b, a->value);
    else
      irb_error(b, a->loc, "unknown computation attribute '%s'", a->name.p);
  }
  for (int i = b->ctrl_base; i < b->n_ctrl_refs; i++) {
    ctrl_ref *r = &b->ctrl_refs[i];
    name_slot *s = irb_map_find(&b->instrs, r->name);
    if (!s)
      irb_error(b, r->loc, "control predecessor %%%s is not defined in %%%s", r->name.p, c->name.p);
    else
      r->in->common.control_predecessors[r->slot] = s->value;
  }
  if (!c->root && c->n_instrs)
    c->root = c->instrs[c->n_instrs - 1];
  if (!c->n_instrs)
    irb_error(b, c->loc, "computation %%%s has no instructions", c->name.p);
  resolve_params(b, c);
  if (b->sig && !irb_failed(b))
    check_signature(b, c, b->sig);
  b->cur = NULL;
}

/* ---- instructions ---------------------------------------------------------------------- */

static bool needs_written_shape(ir_opcode op) {
  switch (op) {
  case IR_OP_PARAMETER: case IR_OP_CONSTANT: case IR_OP_BITCAST: case IR_OP_BITCAST_CONVERT:
  case IR_OP_CONVERT: case IR_OP_CUSTOM_CALL: case IR_OP_FUSION: case IR_OP_INFEED:
  case IR_OP_IOTA: case IR_OP_OUTFEED: case IR_OP_REDUCE_PRECISION: case IR_OP_RESHAPE:
  case IR_OP_RNG: case IR_OP_RNG_BIT_GENERATOR: case IR_OP_RNG_GET_AND_UPDATE_STATE:
  case IR_OP_STOCHASTIC_CONVERT: case IR_OP_DYNAMIC_RESHAPE: case IR_OP_RECV:
  case IR_OP_ASYNC_START: case IR_OP_ASYNC_UPDATE: case IR_OP_ASYNC_DONE:
    return true;
  default:
    return false;
  }
}

/* Looks up an opcode, including the compact async spellings (call-start, ...). */
static bool lookup_opcode(ir_str s, ir_opcode *op, ir_opcode *wrapped) {
  *wrapped = IR_OP_COUNT;
  if (ir_opcode_from_name(s.p, s.len, op))
    return true;
  static const struct { const char *suffix; ir_opcode op; } forms[] = {
      {"-start", IR_OP_ASYNC_START}, {"-update", IR_OP_ASYNC_UPDATE}, {"-done", IR_OP_ASYNC_DONE}};
  for (int i = 0; i < 3; i++) {
    size_t n = strlen(forms[i].suffix);
    if (s.len > n && memcmp(s.p + s.len - n, forms[i].suffix, n) == 0 &&
        ir_opcode_from_name(s.p, s.len - n, wrapped)) {
      *op = forms[i].op;
      return true;
    }
  }
  return false;
}

static ir_str unique_name(ir_builder *b, ir_str base, const char *tag) {
  char buf[512];
  for (;;) {
    int n = snprintf(buf, sizeof buf, "%.*s.%s%d", (int)(base.len > 400 ? 400 : base.len), base.p,
                     tag, ++b->gensym);
    ir_str s = {buf, (size_t)n};
    if (!irb_map_find(&b->instrs, s))
      return ir_intern(b->m, buf, (size_t)n);
  }
}

/* Enters a name into the computation's table.  A name written in the text that hloc had
 * already made up for an earlier p#0 or nested operand takes the name over; the made-up
 * instruction is renamed. */
bool irb_register_instr_as(ir_builder *b, ir_instr *in, bool generated) {
  name_slot *prev = irb_map_find(&b->instrs, in->name);
  if (prev && prev->generated && !generated) {
    ir_instr *g = prev->value;
    *prev = (name_slot){in->name, in, in->loc, false};
    g->name = unique_name(b, g->name, "");
    if (!g->name.p || !irb_map_put_slot(&b->m->arena, &b->instrs, (name_slot){g->name, g, g->loc, true})) {
      irb_oom(b, in->loc);
      return false;
    }
    return true;
  }
  if (prev) {
    irb_error(b, in->loc, "instruction %%%s is already defined at line %d, column %d", in->name.p,
              prev->loc.line, prev->loc.col);
    return false;
  }
  if (!irb_map_put_slot(&b->m->arena, &b->instrs, (name_slot){in->name, in, in->loc, generated})) {
    irb_oom(b, in->loc);
    return false;
  }
  return true;
}

static bool register_instr(ir_builder *b, ir_instr *in) { return irb_register_instr_as(b, in, false); }

ir_instr *irb_make_instr(ir_builder *b, ir_opcode op, ir_str name, ir_loc loc, ir_shape *shape,
                            ir_instr **ops, int n) {
  ir_instr *in = ir_instr_create(b->cur, op, name, shape, ops, n);
  if (!in) {
    irb_oom(b, loc);
    return NULL;
  }
  in->loc = loc;
  return in;
}

static ir_instr *resolve_operand(ir_builder *b, ir_av *v);
static bool build_operands(ir_builder *b, ir_instr *in, ir_av *args);

/* %x#1#0: get-tuple-element chains made explicit. */
static ir_instr *tuple_access(ir_builder *b, ir_instr *base, ir_av *v) {
  ir_instr *cur = base;
  char path[160];  /* what the text wrote so far: %p#1 */
  int plen = snprintf(path, sizeof path, "%%%s", base->name.p);
  for (int i = 0; i < v->n && cur; i++) {
    int64_t k;
    if (!irb_av_i64(b, v->kids[i], &k))
      return NULL;
    ir_shape *s = NULL;
    if (cur->shape && cur->shape->et == IR_TUPLE) {
      if (k < 0 || k >= cur->shape->n_elems) {
        irb_error(b, v->kids[i]->loc, "tuple index %lld is out of range: %s has %d element%s", (long long)k,
                  path, cur->shape->n_elems, cur->shape->n_elems == 1 ? "" : "s");
        return NULL;
      }
      s = cur->shape->elems[k];
    } else if (cur->shape) {
      irb_error(b, v->kids[i]->loc, "'#%lld' indexes %s, which is not a tuple", (long long)k, path);
      return NULL;
    }
    if (plen >= 0 && (size_t)plen < sizeof path)
      plen += snprintf(path + plen, sizeof path - (size_t)plen, "#%lld", (long long)k);
    ir_instr *g = irb_make_instr(b, IR_OP_GET_TUPLE_ELEMENT, unique_name(b, base->name, "get-tuple-element"),
                             v->loc, s, &cur, 1);
    if (!g || !irb_register_instr_as(b, g, true))
      return NULL;
    g->attrs.u.tuple_index = k;
    cur = g;
  }
  return cur;
}

static ir_instr *nested_instr(ir_builder *b, ir_av *v) {
  ir_opcode op, wrapped;
  if (!lookup_opcode(v->s, &op, &wrapped)) {
    irb_error(b, v->loc, "unknown opcode '%s'", v->s.p);
    return NULL;
  }
  ir_str name = unique_name(b, v->s, "nested");
  if (op == IR_OP_PARAMETER) { /* short form: add(f32[10] parameter(0), ...) */
    if (!v->shape) {
      irb_error(b, v->loc, "a nested parameter needs its shape");
      return NULL;
    }
    ir_instr *in = irb_make_instr(b, op, name, v->loc, v->shape, NULL, 0);
    return in && build_operands(b, in, v) && irb_register_instr_as(b, in, true) ? in : NULL;
  }
  if (op == IR_OP_CONSTANT) {
    if (!v->shape) {
      irb_error(b, v->loc, "a nested constant needs its shape");
      return NULL;
    }
    ir_instr *in = irb_make_instr(b, op, name, v->loc, v->shape, NULL, 0);
    if (!in || !(in->attrs.u.literal = irb_literal_from_av(b, v->shape, v->kids[0])))
      return NULL;
    return irb_register_instr_as(b, in, true) ? in : NULL;
  }
  ir_instr *ops[64];
  if (v->n > 64) {
    irb_error(b, v->loc, "too many operands in a nested instruction");
    return NULL;
  }
  for (int i = 0; i < v->n; i++)
    if (!(ops[i] = resolve_operand(b, v->kids[i])))
      return NULL;
  ir_instr *in = irb_make_instr(b, op, name, v->loc, v->shape, ops, v->n);
  return in && irb_register_instr_as(b, in, true) ? in : NULL;
}

/* Does operand v name the instruction being defined (`%a = f32[] add(%a, %p)`)? */
static bool uses_itself(const ir_instr *in, const ir_av *v) {
  if (v->kind != AV_OPERAND)
    return false;
  ir_str n = irb_bare_name(v->s);
  return n.len == in->name.len && n.len && memcmp(n.p, in->name.p, n.len) == 0;
}

static ir_instr *resolve_operand(ir_builder *b, ir_av *v) {
  if (v->kind == AV_NESTED)
    return nested_instr(b, v);
  if (v->kind != AV_OPERAND) {
    irb_error(b, v->loc, "expected an operand name");
    return NULL;
  }
  ir_str n = irb_bare_name(v->s);
  name_slot *s = n.p ? irb_map_find(&b->instrs, n) : NULL;
  if (!s && b->single && v->shape && !v->n)
    return irb_single_parameter(b, v, n);
  if (!s && !n.p) {
    irb_error(b, v->loc, "an operand written as a bare shape needs a name (outside a single instruction)");
    return NULL;
  }
  if (!s && b->single) {
    irb_error(b, v->loc, "use of undefined instruction %%%s (in a single instruction, write its shape to make it a "
              "parameter)", n.p);
    return NULL;
  }
  if (!s) {
    irb_error(b, v->loc, "use of undefined instruction %%%s", n.p);
    return NULL;
  }
  ir_instr *in = s->value;
  if (in->pass_data == &b->gensym)
    return NULL; /* its definition already failed and was reported */
  if (v->shape && in->shape && !v->n && !ir_shape_equal(v->shape, in->shape)) {
    char want[256], got[256];
    ir_shape_format(in->shape, false, want, sizeof want);
    ir_shape_format(v->shape, false, got, sizeof got);
    irb_error(b, v->loc, "operand %%%s is written as %s but is defined as %s", n.p, got, want);
    return NULL;
  }
  return v->n ? tuple_access(b, in, v) : in;
}

bool irb_add_comp_ref(ir_builder *b, comp_ref r) {
  if (b->n_comp_refs == b->cap_comp_refs) {
    int cap = b->cap_comp_refs ? b->cap_comp_refs * 2 : 64;
    comp_ref *p = ir_arena_alloc_array(&b->m->arena, (size_t)cap, sizeof *p);
    if (!p)
      return false;
    if (b->n_comp_refs)
      memcpy(p, b->comp_refs, (size_t)b->n_comp_refs * sizeof *p);
    b->comp_refs = p;
    b->cap_comp_refs = cap;
  }
  b->comp_refs[b->n_comp_refs++] = r;
  return true;
}

static bool build_operands(ir_builder *b, ir_instr *in, ir_av *args) {
  int n = args ? args->n : 0;
  if (in->op == IR_OP_PARAMETER) {
    int64_t k;
    if (n != 1 || args->kids[0]->kind != AV_INT || !irb_av_i64(b, args->kids[0], &k) || k < 0) {
      irb_error(b, in->loc, "%%%s: parameter needs one non-negative number, as in parameter(0)", in->name.p);
      return false;
    }
    if (k > 100000000) {
      irb_error(b, args->kids[0]->loc, "parameter number %lld is too large", (long long)k);
      return false;
    }
    in->attrs.u.parameter_number = k;
    return true;
  }
  if (!n)
    return true;
  in->operands = ir_arena_alloc_array(&b->m->arena, (size_t)n, sizeof(ir_instr *));
  if (!in->operands) {
    irb_oom(b, in->loc);
    return false;
  }
  for (int i = 0; i < n; i++) {
    if (args->kids[i]->kind == AV_INT) {
      irb_error(b, args->kids[i]->loc, "expected an operand name, found a number");
      return false;
    }
    if (uses_itself(in, args->kids[i])) {
      irb_error(b, args->kids[i]->loc, "instruction %%%s uses itself as an operand (an HLO computation is acyclic)",
                in->name.p);
      return false;
    }
    if (!(in->operands[i] = resolve_operand(b, args->kids[i])))
      return false;
  }
  in->n_operands = n;
  return true;
}

static void build_instr(ir_builder *b, ir_instr *in, bool root, ir_av *opcode, ir_opcode wrapped,
                        ir_av *args, ir_attr_list *attrs);

void irb_instruction(ir_builder *b, bool root, ir_av *name, ir_shape *shape, ir_av *opcode,
                     ir_av *args, ir_attr_list *attrs) {
  if (!b->cur || !name || !opcode || b->oom || ir_diag_too_many(b->diags))
    return;
  ir_loc loc = name->loc;
  ir_opcode op, wrapped;
  if (!lookup_opcode(opcode->s, &op, &wrapped)) {
    irb_error(b, opcode->loc, "unknown opcode '%s'", opcode->s.p);
    return;
  }
  ir_str n = irb_bare_name(name->s);
  if (!shape && needs_written_shape(op)) {
    irb_error(b, opcode->loc, "%%%s: the result shape of '%s' must be written", n.p, opcode->s.p);
    return;
  }
  ir_instr *in = irb_make_instr(b, op, n, loc, shape, NULL, 0);
  if (!in)
    return;
  int errors_before = b->diags->n_errors;
  build_instr(b, in, root, opcode, wrapped, args, attrs);
  if (b->diags->n_errors != errors_before) {
    /* Keep the name so that its users do not report it again as undefined. */
    in->pass_data = &b->gensym;
    if (!irb_map_find(&b->instrs, in->name))
      irb_map_put(&b->m->arena, &b->instrs, in->name, in, in->loc);
  }
}

/* The opcode as the text spells it: "negate-start" for a compact async form. */
static void op_spelling(const ir_instr *in, char *buf, size_t cap) {
  static const char *const suffix[] = {"-start", "-update", "-done"};
  int k = in->op == IR_OP_ASYNC_START ? 0 : in->op == IR_OP_ASYNC_UPDATE ? 1 : 2;
  if (ir_opcode_table[in->op].family == IR_FAM_ASYNC && in->attrs.u.async.compact)
    snprintf(buf, cap, "%s%s", ir_opcode_table[in->attrs.u.async.wrapped_opcode].spelling, suffix[k]);
  else
    snprintf(buf, cap, "%s", ir_opcode_table[in->op].spelling);
}

/* An async update or done takes exactly the result of an async start or update; in the
 * compact spelling (negate-start ... negate-done) both must name the same wrapped opcode. */
static bool check_async_chain(ir_builder *b, ir_instr *in, const ir_av *opcode) {
  if (in->op != IR_OP_ASYNC_UPDATE && in->op != IR_OP_ASYNC_DONE)
    return true;
  /* An update may bind further operands of the computation (late binding); a done takes one. */
  if (in->op == IR_OP_ASYNC_UPDATE ? in->n_operands < 1 : in->n_operands != 1) {
    irb_error(b, in->loc, "%%%s: '%s' takes %s1 operand but has %d", in->name.p, opcode->s.p,
              in->op == IR_OP_ASYNC_UPDATE ? "at least " : "", in->n_operands);
    return false;
  }
  const ir_instr *src = in->operands[0];
  char have[96];
  op_spelling(src, have, sizeof have);
  if (src->op != IR_OP_ASYNC_START && src->op != IR_OP_ASYNC_UPDATE) {
    irb_error(b, in->loc, "%%%s: '%s' needs the result of an async start or update, but %%%s is '%s'",
              in->name.p, opcode->s.p, src->name.p, have);
    return false;
  }
  if (in->attrs.u.async.compact && src->attrs.u.async.compact &&
      in->attrs.u.async.wrapped_opcode != src->attrs.u.async.wrapped_opcode) {
    irb_error(b, in->loc, "%%%s: '%s' does not match %%%s, which is '%s'", in->name.p, opcode->s.p,
              src->name.p, have);
    return false;
  }
  return true;
}

static void build_instr(ir_builder *b, ir_instr *in, bool root, ir_av *opcode, ir_opcode wrapped,
                        ir_av *args, ir_attr_list *attrs) {
  ir_opcode op = in->op;
  ir_str n = in->name;
  ir_loc loc = in->loc;
  ir_shape *shape = in->shape;
  in->attrs.bc.axis = -1;
  if (wrapped != IR_OP_COUNT) {
    in->attrs.u.async.wrapped_opcode = wrapped;
    in->attrs.u.async.compact = true;
  }
  if (fam_of(in) == IR_FAM_CONVOLUTION) {
    in->attrs.u.conv.feature_group_count = 1;
    in->attrs.u.conv.batch_group_count = 1;
  } else if (fam_of(in) == IR_FAM_CUSTOM_CALL) {
    in->attrs.u.custom_call.feature_group_count = 1;
    in->attrs.u.custom_call.batch_group_count = 1;
  } else if (fam_of(in) == IR_FAM_TOPK) {
    in->attrs.u.topk.largest = true;
  } else if (fam_of(in) == IR_FAM_COLLECTIVE) {
    in->attrs.u.collective.has_dynamic_root = -1;
  }
  if (op == IR_OP_CONSTANT) {
    if (!(in->attrs.u.literal = irb_literal_from_av(b, shape, args)))
      return;
  } else if (!build_operands(b, in, args)) {
    return;
  }
  /* The nested and tuple-access instructions were appended first; keep `in` last. */
  ir_computation *c = b->cur;
  if (c->instrs[c->n_instrs - 1] != in) {
    int at = in->id;
    memmove(&c->instrs[at], &c->instrs[at + 1], (size_t)(c->n_instrs - 1 - at) * sizeof(ir_instr *));
    c->instrs[c->n_instrs - 1] = in;
    for (int i = at; i < c->n_instrs; i++)
      c->instrs[i]->id = i;
  }
  int arity = ir_opcode_table[op].arity;
  if (arity >= 0 && op != IR_OP_PARAMETER && op != IR_OP_CONSTANT && in->n_operands != arity &&
      wrapped == IR_OP_COUNT) {
    irb_error(b, loc, "%%%s: '%s' takes %d operand%s but has %d", n.p, opcode->s.p, arity,
              arity == 1 ? "" : "s", in->n_operands);
    return;
  }
  if (!check_async_chain(b, in, opcode))
    return;
  if (!register_instr(b, in))
    return;
  irb_apply_attrs(b, in, attrs);
  irb_check_required(b, in, attrs);
  if (in->op == IR_OP_ASYNC_START && wrapped != IR_OP_COUNT && wrapped != IR_OP_CALL)
    irb_desugar_compact_start(b, in, wrapped, attrs);
  if (root) {
    if (b->cur_has_root) {
      irb_error(b, loc, "computation %%%s has more than one ROOT", c->name.p);
      return;
    }
    b->cur_has_root = true;
    c->root = in;
  }
}

/* The async-start of the chain an update or done belongs to. */
static const ir_instr *async_chain_start(const ir_instr *in) {
  while (in->n_operands > 0 && (in->op == IR_OP_ASYNC_UPDATE || in->op == IR_OP_ASYNC_DONE))
    in = in->operands[0];
  return in;
}

static bool same_str(ir_str a, ir_str b) { return a.len == b.len && (!a.len || memcmp(a.p, b.p, a.len) == 0); }

/* An async update or done that names its computation (calls=) or its execution thread must
 * name those of its start (the start's thread is "main" unless written), as XLA's parser
 * requires. */
static void check_async_calls(ir_builder *b, const ir_computation *c) {
  for (int i = 0; i < c->n_instrs && !irb_failed(b); i++) {
    const ir_instr *in = c->instrs[i];
    if ((in->op != IR_OP_ASYNC_UPDATE && in->op != IR_OP_ASYNC_DONE) || in->n_operands < 1)
      continue;
    const ir_instr *src = async_chain_start(in);
    if (src->op != IR_OP_ASYNC_START)
      continue;
    if (in->n_called == 1 && src->n_called == 1 && src->called[0] != in->called[0])
      irb_error(b, in->loc, "%%%s: calls=%%%s, but %%%s runs %%%s", in->name.p, in->called[0]->name.p,
                src->name.p, src->called[0]->name.p);
    ir_str want = src->attrs.u.async.execution_thread, got = in->attrs.u.async.execution_thread;
    if (!want.len)
      want = (ir_str){"main", 4};
    if (got.len && !same_str(got, want))
      irb_error(b, in->loc, "%%%s: async_execution_thread=\"%.*s\", but %%%s runs on \"%.*s\"", in->name.p,
                (int)got.len, got.p, src->name.p, (int)want.len, want.p);
  }
}

static int cmp_ptr(const void *a, const void *b) {
  uintptr_t x = (uintptr_t) * (void *const *)a, y = (uintptr_t) * (void *const *)b;
  return (x > y) - (x < y);
}

/* An async-start written with calls= (a compact call-start wraps its to_apply in a computation
 * of its own, which may then be shared). */
static bool runs_own_computation(const ir_instr *in) {
  return in->op == IR_OP_ASYNC_START && in->n_called == 1 && !in->attrs.u.async.compact;
}

/* Each computation is run by at most one async-start (XLA's parser: "called by more than one
 * async op"). */
static void check_async_shared(ir_builder *b) {
  ir_module *m = b->m;
  int n = 0;
  for (int i = 0; i < m->n_comps; i++)
    for (int k = 0; k < m->comps[i]->n_instrs; k++)
      n += runs_own_computation(m->comps[i]->instrs[k]);
  if (n < 2)
    return;
  ir_instr **starts = malloc((size_t)n * sizeof *starts);
  if (!starts)
    return;
  n = 0;
  for (int i = 0; i < m->n_comps; i++)
    for (int k = 0; k < m->comps[i]->n_instrs; k++) {
      ir_instr *in = m->comps[i]->instrs[k];
      if (runs_own_computation(in))
        starts[n++] = in;
    }
  ir_computation **called = malloc((size_t)n * sizeof *called);
  if (called) {
    for (int i = 0; i < n; i++)
      called[i] = starts[i]->called[0];
    qsort(called, (size_t)n, sizeof *called, cmp_ptr);
    const ir_computation *dup = NULL;
    for (int i = 1; i < n && !dup; i++)
      if (called[i] == called[i - 1])
        dup = called[i];
    for (int k = 0, seen = 0; dup && k < n; k++) /* report the second start that runs it */
      if (starts[k]->called[0] == dup && ++seen == 2) {
        irb_error(b, starts[k]->loc, "%%%s: computation %%%s is run by more than one async-start", starts[k]->name.p,
                  dup->name.p);
        break;
      }
  }
  free(called);
  free(starts);
}

/* What must consume each asynchronous start (and async-update), and what a done's operand must
 * be, as XLA's verifier pairs them (VerifyAsynchronousInstructionPairs); send/recv are left to
 * the channel checks. */
static ir_opcode async_pair_done(ir_opcode op) {
  switch (op) {
  case IR_OP_ALL_REDUCE_START: return IR_OP_ALL_REDUCE_DONE;
  case IR_OP_ALL_GATHER_START: return IR_OP_ALL_GATHER_DONE;
  case IR_OP_COLLECTIVE_PERMUTE_START: return IR_OP_COLLECTIVE_PERMUTE_DONE;
  case IR_OP_COPY_START: return IR_OP_COPY_DONE;
  case IR_OP_ASYNC_START:
  case IR_OP_ASYNC_UPDATE: return IR_OP_ASYNC_DONE;
  default: return IR_OP_COUNT;
  }
}

static bool is_control_dep(const ir_instr *in) {
  return in->op == IR_OP_CUSTOM_CALL && ir_str_eq(in->attrs.custom_text, "control_dep");
}

static void check_async_pair(ir_builder *b, const ir_instr *in) {
  ir_opcode done = async_pair_done(in->op);
  if (done != IR_OP_COUNT) {
    int n = 0;
    const ir_instr *user = NULL;
    for (int k = 0; k < in->n_users; k++)
      if (!is_control_dep(in->users[k]) && (!user || in->users[k] != user)) {
        user = in->users[k];
        n++;
      }
    if (n == 0 && (in->op == IR_OP_ASYNC_START || in->op == IR_OP_ASYNC_UPDATE))
      return; /* an open chain: XLA's parser accepts it; compiling it is refused (shape/infer_control.c) */
    if (n != 1)
      irb_error(b, in->loc, "%%%s: '%s' needs exactly one user (its done), not %d", in->name.p,
                ir_opcode_table[in->op].spelling, n);
    else if (user->op != done && !(done == IR_OP_ASYNC_DONE && user->op == IR_OP_ASYNC_UPDATE))
      irb_error(b, in->loc, "%%%s: the user of '%s' must be '%s', not %%%s ('%s')", in->name.p,
                ir_opcode_table[in->op].spelling, ir_opcode_table[done].spelling, user->name.p,
                ir_opcode_table[user->op].spelling);
    return;
  }
  static const ir_opcode dones[][2] = {{IR_OP_ALL_REDUCE_DONE, IR_OP_ALL_REDUCE_START},
                                       {IR_OP_ALL_GATHER_DONE, IR_OP_ALL_GATHER_START},
                                       {IR_OP_COLLECTIVE_PERMUTE_DONE, IR_OP_COLLECTIVE_PERMUTE_START},
                                       {IR_OP_COPY_DONE, IR_OP_COPY_START}};
  for (size_t i = 0; i < sizeof dones / sizeof *dones; i++)
    if (in->op == dones[i][0] && in->n_operands == 1 && in->operands[0]->op != dones[i][1])
      irb_error(b, in->loc, "%%%s: the operand of '%s' must be a '%s', not %%%s ('%s')", in->name.p,
                ir_opcode_table[in->op].spelling, ir_opcode_table[dones[i][1]].spelling, in->operands[0]->name.p,
                ir_opcode_table[in->operands[0]->op].spelling);
}

static void check_async_pairs(ir_builder *b) {
  for (int i = 0; i < b->m->n_comps; i++)
    for (int k = 0; k < b->m->comps[i]->n_instrs && !irb_failed(b); k++)
      check_async_pair(b, b->m->comps[i]->instrs[k]);
}

bool irb_finish(ir_builder *b) {
  ir_module *m = b->m;
  if (irb_failed(b))
    return false;
  for (int i = 0; i < b->n_comp_refs; i++) {
    comp_ref *r = &b->comp_refs[i];
    name_slot *s = irb_map_find(&b->comps, r->name);
    if (!s) {
      irb_error(b, r->loc, "unknown computation %%%s", r->name.p);
      continue;
    }
    r->in->called[r->slot] = s->value;
  }
  if (!m->n_comps) {
    irb_error(b, (ir_loc){1, 1}, "the module has no computations");
    return false;
  }
  if (!m->entry) {
    m->entry = m->comps[m->n_comps - 1];
    m->entry->is_entry = true;
  }
  if (!m->name.p)
    m->name = ir_intern(m, "module", 6);
  for (int i = 0; i < m->n_comps && !irb_failed(b); i++)
    check_async_calls(b, m->comps[i]);
  if (!irb_failed(b))
    check_async_shared(b);
  if (irb_failed(b))
    return false;
  ir_rebuild_uses(m);
  check_async_pairs(b);
  return !irb_failed(b);
}
