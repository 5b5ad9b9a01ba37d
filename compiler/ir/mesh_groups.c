/* mesh_groups.c — reads XLA's mesh-axes replica groups text and expands it into explicit
 * groups (the form and its meaning are described in mesh_groups.h).
 *
 * Each mesh axis is cut into components at every boundary a sub-axis reference names (an
 * axis of 8 with references a:(1)2 and a:(4)2 becomes three components of 2); a component has
 * a size and a stride in the row-major device array.  The components the references cover,
 * in reference order, index the devices of a group; the others, in mesh order, index groups.
 */
#include "ir/mesh_groups.h"

#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

enum { MG_MAX_AXES = 16, MG_MAX_REFS = 32, MG_MAX_COMPONENTS = 64, MG_MAX_LISTED_IDS = 4096, MG_MAX_DEVICES = 1 << 20 };

typedef struct mg_axis {
  const char *name;
  size_t name_len;
  int64_t size;
} mg_axis;

typedef struct mg_ref {
  int axis;
  int64_t pre, size; /* the sub-axis [pre, pre*size) of the axis, in "devices before" units */
  size_t at;         /* where it was written, for messages */
} mg_ref;

typedef struct mg_component {
  int axis;
  int64_t lo, hi;   /* boundaries within the axis: size hi/lo */
  int64_t stride;   /* in the row-major device array */
  int ref;          /* the reference covering it, or -1 */
} mg_component;

typedef struct mg_parser {
  const char *s;
  size_t len, pos;
  char *err;
  size_t err_size, *err_at;
  mg_axis axes[MG_MAX_AXES];
  int n_axes;
  mg_ref refs[MG_MAX_REFS];
  int n_refs;
  int64_t ids[MG_MAX_LISTED_IDS]; /* an explicit device_ids list */
  int n_ids;
  int64_t iota_dims[MG_MAX_AXES], iota_perm[MG_MAX_AXES];
  int n_iota_dims, n_iota_perm;
  bool has_ids, ids_iota;
} mg_parser;

HLO_PRINTF(2, 3) static bool fail(mg_parser *p, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(p->err, p->err_size, fmt, ap);
  va_end(ap);
  *p->err_at = p->pos < p->len ? p->pos : p->len;
  return false;
}

/* ---- reading the text ---- */

static void skip_ws(mg_parser *p) {
  while (p->pos < p->len && (p->s[p->pos] == ' ' || p->s[p->pos] == '\t' || p->s[p->pos] == '\n' ||
                             p->s[p->pos] == '\r'))
    p->pos++;
}

static bool accept(mg_parser *p, const char *word) {
  skip_ws(p);
  size_t n = strlen(word);
  if (p->len - p->pos < n || memcmp(p->s + p->pos, word, n) != 0)
    return false;
  p->pos += n;
  return true;
}

static bool expect(mg_parser *p, const char *word) {
  return accept(p, word) || fail(p, "mesh replica groups: expected '%s'", word);
}

static bool read_int(mg_parser *p, int64_t *out) {
  skip_ws(p);
  size_t start = p->pos;
  int64_t v = 0;
  while (p->pos < p->len && p->s[p->pos] >= '0' && p->s[p->pos] <= '9') {
    if (v > (INT64_MAX - 9) / 10)
      return fail(p, "mesh replica groups: number too large");
    v = v * 10 + (p->s[p->pos++] - '0');
  }
  if (p->pos == start)
    return fail(p, "mesh replica groups: expected a number");
  *out = v;
  return true;
}

static bool is_name_char(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
         c == '.' || c == '$';
}

/* An axis name: 'quoted', "quoted" or bare. */
static bool read_name(mg_parser *p, const char **name, size_t *len) {
  skip_ws(p);
  if (p->pos < p->len && (p->s[p->pos] == '\'' || p->s[p->pos] == '"')) {
    char q = p->s[p->pos++];
    size_t start = p->pos;
    while (p->pos < p->len && p->s[p->pos] != q)
      p->pos++;
    if (p->pos >= p->len)
      return fail(p, "mesh replica groups: unterminated axis name");
    *name = p->s + start;
    *len = p->pos++ - start;
    return true;
  }
  size_t start = p->pos;
  while (p->pos < p->len && is_name_char(p->s[p->pos]))
    p->pos++;
  if (p->pos == start)
    return fail(p, "mesh replica groups: expected an axis name");
  *name = p->s + start;
  *len = p->pos - start;
  return true;
}

