/* npy_test.c — .npy reading from bytes written here by hand (independent of npy_write): format
 * versions 1.0/2.0/3.0, both byte orders, C and Fortran order, every supported dtype; from
 * numpy-made fixtures (testdata/npy/make.py documents their contents); malformed and
 * corrupted files give one clear line, never a crash; npy_write's bytes match the format. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "npy.h"

static int failures;
#define CHECK(cond)                                                        \
  do {                                                                     \
    if (!(cond)) {                                                         \
      fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, #cond); \
      failures++;                                                          \
    }                                                                      \
  } while (0)

/* A v1.0 file: magic, version, header length, header padded to 64, data. */
static size_t make_v1(unsigned char *out, const char *dict, const void *data, size_t n) {
  size_t hl = strlen(dict);
  size_t total = 10 + hl + 1;
  size_t pad = (64 - total % 64) % 64;
  memcpy(out, "\x93NUMPY\x01\x00", 8);
  out[8] = (unsigned char)((hl + pad + 1) & 0xff);
  out[9] = (unsigned char)((hl + pad + 1) >> 8);
  memcpy(out + 10, dict, hl);
  memset(out + 10 + hl, ' ', pad);
  out[10 + hl + pad] = '\n';
  if (n)
    memcpy(out + 10 + hl + pad + 1, data, n);
  return 10 + hl + pad + 1 + n;
}

static void test_hand_made(void) {
  unsigned char buf[512];
  float v[4] = {1, 2, 3, 4};
  size_t n = make_v1(buf, "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 2), }", v, sizeof v);
  npy_array a;
  hlo_status s = npy_parse("t.npy", buf, n, &a);
  CHECK(!s);
  if (!s) {
    CHECK(a.kind == 'f' && a.itemsize == 4 && a.rank == 2 && a.dims[0] == 2 && a.dims[1] == 2);
    CHECK(((float *)a.data)[3] == 4);
    free(a.data);
  }
  hlo_status_free(s);
  /* Fortran order 2x3: column-major bytes 0 3 1 4 2 5 -> row-major 0 1 2 3 4 5 */
  int32_t f[6] = {0, 3, 1, 4, 2, 5};
  n = make_v1(buf, "{'descr': '<i4', 'fortran_order': True, 'shape': (2, 3), }", f, sizeof f);
  s = npy_parse("f.npy", buf, n, &a);
  CHECK(!s);
  if (!s) {
    for (int i = 0; i < 6; i++)
      CHECK(((int32_t *)a.data)[i] == i);
    free(a.data);
  }
  hlo_status_free(s);
  /* Big-endian int16 */
  unsigned char be[4] = {0x01, 0x02, 0xff, 0xfe};
  n = make_v1(buf, "{'descr': '>i2', 'fortran_order': False, 'shape': (2,), }", be, sizeof be);
  s = npy_parse("b.npy", buf, n, &a);
  CHECK(!s);
  if (!s) {
    CHECK(((int16_t *)a.data)[0] == 0x0102 && ((int16_t *)a.data)[1] == -2);
    free(a.data);
  }
  hlo_status_free(s);
  /* Scalar shape () */
  double d = 2.5;
  n = make_v1(buf, "{'descr': '<f8', 'fortran_order': False, 'shape': (), }", &d, sizeof d);
  s = npy_parse("s.npy", buf, n, &a);
  CHECK(!s && a.rank == 0 && a.nbytes == 8);
  if (!s)
    free(a.data);
  hlo_status_free(s);
}

static void expect_error(const char *name, const unsigned char *b, size_t n, const char *needle) {
  npy_array a;
  hlo_status s = npy_parse(name, b, n, &a);
  CHECK(s != NULL);
  if (s) {
    if (!strstr(hlo_status_message(s), needle))
      fprintf(stderr, "message '%s' lacks '%s'\n", hlo_status_message(s), needle), failures++;
    hlo_status_free(s);
  } else {
    free(a.data);
  }
}

