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
#include <sys/stat.h>

static hlo_status bad(const char *name, const char *what) {
  return hlo_status_make(HLO_INVALID_ARGUMENT, "%s: not a valid .npy file: %s", name, what);
}

/* A cursor over the header text. */
typedef struct hdr {
  const char *p, *end;
} hdr;

static void skip_ws(hdr *h) {
  while (h->p < h->end && (*h->p == ' ' || *h->p == '\t' || *h->p == '\n' || *h->p == '\r'))
    h->p++;
}

static bool eat(hdr *h, char c) {
  skip_ws(h);
  if (h->p < h->end && *h->p == c) {
    h->p++;
    return true;
  }
  return false;
}

/* A quoted string ('...' or "...", no escapes: the three keys and the descrs have none). */
static bool read_string(hdr *h, char *buf, size_t cap) {
  skip_ws(h);
  if (h->p >= h->end || (*h->p != '\'' && *h->p != '"'))
    return false;
  char q = *h->p++;
  size_t n = 0;
  while (h->p < h->end && *h->p != q && *h->p != '\\') {
    if (n + 1 >= cap)
      return false;
    buf[n++] = *h->p++;
  }
  buf[n] = 0;
  if (h->p >= h->end || *h->p != q)
    return false;
  h->p++;
  return true;
}

static bool read_word(hdr *h, const char *w) {
  skip_ws(h);
  size_t n = strlen(w);
  if ((size_t)(h->end - h->p) < n || memcmp(h->p, w, n) != 0)
    return false;
  h->p += n;
  return true;
}

/* (), (n,), (a, b, ...) with an optional trailing comma; Python 2's 'L' suffix accepted. */
static hlo_status read_shape(const char *name, hdr *h, npy_array *a) {
  if (!eat(h, '('))
    return bad(name, "'shape' is not a tuple");
  a->rank = 0;
  for (;;) {
    if (eat(h, ')'))
      return NULL;
    skip_ws(h);
    if (h->p >= h->end || !isdigit((unsigned char)*h->p))
      return bad(name, "malformed 'shape'");
    if (a->rank >= 64)
      return bad(name, "'shape' has more than 64 dimensions");
    int64_t v = 0;
    while (h->p < h->end && isdigit((unsigned char)*h->p)) {
      int digit = *h->p++ - '0';
      if (v > (INT64_MAX - digit) / 10)
        return bad(name, "'shape' dimension out of range");
      v = v * 10 + digit;
    }
    if (h->p < h->end && *h->p == 'L')
      h->p++;
    a->dims[a->rank++] = v;
    if (!eat(h, ',')) {
      if (eat(h, ')'))
        return NULL;
      return bad(name, "malformed 'shape'");
    }
  }
}

/* The header dict: exactly the keys 'descr', 'fortran_order' and 'shape', once each. */
static hlo_status parse_header(const char *name, const char *text, size_t len, char *descr, bool *fortran,
                               npy_array *a) {
  hdr h = {text, text + len};
  bool seen[3] = {false, false, false};
  if (!eat(&h, '{'))
    return bad(name, "the header is not a dict");
  for (;;) {
    if (eat(&h, '}'))
      break;
    char key[32];
    if (!read_string(&h, key, sizeof key) || !eat(&h, ':'))
      return bad(name, "malformed header dict");
    int k = strcmp(key, "descr") == 0 ? 0 : strcmp(key, "fortran_order") == 0 ? 1 : strcmp(key, "shape") == 0 ? 2 : -1;
    if (k < 0)
      return hlo_status_make(HLO_INVALID_ARGUMENT, "%s: not a valid .npy file: unexpected header key '%s'", name, key);
    if (seen[k])
      return hlo_status_make(HLO_INVALID_ARGUMENT, "%s: not a valid .npy file: header key '%s' appears twice", name, key);
    seen[k] = true;
    if (k == 0 && !read_string(&h, descr, 16))
      return bad(name, "unsupported 'descr' (structured dtypes are not arrays of one element type)");
    if (k == 1) {
      if (read_word(&h, "True"))
        *fortran = true;
      else if (read_word(&h, "False"))
        *fortran = false;
      else
        return bad(name, "'fortran_order' is neither True nor False");
    }
    if (k == 2)
      HLO_RETURN_IF_ERROR(read_shape(name, &h, a));
    if (!eat(&h, ',')) {
      if (eat(&h, '}'))
        break;
      return bad(name, "malformed header dict");
    }
  }
  skip_ws(&h);
  if (h.p != h.end)
    return bad(name, "text after the header dict");
  static const char *const keys[3] = {"descr", "fortran_order", "shape"};
  for (int k = 0; k < 3; k++)
    if (!seen[k])
      return hlo_status_make(HLO_INVALID_ARGUMENT, "%s: not a valid .npy file: header has no '%s'", name, keys[k]);
  return NULL;
}

/* Reads a descr such as "<f4": byte order, kind, item size.  Only the dtypes that store an
 * HLO element type (hlo/elemtypes.def) and raw 2-byte void (bf16 bits). */