/* int (',' int)* up to `close`; into v[max]. */
static bool read_ints(mg_parser *p, int64_t *v, int max, int *n, const char *close) {
  *n = 0;
  if (accept(p, close))
    return true;
  do {
    if (*n == max)
      return fail(p, "mesh replica groups: more than %d numbers in a list", max);
    if (!read_int(p, &v[(*n)++]))
      return false;
  } while (accept(p, ","));
  return expect(p, close);
}

static bool read_axes(mg_parser *p, const char *close) {
  do {
    if (p->n_axes == MG_MAX_AXES)
      return fail(p, "mesh replica groups: more than %d mesh axes", MG_MAX_AXES);
    mg_axis *a = &p->axes[p->n_axes];
    if (!read_name(p, &a->name, &a->name_len) || !expect(p, "=") || !read_int(p, &a->size))
      return false;
    if (a->size < 1)
      return fail(p, "mesh replica groups: axis '%.*s' has size 0", (int)a->name_len, a->name);
    for (int i = 0; i < p->n_axes; i++)
      if (p->axes[i].name_len == a->name_len && memcmp(p->axes[i].name, a->name, a->name_len) == 0)
        return fail(p, "mesh replica groups: axis '%.*s' named twice", (int)a->name_len, a->name);
    p->n_axes++;
  } while (accept(p, ","));
  return expect(p, close);
}

/* device_ids=(i, j, ...) or device_ids=([dims]T(perm)) */
static bool read_device_ids(mg_parser *p) {
  if (!expect(p, "device_ids") || !expect(p, "=") || !expect(p, "("))
    return false;
  p->has_ids = true;
  if (accept(p, "[")) {
    p->ids_iota = true;
    if (!read_ints(p, p->iota_dims, MG_MAX_AXES, &p->n_iota_dims, "]"))
      return false;
    if (accept(p, "T(") && !read_ints(p, p->iota_perm, MG_MAX_AXES, &p->n_iota_perm, ")"))
      return false;
    return expect(p, ")");
  }
  return read_ints(p, p->ids, MG_MAX_LISTED_IDS, &p->n_ids, ")");
}

static int find_axis(const mg_parser *p, const char *name, size_t len) {
  for (int i = 0; i < p->n_axes; i++)
    if (p->axes[i].name_len == len && memcmp(p->axes[i].name, name, len) == 0)
      return i;
  return -1;
}

/* name or name:(pre)size */
static bool read_ref(mg_parser *p) {
  if (p->n_refs == MG_MAX_REFS)
    return fail(p, "mesh replica groups: more than %d axes in a group", MG_MAX_REFS);
  skip_ws(p);
  mg_ref *r = &p->refs[p->n_refs];
  r->at = p->pos;
  const char *name;
  size_t len;
  if (!read_name(p, &name, &len))
    return false;
  r->axis = find_axis(p, name, len);
  if (r->axis < 0) {
    p->pos = r->at;
    return fail(p, "mesh replica groups: '%.*s' is not an axis of the mesh", (int)len, name);
  }
  int64_t full = p->axes[r->axis].size;
  r->pre = 1;
  r->size = full;
  if (accept(p, ":")) {
    if (!expect(p, "(") || !read_int(p, &r->pre) || !expect(p, ")") || !read_int(p, &r->size))
      return false;
    if (r->pre < 1 || r->size < 1 || full % r->pre != 0 || (full / r->pre) % r->size != 0) {
      p->pos = r->at;
      return fail(p, "mesh replica groups: sub-axis (%lld)%lld does not divide axis '%.*s' of size %lld",
                  (long long)r->pre, (long long)r->size, (int)len, name, (long long)full);
    }
    if (r->size == full) {
      p->pos = r->at;
      return fail(p, "mesh replica groups: a sub-axis of '%.*s' must be smaller than the axis", (int)len, name);
    }
  }
  p->n_refs++;
  return true;
}

static bool read_text(mg_parser *p) {
  if (accept(p, "@mesh<")) {
    if (!read_axes(p, ">"))
      return false;
  } else if (accept(p, "mesh[")) {
    if (!read_axes(p, "]"))
      return false;
  } else {
    return fail(p, "mesh replica groups: expected mesh[...] or @mesh<...>");
  }
  if (accept(p, ",") && !read_device_ids(p))
    return false;
  if (!expect(p, "{"))
    return false;
  if (!accept(p, "}")) {
    do {
      if (!read_ref(p))
        return false;
    } while (accept(p, ","));
    if (!expect(p, "}"))
      return false;
  }
  skip_ws(p);
  if (p->pos != p->len)
    return fail(p, "mesh replica groups: unexpected text after '}'");
  if (p->n_refs == 0)
    return fail(p, "mesh replica groups: the group lists no axes (one device per group)");
  return true;
}