static void test_malformed(void) {
  unsigned char buf[512];
  float v[4] = {0};
  expect_error("x.npy", (const unsigned char *)"hello", 5, "missing the \\x93NUMPY magic");
  size_t n = make_v1(buf, "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 2), }", v, sizeof v);
  expect_error("x.npy", buf, n - 1, "truncated");
  expect_error("x.npy", buf, 20, "truncated header");
  n = make_v1(buf, "{'descr': '<f4', 'shape': (2, 2), }", v, sizeof v);
  expect_error("x.npy", buf, n, "'fortran_order'");
  n = make_v1(buf, "{'descr': '<f4', 'fortran_order': False, 'shape': (99999999999, 99999999999, 9999999999), }", v, 0);
  expect_error("x.npy", buf, n, "too large");
  n = make_v1(buf, "{'descr': [('a', '<f4')], 'fortran_order': False, 'shape': (1,), }", v, 4);
  expect_error("x.npy", buf, n, "descr");
  n = make_v1(buf, "{'descr': '<U4', 'fortran_order': False, 'shape': (1,), }", v, 16);
  expect_error("x.npy", buf, n, "unsupported dtype");
}

static void test_fixtures_and_roundtrip(void) {
  const char *files[] = {"testdata/npy/f32_2x3.npy", "testdata/npy/f32_2x3_v2.npy", "testdata/npy/f32_2x3_v3.npy",
                         "testdata/npy/f32_2x3_big_endian.npy", "testdata/npy/f32_2x3_fortran.npy"};
  for (size_t k = 0; k < sizeof files / sizeof *files; k++) {
    npy_array a;
    hlo_status s = npy_read(files[k], &a);
    CHECK(!s);
    if (s) {
      fprintf(stderr, "%s\n", hlo_status_message(s));
      hlo_status_free(s);
      continue;
    }
    for (int i = 0; i < 6; i++)
      CHECK(((float *)a.data)[i] == (float)i);
    free(a.data);
  }
  npy_array c;
  hlo_status s = npy_read("testdata/npy/c64_2.npy", &c);
  CHECK(!s && c.kind == 'c' && c.itemsize == 8 && ((float *)c.data)[3] == 0.25f);
  if (!s)
    free(c.data);
  hlo_status_free(s);
  npy_array i64;
  s = npy_read("testdata/npy/i64_big_endian_3.npy", &i64);
  CHECK(!s && ((int64_t *)i64.data)[2] == (int64_t)1 << 40 && ((int64_t *)i64.data)[0] == -1);
  if (!s)
    free(i64.data);
  hlo_status_free(s);
  int64_t dims[1] = {3};
  uint16_t raw[3] = {0x3f80, 0xc000, 0x7fc0};
  s = npy_write("/tmp/npy_test_rt.npy", "<u2", 1, dims, raw, sizeof raw);
  CHECK(!s);
  npy_array r;
  hlo_status s2 = npy_read("/tmp/npy_test_rt.npy", &r);
  CHECK(!s2 && r.kind == 'u' && r.itemsize == 2 && r.rank == 1 && memcmp(r.data, raw, sizeof raw) == 0);
  if (!s2)
    free(r.data);
  hlo_status_free(s);
  hlo_status_free(s2);
}


/* A v2.0 or v3.0 file: 4-byte header length. */
static size_t make_v23(unsigned char *out, int major, const char *dict, const void *data, size_t n) {
  size_t hl = strlen(dict);
  size_t total = 12 + hl + 1;
  size_t pad = (64 - total % 64) % 64, len = hl + pad + 1;
  memcpy(out, "\x93NUMPY", 6);
  out[6] = (unsigned char)major;
  out[7] = 0;
  for (int i = 0; i < 4; i++)
    out[8 + i] = (unsigned char)(len >> (8 * i));
  memcpy(out + 12, dict, hl);
  memset(out + 12 + hl, ' ', pad);
  out[12 + len - 1] = '\n';
  if (n)
    memcpy(out + 12 + len, data, n);
  return 12 + len + n;
}

