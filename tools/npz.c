/* npz.c — the .npz reader (archive.h): a zip file's central directory, found from its end
 * record (zip64 end record and extra fields when sizes or offsets pass 4 GB), gives each
 * member's local header; the member's bytes are located in the read-only mapping of the
 * whole file.  Every offset and size read from the file is checked against the file's
 * length before it is used.  CRC-32 is checked for deflated members (they are read whole);
 * stored members are mapped, not read, and not checked.
 * Tests: tests/hlorun_inputs.cmake.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "archive.h"

#ifdef HLOC_HAVE_ZLIB
#include <zlib.h>
#endif

enum {
  SIG_LOCAL = 0x04034b50,
  SIG_CENTRAL = 0x02014b50,
  SIG_END = 0x06054b50,
  SIG_END64 = 0x06064b50,
  SIG_END64_LOCATOR = 0x07064b50,
  END_SIZE = 22,
  CENTRAL_SIZE = 46,
  LOCAL_SIZE = 30,
};

static uint16_t rd16(const unsigned char *p) { return (uint16_t)(p[0] | p[1] << 8); }
static uint32_t rd32(const unsigned char *p) { return (uint32_t)rd16(p) | (uint32_t)rd16(p + 2) << 16; }
static uint64_t rd64(const unsigned char *p) { return (uint64_t)rd32(p) | (uint64_t)rd32(p + 4) << 32; }

static hlo_status corrupt(const char *path, const char *what) {
  return hlo_status_make(HLO_INVALID_ARGUMENT, "%s: not a valid .npz (zip) file: %s", path, what);
}

/* Does [off, off+len) lie inside a file of n bytes? */
static bool inside(uint64_t off, uint64_t len, uint64_t n) { return off <= n && len <= n - off; }

/* Where the central directory is and how many entries it has. */
typedef struct central {
  uint64_t offset, size, count;
} central;

/* The end record: the last signature within the final 64 KiB + 22 bytes whose comment fits. */
static hlo_status find_end(const char *path, const mapped_file *f, uint64_t *out) {
  size_t n = f->size;
  if (n < END_SIZE)
    return corrupt(path, n >= 4 && memcmp(f->bytes, "PK", 2) == 0 ? "truncated" : "no zip end record (not a zip file)");
  size_t lo = n > END_SIZE + 65535 ? n - END_SIZE - 65535 : 0;
  for (size_t i = n - END_SIZE + 1; i-- > lo;)
    if (rd32(f->bytes + i) == SIG_END && i + END_SIZE + rd16(f->bytes + i + 20) <= n) {
      *out = i;
      return NULL;
    }
  return corrupt(path, "no zip end record (not a zip file, or truncated)");
}

static hlo_status read_central(const char *path, const mapped_file *f, central *c) {
  uint64_t end = 0;
  HLO_RETURN_IF_ERROR(find_end(path, f, &end));
  const unsigned char *e = f->bytes + end;
  if (rd16(e + 4) != 0 || rd16(e + 6) != 0)
    return corrupt(path, "a multi-disk (split) archive");
  c->count = rd16(e + 10);
  c->size = rd32(e + 12);
  c->offset = rd32(e + 16);
  if (end >= 20 && rd32(e - 20) == SIG_END64_LOCATOR) { /* zip64: the 64-bit end record rules */
    uint64_t at = rd64(e - 20 + 8);
    if (!inside(at, 56, end) || rd32(f->bytes + at) != SIG_END64)
      return corrupt(path, "the zip64 end record is missing or out of range");
    c->count = rd64(f->bytes + at + 32);
    c->size = rd64(f->bytes + at + 40);
    c->offset = rd64(f->bytes + at + 48);
  }
  if (!inside(c->offset, c->size, f->size))
    return corrupt(path, "the central directory lies outside the file (truncated?)");
  if (c->count > c->size / CENTRAL_SIZE)
    return corrupt(path, "the central directory is shorter than its entry count");
  return NULL;
}

/* One central directory entry's fields, the 64-bit ones from its zip64 extra field when the
 * 32-bit ones are saturated. */
typedef struct entry {
  uint16_t flags, method, name_len;
  uint32_t crc;
  uint64_t csize, usize, local;
  const unsigned char *name;
} entry;