/* ---- the device array ---- */

static bool device_count(mg_parser *p, int64_t *total) {
  int64_t n = 1;
  for (int i = 0; i < p->n_axes; i++) {
    if (p->axes[i].size > MG_MAX_DEVICES || n * p->axes[i].size > MG_MAX_DEVICES)
      return fail(p, "mesh replica groups: more than %d devices", MG_MAX_DEVICES);
    n *= p->axes[i].size;
  }
  *total = n;
  return true;
}

/* ids[k]: the device at row-major position k of the mesh. */
static bool fill_device_ids(mg_parser *p, int64_t *ids, int64_t total) {
  if (!p->has_ids) {
    for (int64_t k = 0; k < total; k++)
      ids[k] = k;
    return true;
  }
  if (!p->ids_iota) {
    if (p->n_ids != total)
      return fail(p, "mesh replica groups: device_ids lists %d devices, the mesh has %lld", p->n_ids,
                  (long long)total);
    for (int64_t k = 0; k < total; k++) {
      if (p->ids[k] >= total)
        return fail(p, "mesh replica groups: device id %lld is outside the mesh", (long long)p->ids[k]);
      ids[k] = p->ids[k];
    }
    return true;
  }
  /* [dims]T(perm): 0..total-1 reshaped to dims, transposed by perm, read row-major. */
  int r = p->n_iota_dims;
  int64_t count = 1, perm[MG_MAX_AXES], tdims[MG_MAX_AXES], idx[MG_MAX_AXES] = {0};
  for (int i = 0; i < r; i++)
    count = p->iota_dims[i] > 0 && count <= MG_MAX_DEVICES ? count * p->iota_dims[i] : MG_MAX_DEVICES + 1;
  if (count != total)
    return fail(p, "mesh replica groups: device_ids does not describe the mesh's %lld devices", (long long)total);
  if (p->n_iota_perm && p->n_iota_perm != r)
    return fail(p, "mesh replica groups: device_ids T(...) must permute %d dimensions", r);
  uint32_t seen = 0;
  for (int i = 0; i < r; i++) {
    perm[i] = p->n_iota_perm ? p->iota_perm[i] : i;
    if (perm[i] >= r || (seen >> perm[i] & 1))
      return fail(p, "mesh replica groups: device_ids T(...) is not a permutation");
    seen |= 1u << perm[i];
    tdims[i] = p->iota_dims[perm[i]];
  }
  for (int64_t k = 0; k < total; k++) {
    int64_t src[MG_MAX_AXES], flat = 0;
    for (int i = 0; i < r; i++)
      src[perm[i]] = idx[i];
    for (int i = 0; i < r; i++)
      flat = flat * p->iota_dims[i] + src[i];
    ids[k] = flat;
    for (int i = r - 1; i >= 0; i--) {
      if (++idx[i] < tdims[i])
        break;
      idx[i] = 0;
    }
  }
  return true;
}

/* ---- components ---- */

static void sort_unique(int64_t *v, int *n) {
  for (int i = 1; i < *n; i++)
    for (int j = i; j > 0 && v[j - 1] > v[j]; j--) {
      int64_t t = v[j];
      v[j] = v[j - 1];
      v[j - 1] = t;
    }
  int m = 0;
  for (int i = 0; i < *n; i++)
    if (m == 0 || v[m - 1] != v[i])
      v[m++] = v[i];
  *n = m;
}

/* Cuts every axis at the boundaries its references name; checks that references of one axis
 * neither overlap nor repeat and that their boundaries divide one another. */
