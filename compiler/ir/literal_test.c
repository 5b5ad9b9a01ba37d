/* literal_test.c — element encodings against bit patterns computed by hand from the formats'
 * definitions (IEEE half, bfloat16, the OCP f8 formats), and round trips through the printer's
 * shortest decimal form. */
#include <math.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>

#include "ir/literal.h"
#include "ir/print.h"

static int failures;

static void expect_bits(ir_etype et, double v, uint64_t want, const char *what) {
  unsigned char out[16] = {0};
  ir_lit_status st = ir_lit_encode_float(et, v, 0, out);
  uint64_t got = ir_lit_float_bits(et, out);
  if (st != IR_LIT_OK || got != want) {
    fprintf(stderr, "%s: %s(%g) = 0x%llx (status %d), want 0x%llx\n", what, ir_etype_table[et].spelling, v,
            (unsigned long long)got, st, (unsigned long long)want);
    failures++;
  }
}

static void expect_status(ir_etype et, double v, ir_lit_status want, const char *what) {
  unsigned char out[16];
  if (ir_lit_encode_float(et, v, 0, out) != want) {
    fprintf(stderr, "%s: %s(%g) status differs\n", what, ir_etype_table[et].spelling, v);
    failures++;
  }
}

int main(void) {
  /* IEEE half: 1.0 = 0x3C00, 65504 = 0x7BFF, smallest subnormal 2^-24 = 0x0001. */
  expect_bits(IR_F16, 1.0, 0x3C00, "f16 one");
  expect_bits(IR_F16, 65504.0, 0x7BFF, "f16 max");
  expect_bits(IR_F16, ldexp(1, -24), 0x0001, "f16 min subnormal");
  expect_bits(IR_F16, -2.0, 0xC000, "f16 -2");
  expect_bits(IR_F16, 1.0 + ldexp(1, -11), 0x3C00, "f16 tie rounds to even (down)");
  expect_bits(IR_F16, 1.0 + 3 * ldexp(1, -11), 0x3C02, "f16 tie rounds to even (up)");
  expect_status(IR_F16, 70000.0, IR_LIT_OUT_OF_RANGE, "f16 overflow");
  /* bfloat16: the top half of the f32 bits, rounded to nearest even. */
  expect_bits(IR_BF16, 1.0, 0x3F80, "bf16 one");
  expect_bits(IR_BF16, 3.140625, 0x4049, "bf16 pi-ish");
  expect_bits(IR_BF16, 1.00390625, 0x3F80, "bf16 tie to even");
  expect_bits(IR_BF16, -INFINITY, 0xFF80, "bf16 -inf");
  /* f8e4m3fn: max 448 = 0x7E, no infinity, NaN 0x7F. */
  expect_bits(IR_F8E4M3FN, 448.0, 0x7E, "e4m3fn max");
  expect_bits(IR_F8E4M3FN, 1.0, 0x38, "e4m3fn one");
  expect_bits(IR_F8E4M3FN, NAN, 0x7F, "e4m3fn nan");
  expect_status(IR_F8E4M3FN, INFINITY, IR_LIT_OUT_OF_RANGE, "e4m3fn has no inf");
  /* f8e5m2: IEEE-like, 1.0 = 0x3C, max 57344 = 0x7B, inf = 0x7C. */
  expect_bits(IR_F8E5M2, 1.0, 0x3C, "e5m2 one");
  expect_bits(IR_F8E5M2, 57344.0, 0x7B, "e5m2 max");
  expect_bits(IR_F8E5M2, INFINITY, 0x7C, "e5m2 inf");
  /* fnuz: NaN is 0x80 and there is no -0. */
  expect_bits(IR_F8E4M3FNUZ, NAN, 0x80, "e4m3fnuz nan");
  expect_bits(IR_F8E4M3FNUZ, -0.0, 0x00, "e4m3fnuz -0 is +0");
  expect_bits(IR_F8E4M3FNUZ, 1.0, 0x40, "e4m3fnuz one (bias 8)");
  /* f4e2m1fn: values 0, 0.5, 1, 1.5, 2, 3, 4, 6. */
  expect_bits(IR_F4E2M1FN, 6.0, 0x7, "e2m1 max");
  expect_bits(IR_F4E2M1FN, 1.5, 0x3, "e2m1 1.5");
  /* f8e8m0fnu: powers of two; 1.0 = 127. */
  expect_bits(IR_F8E8M0FNU, 1.0, 127, "e8m0 one");
  expect_bits(IR_F8E8M0FNU, 0.25, 125, "e8m0 quarter");
  /* Integers. */
  unsigned char b[8];
  if (ir_lit_encode_int(IR_S8, -129, 0, false, b) != IR_LIT_OUT_OF_RANGE ||
      ir_lit_encode_int(IR_U64, 0, UINT64_MAX, true, b) != IR_LIT_OK || b[7] != 0xFF) {
    fprintf(stderr, "integer range checks\n");
    failures++;
  }
  /* Printer round trip: shortest text reads back to the same bits for every f16 value. */
  for (uint32_t bits = 0; bits < 0x10000; bits++) {
    uint16_t h = (uint16_t)bits;
    double v = ir_lit_decode_float(IR_F16, &h);
    if (isnan(v))
      continue;
    char text[64];
    ir_format_element(IR_F16, &h, text, sizeof text);
    unsigned char back[2];
    double parsed = strcmp(text, "inf") == 0 ? INFINITY : strcmp(text, "-inf") == 0 ? -INFINITY : strtod(text, NULL);
    if (ir_lit_encode_float(IR_F16, parsed, 0, back) != IR_LIT_OK || memcmp(back, &h, 2) != 0) {
      fprintf(stderr, "f16 0x%04x printed as %s does not read back\n", bits, text);
      failures++;
      break;
    }
  }
  printf("literal_test: %s\n", failures ? "FAILED" : "ok");
  return failures ? 1 : 0;
}