static hlo_status parse_descr(const char *name, const char *descr, char *out_order, npy_array *a) {
  static const struct { char kind; int size; } ok[] = {
      {'b', 1}, {'i', 1}, {'i', 2}, {'i', 4}, {'i', 8}, {'u', 1}, {'u', 2}, {'u', 4}, {'u', 8},
      {'f', 2}, {'f', 4}, {'f', 8}, {'c', 8}, {'c', 16}, {'V', 2}};
  char order = descr[0];
  if (!order || !strchr("<>|=", order) || !descr[1])
    return hlo_status_make(HLO_INVALID_ARGUMENT, "%s: unsupported dtype '%s'", name, descr);
  const char *digits = descr + 2;
  bool all_digits = *digits != 0 && strlen(digits) <= 2;
  for (const char *d = digits; *d; d++)
    all_digits = all_digits && isdigit((unsigned char)*d);
  int size = all_digits ? atoi(digits) : 0;
  for (size_t i = 0; i < sizeof ok / sizeof *ok; i++)
    if (ok[i].kind == descr[1] && ok[i].size == size) {
      a->kind = descr[1];
      a->itemsize = size;
      *out_order = order == '>' ? '>' : '<'; /* '|' and '=' are native: little-endian here */
      return NULL;
    }
  return hlo_status_make(HLO_INVALID_ARGUMENT, "%s: unsupported dtype '%s' (no HLO element type stores it)", name, descr);
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

/* Fortran (column-major) order -> row-major, into dst. */
static void from_fortran(const unsigned char *src, const npy_array *a, unsigned char *dst) {
  int64_t count = a->nbytes / (a->itemsize ? a->itemsize : 1);
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
}

hlo_status npy_parse_header(const char *name, const unsigned char *bytes, size_t n, npy_array *out,
                            npy_layout *out_layout) {
  memset(out, 0, sizeof *out);
  memset(out_layout, 0, sizeof *out_layout);
  if (n < 6 || memcmp(bytes, "\x93NUMPY", 6) != 0)
    return bad(name, "missing the \\x93NUMPY magic");
  if (n < 10)
    return bad(name, "truncated header");
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
  char endian = '<';
  HLO_RETURN_IF_ERROR(parse_descr(name, descr, &endian, out));
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
  out->data = (void *)(bytes + data_off);
  out_layout->data_offset = data_off;
  out_layout->fortran = fortran && out->rank > 1;
  out_layout->swap = endian == '>' && out->itemsize > 1 && out->kind != 'V';
  return NULL;
}

void npy_copy_normalized(const npy_array *stored, const npy_layout *layout, void *dst) {
  if (layout->fortran)
    from_fortran(stored->data, stored, dst);
  else if (stored->nbytes)
    memcpy(dst, stored->data, (size_t)stored->nbytes);
  if (layout->swap)
    swap_bytes(dst, stored->nbytes / stored->itemsize, stored->itemsize, stored->kind == 'c' ? 2 : 1);
}

hlo_status npy_parse(const char *name, const unsigned char *bytes, size_t n, npy_array *out) {
  npy_layout layout;
  npy_array stored;
  HLO_RETURN_IF_ERROR(npy_parse_header(name, bytes, n, &stored, &layout));
  *out = stored;
  out->data = malloc((size_t)(stored.nbytes ? stored.nbytes : 1));
  if (!out->data)
    return hlo_status_make(HLO_RESOURCE_EXHAUSTED, "%s: out of memory", name);
  npy_copy_normalized(&stored, &layout, out->data);
  return NULL;
}

hlo_status npy_read(const char *path, npy_array *out) {
  memset(out, 0, sizeof *out);
  FILE *f = fopen(path, "rb");
  if (!f)
    return hlo_status_make(HLO_INVALID_ARGUMENT, "%s: cannot open: %s", path, strerror(errno));
  struct stat st = {0};
  if (fstat(fileno(f), &st) == 0 && S_ISDIR(st.st_mode)) {
    fclose(f);
    return hlo_status_make(HLO_INVALID_ARGUMENT, "%s: is a directory, not a .npy file", path);
  }
  /* Read to the end (pipes have no size), growing the buffer geometrically. */
  size_t cap = S_ISREG(st.st_mode) && st.st_size > 0 ? (size_t)st.st_size + 1 : 4096, n = 0;
  unsigned char *buf = malloc(cap);
  while (buf) {
    n += fread(buf + n, 1, cap - n, f);
    if (n < cap || ferror(f))
      break;
    unsigned char *grown = cap <= SIZE_MAX / 2 ? realloc(buf, cap * 2) : NULL;
    if (!grown)
      free(buf);
    buf = grown;
    cap *= 2;
  }
  bool no_memory = !buf, failed = !buf || ferror(f);
  fclose(f);
  if (failed) {
    free(buf);
    return no_memory ? hlo_status_make(HLO_RESOURCE_EXHAUSTED, "%s: out of memory reading the file", path)
                     : hlo_status_make(HLO_INVALID_ARGUMENT, "%s: cannot read: %s", path, strerror(errno));
  }
  hlo_status s = npy_parse(path, buf, n, out);
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