static bool make_components(mg_parser *p, mg_component *c, int *n_c) {
  int64_t axis_stride = 1;
  int n = 0;
  for (int a = p->n_axes - 1; a >= 0; a--) {
    int64_t b[2 + 2 * MG_MAX_REFS];
    int nb = 0;
    b[nb++] = 1;
    b[nb++] = p->axes[a].size;
    for (int r = 0; r < p->n_refs; r++)
      if (p->refs[r].axis == a) {
        b[nb++] = p->refs[r].pre;
        b[nb++] = p->refs[r].pre * p->refs[r].size;
      }
    sort_unique(b, &nb);
    for (int i = 0; i + 1 < nb; i++)
      if (b[i + 1] % b[i] != 0)
        return fail(p, "mesh replica groups: the sub-axes of '%.*s' overlap or cannot coexist",
                    (int)p->axes[a].name_len, p->axes[a].name);
    /* components of this axis, minor first (we walk axes minor to major, then reverse) */
    for (int i = nb - 2; i >= 0; i--) {
      if (n == MG_MAX_COMPONENTS)
        return fail(p, "mesh replica groups: too many sub-axes");
      c[n] = (mg_component){a, b[i], b[i + 1], axis_stride * (p->axes[a].size / b[i + 1]), -1};
      n++;
    }
    axis_stride *= p->axes[a].size;
  }
  for (int i = 0; i < n / 2; i++) {
    mg_component t = c[i];
    c[i] = c[n - 1 - i];
    c[n - 1 - i] = t;
  }
  for (int r = 0; r < p->n_refs; r++) {
    const mg_ref *ref = &p->refs[r];
    for (int i = 0; i < n; i++) {
      if (c[i].axis != ref->axis || c[i].lo < ref->pre || c[i].hi > ref->pre * ref->size)
        continue;
      if (c[i].ref >= 0) {
        p->pos = ref->at;
        return fail(p, "mesh replica groups: axis '%.*s' is listed twice or its sub-axes overlap",
                    (int)p->axes[ref->axis].name_len, p->axes[ref->axis].name);
      }
      c[i].ref = r;
    }
  }
  *n_c = n;
  return true;
}

/* ---- expansion ---- */

/* Row-major walk over the dimensions dims[n]: advances idx, false after the last. */
static bool next_index(int64_t *idx, const int64_t *dims, int n) {
  for (int i = n - 1; i >= 0; i--) {
    if (++idx[i] < dims[i])
      return true;
    idx[i] = 0;
  }
  return false;
}

static int64_t offset_of(const int64_t *idx, const int64_t *strides, int n) {
  int64_t off = 0;
  for (int i = 0; i < n; i++)
    off += idx[i] * strides[i];
  return off;
}

bool ir_mesh_groups_expand(ir_module *m, const char *text, size_t len, ir_i64_list **groups,
                           int *n_groups, char *err, size_t err_size, size_t *err_at) {
  mg_parser *p = ir_arena_alloc(&m->arena, sizeof *p);
  if (!p) {
    snprintf(err, err_size, "out of memory");
    *err_at = 0;
    return false;
  }
  memset(p, 0, sizeof *p);
  p->s = text;
  p->len = len;
  p->err = err;
  p->err_size = err_size;
  p->err_at = err_at;
  int64_t total = 0;
  mg_component c[MG_MAX_COMPONENTS];
  int n_c = 0;
  if (!read_text(p) || !device_count(p, &total) || !make_components(p, c, &n_c))
    return false;
  int64_t *ids = ir_arena_alloc_array(&m->arena, (size_t)total, sizeof *ids);
  if (!ids)
    return fail(p, "out of memory");
  if (!fill_device_ids(p, ids, total))
    return false;

  /* member dimensions in reference order (major first within a reference), group dimensions
   * in mesh order */
  int64_t mdims[MG_MAX_COMPONENTS], mstr[MG_MAX_COMPONENTS], gdims[MG_MAX_COMPONENTS],
      gstr[MG_MAX_COMPONENTS];
  int nm = 0, ng = 0;
  int64_t group_size = 1, count = 1;
  for (int r = 0; r < p->n_refs; r++)
    for (int i = 0; i < n_c; i++)
      if (c[i].ref == r) {
        mdims[nm] = c[i].hi / c[i].lo;
        mstr[nm++] = c[i].stride;
        group_size *= c[i].hi / c[i].lo;
      }
  for (int i = 0; i < n_c; i++)
    if (c[i].ref < 0) {
      gdims[ng] = c[i].hi / c[i].lo;
      gstr[ng++] = c[i].stride;
      count *= c[i].hi / c[i].lo;
    }
  ir_i64_list *out = ir_arena_alloc_array(&m->arena, (size_t)count, sizeof *out);
  int64_t *members = ir_arena_alloc_array(&m->arena, (size_t)total, sizeof *members);
  if (!out || !members)
    return fail(p, "out of memory");
  int64_t gidx[MG_MAX_COMPONENTS] = {0};
  for (int64_t g = 0; g < count; g++) {
    int64_t base = offset_of(gidx, gstr, ng), midx[MG_MAX_COMPONENTS] = {0};
    int64_t *row = members + g * group_size;
    for (int64_t k = 0; k < group_size; k++) {
      row[k] = ids[base + offset_of(midx, mstr, nm)];
      next_index(midx, mdims, nm);
    }
    out[g] = (ir_i64_list){row, (int)group_size};
    next_index(gidx, gdims, ng);
  }
  *groups = out;
  *n_groups = (int)count;
  return true;
}
