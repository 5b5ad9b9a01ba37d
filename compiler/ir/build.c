/* build.c — turns what the grammar parsed into IR (build.h): shapes and layouts, the module
 * header, computations, instructions with resolved operands, literals converted to element
 * storage, and attribute values interpreted per opcode family (attr_table below).  Names are
 * looked up in per-computation hash tables; computation references are resolved at the end,
 * so a computation may be used before it is defined.  Every problem is a diagnostic at the
 * exact line:col; nothing here aborts.  Tests: testdata/parse/{ok,err}.
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
#include "ir/literal.h"
#include "ir/mesh_groups.h"

/* ---- a small string -> pointer hash table in the arena ---------------------------------- */

typedef struct name_slot {
  ir_str key;
  void *value;
  ir_loc loc;
  bool generated;  /* a name hloc made up (p.get-tuple-element1 for p#0): yields to the text */
} name_slot;

typedef struct name_map {
  name_slot *slots;
  size_t cap, n;
} name_map;

static uint64_t hash_str(ir_str s) {
  uint64_t h = 1469598103934665603ull;
  for (size_t i = 0; i < s.len; i++)
    h = (h ^ (unsigned char)s.p[i]) * 1099511628211ull;
  return h;
}

static name_slot *map_find(name_map *m, ir_str key) {
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

static name_slot *map_put_slot(ir_arena *a, name_map *m, name_slot slot) {
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

static bool map_put(ir_arena *a, name_map *m, ir_str key, void *value, ir_loc loc) {
  return map_put_slot(a, m, (name_slot){key, value, loc, false}) != NULL;
}

/* ---- the builder --------------------------------------------------------------------- */

typedef struct comp_ref {   /* a called computation to resolve at the end */
  ir_instr *in;
  int slot;
  ir_str name;
  ir_loc loc;
} comp_ref;

typedef struct ctrl_ref {   /* a control predecessor to resolve at the end of its computation */
  ir_instr *in;
  int slot;
  ir_str name;
  ir_loc loc;
} ctrl_ref;

struct ir_builder {
  ir_module *m;
  ir_diag_list *diags;
  const char *text;
  size_t len;
  bool oom;
  ir_computation *cur;
  name_map instrs;        /* names in the current computation */
  name_map comps;         /* computation names */
  comp_ref *comp_refs;
  int n_comp_refs, cap_comp_refs;
  ctrl_ref *ctrl_refs;
  int n_ctrl_refs, cap_ctrl_refs;
  bool saw_entry;
  bool cur_has_root;
  int gensym;
  ir_av *sig;             /* the current computation's "(p: shape, ...) -> shape", or NULL */
  int ctrl_base;          /* control-predecessor references of the current computation start here */
  struct inline_frame *inl; /* the computations an inline body (to_apply={...}) interrupts */
  bool single;            /* single-instruction input: undefined operands become parameters */
  int n_single_params;
};

/* What an inline computation body saves of the computation it is written in. */
typedef struct inline_frame {
  struct inline_frame *up;
  ir_computation *cur;
  name_map instrs;
  bool cur_has_root;
  ir_av *sig;
  int n_ctrl_refs, ctrl_base;
  ir_loc loc;
} inline_frame;

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

static ir_str bare_name(ir_str s) {
  if (s.len && s.p[0] == '%')
    return (ir_str){s.p + 1, s.len - 1};
  return s;
}

static ir_str av_text(ir_builder *b, const ir_av *v) { return irb_text(b, v->start, v->end); }

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

static bool av_i64(ir_builder *b, const ir_av *v, int64_t *out) {
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

static bool av_i64_list(ir_builder *b, const ir_av *v, ir_i64_list *out) {
  if (v->kind == AV_INT) { /* a single number where a list is allowed, e.g. dimensions=0 */
    int64_t x;
    if (!av_i64(b, v, &x))
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
    if (!av_i64(b, v->kids[i], &out->v[i]))
      return false;
  return true;
}

static bool av_bool(ir_builder *b, const ir_av *v, bool *out) {
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
static ir_str unquote(ir_builder *b, const ir_av *v) {
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
  if (!av_i64_list(b, &ints, &l->minor_to_major))
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
    if (!av_i64(b, &tmp, &d[i]))
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

static ir_literal *literal_from_av(ir_builder *b, const ir_shape *shape, const ir_av *v) {
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
      if (!(lit->elems[i] = literal_from_av(b, shape->elems[i], v->kids[i])))
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
static void add_raw(ir_builder *b, ir_raw_attr **arr, int *n, ir_str name, ir_str value) {
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
  ir_str t = av_text(b, v);
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
  ir_str t = av_text(b, v);
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
  m->name = bare_name(name->s);
  for (int i = 0; i < attrs->n; i++) {
    ir_attr_in *a = &attrs->items[i];
    ir_av *v = a->value;
    bool flag;
    if (ir_str_eq(a->name, "entry_computation_layout")) {
      header_entry_layout(b, v);
    } else if (ir_str_eq(a->name, "is_scheduled") && av_bool(b, v, &flag)) {
      m->is_scheduled = flag;
    } else if (ir_str_eq(a->name, "alias_passthrough_params") && av_bool(b, v, &flag)) {
      m->alias_passthrough_params = flag;
    } else if (ir_str_eq(a->name, "replica_count")) {
      av_i64(b, v, &m->replica_count);
    } else if (ir_str_eq(a->name, "num_partitions")) {
      av_i64(b, v, &m->num_partitions);
    } else if (ir_str_eq(a->name, "input_output_alias")) {
      m->input_output_alias = alias_text(b, v, false);
    } else if (ir_str_eq(a->name, "buffer_donor")) {
      m->buffer_donor = alias_text(b, v, true);
    } else if (ir_str_eq(a->name, "frontend_attributes")) {
      m->frontend_attributes = av_text(b, v);
    } else if (ir_str_eq(a->name, "debug_attributes")) {
      if (debug_attributes_ok(b, v))
        add_raw(b, &m->header_unknown, &m->n_header_unknown, a->name, av_text(b, v));
    } else {
      add_raw(b, &m->header_unknown, &m->n_header_unknown, a->name, av_text(b, v));
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
  ir_str n = bare_name(name->s);
  name_slot *prev = map_find(&b->comps, n);
  if (prev) {
    irb_error(b, name->loc, "computation %%%s is already defined at line %d", n.p, prev->loc.line);
    return;
  }
  if (entry && b->saw_entry) {
    irb_error(b, name->loc, "only one computation may be ENTRY");
    return;
  }
  ir_computation *c = ir_computation_add(b->m, n);
  if (!c || !map_put(&b->m->arena, &b->comps, n, c, name->loc)) {
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
      c->execution_thread = unquote(b, a->value);
    else
      irb_error(b, a->loc, "unknown computation attribute '%s'", a->name.p);
  }
  for (int i = b->ctrl_base; i < b->n_ctrl_refs; i++) {
    ctrl_ref *r = &b->ctrl_refs[i];
    name_slot *s = map_find(&b->instrs, r->name);
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

/* ---- inline computation bodies ----------------------------------------------------------- */

/* An attribute written to_apply={ instructions } (XLA's nested computation): the body becomes
 * a computation of its own, named after the computation it is written in, placed before it so
 * that the printer writes callees first; the attribute then names it. */
void irb_begin_inline(ir_builder *b, ir_loc loc) {
  inline_frame *f = ir_arena_alloc(&b->m->arena, sizeof *f);
  if (!f) {
    irb_oom(b, loc);
    return;
  }
  *f = (inline_frame){b->inl, b->cur, b->instrs, b->cur_has_root, b->sig, b->n_ctrl_refs, b->ctrl_base, loc};
  b->inl = f;
  b->sig = NULL;
  b->cur_has_root = false;
  b->instrs = (name_map){0};
  b->ctrl_base = b->n_ctrl_refs;
  ir_str base = f->cur ? f->cur->name : ir_intern(b->m, "inline", 6);
  char buf[512];
  int n;
  do
    n = snprintf(buf, sizeof buf, "%.*s.inline%d", (int)(base.len > 400 ? 400 : base.len), base.p, ++b->gensym);
  while (map_find(&b->comps, (ir_str){buf, (size_t)n}));
  ir_str name = ir_intern(b->m, buf, (size_t)n);
  ir_computation *c = name.p ? ir_computation_add(b->m, name) : NULL;
  if (!c || !map_put(&b->m->arena, &b->comps, name, c, loc)) {
    irb_oom(b, loc);
    b->cur = NULL;
    return;
  }
  c->loc = loc;
  b->cur = c;
}

/* Moves computation c to just before `before` in the module's text order. */
static void place_before(ir_module *m, ir_computation *c, const ir_computation *before) {
  if (!before || before->id > c->id)
    return;
  int at = before->id;
  memmove(&m->comps[at + 1], &m->comps[at], (size_t)(c->id - at) * sizeof *m->comps);
  m->comps[at] = c;
  for (int i = at; i < m->n_comps; i++)
    m->comps[i]->id = i;
}

ir_av *irb_end_inline(ir_builder *b, ir_loc loc, size_t start, size_t end) {
  inline_frame *f = b->inl;
  ir_computation *c = b->cur;
  ir_attr_list none = {0};
  irb_end_computation(b, &none);
  if (!f)
    return NULL;
  b->inl = f->up;
  b->cur = f->cur;
  b->instrs = f->instrs;
  b->cur_has_root = f->cur_has_root;
  b->sig = f->sig;
  b->n_ctrl_refs = f->n_ctrl_refs;
  b->ctrl_base = f->ctrl_base;
  if (!c)
    return NULL;
  place_before(b->m, c, f->cur);
  ir_av *v = irb_av(b, AV_NAME, loc, start, end);
  if (v)
    v->s = c->name;
  return v;
}

/* ---- attributes ------------------------------------------------------------------------ */

typedef struct attr_ctx {
  ir_builder *b;
  ir_instr *in;
  ir_attr_in *a;
  ir_av *v;
  /* called computations by role, assembled into in->called at the end */
  comp_ref to_apply, condition, body, true_c, false_c, select, scatter;
  ir_av *branches, *calls, *called_list;
} attr_ctx;

typedef bool (*attr_fn)(attr_ctx *x);

static ir_family fam_of(const ir_instr *in) { return ir_opcode_table[in->op].family; }

static bool set_comp(attr_ctx *x, comp_ref *slot) {
  ir_av *v = x->v;
  if (v->kind == AV_LIST && v->n == 1)
    v = v->kids[0];
  if (v->kind != AV_NAME) {
    irb_error(x->b, x->v->loc, "expected a computation name for %s", x->a->name.p);
    return false;
  }
  *slot = (comp_ref){x->in, 0, bare_name(v->s), v->loc};
  return true;
}

#define I64(field) av_i64(x->b, x->v, &(field))
#define LIST(field) av_i64_list(x->b, x->v, &(field))
#define BOOL(field) av_bool(x->b, x->v, &(field))

static bool a_dimensions(attr_ctx *x) { x->in->attrs.has_dimensions = true; return LIST(x->in->attrs.dimensions); }
static bool a_channel_id(attr_ctx *x) { return I64(x->in->attrs.channel_id); }
static bool a_custom_text(attr_ctx *x) {
  if (x->v->kind != AV_STRING) {
    irb_error(x->b, x->v->loc, "%s expects a quoted string", x->a->name.p);
    return false;
  }
  x->in->attrs.custom_text = unquote(x->b, x->v);
  return true;
}
static bool a_domain(attr_ctx *x) { x->in->attrs.custom_text = av_text(x->b, x->v); return true; }
static bool a_bcast_dims(attr_ctx *x) {
  x->in->attrs.bc.has_broadcast_dimensions = true;
  return LIST(x->in->attrs.bc.broadcast_dimensions);
}
static bool a_auto_broadcast(attr_ctx *x) {
  static const char *const names[] = {"none", "numpy", "pdpd", "bidirectional"};
  static const ir_auto_broadcast vals[] = {IR_AB_EXPLICIT, IR_AB_NUMPY, IR_AB_PDPD, IR_AB_BIDIRECTIONAL};
  for (int i = 0; i < 4; i++)
    if (x->v->kind == AV_NAME && ir_str_eq(x->v->s, names[i])) {
      x->in->attrs.bc.auto_broadcast = vals[i];
      return true;
    }
  irb_error(x->b, x->v->loc, "auto_broadcast must be none, numpy, pdpd or bidirectional");
  return false;
}
static bool a_axis(attr_ctx *x) { return I64(x->in->attrs.bc.axis); }
static bool a_target_shape(attr_ctx *x) { return LIST(x->in->attrs.bc.target_shape); }
static bool a_index(attr_ctx *x) { return I64(x->in->attrs.u.tuple_index); }
static bool a_iota_dimension(attr_ctx *x) { return I64(x->in->attrs.u.iota_dimension); }
static bool a_inferred_dimension(attr_ctx *x) { return I64(x->in->attrs.u.inferred_dimension); }

static bool a_slice(attr_ctx *x) {
  ir_av *v = x->v;
  if (v->kind != AV_LIST) {
    irb_error(x->b, v->loc, "expected slice={[start:limit:stride], ...}");
    return false;
  }
  ir_slice_dim *d = ir_arena_alloc_array(&x->b->m->arena, (size_t)(v->n ? v->n : 1), sizeof *d);
  if (!d)
    return false;
  for (int i = 0; i < v->n; i++) {
    ir_av *r = v->kids[i];
    if (r->kind != AV_RANGE) {
      irb_error(x->b, r->loc, "expected [start:limit] or [start:limit:stride]");
      return false;
    }
    d[i].stride = 1;
    if (!av_i64(x->b, r->kids[0], &d[i].start) || !av_i64(x->b, r->kids[1], &d[i].limit) ||
        (r->n == 3 && !av_i64(x->b, r->kids[2], &d[i].stride)))
      return false;
  }
  x->in->attrs.u.slice.dims = d;
  x->in->attrs.u.slice.n = v->n;
  return true;
}

static bool a_dynamic_slice_sizes(attr_ctx *x) { return LIST(x->in->attrs.u.dynamic_slice_sizes); }

/* Splits "a_b(_c)x..." / "3x3" token text into up to `per` numbers per dimension. */
/* Splits "a_b_cxd_e_f" (per numbers a dimension, missing ones 0) into out; returns the
 * dimension count, or -1 after a diagnostic (more than max dimensions, a number that does
 * not fit int64). */
static int split_dims(ir_builder *b, const ir_av *v, int per, int64_t out[][3], int max, const char *what) {
  const char *s = v->s.p;
  int n = 0;
  while (*s) {
    if (n == max) {
      irb_error(b, v->loc, "%s has more than %d dimensions", what, max);
      return -1;
    }
    for (int k = 0; k < per; k++)
      out[n][k] = 0;
    for (int k = 0; k < per; k++) {
      char *end;
      errno = 0;
      out[n][k] = strtoll(s, &end, 10);
      if (errno == ERANGE) {
        irb_error(b, v->loc, "a number in %s is out of range", what);
        return -1;
      }
      s = end;
      if (*s != '_')
        break;
      s++;
    }
    n++;
    if (*s != 'x')
      break;
    s++;
  }
  if (*s) {
    irb_error(b, v->loc, "malformed %s value '%s'", what, v->s.p);
    return -1;
  }
  return n;
}

static bool a_padding(attr_ctx *x) {
  ir_av *v = x->v;
  if (fam_of(x->in) != IR_FAM_PAD)
    return false;
  if (v->kind != AV_PAD && !(v->kind == AV_LIST && v->n == 0)) {
    irb_error(x->b, v->loc, "expected padding=low_high[_interior]x...");
    return false;
  }
  int64_t parts[64][3];
  int n = v->kind == AV_PAD ? split_dims(x->b, v, 3, parts, 64, "padding") : 0;
  if (n < 0)
    return false;
  ir_pad_dim *d = ir_arena_alloc_array(&x->b->m->arena, (size_t)(n ? n : 1), sizeof *d);
  if (!d)
    return false;
  for (int i = 0; i < n; i++)
    d[i] = (ir_pad_dim){parts[i][0], parts[i][1], parts[i][2]};
  x->in->attrs.u.padding.dims = d;
  x->in->attrs.u.padding.n = n;
  return true;
}

static bool a_direction(attr_ctx *x) {
  static const char *const names[] = {"EQ", "NE", "LT", "LE", "GT", "GE"};
  for (int i = 0; i < 6; i++)
    if (x->v->kind == AV_NAME && ir_str_eq(x->v->s, names[i])) {
      x->in->attrs.u.compare.dir = (ir_cmp_dir)i;
      return true;
    }
  irb_error(x->b, x->v->loc, "unknown comparison direction '%s' (expected EQ, NE, LT, LE, GT or GE)",
            x->v->s.p ? x->v->s.p : "");
  return false;
}

static bool a_cmp_type(attr_ctx *x) {
  static const char *const names[] = {"DEFAULT", "FLOAT", "TOTALORDER", "SIGNED", "UNSIGNED"};
  for (int i = 0; i < 5; i++)
    if (x->v->kind == AV_NAME && ir_str_eq(x->v->s, names[i])) {
      x->in->attrs.u.compare.type = (ir_cmp_type)i;
      x->in->attrs.u.compare.has_type = true;
      return true;
    }
  irb_error(x->b, x->v->loc, "unknown comparison type '%s'", x->v->s.p ? x->v->s.p : "");
  return false;
}

static bool a_exponent_bits(attr_ctx *x) { return I64(x->in->attrs.u.reduce_precision.exponent_bits); }
static bool a_mantissa_bits(attr_ctx *x) { return I64(x->in->attrs.u.reduce_precision.mantissa_bits); }

static ir_window *window_of(ir_instr *in) {
  switch (fam_of(in)) {
  case IR_FAM_REDUCE_WINDOW:
  case IR_FAM_SELECT_AND_SCATTER: return &in->attrs.u.reduce_window.window;
  case IR_FAM_CONVOLUTION: return &in->attrs.u.conv.window;
  case IR_FAM_CUSTOM_CALL: return &in->attrs.u.custom_call.window;
  default: return NULL;
  }
}

static bool a_window(attr_ctx *x) {
  ir_window *w = window_of(x->in);
  ir_av *v = x->v;
  if (!w)
    return false;
  if (v->kind != AV_LIST) {
    irb_error(x->b, v->loc, "expected window={size=... stride=... pad=...}");
    return false;
  }
  static const char *const fields[] = {"size", "stride", "pad", "lhs_dilate", "rhs_dilate", "rhs_reversal"};
  int64_t vals[6][64][3];
  int counts[6] = {0};
  for (int i = 0; i < v->n; i++) {
    ir_av *kv = v->kids[i];
    int f = -1;
    for (int k = 0; k < 6; k++)
      if (kv->kind == AV_KV && ir_str_eq(kv->s, fields[k]))
        f = k;
    if (f < 0) {
      irb_error(x->b, kv->loc, "unknown window field (expected size, stride, pad, lhs_dilate, rhs_dilate or rhs_reversal)");
      return false;
    }
    ir_av *fv = kv->kids[0];
    if (f == 2 ? fv->kind != AV_PAD : fv->kind != AV_DXD && fv->kind != AV_INT) {
      irb_error(x->b, fv->loc, f == 2 ? "bad value for window field pad (expected low_high per dimension, as in 0_1x1_1)"
                                      : "bad value for window field %s (expected sizes like 3x3)", fields[f]);
      return false;
    }
    if (counts[f] || (w->written >> f & 1)) {
      irb_error(x->b, kv->loc, "window field %s is written twice", fields[f]);
      return false;
    }
    counts[f] = split_dims(x->b, fv, f == 2 ? 2 : 1, vals[f], 64, "window");
    if (counts[f] < 0)
      return false;
    w->written |= 1u << f;
  }
  int n = counts[0];
  for (int f = 1; f < 6; f++)
    if ((w->written >> f & 1) && counts[f] != n) {
      irb_error(x->b, v->loc, "window field %s has %d dimension%s but size has %d", fields[f], counts[f],
                counts[f] == 1 ? "" : "s", n);
      return false;
    }
  w->n = n;
  w->dims = ir_arena_alloc_array(&x->b->m->arena, (size_t)(n ? n : 1), sizeof *w->dims);
  if (!w->dims)
    return false;
  for (int i = 0; i < n; i++) {
    ir_window_dim *d = &w->dims[i];
    d->size = vals[0][i][0];
    d->stride = (w->written & IR_WIN_STRIDE) ? vals[1][i][0] : 1;
    d->pad_lo = (w->written & IR_WIN_PAD) ? vals[2][i][0] : 0;
    d->pad_hi = (w->written & IR_WIN_PAD) ? vals[2][i][1] : 0;
    d->lhs_dilate = (w->written & IR_WIN_LHS_DILATE) ? vals[3][i][0] : 1;
    d->rhs_dilate = (w->written & IR_WIN_RHS_DILATE) ? vals[4][i][0] : 1;
    d->rhs_reversal = (w->written & IR_WIN_RHS_REVERSAL) ? vals[5][i][0] != 0 : false;
  }
  return true;
}

static bool a_scan_carries(attr_ctx *x) { return I64(x->in->attrs.u.scan.num_carries); }
static bool a_scan_reverse(attr_ctx *x) { return BOOL(x->in->attrs.u.scan.is_reverse); }
static bool a_scan_assoc(attr_ctx *x) { return BOOL(x->in->attrs.u.scan.is_associative); }
static bool a_is_stable(attr_ctx *x) { return BOOL(x->in->attrs.u.sort.is_stable); }
static bool a_k(attr_ctx *x) { return I64(x->in->attrs.u.topk.k); }
static bool a_largest(attr_ctx *x) { x->in->attrs.u.topk.has_largest = true; return BOOL(x->in->attrs.u.topk.largest); }

static ir_dot_dnums *dnums_of(ir_instr *in) { return &in->attrs.u.dot.dnums; }
static bool a_lhs_batch(attr_ctx *x) { return LIST(dnums_of(x->in)->lhs_batch); }
static bool a_rhs_batch(attr_ctx *x) { return LIST(dnums_of(x->in)->rhs_batch); }
static bool a_lhs_contracting(attr_ctx *x) { return LIST(dnums_of(x->in)->lhs_contracting); }
static bool a_rhs_contracting(attr_ctx *x) { return LIST(dnums_of(x->in)->rhs_contracting); }
static bool a_lhs_ragged(attr_ctx *x) { return LIST(dnums_of(x->in)->lhs_ragged); }
static bool a_rhs_group(attr_ctx *x) { return LIST(dnums_of(x->in)->rhs_group); }

static bool a_precision(attr_ctx *x) {
  ir_av *v = x->v;
  ir_precision *out;
  int *n, cap;
  if (fam_of(x->in) == IR_FAM_DOT) {
    out = x->in->attrs.u.dot.precision;
    n = &x->in->attrs.u.dot.n_precision;
    cap = 4;
  } else if (fam_of(x->in) == IR_FAM_CONVOLUTION) {
    out = x->in->attrs.u.conv.precision;
    n = &x->in->attrs.u.conv.n_precision;
    cap = 2;
  } else {
    return false;
  }
  if (v->kind != AV_LIST || v->n > cap) {
    irb_error(x->b, v->loc, "expected operand_precision={default,...}");
    return false;
  }
  for (int i = 0; i < v->n; i++) {
    ir_av *p = v->kids[i];
    if (p->kind == AV_NAME && (ir_str_eq(p->s, "default") || ir_str_eq(p->s, "DEFAULT")))
      out[i] = IR_PREC_DEFAULT;
    else if (p->kind == AV_NAME && (ir_str_eq(p->s, "high") || ir_str_eq(p->s, "HIGH")))
      out[i] = IR_PREC_HIGH;
    else if (p->kind == AV_NAME && (ir_str_eq(p->s, "highest") || ir_str_eq(p->s, "HIGHEST")))
      out[i] = IR_PREC_HIGHEST;
    else {
      irb_error(x->b, p->loc, "unknown precision (expected default, high or highest)");
      return false;
    }
  }
  *n = v->n;
  return true;
}

static bool a_algorithm(attr_ctx *x) {
  if (fam_of(x->in) == IR_FAM_DOT) {
    x->in->attrs.u.dot.algorithm = av_text(x->b, x->v);
    return true;
  }
  if (fam_of(x->in) != IR_FAM_RNG_BIT_GENERATOR)
    return false;
  static const char *const names[] = {"rng_default", "rng_three_fry", "rng_philox"};
  for (int i = 0; i < 3; i++)
    if (x->v->kind == AV_NAME && ir_str_eq(x->v->s, names[i])) {
      x->in->attrs.u.rng_bit_generator.algorithm = (ir_rng_algo)i;
      return true;
    }
  irb_error(x->b, x->v->loc, "unknown RNG algorithm (expected rng_default, rng_three_fry or rng_philox)");
  return false;
}

/* dim_labels=b01f_01io->b01f: letters name batch/feature (b, f), input/output features of the
 * kernel (i, o), and digits name spatial dimensions in order. */
static bool parse_labels(const char *s, size_t n, char a, char b2, int64_t *oa, int64_t *ob,
                         ir_i64_list *spatial, ir_builder *b, ir_loc loc) {
  int64_t sp[64];
  int nsp = 0;
  *oa = *ob = -1;
  for (size_t i = 0; i < n; i++) {
    char c = s[i];
    if (c == a) {
      if (*oa >= 0)
        return false;
      *oa = (int64_t)i;
    } else if (c == b2) {
      if (*ob >= 0)
        return false;
      *ob = (int64_t)i;
    } else if (c >= '0' && c <= '9') {
      int k = c - '0';
      while (nsp <= k)
        sp[nsp++] = -1;
      if (sp[k] >= 0)
        return false; /* a spatial dimension named twice */
      sp[k] = (int64_t)i;
    } else if (c != '?') {
      return false;
    }
  }
  for (int i = 0; i < nsp; i++)
    if (sp[i] < 0)
      return false;
  *spatial = ir_i64_list_copy(b->m, sp, nsp);
  (void)loc;
  return *oa >= 0 && *ob >= 0;
}

static bool a_dim_labels(attr_ctx *x) {
  ir_conv_dnums *d;
  if (fam_of(x->in) == IR_FAM_CONVOLUTION)
    d = &x->in->attrs.u.conv.dnums;
  else if (fam_of(x->in) == IR_FAM_CUSTOM_CALL)
    d = &x->in->attrs.u.custom_call.dnums;
  else
    return false;
  if (x->v->kind != AV_DIMLABELS || !x->v->s.p) {
    irb_error(x->b, x->v->loc, "dim_labels expects labels like b01f_01io->b01f");
    return false;
  }
  const char *s = x->v->s.p;
  const char *u1 = strchr(s, '_'), *ar = strstr(s, "->");
  if (!u1 || !ar ||
      !parse_labels(s, (size_t)(u1 - s), 'b', 'f', &d->input_batch, &d->input_feature,
                    &d->input_spatial, x->b, x->v->loc) ||
      !parse_labels(u1 + 1, (size_t)(ar - u1 - 1), 'i', 'o', &d->kernel_input_feature,
                    &d->kernel_output_feature, &d->kernel_spatial, x->b, x->v->loc) ||
      !parse_labels(ar + 2, strlen(ar + 2), 'b', 'f', &d->output_batch, &d->output_feature,
                    &d->output_spatial, x->b, x->v->loc)) {
    irb_error(x->b, x->v->loc, "malformed dim_labels '%s'", s ? s : "");
    return false;
  }
  d->present = true;
  return true;
}

static int64_t *group_count_of(ir_instr *in, bool batch) {
  if (fam_of(in) == IR_FAM_CONVOLUTION)
    return batch ? &in->attrs.u.conv.batch_group_count : &in->attrs.u.conv.feature_group_count;
  if (fam_of(in) == IR_FAM_CUSTOM_CALL)
    return batch ? &in->attrs.u.custom_call.batch_group_count : &in->attrs.u.custom_call.feature_group_count;
  return NULL;
}
static bool a_feature_group_count(attr_ctx *x) {
  int64_t *p = group_count_of(x->in, false);
  return p && I64(*p);
}
static bool a_batch_group_count(attr_ctx *x) {
  int64_t *p = group_count_of(x->in, true);
  return p && I64(*p);
}
static bool a_conv_kind(attr_ctx *x) { x->in->attrs.u.conv.conv_kind = av_text(x->b, x->v); return true; }

#define G (x->in->attrs.u.gather)
#define S (x->in->attrs.u.scatter)
static bool a_offset_dims(attr_ctx *x) { return LIST(G.offset_dims); }
static bool a_collapsed(attr_ctx *x) { return LIST(G.collapsed_slice_dims); }
static bool a_start_index_map(attr_ctx *x) { return LIST(G.start_index_map); }
static bool a_operand_batching(attr_ctx *x) { return LIST(G.operand_batching_dims); }
static bool a_start_indices_batching(attr_ctx *x) { return LIST(G.start_indices_batching_dims); }
static bool a_update_window(attr_ctx *x) { return LIST(S.update_window_dims); }
static bool a_inserted_window(attr_ctx *x) { return LIST(S.inserted_window_dims); }
static bool a_scatter_dims_map(attr_ctx *x) { return LIST(S.scatter_dims_to_operand_dims); }
static bool a_input_batching(attr_ctx *x) { return LIST(S.input_batching_dims); }
static bool a_scatter_indices_batching(attr_ctx *x) { return LIST(S.scatter_indices_batching_dims); }
static bool a_index_vector_dim(attr_ctx *x) {
  return fam_of(x->in) == IR_FAM_GATHER ? I64(G.index_vector_dim) : I64(S.index_vector_dim);
}
static bool a_indices_are_sorted(attr_ctx *x) {
  return fam_of(x->in) == IR_FAM_GATHER ? BOOL(G.indices_are_sorted) : BOOL(S.indices_are_sorted);
}
static bool a_unique_indices(attr_ctx *x) { return BOOL(S.unique_indices); }
static bool int_lists(attr_ctx *x, ir_av *v, ir_i64_list **out, int *n);
static bool a_slice_sizes(attr_ctx *x) {
  if (fam_of(x->in) == IR_FAM_GATHER)
    return LIST(G.slice_sizes);
  if (fam_of(x->in) == IR_FAM_COLLECTIVE) { /* collective-permute: {{sizes of buffer 0},...} */
    if (x->v->kind != AV_LIST) {
      irb_error(x->b, x->v->loc, "expected slice_sizes={{...},...}");
      return false;
    }
    x->in->attrs.u.collective.inplace = true;
    return int_lists(x, x->v, &x->in->attrs.u.collective.slice_sizes, &x->in->attrs.u.collective.n_slice_sizes);
  }
  return false;
}
#undef G
#undef S

static bool a_fft_type(attr_ctx *x) {
  static const char *const names[] = {"FFT", "IFFT", "RFFT", "IRFFT"};
  for (int i = 0; i < 4; i++)
    if (x->v->kind == AV_NAME && ir_str_eq(x->v->s, names[i])) {
      x->in->attrs.u.fft.type = (ir_fft_type)i;
      return true;
    }
  irb_error(x->b, x->v->loc, "unknown fft_type (expected FFT, IFFT, RFFT or IRFFT)");
  return false;
}
static bool a_fft_length(attr_ctx *x) { return LIST(x->in->attrs.u.fft.length); }
static bool a_lower(attr_ctx *x) {
  if (fam_of(x->in) == IR_FAM_CHOLESKY)
    return BOOL(x->in->attrs.u.cholesky.lower);
  return BOOL(x->in->attrs.u.triangular_solve.lower);
}
static bool a_left_side(attr_ctx *x) { return BOOL(x->in->attrs.u.triangular_solve.left_side); }
static bool a_unit_diagonal(attr_ctx *x) { return BOOL(x->in->attrs.u.triangular_solve.unit_diagonal); }
static bool a_transpose_a(attr_ctx *x) {
  static const char *const names[] = {"NO_TRANSPOSE", "TRANSPOSE", "ADJOINT"};
  for (int i = 0; i < 3; i++)
    if (x->v->kind == AV_NAME && ir_str_eq(x->v->s, names[i])) {
      x->in->attrs.u.triangular_solve.transpose_a = (ir_transpose_a)i;
      return true;
    }
  irb_error(x->b, x->v->loc, "unknown transpose_a (expected NO_TRANSPOSE, TRANSPOSE or ADJOINT)");
  return false;
}
static bool a_epsilon(attr_ctx *x) {
  if (x->v->kind != AV_FLOAT && x->v->kind != AV_INT) {
    irb_error(x->b, x->v->loc, "epsilon expects a number");
    return false;
  }
  x->in->attrs.u.batch_norm.epsilon = strtod(x->v->s.p, NULL);
  return true;
}
static bool a_feature_index(attr_ctx *x) { return I64(x->in->attrs.u.batch_norm.feature_index); }
static bool a_distribution(attr_ctx *x) {
  if (x->v->kind == AV_NAME && ir_str_eq(x->v->s, "rng_uniform"))
    x->in->attrs.u.rng.distribution = IR_RNG_UNIFORM;
  else if (x->v->kind == AV_NAME && ir_str_eq(x->v->s, "rng_normal"))
    x->in->attrs.u.rng.distribution = IR_RNG_NORMAL;
  else {
    irb_error(x->b, x->v->loc, "unknown distribution (expected rng_uniform or rng_normal)");
    return false;
  }
  return true;
}
static bool a_delta(attr_ctx *x) { return I64(x->in->attrs.u.rng_state.delta); }
static bool a_is_composite(attr_ctx *x) { return BOOL(x->in->attrs.u.call.is_composite); }
static bool a_fusion_kind(attr_ctx *x) { x->in->attrs.u.fusion.kind = av_text(x->b, x->v); return true; }

static bool a_api_version(attr_ctx *x) {
  static const char *const names[] = {"API_VERSION_UNSPECIFIED", "API_VERSION_ORIGINAL",
                                      "API_VERSION_STATUS_RETURNING",
                                      "API_VERSION_STATUS_RETURNING_UNIFIED", "API_VERSION_TYPED_FFI"};
  /* XLA's parser maps every name of its CustomCallApiVersion enum, API_VERSION_UNSPECIFIED (0)
   * included, and its printer writes every value but ORIGINAL: older dumps carry UNSPECIFIED.
   * What running it does is the runtime's matter (runtime/src/context/custom_call.c). */
  for (int i = 0; i < 5; i++)
    if (x->v->kind == AV_NAME && ir_str_eq(x->v->s, names[i])) {
      x->in->attrs.u.custom_call.api_version = (ir_custom_call_api)i;
      x->in->attrs.u.custom_call.has_api_version = true;
      return true;
    }
  irb_error(x->b, x->v->loc, "unknown api_version '%s'", x->v->s.p ? x->v->s.p : "");
  return false;
}
static bool a_has_side_effect(attr_ctx *x) { return BOOL(x->in->attrs.u.custom_call.has_side_effect); }
static bool a_operand_layout_constraints(attr_ctx *x) {
  ir_av *v = x->v;
  if (v->kind != AV_LIST) {
    irb_error(x->b, v->loc, "expected operand_layout_constraints={shape, ...}");
    return false;
  }
  ir_shape **arr = ir_arena_alloc_array(&x->b->m->arena, (size_t)(v->n ? v->n : 1), sizeof *arr);
  if (!arr)
    return false;
  for (int i = 0; i < v->n; i++) {
    if (v->kids[i]->kind != AV_SHAPE) {
      irb_error(x->b, v->kids[i]->loc, "expected a shape");
      return false;
    }
    arr[i] = v->kids[i]->shape;
  }
  x->in->attrs.u.custom_call.operand_layout_constraints = arr;
  x->in->attrs.u.custom_call.n_operand_layout_constraints = v->n;
  x->in->attrs.u.custom_call.has_operand_layout_constraints = true;
  return true;
}
/* literal=s32[2]{0} {1, 2} (the shape is written before the values).  A tuple literal,
 * ( s32[1]{0} {4}, pred[] true ), is kept verbatim. */
static bool a_cc_literal(attr_ctx *x) {
  if (x->v->kind != AV_SHAPED || !x->v->shape)
    return false; /* no shape: it was malformed and has been reported */
  ir_literal *lit = literal_from_av(x->b, x->v->shape, x->v);
  x->in->attrs.u.custom_call.literal = lit;
  return lit != NULL;
}
static bool a_schedule(attr_ctx *x) { x->in->attrs.u.custom_call.schedule = av_text(x->b, x->v); return true; }
static bool a_padding_type(attr_ctx *x) { x->in->attrs.u.custom_call.padding_type = av_text(x->b, x->v); return true; }
static bool a_is_host_transfer(attr_ctx *x) { return BOOL(x->in->attrs.u.send_recv.is_host_transfer); }
static bool a_outfeed_shape(attr_ctx *x) {
  if (x->v->kind != AV_SHAPE) {
    irb_error(x->b, x->v->loc, "outfeed_shape expects a shape");
    return false;
  }
  x->in->attrs.u.outfeed.outfeed_shape = x->v->shape;
  return true;
}

static bool int_lists(attr_ctx *x, ir_av *v, ir_i64_list **out, int *n) {
  *out = ir_arena_alloc_array(&x->b->m->arena, (size_t)(v->n ? v->n : 1), sizeof **out);
  if (!*out)
    return false;
  for (int i = 0; i < v->n; i++)
    if (!av_i64_list(x->b, v->kids[i], &(*out)[i]))
      return false;
  *n = v->n;
  return true;
}

static bool expand_iota_groups(attr_ctx *x, ir_replica_groups *g) {
  /* [G,S]<=[dims]T(perm): ids 0..N-1 reshaped to dims, transposed by perm, read row-major
   * into G groups of S. */
  int64_t total = 1;
  for (int i = 0; i < g->iota_reshape.n; i++)
    total *= g->iota_reshape.v[i];
  if (g->iota_group_shape.n != 2 || total <= 0 || total > (1 << 20) ||
      g->iota_group_shape.v[0] * g->iota_group_shape.v[1] != total) {
    irb_error(x->b, x->v->loc, "replica groups [%s]<=[...] do not describe the same number of devices",
              "G,S");
    return false;
  }
  int r = g->iota_reshape.n;
  if (r > 16 || (g->iota_transpose.n && g->iota_transpose.n != r)) {
    irb_error(x->b, x->v->loc, "replica groups: the transpose T(...) must permute the %d reshape dimensions", r);
    return false;
  }
  int64_t *ids = ir_arena_alloc_array(&x->b->m->arena, (size_t)total, sizeof *ids);
  if (!ids) {
    irb_oom(x->b, x->v->loc);
    return false;
  }
  int64_t perm[16], tdims[16], idx[16] = {0};
  for (int i = 0; i < r; i++)
    perm[i] = g->iota_transpose.n ? g->iota_transpose.v[i] : i;
  uint32_t seen = 0;
  for (int i = 0; i < r; i++) {
    if (perm[i] < 0 || perm[i] >= r || (seen >> perm[i] & 1)) {
      irb_error(x->b, x->v->loc, "replica groups: T(...) is not a permutation of 0..%d", r - 1);
      return false;
    }
    seen |= 1u << perm[i];
    tdims[i] = g->iota_reshape.v[perm[i]];
  }
  for (int64_t k = 0; k < total; k++) {
    /* idx is the index in the transposed array; source index: src[perm[i]] = idx[i] */
    int64_t src = 0;
    int64_t srcidx[16];
    for (int i = 0; i < r; i++)
      srcidx[perm[i]] = idx[i];
    for (int i = 0; i < r; i++)
      src = src * g->iota_reshape.v[i] + srcidx[i];
    ids[k] = src;
    for (int i = r - 1; i >= 0; i--) {
      if (++idx[i] < tdims[i])
        break;
      idx[i] = 0;
    }
  }
  int ng = (int)g->iota_group_shape.v[0], gs = (int)g->iota_group_shape.v[1];
  g->groups = ir_arena_alloc_array(&x->b->m->arena, (size_t)(ng ? ng : 1), sizeof *g->groups);
  if (!g->groups)
    return false;
  for (int i = 0; i < ng; i++)
    g->groups[i] = ir_i64_list_copy(x->b->m, ids + (int64_t)i * gs, gs);
  g->n_groups = ng;
  return true;
}

/* The location `at` bytes into v's text. */
static ir_loc loc_within(const ir_av *v, size_t at) {
  ir_loc l = v->loc;
  for (size_t i = 0; i < at && i < v->s.len; i++) {
    if (v->s.p[i] == '\n') {
      l.line++;
      l.col = 1;
    } else {
      l.col++;
    }
  }
  return l;
}

static bool mesh_replica_groups(attr_ctx *x, ir_replica_groups *g) {
  char err[256];
  size_t at;
  if (!ir_mesh_groups_expand(x->b->m, x->v->s.p, x->v->s.len, &g->groups, &g->n_groups, err, sizeof err, &at)) {
    irb_error(x->b, loc_within(x->v, at), "%s", err);
    return false;
  }
  g->mesh_text = x->v->s;
  return true;
}

static bool a_replica_groups(attr_ctx *x) {
  ir_replica_groups *g = &x->in->attrs.u.collective.replica_groups;
  ir_av *v = x->v;
  g->present = true;
  if (v->kind == AV_IOTA) {
    g->iota_form = true;
    if (!av_i64_list(x->b, v->kids[0], &g->iota_group_shape) ||
        !av_i64_list(x->b, v->kids[1], &g->iota_reshape) ||
        (v->n > 2 && !av_i64_list(x->b, v->kids[2], &g->iota_transpose)))
      return false;
    return expand_iota_groups(x, g);
  }
  if (v->kind == AV_RAW)
    return mesh_replica_groups(x, g);
  if (v->kind != AV_LIST) {
    irb_error(x->b, v->loc, "expected replica_groups={{0,1},...} or [G,S]<=[N]");
    return false;
  }
  return int_lists(x, v, &g->groups, &g->n_groups);
}
static bool a_constrain_layout(attr_ctx *x) { return BOOL(x->in->attrs.u.collective.constrain_layout); }
static bool a_global_ids(attr_ctx *x) { return BOOL(x->in->attrs.u.collective.use_global_device_ids); }
static bool a_dynamic_root(attr_ctx *x) {
  bool v;
  if (!av_bool(x->b, x->v, &v))
    return false;
  x->in->attrs.u.collective.has_dynamic_root = v;
  return true;
}
static bool a_source_target_pairs(attr_ctx *x) {
  ir_av *v = x->v;
  if (v->kind != AV_LIST) {
    irb_error(x->b, v->loc, "expected source_target_pairs={{0,1},...}");
    return false;
  }
  ir_i64_list *pairs;
  int n;
  if (!int_lists(x, v, &pairs, &n))
    return false;
  for (int i = 0; i < n; i++)
    if (pairs[i].n != 2) {
      irb_error(x->b, v->kids[i]->loc, "a source-target pair needs exactly two replica ids");
      return false;
    }
  x->in->attrs.u.collective.source_target_pairs = pairs;
  x->in->attrs.u.collective.n_source_target_pairs = n;
  return true;
}
static bool a_async_thread(attr_ctx *x) {
  if (x->v->kind != AV_STRING)
    return false;
  x->in->attrs.u.async.execution_thread = unquote(x->b, x->v);
  return true;
}
static bool a_prefetch_index(attr_ctx *x) {
  x->in->attrs.u.copy_start.has_index = true;
  return I64(x->in->attrs.u.copy_start.cross_program_prefetch_index);
}

static bool a_to_apply(attr_ctx *x) { return set_comp(x, &x->to_apply); }
static bool a_condition(attr_ctx *x) { return set_comp(x, &x->condition); }
static bool a_body(attr_ctx *x) { return set_comp(x, &x->body); }
static bool a_true(attr_ctx *x) { return set_comp(x, &x->true_c); }
static bool a_false(attr_ctx *x) { return set_comp(x, &x->false_c); }
static bool a_select(attr_ctx *x) { return set_comp(x, &x->select); }
static bool a_scatter_comp(attr_ctx *x) { return set_comp(x, &x->scatter); }
static bool name_list(attr_ctx *x, ir_av **out) {
  ir_av *v = x->v;
  if (v->kind == AV_NAME) {
    ir_av *l = irb_av(x->b, AV_LIST, v->loc, v->start, v->end);
    *out = irb_av_append(x->b, l, v);
    return *out != NULL;
  }
  if (v->kind != AV_LIST) {
    irb_error(x->b, v->loc, "expected {%%computation, ...}");
    return false;
  }
  for (int i = 0; i < v->n; i++)
    if (v->kids[i]->kind != AV_NAME) {
      irb_error(x->b, v->kids[i]->loc, "expected a computation name");
      return false;
    }
  *out = v;
  return true;
}
static bool a_branches(attr_ctx *x) { return name_list(x, &x->branches); }
static bool a_calls(attr_ctx *x) { return name_list(x, &x->calls); }
static bool a_called_list(attr_ctx *x) {
  x->in->attrs.called_list_form = true;
  return name_list(x, &x->called_list);
}

static bool a_control_preds(attr_ctx *x) {
  ir_av *v = x->v;
  ir_builder *b = x->b;
  if (v->kind != AV_LIST) {
    irb_error(b, v->loc, "expected control-predecessors={%%a, %%b}");
    return false;
  }
  x->in->common.control_predecessors =
      ir_arena_alloc_array(&b->m->arena, (size_t)(v->n ? v->n : 1), sizeof(ir_instr *));
  if (!x->in->common.control_predecessors)
    return false;
  x->in->common.n_control_predecessors = v->n;
  for (int i = 0; i < v->n; i++) {
    if (v->kids[i]->kind != AV_NAME) {
      irb_error(b, v->kids[i]->loc, "expected an instruction name");
      return false;
    }
    if (b->n_ctrl_refs == b->cap_ctrl_refs) {
      int cap = b->cap_ctrl_refs ? b->cap_ctrl_refs * 2 : 16;
      ctrl_ref *p = ir_arena_alloc_array(&b->m->arena, (size_t)cap, sizeof *p);
      if (!p)
        return false;
      if (b->n_ctrl_refs)
        memcpy(p, b->ctrl_refs, (size_t)b->n_ctrl_refs * sizeof *p);
      b->ctrl_refs = p;
      b->cap_ctrl_refs = cap;
    }
    b->ctrl_refs[b->n_ctrl_refs++] = (ctrl_ref){x->in, i, bare_name(v->kids[i]->s), v->kids[i]->loc};
  }
  return true;
}

#define VERBATIM(field)                                      \
  static bool a_##field(attr_ctx *x) {                       \
    x->in->common.field = av_text(x->b, x->v);              \
    return true;                                            \
  }
VERBATIM(sharding)
VERBATIM(metadata)
VERBATIM(frontend_attributes)
VERBATIM(statistics)
VERBATIM(origin)
VERBATIM(output_to_operand_aliasing)
#undef VERBATIM

/* parameter_replication={true,false,...}: one flag per leaf buffer of the shape (XLA's parser
 * counts them: ShapeUtil::GetLeafCount); kept as written. */
static bool a_parameter_replication(attr_ctx *x) {
  ir_str t = av_text(x->b, x->v);
  x->in->common.parameter_replication = t;
  if (!x->in->shape || t.len < 2 || t.p[0] != '{')
    return true;
  int n = 0; /* the flags written: words between the braces */
  for (size_t i = 1; i < t.len; i++)
    n += isalpha((unsigned char)t.p[i]) && !isalpha((unsigned char)t.p[i - 1]);
  int leaves = ir_shape_count_leaves(x->in->shape);
  if (n == leaves)
    return true;
  irb_error(x->b, x->v->loc, "parameter has %d leaf buffer%s, but parameter_replication has %d element%s.", leaves,
            leaves == 1 ? "" : "s", n, n == 1 ? "" : "s");
  return false;
}

/* result_accuracy={mode=default|highest} or {tolerance={atol=A, rtol=R, ulps=N}}, on the
 * unary ops XLA's parser gives it (xla/hlo/parser/hlo_parser.cc); kept as written. */
static bool takes_result_accuracy(ir_opcode op) {
  static const ir_opcode ops[] = {IR_OP_ACOS, IR_OP_ACOSH, IR_OP_ASIN, IR_OP_ASINH, IR_OP_ATANH, IR_OP_CBRT,
                                  IR_OP_COS,  IR_OP_COSH,  IR_OP_ERF,  IR_OP_EXP,   IR_OP_EXPM1, IR_OP_LOG,
                                  IR_OP_LOG1P, IR_OP_LOGISTIC, IR_OP_RSQRT, IR_OP_SIN, IR_OP_SINH, IR_OP_SQRT,
                                  IR_OP_TAN,  IR_OP_TANH,  IR_OP_ASYNC_START};
  for (size_t i = 0; i < sizeof ops / sizeof *ops; i++)
    if (ops[i] == op)
      return true;
  return false;
}
static bool accuracy_tolerance_ok(attr_ctx *x, const ir_av *t) {
  if (t->kind != AV_LIST) {
    irb_error(x->b, t->loc, "expected tolerance={atol=..., rtol=..., ulps=...}");
    return false;
  }
  for (int i = 0; i < t->n; i++) {
    const ir_av *k = t->kids[i];
    bool named = k->kind == AV_KV && (ir_str_eq(k->s, "atol") || ir_str_eq(k->s, "rtol") || ir_str_eq(k->s, "ulps"));
    if (!named || (k->kids[0]->kind != AV_INT && k->kids[0]->kind != AV_FLOAT)) {
      irb_error(x->b, k->loc, "result_accuracy tolerance takes atol=, rtol= and ulps= numbers");
      return false;
    }
  }
  return true;
}
static bool a_result_accuracy(attr_ctx *x) {
  const ir_av *v = x->v;
  if (!takes_result_accuracy(x->in->op)) {
    irb_error(x->b, v->loc, "'%s' takes no result_accuracy", ir_opcode_table[x->in->op].spelling);
    return false;
  }
  const ir_av *k = v->kind == AV_LIST && v->n == 1 ? v->kids[0] : NULL;
  if (!k || k->kind != AV_KV || !(ir_str_eq(k->s, "mode") || ir_str_eq(k->s, "tolerance"))) {
    irb_error(x->b, v->loc, "expected result_accuracy={mode=...} or {tolerance={...}}");
    return false;
  }
  const ir_av *m = k->kids[0];
  if (ir_str_eq(k->s, "tolerance"))
    return accuracy_tolerance_ok(x, m) && (x->in->common.result_accuracy = av_text(x->b, v), true);
  if (m->kind != AV_NAME || !(ir_str_eq(m->s, "default") || ir_str_eq(m->s, "highest") ||
                              ir_str_eq(m->s, "DEFAULT") || ir_str_eq(m->s, "HIGHEST"))) {
    irb_error(x->b, m->loc, "result_accuracy mode must be default or highest");
    return false;
  }
  x->in->common.result_accuracy = av_text(x->b, v);
  return true;
}

/* backend_config also keeps its position: typed-FFI custom calls parse it later and point
 * at the offending character (compiler/codegen/custom_call_ffi.c). */
static bool a_backend_config(attr_ctx *x) {
  x->in->common.backend_config = av_text(x->b, x->v);
  x->in->common.backend_config_loc = x->v->loc;
  return true;
}

enum { ANY = -1 };

/* One row per attribute name: its handler and the family it belongs to (ANY: every opcode
 * that may carry it; the handler returns false without a diagnostic when the opcode cannot,
 * and the attribute is then kept verbatim). */
typedef struct attr_row {
  const char *name;
  attr_fn fn;
  int family;
} attr_row;

static const attr_row attr_table[] = {
    {"dimensions", a_dimensions, ANY},
    {"channel_id", a_channel_id, ANY},
    {"custom_call_target", a_custom_text, IR_FAM_CUSTOM_CALL},
    {"infeed_config", a_custom_text, IR_FAM_INFEED},
    {"outfeed_config", a_custom_text, IR_FAM_OUTFEED},
    {"domain", a_domain, IR_FAM_DOMAIN},
    {"broadcast_dimensions", a_bcast_dims, ANY},
    {"auto_broadcast", a_auto_broadcast, ANY},
    {"axis", a_axis, ANY},
    {"target_shape", a_target_shape, ANY},
    {"index", a_index, IR_FAM_GET_TUPLE_ELEMENT},
    {"iota_dimension", a_iota_dimension, IR_FAM_IOTA},
    {"inferred_dimension", a_inferred_dimension, IR_FAM_RESHAPE},
    {"slice", a_slice, IR_FAM_SLICE},
    {"dynamic_slice_sizes", a_dynamic_slice_sizes, IR_FAM_DYNAMIC_SLICE},
    {"padding", a_padding, ANY},
    {"direction", a_direction, IR_FAM_COMPARE},
    {"type", a_cmp_type, IR_FAM_COMPARE},
    {"exponent_bits", a_exponent_bits, IR_FAM_REDUCE_PRECISION},
    {"mantissa_bits", a_mantissa_bits, IR_FAM_REDUCE_PRECISION},
    {"window", a_window, ANY},
    {"num_carries", a_scan_carries, IR_FAM_SCAN},
    {"is_reverse", a_scan_reverse, IR_FAM_SCAN},
    {"is_associative", a_scan_assoc, IR_FAM_SCAN},
    {"is_stable", a_is_stable, IR_FAM_SORT},
    {"k", a_k, IR_FAM_TOPK},
    {"largest", a_largest, IR_FAM_TOPK},
    {"lhs_batch_dims", a_lhs_batch, IR_FAM_DOT},
    {"rhs_batch_dims", a_rhs_batch, IR_FAM_DOT},
    {"lhs_contracting_dims", a_lhs_contracting, IR_FAM_DOT},
    {"rhs_contracting_dims", a_rhs_contracting, IR_FAM_DOT},
    {"lhs_ragged_dims", a_lhs_ragged, IR_FAM_DOT},
    {"rhs_group_dims", a_rhs_group, IR_FAM_DOT},
    {"operand_precision", a_precision, ANY},
    {"algorithm", a_algorithm, ANY},
    {"dim_labels", a_dim_labels, ANY},
    {"feature_group_count", a_feature_group_count, ANY},
    {"batch_group_count", a_batch_group_count, ANY},
    {"conv_kind", a_conv_kind, IR_FAM_CONVOLUTION},
    {"offset_dims", a_offset_dims, IR_FAM_GATHER},
    {"collapsed_slice_dims", a_collapsed, IR_FAM_GATHER},
    {"start_index_map", a_start_index_map, IR_FAM_GATHER},
    {"operand_batching_dims", a_operand_batching, IR_FAM_GATHER},
    {"start_indices_batching_dims", a_start_indices_batching, IR_FAM_GATHER},
    {"slice_sizes", a_slice_sizes, ANY},
    {"index_vector_dim", a_index_vector_dim, ANY},
    {"indices_are_sorted", a_indices_are_sorted, ANY},
    {"update_window_dims", a_update_window, IR_FAM_SCATTER},
    {"inserted_window_dims", a_inserted_window, IR_FAM_SCATTER},
    {"scatter_dims_to_operand_dims", a_scatter_dims_map, IR_FAM_SCATTER},
    {"input_batching_dims", a_input_batching, IR_FAM_SCATTER},
    {"scatter_indices_batching_dims", a_scatter_indices_batching, IR_FAM_SCATTER},
    {"unique_indices", a_unique_indices, IR_FAM_SCATTER},
    {"fft_type", a_fft_type, IR_FAM_FFT},
    {"fft_length", a_fft_length, IR_FAM_FFT},
    {"lower", a_lower, ANY},
    {"left_side", a_left_side, IR_FAM_TRIANGULAR_SOLVE},
    {"unit_diagonal", a_unit_diagonal, IR_FAM_TRIANGULAR_SOLVE},
    {"transpose_a", a_transpose_a, IR_FAM_TRIANGULAR_SOLVE},
    {"epsilon", a_epsilon, IR_FAM_BATCH_NORM},
    {"feature_index", a_feature_index, IR_FAM_BATCH_NORM},
    {"distribution", a_distribution, IR_FAM_RNG},
    {"delta", a_delta, IR_FAM_RNG_STATE},
    {"is_composite", a_is_composite, IR_FAM_CALL},
    {"kind", a_fusion_kind, IR_FAM_FUSION},
    {"api_version", a_api_version, IR_FAM_CUSTOM_CALL},
    {"custom_call_has_side_effect", a_has_side_effect, IR_FAM_CUSTOM_CALL},
    {"operand_layout_constraints", a_operand_layout_constraints, IR_FAM_CUSTOM_CALL},
    {"literal", a_cc_literal, IR_FAM_CUSTOM_CALL},
    {"schedule", a_schedule, IR_FAM_CUSTOM_CALL},
    {"padding_type", a_padding_type, IR_FAM_CUSTOM_CALL},
    {"is_host_transfer", a_is_host_transfer, ANY},
    {"outfeed_shape", a_outfeed_shape, IR_FAM_OUTFEED},
    {"replica_groups", a_replica_groups, IR_FAM_COLLECTIVE},
    {"constrain_layout", a_constrain_layout, IR_FAM_COLLECTIVE},
    {"use_global_device_ids", a_global_ids, IR_FAM_COLLECTIVE},
    {"has_dynamic_root", a_dynamic_root, IR_FAM_COLLECTIVE},
    {"source_target_pairs", a_source_target_pairs, IR_FAM_COLLECTIVE},
    {"async_execution_thread", a_async_thread, IR_FAM_ASYNC},
    {"cross_program_prefetch_index", a_prefetch_index, IR_FAM_COPY_ASYNC},
    {"to_apply", a_to_apply, ANY},
    {"condition", a_condition, IR_FAM_WHILE},
    {"body", a_body, IR_FAM_WHILE},
    {"true_computation", a_true, IR_FAM_CONDITIONAL},
    {"false_computation", a_false, IR_FAM_CONDITIONAL},
    {"branch_computations", a_branches, IR_FAM_CONDITIONAL},
    {"calls", a_calls, ANY},
    {"select", a_select, IR_FAM_SELECT_AND_SCATTER},
    {"scatter", a_scatter_comp, IR_FAM_SELECT_AND_SCATTER},
    {"called_computations", a_called_list, IR_FAM_CUSTOM_CALL},
    {"control-predecessors", a_control_preds, ANY},
    {"sharding", a_sharding, ANY},
    {"metadata", a_metadata, ANY},
    {"frontend_attributes", a_frontend_attributes, ANY},
    {"statistics", a_statistics, ANY},
    {"origin", a_origin, ANY},
    {"result_accuracy", a_result_accuracy, ANY},
    {"parameter_replication", a_parameter_replication, ANY},
    {"output_to_operand_aliasing", a_output_to_operand_aliasing, ANY},
    {"backend_config", a_backend_config, ANY},
};

/* Families whose attributes are family-specific need the opcode to match; for ANY rows the
 * handler decides. */
static bool wants_attr(const attr_row *r, const ir_instr *in) {
  if (r->family == ANY)
    return true;
  if ((int)fam_of(in) == r->family)
    return true;
  /* Shared spellings across families. */
  if (r->fn == a_index_vector_dim || r->fn == a_indices_are_sorted)
    return fam_of(in) == IR_FAM_GATHER || fam_of(in) == IR_FAM_SCATTER;
  if (r->fn == a_to_apply)
    return true;
  return false;
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
    if (!map_find(&b->instrs, s))
      return ir_intern(b->m, buf, (size_t)n);
  }
}

/* Enters a name into the computation's table.  A name written in the text that hloc had
 * already made up for an earlier p#0 or nested operand takes the name over; the made-up
 * instruction is renamed. */
static bool register_instr_as(ir_builder *b, ir_instr *in, bool generated) {
  name_slot *prev = map_find(&b->instrs, in->name);
  if (prev && prev->generated && !generated) {
    ir_instr *g = prev->value;
    *prev = (name_slot){in->name, in, in->loc, false};
    g->name = unique_name(b, g->name, "");
    if (!g->name.p || !map_put_slot(&b->m->arena, &b->instrs, (name_slot){g->name, g, g->loc, true})) {
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
  if (!map_put_slot(&b->m->arena, &b->instrs, (name_slot){in->name, in, in->loc, generated})) {
    irb_oom(b, in->loc);
    return false;
  }
  return true;
}

static bool register_instr(ir_builder *b, ir_instr *in) { return register_instr_as(b, in, false); }

static ir_instr *make_instr(ir_builder *b, ir_opcode op, ir_str name, ir_loc loc, ir_shape *shape,
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
    if (!av_i64(b, v->kids[i], &k))
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
    ir_instr *g = make_instr(b, IR_OP_GET_TUPLE_ELEMENT, unique_name(b, base->name, "get-tuple-element"),
                             v->loc, s, &cur, 1);
    if (!g || !register_instr_as(b, g, true))
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
    ir_instr *in = make_instr(b, op, name, v->loc, v->shape, NULL, 0);
    return in && build_operands(b, in, v) && register_instr_as(b, in, true) ? in : NULL;
  }
  if (op == IR_OP_CONSTANT) {
    if (!v->shape) {
      irb_error(b, v->loc, "a nested constant needs its shape");
      return NULL;
    }
    ir_instr *in = make_instr(b, op, name, v->loc, v->shape, NULL, 0);
    if (!in || !(in->attrs.u.literal = literal_from_av(b, v->shape, v->kids[0])))
      return NULL;
    return register_instr_as(b, in, true) ? in : NULL;
  }
  ir_instr *ops[64];
  if (v->n > 64) {
    irb_error(b, v->loc, "too many operands in a nested instruction");
    return NULL;
  }
  for (int i = 0; i < v->n; i++)
    if (!(ops[i] = resolve_operand(b, v->kids[i])))
      return NULL;
  ir_instr *in = make_instr(b, op, name, v->loc, v->shape, ops, v->n);
  return in && register_instr_as(b, in, true) ? in : NULL;
}

/* In single-instruction input, an operand nothing defines becomes the next parameter (XLA's
 * create_missing_instruction hook): named as written, or "_N" when only its shape is. */
static ir_instr *single_parameter(ir_builder *b, ir_av *v, ir_str n) {
  int k = b->n_single_params++;
  if (!n.p) {
    char buf[32];
    int len = snprintf(buf, sizeof buf, "_%d", k);
    n = ir_intern(b->m, buf, (size_t)len);
  }
  ir_instr *in = n.p ? make_instr(b, IR_OP_PARAMETER, n, v->loc, v->shape, NULL, 0) : NULL;
  if (!in || !register_instr_as(b, in, false))
    return NULL;
  in->attrs.u.parameter_number = k;
  return in;
}

/* Does operand v name the instruction being defined (`%a = f32[] add(%a, %p)`)? */
static bool uses_itself(const ir_instr *in, const ir_av *v) {
  if (v->kind != AV_OPERAND)
    return false;
  ir_str n = bare_name(v->s);
  return n.len == in->name.len && n.len && memcmp(n.p, in->name.p, n.len) == 0;
}

static ir_instr *resolve_operand(ir_builder *b, ir_av *v) {
  if (v->kind == AV_NESTED)
    return nested_instr(b, v);
  if (v->kind != AV_OPERAND) {
    irb_error(b, v->loc, "expected an operand name");
    return NULL;
  }
  ir_str n = bare_name(v->s);
  name_slot *s = n.p ? map_find(&b->instrs, n) : NULL;
  if (!s && b->single && v->shape && !v->n)
    return single_parameter(b, v, n);
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

static bool add_comp_ref(ir_builder *b, comp_ref r) {
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

/* Assembles in->called in XLA's order from the attributes seen. */
/* Appends one reference to refs (sized by the caller). */
static void push_ref(comp_ref *refs, int *n, const comp_ref *r) {
  if (r->name.p)
    refs[(*n)++] = *r;
}

static bool assemble_called(attr_ctx *x) {
  ir_av *lists[] = {x->branches, x->calls, x->called_list};
  int cap = 7;  /* the single-computation roles */
  for (int l = 0; l < 3; l++)
    cap += lists[l] ? lists[l]->n : 0;
  comp_ref *refs = ir_arena_alloc_array(&x->b->m->arena, (size_t)cap, sizeof *refs);
  if (!refs)
    return false;
  int n = 0;
  const comp_ref *singles1[] = {&x->to_apply, &x->condition, &x->body, &x->true_c, &x->false_c};
  for (int i = 0; i < 5; i++)
    push_ref(refs, &n, singles1[i]);
  for (int l = 0; l < 2; l++)
    for (int i = 0; lists[l] && i < lists[l]->n; i++)
      push_ref(refs, &n, &(comp_ref){x->in, 0, bare_name(lists[l]->kids[i]->s), lists[l]->kids[i]->loc});
  push_ref(refs, &n, &x->select);
  push_ref(refs, &n, &x->scatter);
  for (int i = 0; lists[2] && i < lists[2]->n; i++)
    push_ref(refs, &n, &(comp_ref){x->in, 0, bare_name(lists[2]->kids[i]->s), lists[2]->kids[i]->loc});
  if (!n)
    return true;
  x->in->called = ir_arena_alloc_array(&x->b->m->arena, (size_t)n, sizeof(ir_computation *));
  if (!x->in->called)
    return false;
  x->in->n_called = n;
  for (int i = 0; i < n; i++) {
    refs[i].in = x->in;
    refs[i].slot = i;
    if (!add_comp_ref(x->b, refs[i]))
      return false;
  }
  return true;
}

/* Whether attribute i repeats an earlier name: a scan for the usual handful, a hash table
 * (built lazily in *seen) for long lists, so that a hostile line stays linear. */
static bool repeats_earlier(ir_builder *b, ir_attr_list *attrs, int i, name_map *seen) {
  ir_attr_in *a = &attrs->items[i];
  if (attrs->n <= 16) {
    for (int j = 0; j < i; j++)
      if (attrs->items[j].name.len == a->name.len && memcmp(attrs->items[j].name.p, a->name.p, a->name.len) == 0)
        return true;
    return false;
  }
  if (map_find(seen, a->name))
    return true;
  if (!map_put(&b->m->arena, seen, a->name, a, a->loc))
    irb_oom(b, a->loc);
  return false;
}

static void apply_attrs(ir_builder *b, ir_instr *in, ir_attr_list *attrs) {
  attr_ctx x = {.b = b, .in = in};
  name_map seen = {0};
  for (int i = 0; i < attrs->n; i++) {
    ir_attr_in *a = &attrs->items[i];
    if (repeats_earlier(b, attrs, i, &seen)) {
      irb_error(b, a->loc, "duplicate attribute '%s'", a->name.p);
      return;
    }
    if (b->oom)
      return;
    const attr_row *row = NULL;
    for (size_t k = 0; k < sizeof attr_table / sizeof *attr_table; k++)
      if (ir_str_eq(a->name, attr_table[k].name)) {
        row = &attr_table[k];
        break;
      }
    x.a = a;
    x.v = a->value;
    int errs = b->diags->n_errors;
    if (row && wants_attr(row, in) && row->fn(&x))
      continue;
    if (b->diags->n_errors != errs)
      return;
    add_raw(b, &in->common.unknown, &in->common.n_unknown, a->name, av_text(b, a->value));
  }
  if (!assemble_called(&x))
    irb_oom(b, in->loc);
}

typedef struct required_attr {
  ir_opcode op;
  const char *attr;
} required_attr;

static const required_attr required_attrs[] = {
    {IR_OP_IOTA, "iota_dimension"}, {IR_OP_GET_TUPLE_ELEMENT, "index"},
    {IR_OP_TRANSPOSE, "dimensions"}, {IR_OP_REVERSE, "dimensions"},
    {IR_OP_CONCATENATE, "dimensions"}, {IR_OP_SLICE, "slice"},
    {IR_OP_DYNAMIC_SLICE, "dynamic_slice_sizes"}, {IR_OP_PAD, "padding"},
    {IR_OP_REDUCE, "to_apply"}, {IR_OP_REDUCE, "dimensions"}, {IR_OP_REDUCE_WINDOW, "to_apply"},
    {IR_OP_SELECT_AND_SCATTER, "select"}, {IR_OP_SELECT_AND_SCATTER, "scatter"},
    {IR_OP_MAP, "to_apply"}, {IR_OP_SORT, "dimensions"}, {IR_OP_SORT, "to_apply"},
    {IR_OP_COMPARE, "direction"}, {IR_OP_CONVOLUTION, "dim_labels"},
    {IR_OP_GATHER, "offset_dims"}, {IR_OP_GATHER, "collapsed_slice_dims"},
    {IR_OP_GATHER, "start_index_map"}, {IR_OP_GATHER, "index_vector_dim"},
    {IR_OP_GATHER, "slice_sizes"}, {IR_OP_SCATTER, "update_window_dims"},
    {IR_OP_SCATTER, "inserted_window_dims"}, {IR_OP_SCATTER, "scatter_dims_to_operand_dims"},
    {IR_OP_SCATTER, "index_vector_dim"}, {IR_OP_SCATTER, "to_apply"},
    {IR_OP_FFT, "fft_type"}, {IR_OP_FFT, "fft_length"},
    {IR_OP_BATCH_NORM_TRAINING, "epsilon"}, {IR_OP_BATCH_NORM_TRAINING, "feature_index"},
    {IR_OP_BATCH_NORM_INFERENCE, "epsilon"}, {IR_OP_BATCH_NORM_INFERENCE, "feature_index"},
    {IR_OP_BATCH_NORM_GRAD, "epsilon"}, {IR_OP_BATCH_NORM_GRAD, "feature_index"},
    {IR_OP_REDUCE_PRECISION, "exponent_bits"}, {IR_OP_REDUCE_PRECISION, "mantissa_bits"},
    {IR_OP_RNG, "distribution"}, {IR_OP_RNG_BIT_GENERATOR, "algorithm"},
    {IR_OP_RNG_GET_AND_UPDATE_STATE, "delta"}, {IR_OP_WHILE, "condition"},
    {IR_OP_WHILE, "body"}, {IR_OP_CALL, "to_apply"}, {IR_OP_FUSION, "calls"},
    {IR_OP_CUSTOM_CALL, "custom_call_target"}, {IR_OP_ALL_REDUCE, "to_apply"},
    {IR_OP_ALL_REDUCE_START, "to_apply"}, {IR_OP_REDUCE_SCATTER, "to_apply"},
    {IR_OP_REDUCE_SCATTER, "dimensions"}, {IR_OP_ALL_GATHER, "dimensions"},
    {IR_OP_ALL_GATHER_START, "dimensions"}, {IR_OP_COLLECTIVE_PERMUTE, "source_target_pairs"},
    {IR_OP_COLLECTIVE_PERMUTE_START, "source_target_pairs"}, {IR_OP_TOPK, "k"},
    {IR_OP_SCAN, "to_apply"}, {IR_OP_SCAN, "dimensions"}, {IR_OP_DOMAIN, "domain"},
};

static bool has_attr(const ir_attr_list *attrs, const char *name) {
  for (int i = 0; i < attrs->n; i++)
    if (ir_str_eq(attrs->items[i].name, name))
      return true;
  return false;
}

static void check_required(ir_builder *b, ir_instr *in, const ir_attr_list *attrs) {
  for (size_t i = 0; i < sizeof required_attrs / sizeof *required_attrs; i++)
    if (required_attrs[i].op == in->op && !has_attr(attrs, required_attrs[i].attr)) {
      irb_error(b, in->loc, "%%%s: attribute '%s' is required for opcode '%s'", in->name.p,
                required_attrs[i].attr, ir_opcode_table[in->op].spelling);
      return;
    }
  if (fam_of(in) == IR_FAM_COLLECTIVE && in->attrs.u.collective.use_global_device_ids && !in->attrs.channel_id) {
    /* as XLA's parser: global device ids name devices across partitions, which needs a channel */
    irb_error(b, in->loc, "%%%s: use_global_device_ids=true needs a channel_id", in->name.p);
    return;
  }
  if (fam_of(in) == IR_FAM_COLLECTIVE && in->attrs.u.collective.use_global_device_ids &&
      in->attrs.u.collective.replica_groups.n_groups == 0) {
    irb_error(b, in->loc, "%%%s: use_global_device_ids=true needs replica_groups naming the devices", in->name.p);
    return;
  }
  if (in->op == IR_OP_CONDITIONAL && in->n_operands > 0 && in->operands[0]->shape &&
      in->operands[0]->shape->et == IR_PRED && has_attr(attrs, "branch_computations")) {
    /* as XLA's parser: the attribute set follows the type of the branch operand */
    irb_error(b, in->loc, "%%%s: a conditional on a pred takes true_computation and false_computation, not branch_computations",
              in->name.p);
    return;
  }
  if (in->op == IR_OP_CONDITIONAL && !has_attr(attrs, "branch_computations") &&
      !(has_attr(attrs, "true_computation") && has_attr(attrs, "false_computation")))
    irb_error(b, in->loc,
              "%%%s: conditional needs true_computation and false_computation, or branch_computations",
              in->name.p);
  if (in->op == IR_OP_BROADCAST && !has_attr(attrs, "dimensions") && !has_attr(attrs, "auto_broadcast") &&
      in->n_operands == 1 && in->operands[0]->shape && in->operands[0]->shape->rank > 0)
    irb_error(b, in->loc, "%%%s: attribute 'dimensions' is required for opcode 'broadcast'", in->name.p);
}

static bool build_operands(ir_builder *b, ir_instr *in, ir_av *args) {
  int n = args ? args->n : 0;
  if (in->op == IR_OP_PARAMETER) {
    int64_t k;
    if (n != 1 || args->kids[0]->kind != AV_INT || !av_i64(b, args->kids[0], &k) || k < 0) {
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
  ir_str n = bare_name(name->s);
  if (!shape && needs_written_shape(op)) {
    irb_error(b, opcode->loc, "%%%s: the result shape of '%s' must be written", n.p, opcode->s.p);
    return;
  }
  ir_instr *in = make_instr(b, op, n, loc, shape, NULL, 0);
  if (!in)
    return;
  int errors_before = b->diags->n_errors;
  build_instr(b, in, root, opcode, wrapped, args, attrs);
  if (b->diags->n_errors != errors_before) {
    /* Keep the name so that its users do not report it again as undefined. */
    in->pass_data = &b->gensym;
    if (!map_find(&b->instrs, in->name))
      map_put(&b->m->arena, &b->instrs, in->name, in, in->loc);
  }
}

void irb_single_instruction(ir_builder *b, ir_av *name, ir_shape *shape, ir_av *opcode, ir_av *args,
                            ir_attr_list *attrs) {
  if (!opcode)
    return;
  ir_av *cname = irb_av(b, AV_NAME, opcode->loc, opcode->start, opcode->start);
  if (!cname)
    return;
  cname->s = b->m->name.p ? b->m->name : ir_intern(b->m, "module", 6);
  irb_begin_computation(b, cname, true, NULL, NULL);
  b->single = true;
  irb_instruction(b, true, name ? name : cname, shape, opcode, args, attrs);
  b->single = false;
  ir_attr_list none = {0};
  irb_end_computation(b, &none);
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

/* A compact start (dot-start(...), custom-call-start(...)) wraps one op: as XLA's parser does,
 * build the computation that runs it (one parameter per operand, the op as ROOT with the
 * start's attributes), hidden from the printer, which writes the compact form back. */
static void desugar_compact_start(ir_builder *b, ir_instr *in, ir_opcode wrapped, ir_attr_list *attrs) {
  const ir_shape *s = in->shape;
  if (!s || s->et != IR_TUPLE || s->n_elems < 2 || s->elems[0]->et != IR_TUPLE ||
      (s->elems[1]->et == IR_TUPLE && s->elems[1]->n_elems == 0) || s->elems[0]->n_elems != in->n_operands)
    return; /* the verifier reports the shape; a late-bound form has no op to build yet */
  irb_begin_inline(b, in->loc);
  ir_computation *c = b->cur;
  if (!c) {
    irb_end_inline(b, in->loc, 0, 0);
    return;
  }
  ir_instr *params[64];
  int n = in->n_operands < 64 ? in->n_operands : 64;
  for (int i = 0; i < n; i++) {
    char buf[32];
    int len = snprintf(buf, sizeof buf, "p%d", i);
    params[i] = make_instr(b, IR_OP_PARAMETER, ir_intern(b->m, buf, (size_t)len), in->loc, s->elems[0]->elems[i],
                           NULL, 0);
    if (!params[i] || !register_instr_as(b, params[i], false))
      break;
    params[i]->attrs.u.parameter_number = i;
  }
  ir_instr *r = make_instr(b, wrapped, ir_intern(b->m, ir_opcode_table[wrapped].spelling,
                                                  strlen(ir_opcode_table[wrapped].spelling)),
                           in->loc, s->elems[1], params, n);
  if (r && register_instr_as(b, r, false)) {
    r->attrs.bc.axis = -1;
    if (fam_of(r) == IR_FAM_CONVOLUTION)
      r->attrs.u.conv.feature_group_count = r->attrs.u.conv.batch_group_count = 1;
    else if (fam_of(r) == IR_FAM_CUSTOM_CALL)
      r->attrs.u.custom_call.feature_group_count = r->attrs.u.custom_call.batch_group_count = 1;
    else if (fam_of(r) == IR_FAM_TOPK)
      r->attrs.u.topk.largest = true;
    ir_attr_list own = {0};
    for (int i = 0; i < attrs->n; i++) /* the wrapper's own attributes stay on the start */
      if (!ir_str_eq(attrs->items[i].name, "async_execution_thread"))
        irb_attr_append(b, &own, attrs->items[i].name, attrs->items[i].loc, attrs->items[i].value);
    apply_attrs(b, r, &own);
    check_required(b, r, &own);
    c->root = r;
    b->cur_has_root = true;
  }
  c->hidden = true;
  irb_end_inline(b, in->loc, 0, 0);
  in->attrs.u.async.wrapped_comp = c;
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
    if (!(in->attrs.u.literal = literal_from_av(b, shape, args)))
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
  apply_attrs(b, in, attrs);
  check_required(b, in, attrs);
  if (in->op == IR_OP_ASYNC_START && wrapped != IR_OP_COUNT && wrapped != IR_OP_CALL)
    desugar_compact_start(b, in, wrapped, attrs);
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
    name_slot *s = map_find(&b->comps, r->name);
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
