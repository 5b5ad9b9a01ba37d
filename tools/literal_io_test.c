/* literal_io_test.c — results printed as XLA's literal printer does (expected strings written
 * by hand from the printer's rules in xla/literal.cc: rank-1 "{a, b}", innermost rows
 * "  { a, b }" or "  {a}" for one element, ",\n" between rows, index comments above rank 3,
 * pred arrays as 1/0 but pred scalars as true/false, a token as the bare word), and inline literal inputs: values,
 * shape mismatches, syntax errors with the column in the argument.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "literal_io.h"

static int failures;
#define CHECK(cond)                                                            \
  do {                                                                         \
    if (!(cond)) {                                                             \
      fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, #cond); \
      failures++;                                                              \
    }                                                                          \
  } while (0)

static void expect_print(int32_t dtype, int rank, const int64_t *dims, int64_t bytes, const void *data,
                         const char *want) {
  hlo_array_desc d = {.dtype = dtype, .rank = rank, .dims = dims, .byte_size = bytes, .name = "r"};
  char *buf = NULL;
  size_t n = 0;
  FILE *f = open_memstream(&buf, &n);
  hlo_status s = litio_print(&d, data, f);
  fclose(f);
  CHECK(s == NULL);
  hlo_status_free(s);
  if (strcmp(buf, want) != 0) {
    fprintf(stderr, "printed:\n%s---\nwanted:\n%s---\n", buf, want);
    failures++;
  }
  free(buf);
}

static void test_print(void) {
  float f1 = 1.5f;
  expect_print(HLO_DTYPE_IR_F32, 0, NULL, 4, &f1, "f32[] 1.5\n");
  unsigned char t = 1;
  expect_print(HLO_DTYPE_IR_PRED, 0, NULL, 1, &t, "pred[] true\n");
  int64_t d3[1] = {3};
  int32_t s3[3] = {1, -2, 3};
  expect_print(HLO_DTYPE_IR_S32, 1, d3, 12, s3, "s32[3] {1, -2, 3}\n");
  unsigned char p3[3] = {1, 0, 1};
  expect_print(HLO_DTYPE_IR_PRED, 1, d3, 3, p3, "pred[3] {1, 0, 1}\n");
  int64_t d22[2] = {2, 2};
  float f4[4] = {1, 2, 3, 4};
  expect_print(HLO_DTYPE_IR_F32, 2, d22, 16, f4, "f32[2,2] {\n  { 1, 2 },\n  { 3, 4 }\n}\n");
  int64_t d21[2] = {2, 1};
  expect_print(HLO_DTYPE_IR_F32, 2, d21, 8, f4, "f32[2,1] {\n  {1},\n  {2}\n}\n");
  int64_t d212[3] = {2, 1, 2};
  expect_print(HLO_DTYPE_IR_F32, 3, d212, 16, f4, "f32[2,1,2] {\n{\n  { 1, 2 }\n},\n{\n  { 3, 4 }\n}\n}\n");
  int64_t d2112[4] = {2, 1, 1, 2};
  expect_print(HLO_DTYPE_IR_F32, 4, d2112, 16, f4,
               "f32[2,1,1,2] {\n{ /*i0=0*/\n{ /*i1=0*/\n  { 1, 2 }\n}\n},\n{ /*i0=1*/\n{ /*i1=0*/\n  { 3, 4 }\n}\n}\n}\n");
  int64_t d0[1] = {0};
  expect_print(HLO_DTYPE_IR_F32, 1, d0, 0, f4, "f32[0] {}\n");
  int64_t d03[2] = {0, 3};
  expect_print(HLO_DTYPE_IR_F32, 2, d03, 0, f4, "f32[0,3] {\n\n}\n");
  uint16_t bf[2] = {0x3fc0, 0xc000}; /* bf16 1.5, -2 */
  int64_t d2[1] = {2};
  expect_print(HLO_DTYPE_IR_BF16, 1, d2, 4, bf, "bf16[2] {1.5, -2}\n");
  expect_print(HLO_DTYPE_IR_TOKEN, 0, NULL, 0, NULL, "token\n");
  float c2[4] = {1.5f, -2, 0, 1}; /* complex elements print as (re, im) */
  expect_print(HLO_DTYPE_IR_C64, 1, d2, 16, c2, "c64[2] {(1.5, -2), (0, 1)}\n");
  float special[2] = {1e-8f, -1.0f / 0.0f};
  expect_print(HLO_DTYPE_IR_F32, 1, d2, 8, special, "f32[2] {1e-08, -inf}\n");
}

