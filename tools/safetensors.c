/* safetensors.c — the .safetensors reader (archive.h): 8 bytes of little-endian header
 * length, a JSON object mapping each tensor's name to {"dtype", "shape", "data_offsets"}
 * (offsets into the data that follows the header), an optional "__metadata__" object
 * (skipped), then the data, little-endian and row-major.  A small JSON reader with a depth
 * limit; every size and offset is checked against the file before it is used.  Members are
 * returned in the order of their data offsets (the order the data is stored in).
 * Tests: tests/hlorun_inputs.cmake.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "archive.h"
#include "ir/ir.h"

enum { MAX_HEADER = 100 << 20, MAX_DEPTH = 64 };

static hlo_status corrupt(const char *path, const char *what) {
  return hlo_status_make(HLO_INVALID_ARGUMENT, "%s: not a valid .safetensors file: %s", path, what);
}

typedef struct json {
  const char *p, *end;
} json;

static void ws(json *j) {
  while (j->p < j->end && (*j->p == ' ' || *j->p == '\t' || *j->p == '\n' || *j->p == '\r'))
    j->p++;
}

static bool eat(json *j, char c) {
  ws(j);
  if (j->p < j->end && *j->p == c) {
    j->p++;
    return true;
  }
  return false;
}

static int hex(char c) {
  return c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
}

static bool hex4(const char *p, const char *end, unsigned *out) {
  *out = 0;
  for (int k = 0; k < 4; k++) {
    int h = p + k < end ? hex(p[k]) : -1;
    if (h < 0)
      return false;
    *out = *out << 4 | (unsigned)h;
  }
  return true;
}

static size_t put_utf8(char *o, unsigned c) {
  if (c < 0x80) {
    o[0] = (char)c;
    return 1;
  }
  size_t n = c < 0x800 ? 2 : c < 0x10000 ? 3 : 4;
  static const unsigned char lead[5] = {0, 0, 0xC0, 0xE0, 0xF0};
  for (size_t k = n - 1; k > 0; k--, c >>= 6)
    o[k] = (char)(0x80 | (c & 0x3F));
  o[0] = (char)(lead[n] | c);
  return n;
}

/* One escape after the backslash at j->p; writes its UTF-8 to o (NULL: skips). */
static bool escape(json *j, char *o, size_t *n) {
  static const char from[] = "\"\\/bfnrt", to[] = "\"\\/\b\f\n\r\t";
  if (++j->p >= j->end)
    return false;
  const char *k = strchr(from, *j->p);
  if (k && *j->p) {
    if (o)
      o[(*n)++] = to[k - from];
    j->p++;
    return true;
  }
  unsigned c;
  if (*j->p != 'u' || !hex4(j->p + 1, j->end, &c))
    return false;
  j->p += 5;
  if (c >= 0xD800 && c < 0xDC00) { /* a surrogate pair */
    unsigned lo;
    if (j->end - j->p < 6 || j->p[0] != '\\' || j->p[1] != 'u' || !hex4(j->p + 2, j->end, &lo) || lo < 0xDC00 ||
        lo > 0xDFFF)
      return false;
    c = 0x10000 + ((c - 0xD800) << 10) + (lo - 0xDC00);
    j->p += 6;
  }
  if (o)
    *n += put_utf8(o + *n, c);
  return true;
}

/* A string; *out (NULL: skipped) is malloc'd, NUL-terminated.  The decoded text is never
 * longer than the escaped one. */
static bool string(json *j, char **out) {
  if (!eat(j, '"'))
    return false;
  const char *start = j->p;
  while (j->p < j->end && *j->p != '"')
    j->p += *j->p == '\\' && j->p + 1 < j->end ? 2 : 1;
  if (j->p >= j->end)
    return false;
  const char *stop = j->p;
  char *o = out ? malloc((size_t)(stop - start) + 1) : NULL;
  if (out && !o)
    return false;
  size_t n = 0;
  bool ok = true;
  for (j->p = start; ok && j->p < stop;) {
    if (*j->p == '\\')
      ok = escape(j, o, &n);
    else if ((unsigned char)*j->p < 0x20)
      ok = false;
    else if (o)
      o[n++] = *j->p++;
    else
      j->p++;
  }
  j->p = stop + 1;
  if (o) {
    o[n] = 0;
    if (!ok || memchr(o, 0, n)) {
      free(o);
      o = NULL;
      ok = false;
    }
    *out = o;
  }
  return ok;
}