static bool zip64_extra(const unsigned char *x, size_t len, entry *e) {
  while (len >= 4) {
    uint16_t id = rd16(x), n = rd16(x + 2);
    if ((size_t)n > len - 4)
      return false;
    if (id == 1) {
      const unsigned char *p = x + 4, *end = x + 4 + n;
      uint64_t *fields[3] = {&e->usize, &e->csize, &e->local};
      for (int k = 0; k < 3; k++) {
        if (*fields[k] != 0xFFFFFFFFu)
          continue;
        if (end - p < 8)
          return false;
        *fields[k] = rd64(p);
        p += 8;
      }
      return true;
    }
    x += 4 + n;
    len -= 4 + (size_t)n;
  }
  return true;
}

static hlo_status read_entry(const char *path, const mapped_file *f, const central *c, uint64_t *pos, entry *e) {
  uint64_t at = c->offset + *pos;
  if (!inside(*pos, CENTRAL_SIZE, c->size) || rd32(f->bytes + at) != SIG_CENTRAL)
    return corrupt(path, "a central directory entry is malformed");
  const unsigned char *p = f->bytes + at;
  *e = (entry){.flags = rd16(p + 8), .method = rd16(p + 10), .crc = rd32(p + 16), .csize = rd32(p + 20),
               .usize = rd32(p + 24), .name_len = rd16(p + 28), .local = rd32(p + 42), .name = p + CENTRAL_SIZE};
  uint64_t extra_len = rd16(p + 30), comment_len = rd16(p + 32);
  uint64_t total = CENTRAL_SIZE + e->name_len + extra_len + comment_len;
  if (!inside(*pos, total, c->size))
    return corrupt(path, "a central directory entry runs past the directory");
  if (!zip64_extra(p + CENTRAL_SIZE + e->name_len, (size_t)extra_len, e))
    return corrupt(path, "a zip64 extra field is malformed");
  *pos += total;
  return NULL;
}

static hlo_status member_error(const char *path, const entry *e, const char *what) {
  return hlo_status_make(HLO_INVALID_ARGUMENT, "%s: member '%.*s' %s", path, (int)e->name_len, (const char *)e->name,
                         what);
}

/* Locates the data of entry e after its local header, and fills the member. */
static hlo_status locate(const char *path, const mapped_file *f, const entry *e, archive_member *m) {
  if (!inside(e->local, LOCAL_SIZE, f->size) || rd32(f->bytes + e->local) != SIG_LOCAL)
    return member_error(path, e, "has no local header where the central directory says (corrupt or truncated file)");
  const unsigned char *l = f->bytes + e->local;
  uint64_t data = e->local + LOCAL_SIZE + rd16(l + 26) + rd16(l + 28);
  if (!inside(data, e->csize, f->size))
    return member_error(path, e, "runs past the end of the file (truncated?)");
  if (e->flags & 1)
    return member_error(path, e, "is encrypted");
  m->bytes = f->bytes + data;
  m->size = e->csize;
  m->inflated_size = e->usize;
  m->crc = e->crc;
  if (e->method == 0) {
    if (e->csize != e->usize)
      return member_error(path, e, "is stored with different compressed and uncompressed sizes (corrupt)");
    m->kind = MEMBER_NPY;
    return NULL;
  }
  if (e->method != 8)
    return member_error(path, e, "uses a zip compression method other than stored or deflate");
#ifdef HLOC_HAVE_ZLIB
  m->kind = MEMBER_NPY_DEFLATED;
  return NULL;
#else
  return member_error(path, e, "is compressed (np.savez_compressed) and this hlorun was built without zlib: "
                               "save it with np.savez instead (stored members are also mapped without a copy)");
#endif
}

static hlo_status add_member(const char *path, const mapped_file *f, const entry *e, archive *a) {
  size_t n = e->name_len;
  if (n > 0 && e->name[n - 1] == '/')
    return NULL; /* a folder entry */
  if (memchr(e->name, 0, n))
    return member_error(path, e, "has a NUL in its name");
  if (n < 5 || memcmp(e->name + n - 4, ".npy", 4) != 0)
    return member_error(path, e, "is not a .npy file (np.savez writes NAME.npy members)");
  archive_member *m = &a->members[a->n_members];
  memset(m, 0, sizeof *m);
  HLO_RETURN_IF_ERROR(locate(path, f, e, m));
  if (!(m->name = malloc(n - 3)))
    return hlo_status_make(HLO_RESOURCE_EXHAUSTED, "out of memory");
  memcpy(m->name, e->name, n - 4);
  m->name[n - 4] = 0;
  a->n_members++;
  return NULL;
}

