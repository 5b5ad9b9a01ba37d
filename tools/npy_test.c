/* npy_test.c — .npy reading from bytes written here by hand (independent of npy_write) and
 * from numpy-made fixtures (testdata/npy/make.py documents their contents); malformed files
 * give one clear error, never a crash; npy_write output reads back. */
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

int main(void) {
  test_hand_made();
  test_malformed();
  test_fixtures_and_roundtrip();
  printf("npy_test: %s\n", failures ? "FAILED" : "ok");
  return failures ? 1 : 0;
}
