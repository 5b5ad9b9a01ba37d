/* npy.c — .npy reading/writing (npy.h).  The header is a Python dict literal; a small parser
 * reads 'descr', 'fortran_order' and 'shape' and rejects anything else malformed.  Sizes are
 * checked for overflow and against the file length before anything is allocated.
 */
#include "npy.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static hlo_status bad(const char *name, const char *what) {
  return hlo_status_make(HLO_INVALID_ARGUMENT, "%s: not a valid .npy file: %s", name, what);
}

static const char *skip_ws(const char *p, const char *end) {
  while (p < end && (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r'))
    p++;
  return p;
}

/* Finds 'key': in the header dict and returns a pointer after the colon. */
static const char *find_key(const char *h, const char *end, const char *key) {
  size_t kl = strlen(key);
  for (const char *p = h; p + kl + 2 < end; p++)
    if ((*p == '\'' || *p == '"') && memcmp(p + 1, key, kl) == 0 && p[kl + 1] == *p) {
      const char *q = skip_ws(p + kl + 2, end);
      if (q < end && *q == ':')
        return skip_ws(q + 1, end);
      return NULL;
    }
  return NULL;
}

static hlo_status parse_header(const char *name, const char *h, size_t len, char *descr, bool *fortran, npy_array *a) {
  const char *end = h + len;
  const char *p = find_key(h, end, "descr");
  if (!p || (*p != '\'' && *p != '"'))
    return bad(name, "header has no 'descr'");
  char q = *p++;
  size_t n = 0;
  while (p < end && *p != q && n < 15)
    descr[n++] = *p++;
  descr[n] = 0;
  if (p >= end || *p != q)
    return bad(name, "unsupported 'descr' (structured dtypes are not arrays of one element type)");
  p = find_key(h, end, "fortran_order");
  if (!p)
    return bad(name, "header has no 'fortran_order'");
  if (end - p >= 4 && memcmp(p, "True", 4) == 0)
    *fortran = true;
  else if (end - p >= 5 && memcmp(p, "False", 5) == 0)
    *fortran = false;
  else
    return bad(name, "'fortran_order' is neither True nor False");
  p = find_key(h, end, "shape");
  if (!p || *p != '(')
    return bad(name, "header has no 'shape' tuple");
  p++;
  a->rank = 0;
  for (;;) {
    p = skip_ws(p, end);
    if (p < end && *p == ')')
      break;
    if (p >= end || !isdigit((unsigned char)*p) || a->rank >= 64)
      return bad(name, "malformed 'shape'");
    errno = 0;
    char *e;
    long long v = strtoll(p, &e, 10);
    if (errno || v < 0)
      return bad(name, "'shape' dimension out of range");
    a->dims[a->rank++] = v;
    p = skip_ws(e, end);
    if (p < end && *p == ',')
      p++;
  }
  return NULL;
}

/* Reverses the bytes of every element (big-endian -> little-endian). */
static void swap_bytes(unsigned char *d, int64_t count, int itemsize, int parts) {
  int w = itemsize / parts;
  for (int64_t i = 0; i < count * parts; i++) {
    unsigned char *e = d + i * w;
    for (int k = 0; k < w / 2; k++) {
      unsigned char t = e[k];
      e[k] = e[w - 1 - k];
      e[w - 1 - k] = t;
    }
  }
}

/* Fortran (column-major) order -> row-major. */
static void *from_fortran(const unsigned char *src, const npy_array *a) {
  int64_t count = a->nbytes / (a->itemsize ? a->itemsize : 1);
  unsigned char *dst = malloc((size_t)(a->nbytes ? a->nbytes : 1));
  if (!dst)
    return NULL;
  int64_t idx[64] = {0};
  for (int64_t k = 0; k < count; k++) {
    /* k walks the source in column-major order: idx[0] fastest. */
    int64_t row = 0;
    for (int d = 0; d < a->rank; d++)
      row = row * a->dims[d] + idx[d];
    memcpy(dst + row * a->itemsize, src + k * a->itemsize, (size_t)a->itemsize);
    for (int d = 0; d < a->rank; d++) {
      if (++idx[d] < a->dims[d])
        break;
      idx[d] = 0;
    }
  }
  return dst;
}

hlo_status npy_parse(const char *name, const unsigned char *bytes, size_t n, npy_array *out) {
  memset(out, 0, sizeof *out);
  if (n < 10 || memcmp(bytes, "\x93NUMPY", 6) != 0)
    return bad(name, "missing the \\x93NUMPY magic");
  int major = bytes[6];
  size_t hlen, off;
  if (major == 1) {
    hlen = bytes[8] | (size_t)bytes[9] << 8;
    off = 10;
  } else if (major == 2 || major == 3) {
    if (n < 12)
      return bad(name, "truncated header");
    hlen = bytes[8] | (size_t)bytes[9] << 8 | (size_t)bytes[10] << 16 | (size_t)bytes[11] << 24;
    off = 12;
  } else {
    return bad(name, "unsupported format version");
  }
  if (hlen > n - off)
    return bad(name, "truncated header");
  char descr[16];
  bool fortran = false;
  HLO_RETURN_IF_ERROR(parse_header(name, (const char *)bytes + off, hlen, descr, &fortran, out));
  char endian = descr[0];
  if (strlen(descr) < 3 || !strchr("<>|=", endian))
    return bad(name, "unsupported 'descr'");
  out->kind = descr[1];
  out->itemsize = atoi(descr + 2);
  if (!strchr("biufcV", out->kind) || out->itemsize <= 0 || out->itemsize > 16)
    return hlo_status_make(HLO_INVALID_ARGUMENT, "%s: unsupported dtype '%s'", name, descr);
  int64_t count = 1;
  for (int d = 0; d < out->rank; d++) {
    if (out->dims[d] && count > INT64_MAX / out->dims[d])
      return bad(name, "shape is too large");
    count *= out->dims[d];
  }
  if (count > INT64_MAX / out->itemsize)
    return bad(name, "shape is too large");
  out->nbytes = count * out->itemsize;
  size_t data_off = off + hlen;
  if ((uint64_t)out->nbytes > n - data_off)
    return hlo_status_make(HLO_INVALID_ARGUMENT, "%s: truncated: the header promises %lld bytes of data, the file has %zu",
                           name, (long long)out->nbytes, n - data_off);
  const unsigned char *src = bytes + data_off;
  out->data = fortran && out->rank > 1 ? from_fortran(src, out) : malloc((size_t)(out->nbytes ? out->nbytes : 1));
  if (!out->data)
    return hlo_status_make(HLO_RESOURCE_EXHAUSTED, "%s: out of memory", name);
  if (!(fortran && out->rank > 1))
    memcpy(out->data, src, (size_t)out->nbytes);
  if (endian == '>' && out->itemsize > 1 && out->kind != 'V')
    swap_bytes(out->data, count, out->itemsize, out->kind == 'c' ? 2 : 1);
  return NULL;
}

hlo_status npy_read(const char *path, npy_array *out) {
  FILE *f = fopen(path, "rb");
  if (!f)
    return hlo_status_make(HLO_INVALID_ARGUMENT, "%s: cannot open: %s", path, strerror(errno));
  fseek(f, 0, SEEK_END);
  long n = ftell(f);
  fseek(f, 0, SEEK_SET);
  unsigned char *buf = n > 0 ? malloc((size_t)n) : NULL;
  if (n > 0 && (!buf || fread(buf, 1, (size_t)n, f) != (size_t)n)) {
    free(buf);
    fclose(f);
    return hlo_status_make(HLO_INVALID_ARGUMENT, "%s: cannot read", path);
  }
  fclose(f);
  hlo_status s = npy_parse(path, buf ? buf : (const unsigned char *)"", n > 0 ? (size_t)n : 0, out);
  free(buf);
  return s;
}

hlo_status npy_write(const char *path, const char *descr, int rank, const int64_t *dims, const void *data,
                     int64_t nbytes) {
  char header[4096];
  int k = snprintf(header, sizeof header, "{'descr': '%s', 'fortran_order': False, 'shape': (", descr);
  for (int d = 0; d < rank; d++)
    k += snprintf(header + k, sizeof header - (size_t)k, "%lld%s", (long long)dims[d], rank == 1 ? "," : d + 1 < rank ? ", " : "");
  k += snprintf(header + k, sizeof header - (size_t)k, "), }");
  int total = 10 + k + 1;
  int pad = (64 - total % 64) % 64;
  FILE *f = fopen(path, "wb");
  if (!f)
    return hlo_status_make(HLO_IO, "%s: cannot write: %s", path, strerror(errno));
  unsigned hl = (unsigned)(k + pad + 1);
  unsigned char pre[10] = {0x93, 'N', 'U', 'M', 'P', 'Y', 1, 0, (unsigned char)(hl & 0xff), (unsigned char)(hl >> 8)};
  fwrite(pre, 1, 10, f);
  fwrite(header, 1, (size_t)k, f);
  for (int i = 0; i < pad; i++)
    fputc(' ', f);
  fputc('\n', f);
  if (nbytes)
    fwrite(data, 1, (size_t)nbytes, f);
  bool err = ferror(f);
  if (fclose(f) != 0 || err)
    return hlo_status_make(HLO_IO, "%s: write error", path);
  return NULL;
}

void npy_describe(const npy_array *a, char *buf, size_t cap) {
  static const struct { char kind; int size; const char *name; } names[] = {
      {'b', 1, "pred"}, {'i', 1, "s8"}, {'i', 2, "s16"}, {'i', 4, "s32"}, {'i', 8, "s64"}, {'u', 1, "u8"},
      {'u', 2, "u16"}, {'u', 4, "u32"}, {'u', 8, "u64"}, {'f', 2, "f16"}, {'f', 4, "f32"}, {'f', 8, "f64"},
      {'c', 8, "c64"}, {'c', 16, "c128"}};
  const char *t = NULL;
  for (size_t i = 0; i < sizeof names / sizeof *names; i++)
    if (names[i].kind == a->kind && names[i].size == a->itemsize)
      t = names[i].name;
  int k = t ? snprintf(buf, cap, "%s[", t) : snprintf(buf, cap, "%c%d[", a->kind, a->itemsize);
  for (int d = 0; d < a->rank && (size_t)k < cap; d++)
    k += snprintf(buf + k, cap - (size_t)k, "%s%lld", d ? "," : "", (long long)a->dims[d]);
  if ((size_t)k < cap)
    snprintf(buf + k, cap - (size_t)k, "]");
}