hlo_status npz_open(const char *path, archive *a) {
  central c = {0};
  HLO_RETURN_IF_ERROR(read_central(path, &a->map, &c));
  if (!(a->members = calloc((size_t)c.count + 1, sizeof *a->members)))
    return hlo_status_make(HLO_RESOURCE_EXHAUSTED, "out of memory");
  uint64_t pos = 0;
  for (uint64_t i = 0; i < c.count; i++) {
    entry e;
    HLO_RETURN_IF_ERROR(read_entry(path, &a->map, &c, &pos, &e));
    HLO_RETURN_IF_ERROR(add_member(path, &a->map, &e, a));
  }
  return NULL;
}

#ifdef HLOC_HAVE_ZLIB
/* zlib counts in uInt: the stream is fed and drained in pieces of at most 1 GiB. */
static hlo_status inflate_into(const archive *a, const archive_member *m, unsigned char *dst) {
  z_stream z;
  memset(&z, 0, sizeof z);
  if (inflateInit2(&z, -MAX_WBITS) != Z_OK)
    return hlo_status_make(HLO_RESOURCE_EXHAUSTED, "%s: member '%s': cannot start zlib", a->path, m->name);
  const uint64_t piece = 1u << 30;
  uint64_t in_done = 0, out_done = 0;
  int rc;
  for (;;) {
    if (z.avail_in == 0 && in_done < m->size) {
      z.next_in = (Bytef *)(m->bytes + in_done);
      z.avail_in = (uInt)(m->size - in_done < piece ? m->size - in_done : piece);
      in_done += z.avail_in;
    }
    if (z.avail_out == 0 && out_done < m->inflated_size) {
      z.next_out = dst + out_done;
      z.avail_out = (uInt)(m->inflated_size - out_done < piece ? m->inflated_size - out_done : piece);
      out_done += z.avail_out;
    }
    rc = inflate(&z, Z_NO_FLUSH);
    bool more = (z.avail_in == 0 && in_done < m->size) || (z.avail_out == 0 && out_done < m->inflated_size);
    if (rc != Z_OK && !(rc == Z_BUF_ERROR && more))
      break; /* the end, an error, or no room or input left */
  }
  uint64_t total = z.total_out;
  inflateEnd(&z);
  if (rc != Z_STREAM_END || total != m->inflated_size)
    return hlo_status_make(HLO_INVALID_ARGUMENT, "%s: member '%s': the deflated data is corrupt or truncated", a->path,
                           m->name);
  uLong crc = crc32_z(0L, Z_NULL, 0);
  crc = crc32_z(crc, dst, (z_size_t)m->inflated_size);
  if ((uint32_t)crc != m->crc)
    return hlo_status_make(HLO_INVALID_ARGUMENT, "%s: member '%s': CRC-32 mismatch (corrupt data)", a->path, m->name);
  return NULL;
}
#endif

hlo_status npz_inflate(const archive *a, const archive_member *m, unsigned char **out) {
  *out = NULL;
#ifdef HLOC_HAVE_ZLIB
  if (m->inflated_size > SIZE_MAX - 64)
    return hlo_status_make(HLO_RESOURCE_EXHAUSTED, "%s: member '%s' is too large", a->path, m->name);
  unsigned char *dst = aligned_alloc(64, ((size_t)m->inflated_size + 64) & ~(size_t)63);
  if (!dst)
    return hlo_status_make(HLO_RESOURCE_EXHAUSTED, "%s: member '%s': out of memory inflating %llu bytes", a->path,
                           m->name, (unsigned long long)m->inflated_size);
  hlo_status s = inflate_into(a, m, dst);
  if (s) {
    free(dst);
    return s;
  }
  *out = dst;
  return NULL;
#else
  return hlo_status_make(HLO_UNIMPLEMENTED, "%s: member '%s': built without zlib", a->path, m->name);
#endif
}