static void test_looks_inline(void) {
  CHECK(litio_looks_inline("f32[2] {1, 2}"));
  CHECK(litio_looks_inline("pred[] true"));
  CHECK(litio_looks_inline("bf16[3] {1,2,3}"));
  CHECK(!litio_looks_inline("x.npy"));
  CHECK(!litio_looks_inline("data/f32[2].npy"));
  CHECK(!litio_looks_inline("[1, 2]"));
  CHECK(!litio_looks_inline("tools")); /* no '[' */
}

static hlo_status parse(const char *text, int32_t dtype, int rank, const int64_t *dims, int64_t bytes, void *dst) {
  hlo_array_desc d = {.dtype = dtype, .rank = rank, .dims = dims, .byte_size = bytes, .name = "x"};
  return litio_parse_input(text, 0, &d, dst);
}

static void expect_parse_error(hlo_status s, const char *needle) {
  CHECK(s != NULL);
  if (!s)
    return;
  CHECK(hlo_status_code_of(s) == HLO_INVALID_ARGUMENT);
  if (!strstr(hlo_status_message(s), needle)) {
    fprintf(stderr, "message '%s' lacks '%s'\n", hlo_status_message(s), needle);
    failures++;
  }
  hlo_status_free(s);
}

static void test_parse(void) {
  int64_t d22[2] = {2, 2};
  float f[4] = {0};
  hlo_status s = parse("f32[2,2] {{1,2},{3,4.5}}", HLO_DTYPE_IR_F32, 2, d22, 16, f);
  CHECK(s == NULL && f[0] == 1 && f[3] == 4.5f);
  hlo_status_free(s);
  int32_t i = 0;
  s = parse("s32[] -7", HLO_DTYPE_IR_S32, 0, NULL, 4, &i);
  CHECK(s == NULL && i == -7);
  hlo_status_free(s);
  unsigned char p[2] = {9, 9};
  int64_t d2[1] = {2};
  s = parse("pred[2] {true, false}", HLO_DTYPE_IR_PRED, 1, d2, 2, p);
  CHECK(s == NULL && p[0] == 1 && p[1] == 0);
  hlo_status_free(s);
  uint16_t bf = 0;
  s = parse("bf16[] 1.5", HLO_DTYPE_IR_BF16, 0, NULL, 2, &bf);
  CHECK(s == NULL && bf == 0x3fc0);
  hlo_status_free(s);
  /* the literal's shape must be the parameter's */
  expect_parse_error(parse("f32[4] {1,2,3,4}", HLO_DTYPE_IR_F32, 2, d22, 16, f),
                     "--input 'f32[4] {1,2,3,4}': parameter 0 (%x) expects f32[2,2], got f32[4]");
  expect_parse_error(parse("f64[2,2] {{1,2},{3,4}}", HLO_DTYPE_IR_F32, 2, d22, 16, f), "expects f32[2,2], got f64[2,2]");
  /* syntax errors point at a column of the argument */
  expect_parse_error(parse("f32[2,2] {{1,2},{3,y}}", HLO_DTYPE_IR_F32, 2, d22, 16, f),
                     "--input 'f32[2,2] {{1,2},{3,y}}' (parameter 0, %x): column 20: ");
  expect_parse_error(parse("f32[2,2] {{1,2},{3,4}", HLO_DTYPE_IR_F32, 2, d22, 16, f), "(parameter 0, %x): column ");
  expect_parse_error(parse("f32[2,2]", HLO_DTYPE_IR_F32, 2, d22, 16, f), "expected a file or a literal");
  expect_parse_error(parse("f32[2,2] {{1,2},{3,4}}) ROOT", HLO_DTYPE_IR_F32, 2, d22, 16, f), "(parameter 0, %x)");
}

int main(void) {
  test_print();
  test_looks_inline();
  test_parse();
  printf("literal_io_test: %s\n", failures ? "FAILED" : "ok");
  return failures ? 1 : 0;
}