static void test_more_hand_made(void) {
  unsigned char buf[1024];
  npy_array a;
  /* v2.0 and v3.0 headers (v3 allows UTF-8; ours is ASCII) */
  int16_t v[3] = {-7, 0, 300};
  for (int major = 2; major <= 3; major++) {
    size_t n = make_v23(buf, major, "{'descr': '<i2', 'fortran_order': False, 'shape': (3,), }", v, sizeof v);
    hlo_status s = npy_parse("v.npy", buf, n, &a);
    CHECK(!s && a.kind == 'i' && a.itemsize == 2 && a.rank == 1 && a.dims[0] == 3);
    if (!s) {
      CHECK(memcmp(a.data, v, sizeof v) == 0);
      free(a.data);
    }
    hlo_status_free(s);
  }
  /* Big-endian complex64: each component swapped on its own: (1.5, -2) */
  unsigned char c[8] = {0x3f, 0xc0, 0, 0, 0xc0, 0, 0, 0};
  size_t n = make_v1(buf, "{'descr': '>c8', 'fortran_order': False, 'shape': (1,), }", c, sizeof c);
  hlo_status s = npy_parse("c.npy", buf, n, &a);
  CHECK(!s && a.kind == 'c' && a.itemsize == 8);
  if (!s) {
    CHECK(((float *)a.data)[0] == 1.5f && ((float *)a.data)[1] == -2.0f);
    free(a.data);
  }
  hlo_status_free(s);
  /* Fortran order, rank 3, shape (2,3,2): element (i,j,k) = 100i + 10j + k, stored with i fastest. */
  int32_t f[12];
  for (int k = 0, p = 0; k < 2; k++)
    for (int j = 0; j < 3; j++)
      for (int i = 0; i < 2; i++)
        f[p++] = 100 * i + 10 * j + k;
  n = make_v1(buf, "{'descr': '<i4', 'fortran_order': True, 'shape': (2, 3, 2), }", f, sizeof f);
  s = npy_parse("f3.npy", buf, n, &a);
  CHECK(!s);
  if (!s) {
    int ok = 1;
    for (int i = 0, p = 0; i < 2; i++)
      for (int j = 0; j < 3; j++)
        for (int k = 0; k < 2; k++)
          ok &= ((int32_t *)a.data)[p++] == 100 * i + 10 * j + k;
    CHECK(ok);
    free(a.data);
  }
  hlo_status_free(s);
  /* Keys in another order, double quotes, no trailing comma, extra spaces, bool, raw V2 */
  unsigned char bools[3] = {1, 0, 1};
  n = make_v1(buf, "{ \"shape\" : ( 3 , ) , \"fortran_order\":False,'descr':'|b1'}", bools, 3);
  s = npy_parse("b.npy", buf, n, &a);
  CHECK(!s && a.kind == 'b' && a.itemsize == 1 && a.rank == 1 && a.dims[0] == 3);
  if (!s)
    free(a.data);
  hlo_status_free(s);
  uint16_t raw[2] = {0x3f80, 0xbf80};
  n = make_v1(buf, "{'descr': '|V2', 'fortran_order': False, 'shape': (2,), }", raw, sizeof raw);
  s = npy_parse("v2.npy", buf, n, &a);
  CHECK(!s && a.kind == 'V' && a.itemsize == 2);
  if (!s) {
    CHECK(memcmp(a.data, raw, sizeof raw) == 0);
    free(a.data);
  }
  hlo_status_free(s);
  /* Zero elements: shape (0, 4) */
  n = make_v1(buf, "{'descr': '<f8', 'fortran_order': True, 'shape': (0, 4), }", NULL, 0);
  s = npy_parse("z.npy", buf, n, &a);
  CHECK(!s && a.rank == 2 && a.nbytes == 0);
  if (!s)
    free(a.data);
  hlo_status_free(s);
}