static bool json_uint(json *j, uint64_t *out) {
  ws(j);
  if (j->p >= j->end || *j->p < '0' || *j->p > '9')
    return false;
  uint64_t v = 0;
  while (j->p < j->end && *j->p >= '0' && *j->p <= '9') {
    unsigned d = (unsigned)(*j->p++ - '0');
    if (v > (UINT64_MAX - d) / 10)
      return false;
    v = v * 10 + d;
  }
  *out = v;
  return true;
}

static bool skip_value(json *j, int depth) {
  ws(j);
  if (depth > MAX_DEPTH || j->p >= j->end)
    return false;
  char c = *j->p;
  if (c == '"')
    return string(j, NULL);
  if (c == '{' || c == '[') {
    char close = c == '{' ? '}' : ']';
    j->p++;
    if (eat(j, close))
      return true;
    do {
      if (c == '{' && (!string(j, NULL) || !eat(j, ':')))
        return false;
      if (!skip_value(j, depth + 1))
        return false;
    } while (eat(j, ','));
    return eat(j, close);
  }
  /* a number, true, false or null */
  const char *start = j->p;
  while (j->p < j->end && (strchr("+-.eE", *j->p) || (*j->p >= '0' && *j->p <= '9') || (*j->p >= 'a' && *j->p <= 'z')))
    j->p++;
  return j->p > start;
}

static const struct { const char *name; int32_t etype; } dtypes[] = {
    {"F64", IR_F64}, {"F32", IR_F32},   {"F16", IR_F16},   {"BF16", IR_BF16}, {"I64", IR_S64},
    {"I32", IR_S32}, {"I16", IR_S16},   {"I8", IR_S8},     {"U64", IR_U64},   {"U32", IR_U32},
    {"U16", IR_U16}, {"U8", IR_U8},     {"BOOL", IR_PRED}, {"C64", IR_C64},   {"F8_E4M3", IR_F8E4M3FN},
    {"F8_E5M2", IR_F8E5M2},             {"F8_E8M0", IR_F8E8M0FNU}};

/* What one tensor entry says, before it is checked against the file. */
typedef struct entry {
  char *dtype;
  uint64_t begin, end;
  bool has_shape, has_offsets;
} entry;

static bool shape(json *j, archive_member *m) {
  if (!eat(j, '['))
    return false;
  m->rank = 0;
  if (eat(j, ']'))
    return true;
  do {
    uint64_t d;
    if (m->rank >= 64 || !json_uint(j, &d) || d > INT64_MAX)
      return false;
    m->dims[m->rank++] = (int64_t)d;
  } while (eat(j, ','));
  return eat(j, ']');
}

static bool offsets(json *j, entry *e) {
  return eat(j, '[') && json_uint(j, &e->begin) && eat(j, ',') && json_uint(j, &e->end) && eat(j, ']');
}

/* {"dtype": ..., "shape": [...], "data_offsets": [b, e]}; other keys are skipped. */
static bool tensor_entry(json *j, archive_member *m, entry *e) {
  if (!eat(j, '{'))
    return false;
  if (eat(j, '}'))
    return true;
  do {
    char *key = NULL;
    if (!string(j, &key) || !eat(j, ':')) {
      free(key);
      return false;
    }
    bool ok;
    if (strcmp(key, "dtype") == 0 && !e->dtype)
      ok = string(j, &e->dtype);
    else if (strcmp(key, "shape") == 0)
      ok = (e->has_shape = shape(j, m));
    else if (strcmp(key, "data_offsets") == 0)
      ok = (e->has_offsets = offsets(j, e));
    else
      ok = skip_value(j, 1);
    free(key);
    if (!ok)
      return false;
  } while (eat(j, ','));
  return eat(j, '}');
}