static void test_more_malformed(void) {
  unsigned char buf[1024];
  float v[4] = {0};
  size_t n;
#define BAD(dict, nbytes, needle)                      \
  do {                                                 \
    n = make_v1(buf, dict, v, nbytes);                 \
    expect_error("m.npy", buf, n, needle);             \
  } while (0)
  BAD("{'descr': '<f4', 'fortran_order': False, 'shape': (2,), 'extra': 1, }", 8, "unexpected header key 'extra'");
  BAD("{'descr': '<f4', 'descr': '<f4', 'fortran_order': False, 'shape': (2,), }", 8, "'descr' appears twice");
  BAD("{'fortran_order': False, 'shape': (2,), }", 8, "header has no 'descr'");
  BAD("{'descr': '<f4', 'fortran_order': False, }", 8, "header has no 'shape'");
  BAD("{'descr': '<f4x', 'fortran_order': False, 'shape': (2,), }", 8, "unsupported dtype '<f4x'");
  BAD("{'descr': '<f16', 'fortran_order': False, 'shape': (1,), }", 16, "unsupported dtype '<f16'");
  BAD("{'descr': 'f4', 'fortran_order': False, 'shape': (2,), }", 8, "unsupported dtype 'f4'");
  BAD("{'descr': '|O', 'fortran_order': False, 'shape': (2,), }", 8, "unsupported dtype '|O'");
  BAD("{'descr': '<f4', 'fortran_order': maybe, 'shape': (2,), }", 8, "neither True nor False");
  BAD("{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3, }", 8, "malformed 'shape'");
  BAD("{'descr': '<f4', 'fortran_order': False, 'shape': (-2,), }", 8, "malformed 'shape'");
  BAD("{'descr': '<f4', 'fortran_order': False, 'shape': (2.5,), }", 8, "malformed 'shape'");
  BAD("{'descr': '<f4', 'fortran_order': False, 'shape': [2], }", 8, "'shape' is not a tuple");
  BAD("{'descr': '<f4', 'fortran_order': False, 'shape': (99999999999999999999,), }", 8, "out of range");
  BAD("{'descr': '<f4', 'fortran_order': False, 'shape': (4611686018427387904,), }", 8, "too large");
  BAD("{'descr': '<f4', 'fortran_order': False, 'shape': (2,), } x", 8, "text after the header dict");
  BAD("['descr', '<f4']", 8, "not a dict");
  BAD("{'descr': '<f4', 'fortran_order': False, 'shape': (2,)", 8, "malformed header dict");
#undef BAD
  /* A header length past the end of the file; an unknown version; cut inside the prefix. */
  n = make_v1(buf, "{'descr': '<f4', 'fortran_order': False, 'shape': (2,), }", v, 8);
  buf[9] = 0x7f;
  expect_error("m.npy", buf, n, "truncated header");
  buf[6] = 4;
  expect_error("m.npy", buf, n, "unsupported format version");
  expect_error("m.npy", (const unsigned char *)"\x93NUMPY\x01", 7, "truncated header");
  expect_error("m.npy", (const unsigned char *)"", 0, "magic");
  /* Every single-byte corruption of a valid file is either read or refused: never a crash. */
  unsigned char good[256], mutated[256];
  size_t gn = make_v1(good, "{'descr': '>i4', 'fortran_order': True, 'shape': (2, 2), }", v, 16);
  static const unsigned char values[] = {0, '(', ')', ',', '\'', '9', 0xff, 'L', '}', ' '};
  int parsed = 0, refused = 0;
  for (size_t i = 0; i < gn; i++)
    for (size_t k = 0; k < sizeof values; k++) {
      memcpy(mutated, good, gn);
      mutated[i] = values[k];
      npy_array a;
      hlo_status s = npy_parse("mut.npy", mutated, gn, &a);
      if (s) {
        refused++;
        CHECK(strlen(hlo_status_message(s)) > 0 && !strchr(hlo_status_message(s), '\n'));
        hlo_status_free(s);
      } else {
        parsed++;
        free(a.data);
      }
    }
  CHECK(parsed > 0 && refused > 0);
  /* Every prefix of a valid file is refused. */
  for (size_t i = 0; i < gn; i++) {
    npy_array a;
    hlo_status s = npy_parse("cut.npy", good, i, &a);
    CHECK(s != NULL);
    if (s)
      hlo_status_free(s);
    else
      free(a.data);
  }
  /* A directory and a missing file. */
  npy_array a;
  hlo_status s = npy_read("testdata/npy", &a);
  CHECK(s && strstr(hlo_status_message(s), "is a directory"));
  hlo_status_free(s);
  s = npy_read("testdata/npy/no_such_file.npy", &a);
  CHECK(s && strstr(hlo_status_message(s), "cannot open"));
  hlo_status_free(s);
}