/* Checks one entry against the data section [data, data + n) and completes the member. */
static hlo_status check_entry(const char *path, const entry *e, const unsigned char *data, uint64_t n,
                              archive_member *m) {
  if (!e->dtype || !e->has_shape || !e->has_offsets)
    return hlo_status_make(HLO_INVALID_ARGUMENT, "%s: tensor '%s' lacks \"%s\"", path, m->name,
                           !e->dtype ? "dtype" : !e->has_shape ? "shape" : "data_offsets");
  m->etype = -1;
  for (size_t i = 0; i < sizeof dtypes / sizeof *dtypes; i++)
    if (strcmp(e->dtype, dtypes[i].name) == 0)
      m->etype = dtypes[i].etype;
  if (m->etype < 0)
    return hlo_status_make(HLO_INVALID_ARGUMENT, "%s: tensor '%s' has dtype %s, which no HLO element type stores", path,
                           m->name, e->dtype);
  uint64_t bytes = (uint64_t)ir_etype_table[m->etype].storage_bytes;
  for (int d = 0; d < m->rank; d++) {
    if (m->dims[d] && bytes > (uint64_t)INT64_MAX / (uint64_t)m->dims[d])
      return hlo_status_make(HLO_INVALID_ARGUMENT, "%s: tensor '%s': shape is too large", path, m->name);
    bytes *= (uint64_t)m->dims[d];
  }
  if (e->begin > e->end || e->end > n)
    return hlo_status_make(HLO_INVALID_ARGUMENT, "%s: tensor '%s': data_offsets [%llu, %llu] lie outside the %llu bytes "
                           "of data (truncated?)", path, m->name, (unsigned long long)e->begin,
                           (unsigned long long)e->end, (unsigned long long)n);
  if (e->end - e->begin != bytes)
    return hlo_status_make(HLO_INVALID_ARGUMENT, "%s: tensor '%s': data_offsets span %llu bytes but its dtype and shape "
                           "need %llu", path, m->name, (unsigned long long)(e->end - e->begin),
                           (unsigned long long)bytes);
  m->kind = MEMBER_RAW;
  m->bytes = data + e->begin;
  m->size = bytes;
  return NULL;
}

static hlo_status read_tensor(const char *path, json *j, const unsigned char *data, uint64_t n, archive *a) {
  archive_member *m = &a->members[a->n_members];
  memset(m, 0, sizeof *m);
  if (!string(j, &m->name) || !eat(j, ':')) {
    free(m->name); /* not counted in n_members yet: archive_free would not see it */
    m->name = NULL;
    return corrupt(path, "malformed JSON header");
  }
  if (strcmp(m->name, "__metadata__") == 0) {
    free(m->name);
    m->name = NULL;
    return skip_value(j, 1) ? NULL : corrupt(path, "malformed \"__metadata__\"");
  }
  a->n_members++;
  entry e = {0};
  hlo_status s = tensor_entry(j, m, &e) ? check_entry(path, &e, data, n, m)
                                        : hlo_status_make(HLO_INVALID_ARGUMENT, "%s: tensor '%s': malformed entry in "
                                                          "the JSON header", path, m->name);
  free(e.dtype);
  return s;
}

static int by_offset(const void *x, const void *y) {
  const archive_member *a = x, *b = y;
  if (a->bytes != b->bytes)
    return a->bytes < b->bytes ? -1 : 1;
  return strcmp(a->name, b->name); /* equal offsets: empty tensors, ordered by name */
}

/* Upper bound on the members: one per ':' in the header. */
static size_t count_colons(const char *p, size_t n) {
  size_t k = 0;
  for (size_t i = 0; i < n; i++)
    k += p[i] == ':';
  return k;
}

hlo_status safetensors_open(const char *path, archive *a) {
  const mapped_file *f = &a->map;
  if (f->size < 8)
    return corrupt(path, "shorter than its 8-byte header length");
  uint64_t hlen = 0;
  for (int k = 7; k >= 0; k--)
    hlen = hlen << 8 | f->bytes[k];
  if (hlen > f->size - 8)
    return corrupt(path, "the header length runs past the end of the file (truncated, or not safetensors)");
  if (hlen > MAX_HEADER)
    return corrupt(path, "the header is longer than 100 MB");
  const char *text = (const char *)f->bytes + 8;
  if (!(a->members = calloc(count_colons(text, (size_t)hlen) + 1, sizeof *a->members)))
    return hlo_status_make(HLO_RESOURCE_EXHAUSTED, "out of memory");
  json j = {text, text + hlen};
  const unsigned char *data = f->bytes + 8 + hlen;
  uint64_t n = f->size - 8 - hlen;
  if (!eat(&j, '{'))
    return corrupt(path, "the header is not a JSON object");
  if (!eat(&j, '}')) {
    do
      HLO_RETURN_IF_ERROR(read_tensor(path, &j, data, n, a));
    while (eat(&j, ','));
    if (!eat(&j, '}'))
      return corrupt(path, "malformed JSON header");
  }
  ws(&j);
  if (j.p != j.end)
    return corrupt(path, "text after the JSON header");
  qsort(a->members, (size_t)a->n_members, sizeof *a->members, by_offset);
  return NULL;
}