/* npy_write's bytes, checked against the format by hand: numpy's own layout. */
static void test_writer_bytes(void) {
  int64_t dims[2] = {2, 3};
  float data[6] = {0, 1, 2, 3, 4, 5};
  const char *path = "/tmp/npy_test_writer.npy";
  hlo_status s = npy_write(path, "<f4", 2, dims, data, sizeof data);
  CHECK(!s);
  hlo_status_free(s);
  unsigned char b[512];
  FILE *f = fopen(path, "rb");
  size_t n = f ? fread(b, 1, sizeof b, f) : 0;
  if (f)
    fclose(f);
  const char *dict = "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }";
  CHECK(n == 128 + sizeof data);
  CHECK(memcmp(b, "\x93NUMPY\x01\x00", 8) == 0 && b[8] == 118 && b[9] == 0);
  CHECK(memcmp(b + 10, dict, strlen(dict)) == 0 && b[127] == '\n' && b[126] == ' ');
  CHECK(memcmp(b + 128, data, sizeof data) == 0);
  /* rank 0 and rank 1 shapes are written "()" and "(3,)" */
  s = npy_write(path, "|b1", 0, NULL, "\1", 1);
  CHECK(!s);
  hlo_status_free(s);
  f = fopen(path, "rb");
  n = f ? fread(b, 1, sizeof b, f) : 0;
  if (f)
    fclose(f);
  b[n < sizeof b ? n : sizeof b - 1] = 0;
  CHECK(n == 129 && strstr((char *)b + 10, "'shape': (), }") && b[128] == 1);
  int64_t d3[1] = {3};
  s = npy_write(path, "<u2", 1, d3, "\0\0\0\0\0\0", 6);
  CHECK(!s);
  hlo_status_free(s);
  f = fopen(path, "rb");
  n = f ? fread(b, 1, sizeof b, f) : 0;
  if (f)
    fclose(f);
  b[n < sizeof b ? n : sizeof b - 1] = 0;
  CHECK(n == 134 && strstr((char *)b + 10, "'descr': '<u2', 'fortran_order': False, 'shape': (3,), }"));
  s = npy_write("/nonexistent-dir/x.npy", "<f4", 0, NULL, data, 4);
  CHECK(s && strstr(hlo_status_message(s), "/nonexistent-dir/x.npy: cannot write"));
  hlo_status_free(s);
}

/* numpy-made fixtures beyond f32 (contents: testdata/npy/make.py). */
static void test_more_fixtures(void) {
  npy_array a;
  hlo_status s = npy_read("testdata/npy/bool_4.npy", &a);
  CHECK(!s && a.kind == 'b' && a.itemsize == 1 && a.rank == 1 && a.dims[0] == 4);
  if (!s) {
    CHECK(memcmp(a.data, "\1\0\1\1", 4) == 0);
    free(a.data);
  }
  hlo_status_free(s);
  s = npy_read("testdata/npy/f16_3.npy", &a);
  CHECK(!s && a.kind == 'f' && a.itemsize == 2 && a.dims[0] == 3);
  if (!s) {
    const uint16_t want[3] = {0x3e00, 0xc000, 0x7bff}; /* 1.5, -2, 65504 in binary16 */
    CHECK(memcmp(a.data, want, sizeof want) == 0);
    free(a.data);
  }
  hlo_status_free(s);
  s = npy_read("testdata/npy/c128_big_endian_2.npy", &a);
  CHECK(!s && a.kind == 'c' && a.itemsize == 16 && a.dims[0] == 2);
  if (!s) {
    const double *d = a.data;
    CHECK(d[0] == 0.5 && d[1] == -1.25 && d[2] == 3.0 && d[3] == 4.0);
    free(a.data);
  }
  hlo_status_free(s);
  s = npy_read("testdata/npy/u8_fortran_2x2x2.npy", &a);
  CHECK(!s && a.kind == 'u' && a.itemsize == 1 && a.rank == 3);
  if (!s) {
    int ok = 1;
    for (int i = 0; i < 8; i++)
      ok &= ((uint8_t *)a.data)[i] == i;
    CHECK(ok);
    free(a.data);
  }
  hlo_status_free(s);
  s = npy_read("testdata/npy/f64_scalar.npy", &a);
  CHECK(!s && a.rank == 0 && a.nbytes == 8 && a.data && *(double *)a.data == -0.125);
  if (!s)
    free(a.data);
  hlo_status_free(s);
}

int main(void) {
  test_hand_made();
  test_malformed();
  test_fixtures_and_roundtrip();
  test_more_hand_made();
  test_more_malformed();
  test_writer_bytes();
  test_more_fixtures();
  printf("npy_test: %s\n", failures ? "FAILED" : "ok");
  return failures ? 1 : 0;
}
