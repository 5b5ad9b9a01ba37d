/* print_test.c — the printer's unit tests.
 *
 * Element formatting: expected texts derived by hand from the formats' definitions (the
 * shortest decimal that reads back to the same bits: neighbours' midpoints worked out below),
 * then every bit pattern of every 8- and 16-bit float type (and a sample of f32/f64 patterns)
 * printed and read back through the real parser, bits compared with the originals (NaN
 * payloads and -0 included).  Literal, instruction and module printing: IR built by hand,
 * compared with the text XLA's printer writes for it (textconv.md, XLA's HloInstruction
 * ToString conventions).  The attribute table both the parser and the printer read: one row
 * per name and family, each with what its kind needs.
 */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "grammar/parse.h"
#include "ir/attributes.h"
#include "ir/literal.h"
#include "ir/print.h"

static int failures;

#define CHECK_STR(got, want, what)                                                         \
  do {                                                                                     \
    const char *g_ = (got), *w_ = (want);                                                  \
    if (!g_ || strcmp(g_, w_) != 0) {                                                      \
      fprintf(stderr, "%s:%d: %s:\n  got:  %s\n  want: %s\n", __FILE__, __LINE__, (what), \
              g_ ? g_ : "(null)", w_);                                                     \
      failures++;                                                                          \
    }                                                                                      \
  } while (0)

/* ---- one element, expected text by hand ------------------------------------------------ */

static void store_bits(ir_etype et, uint64_t bits, unsigned char *out) {
  memset(out, 0, 16);
  memcpy(out, &bits, (size_t)ir_etype_table[et].storage_bytes); /* little-endian host */
}

static void expect_fmt(ir_etype et, uint64_t bits, const char *want) {
  unsigned char e[16];
  char buf[128];
  store_bits(et, bits, e);
  ir_format_element(et, e, buf, sizeof buf);
  char what[96];
  snprintf(what, sizeof what, "%s bits 0x%" PRIx64, ir_etype_table[et].spelling, bits);
  CHECK_STR(buf, want, what);
}

static void test_element_texts(void) {
  /* f32: 0.1 = 0x3DCCCCCD; 1/3 = 0x3EAAAAAB = 0.333333343267...: "0.3333333" is nearer the
   * lower neighbour 0.333333313465, "0.33333334" is within half an ulp (2.98e-8) -> 8 digits. */
  expect_fmt(IR_F32, 0x3DCCCCCD, "0.1");
  expect_fmt(IR_F32, 0x3EAAAAAB, "0.33333334");
  expect_fmt(IR_F32, 0x3F800000, "1");
  expect_fmt(IR_F32, 0xC0490FDB, "-3.1415927"); /* float pi = 3.14159274101... */
  expect_fmt(IR_F32, 0x7F7FFFFF, "3.4028235e+38");
  expect_fmt(IR_F32, 0x00000001, "1e-45");      /* 2^-149 = 1.4e-45; 1e-45 rounds to it */
  expect_fmt(IR_F32, 0x7F800000, "inf");
  expect_fmt(IR_F32, 0xFF800000, "-inf");
  expect_fmt(IR_F32, 0x7FC00000, "nan");        /* the default quiet NaN: payload = quiet bit */
  expect_fmt(IR_F32, 0xFFC00000, "-nan");
  expect_fmt(IR_F32, 0x7FC00001, "nan(0x400001)");
  expect_fmt(IR_F32, 0x7F800001, "nan(0x1)");   /* signalling NaN, payload 1 */
  expect_fmt(IR_F32, 0x80000000, "-0.0");       /* "-0" would lex as the integer 0 */
  expect_fmt(IR_F32, 0x00000000, "0");
  /* f64: Python's repr gives the shortest round-tripping texts. */
  expect_fmt(IR_F64, 0x3FB999999999999AULL, "0.1");
  expect_fmt(IR_F64, 0x3FD5555555555555ULL, "0.3333333333333333");
  expect_fmt(IR_F64, 0x7FEFFFFFFFFFFFFFULL, "1.7976931348623157e+308");
  expect_fmt(IR_F64, 0x0000000000000001ULL, "5e-324");
  expect_fmt(IR_F64, 0x7FF0000000000001ULL, "nan(0x1)");
  expect_fmt(IR_F64, 0xFFF8000000000000ULL, "-nan");
  /* bf16 0x3DCD = 0.10009765625; neighbours 0.099609375 and 0.1005859375: 0.1 is above the
   * lower midpoint 0.0998535 so reads back as 0x3DCD.  0.1001 (XLA's 4-digit print) is the
   * same element (see test_bf16_four_digits). */
  expect_fmt(IR_BF16, 0x3DCD, "0.1");
  /* bf16 0x4049 = 3.140625, spacing 1/64: "3.1" is nearer 3.09375 (0x4046), "3.14" is not. */
  expect_fmt(IR_BF16, 0x4049, "3.14");
  expect_fmt(IR_BF16, 0x3F80, "1");
  expect_fmt(IR_BF16, 0x0001, "9e-41");         /* 2^-133 = 9.18e-41 */
  expect_fmt(IR_BF16, 0x7FC0, "nan");
  expect_fmt(IR_BF16, 0xFFC0, "-nan");
  expect_fmt(IR_BF16, 0x7FC1, "nan(0x41)");
  expect_fmt(IR_BF16, 0x7F81, "nan(0x1)");
  expect_fmt(IR_BF16, 0xFF80, "-inf");
  expect_fmt(IR_BF16, 0x8000, "-0.0");
  /* f16 0x3555 = 0.333251953125, spacing 2^-12: "0.333" is nearer 0x3554 (0.3330078). */
  expect_fmt(IR_F16, 0x3555, "0.3333");
  expect_fmt(IR_F16, 0x7BFF, "65504");
  expect_fmt(IR_F16, 0x0001, "6e-08");          /* 2^-24 = 5.96e-8 */
  expect_fmt(IR_F16, 0x7E00, "nan");
  expect_fmt(IR_F16, 0x7E01, "nan(0x201)");
  expect_fmt(IR_F16, 0xFC00, "-inf");
  /* f8e4m3fn (bias 7, no inf, NaN = S.1111.111): max 448, 2^-9 = 0.001953125 -> "0.002". */
  expect_fmt(IR_F8E4M3FN, 0x7E, "448");
  expect_fmt(IR_F8E4M3FN, 0x38, "1");
  expect_fmt(IR_F8E4M3FN, 0x01, "0.002");
  expect_fmt(IR_F8E4M3FN, 0x7F, "nan");
  expect_fmt(IR_F8E4M3FN, 0xFF, "-nan");
  /* f8e5m2 (IEEE-like, 2 mantissa bits): inf 0x7C, max 57344, quiet NaN 0x7E, payloads. */
  expect_fmt(IR_F8E5M2, 0x7C, "inf");
  expect_fmt(IR_F8E5M2, 0x7B, "57344");
  expect_fmt(IR_F8E5M2, 0x7E, "nan");
  expect_fmt(IR_F8E5M2, 0x7D, "nan(0x1)");
  expect_fmt(IR_F8E5M2, 0x7F, "nan(0x3)");
  /* f8e4m3 (IEEE-like, bias 7): 1 = 0x38, max 240 = 0x77, inf 0x78. */
  expect_fmt(IR_F8E4M3, 0x38, "1");
  expect_fmt(IR_F8E4M3, 0x77, "240");
  expect_fmt(IR_F8E4M3, 0x78, "inf");
  /* f8e3m4 (bias 3): 1 = 0x30, max 15.5 = 0x6F, inf 0x70. */
  expect_fmt(IR_F8E3M4, 0x30, "1");
  expect_fmt(IR_F8E3M4, 0x6F, "15.5");
  expect_fmt(IR_F8E3M4, 0x70, "inf");
  /* fnuz types: bias 8 (e4m3fnuz), 16 (e5m2fnuz), 11 (e4m3b11fnuz). */
  expect_fmt(IR_F8E4M3FNUZ, 0x40, "1");
  expect_fmt(IR_F8E5M2FNUZ, 0x40, "1");
  expect_fmt(IR_F8E4M3B11FNUZ, 0x58, "1");
  /* f8e8m0fnu: 2^(e-127); 0x7F = 1, 0x80 = 2, 0x00 = 2^-127 = 5.88e-39, 0xFF NaN. */
  expect_fmt(IR_F8E8M0FNU, 0x7F, "1");
  expect_fmt(IR_F8E8M0FNU, 0x80, "2");
  expect_fmt(IR_F8E8M0FNU, 0x00, "6e-39");
  expect_fmt(IR_F8E8M0FNU, 0xFF, "nan");
  /* f4e2m1fn: 0.5 = 0x1, 6 = 0x7, -6 = 0xF, -0 = 0x8. */
  expect_fmt(IR_F4E2M1FN, 0x1, "0.5");
  expect_fmt(IR_F4E2M1FN, 0x7, "6");
  expect_fmt(IR_F4E2M1FN, 0xF, "-6");
  expect_fmt(IR_F4E2M1FN, 0x8, "-0.0");
  /* Integers and pred. */
  expect_fmt(IR_PRED, 1, "true");
  expect_fmt(IR_PRED, 0, "false");
  expect_fmt(IR_S64, 0x8000000000000000ULL, "-9223372036854775808");
  expect_fmt(IR_U64, 0xFFFFFFFFFFFFFFFFULL, "18446744073709551615");
  expect_fmt(IR_S8, 0x80, "-128");
  expect_fmt(IR_U8, 0xFF, "255");
  expect_fmt(IR_S16, 0x8000, "-32768");
  expect_fmt(IR_U32, 0xFFFFFFFF, "4294967295");
  /* Complex: (re, im) of the component type. */
  unsigned char c[16];
  float c64v[2] = {1.0f, -2.0f};
  memcpy(c, c64v, 8);
  char buf[128];
  ir_format_element(IR_C64, c, buf, sizeof buf);
  CHECK_STR(buf, "(1, -2)", "c64 (1, -2)");
  double c128v[2] = {0.1, NAN};
  memcpy(c, c128v, 16);
  ir_format_element(IR_C128, c, buf, sizeof buf);
  CHECK_STR(buf, "(0.1, nan)", "c128 (0.1, nan)");
}

/* ---- read back through the parser ------------------------------------------------------ */

typedef struct sbuf_t {
  char *p;
  size_t len, cap;
} sbuf_t;

static void put(sbuf_t *b, const char *s) {
  size_t n = strlen(s);
  if (b->len + n + 1 > b->cap) {
    size_t cap = b->cap ? b->cap : 4096;
    while (b->len + n + 1 > cap)
      cap *= 2;
    char *q = realloc(b->p, cap);
    if (!q) {
      fprintf(stderr, "out of memory\n");
      exit(1);
    }
    b->p = q;
    b->cap = cap;
  }
  memcpy(b->p + b->len, s, n + 1);
  b->len += n;
}

/* Prints count elements (bit patterns from bits()) as one constant, parses it, and compares
 * every element's bits with the original. */
static void roundtrip_patterns(ir_etype et, int64_t count, uint64_t (*bits)(int64_t i)) {
  const char *ts = ir_etype_table[et].spelling;
  int eb = ir_etype_table[et].storage_bytes;
  sbuf_t b = {0};
  char line[256];
  snprintf(line, sizeof line, "HloModule t\n\nENTRY %%e () -> %s[%" PRId64 "] {\n  ROOT %%c = %s[%" PRId64 "]{0} constant({",
           ts, count, ts, count);
  put(&b, line);
  for (int64_t i = 0; i < count; i++) {
    unsigned char e[16];
    store_bits(et, bits(i), e);
    char v[128];
    ir_format_element(et, e, v, sizeof v);
    put(&b, i ? ", " : "");
    put(&b, v);
  }
  put(&b, "})\n}\n");
  ir_diag_list diags;
  ir_diag_init(&diags, "<patterns>", b.p, b.len);
  ir_module *m = NULL;
  hlo_status st = ir_parse_module(b.p, b.len, &diags, &m);
  if (st) {
    fprintf(stderr, "%s: the printed elements do not parse: %s\n", ts, hlo_status_message(st));
    failures++;
  } else {
    const unsigned char *data = m->entry->root->attrs.u.literal->data;
    int bad = 0;
    for (int64_t i = 0; i < count && bad < 5; i++) {
      unsigned char want[16], got[16] = {0};
      store_bits(et, bits(i), want);
      memcpy(got, data + i * eb, (size_t)eb);
      if (memcmp(want, got, (size_t)eb) != 0) {
        char v[128];
        ir_format_element(et, want, v, sizeof v);
        fprintf(stderr, "%s: bits 0x%" PRIx64 " print as %s, which reads back as 0x%" PRIx64 "\n", ts,
                bits(i), v, ir_lit_float_bits(et, got));
        bad++;
        failures++;
      }
    }
  }
  hlo_status_free(st);
  ir_module_destroy(m);
  ir_diag_deinit(&diags);
  free(b.p);
}

static uint64_t identity_bits(int64_t i) { return (uint64_t)i; }

/* f32/f64 samples: a fixed xorshift sequence, with the special patterns first. */
static uint64_t mix(uint64_t x) {
  x ^= x >> 33;
  x *= 0xff51afd7ed558ccdULL;
  x ^= x >> 33;
  x *= 0xc4ceb9fe1a85ec53ULL;
  x ^= x >> 33;
  return x;
}

static uint64_t f32_bits(int64_t i) {
  static const uint32_t special[] = {0x00000000, 0x80000000, 0x00000001, 0x807FFFFF, 0x7F7FFFFF, 0xFF7FFFFF,
                                     0x7F800000, 0xFF800000, 0x7FC00000, 0xFFC00000, 0x7F800001, 0xFFBFFFFF,
                                     0x3DCCCCCD, 0x3EAAAAAB, 0x00800000, 0x4B800001};
  int ns = (int)(sizeof special / sizeof *special);
  return i < ns ? special[i] : (uint32_t)mix((uint64_t)i);
}

static uint64_t f64_bits(int64_t i) {
  static const uint64_t special[] = {0, 0x8000000000000000ULL, 1, 0x7FEFFFFFFFFFFFFFULL, 0x7FF0000000000000ULL,
                                     0x7FF8000000000000ULL, 0xFFF8000000000000ULL, 0x7FF0000000000001ULL,
                                     0x7FFFFFFFFFFFFFFFULL, 0x0010000000000000ULL, 0x3FB999999999999AULL};
  int ns = (int)(sizeof special / sizeof *special);
  return i < ns ? special[i] : mix((uint64_t)i * 0x9E3779B97F4A7C15ULL);
}

static void test_every_pattern_reads_back(void) {
  static const ir_etype small[] = {IR_F8E4M3FN, IR_F8E5M2, IR_F8E4M3, IR_F8E3M4, IR_F8E4M3FNUZ,
                                   IR_F8E5M2FNUZ, IR_F8E4M3B11FNUZ, IR_F8E8M0FNU};
  for (size_t i = 0; i < sizeof small / sizeof *small; i++)
    roundtrip_patterns(small[i], 256, identity_bits);
  roundtrip_patterns(IR_F4E2M1FN, 16, identity_bits);
  roundtrip_patterns(IR_F16, 65536, identity_bits);
  roundtrip_patterns(IR_BF16, 65536, identity_bits);
  roundtrip_patterns(IR_F32, 200000, f32_bits);
  roundtrip_patterns(IR_F64, 200000, f64_bits);
}

/* Parses `text`; returns the module (NULL after reporting). */
static ir_module *parse_text(const char *text) {
  ir_diag_list diags;
  ir_diag_init(&diags, "<test>", text, strlen(text));
  ir_module *m = NULL;
  hlo_status st = ir_parse_module(text, strlen(text), &diags, &m);
  if (st) {
    fprintf(stderr, "does not parse: %s\n%s\n", hlo_status_message(st), text);
    failures++;
  }
  hlo_status_free(st);
  ir_diag_deinit(&diags);
  return m;
}

/* XLA's dumps print bf16 with 4 significant digits; 0.1001 is the element 0x3DCD. */
static void test_bf16_four_digits(void) {
  ir_module *m = parse_text("HloModule t\nENTRY %e () -> bf16[3] {\n  ROOT %c = bf16[3]{0} constant({0.1001, 0.2002, -1.999})\n}\n");
  if (!m)
    return;
  const uint16_t *d = m->entry->root->attrs.u.literal->data;
  /* 0.2002 -> f32 0x3E4D00D2 -> bf16 0x3E4D (0.2001953125); -1.999 -> 0xBFFF (-1.9921875
   * is 0xBFFF; -2.0 is 0xC000; -1.999 is nearer -2.0: |−1.999+2| = 0.001 < 0.0068). */
  if (d[0] != 0x3DCD || d[1] != 0x3E4D || d[2] != 0xC000) {
    fprintf(stderr, "bf16 four-digit values read as 0x%04x 0x%04x 0x%04x\n", d[0], d[1], d[2]);
    failures++;
  }
  char *s = ir_print_literal_to_string(m->entry->root->attrs.u.literal, 0);
  CHECK_STR(s, "{0.1, 0.2, -2}", "bf16 four-digit values print shortest");
  free(s);
  ir_module_destroy(m);
}

/* A target with every kind of escape prints back to the same bytes. */
static void test_escapes_read_back(void) {
  ir_module *m = parse_text("HloModule t\nENTRY %e () -> f32[] {\n  ROOT %c = f32[] custom-call(), "
                            "custom_call_target=\"q\\\"s\\'b\\\\n\\n\\t\\303\\x01\"\n}\n");
  if (!m)
    return;
  ir_str t = m->entry->root->attrs.custom_text;
  const char want[] = "q\"s'b\\n\n\t\303\001";
  if (t.len != sizeof want - 1 || memcmp(t.p, want, t.len) != 0) {
    fprintf(stderr, "custom_call_target unescaped to %.*s\n", (int)t.len, t.p);
    failures++;
  }
  char *s = ir_print_instr_to_string(m->entry->root);
  CHECK_STR(s, "%c = f32[] custom-call(), custom_call_target=\"q\\\"s\\'b\\\\n\\n\\t\\303\\001\"", "escapes");
  free(s);
  ir_module_destroy(m);
}

/* ---- literals built by hand -------------------------------------------------------------- */

static ir_literal *make_literal(ir_module *m, ir_etype et, int rank, const int64_t *dims, const void *data,
                                size_t nbytes) {
  ir_literal *l = ir_arena_alloc(&m->arena, sizeof *l);
  l->shape = ir_shape_array(m, et, rank, dims);
  if (data) {
    l->data = ir_arena_dup(&m->arena, data, nbytes ? nbytes : 1);
    l->nbytes = (int64_t)nbytes;
  }
  return l;
}

static void test_literals(void) {
  ir_module *m = ir_module_create();
  float f23[6] = {1, 2, 3, 4, 5, 6.5f};
  int64_t d23[2] = {2, 3};
  ir_literal *l = make_literal(m, IR_F32, 2, d23, f23, sizeof f23);
  char *s = ir_print_literal_to_string(l, 0);
  CHECK_STR(s, "{ {1, 2, 3}, {4, 5, 6.5} }", "f32[2,3]");
  free(s);
  s = ir_print_literal_to_string(l, 1);
  CHECK_STR(s, "f32[2,3]{1,0} { {1, 2, 3}, {4, 5, 6.5} }", "f32[2,3] with shape");
  free(s);
  int64_t d0[1] = {0};
  l = make_literal(m, IR_F32, 1, d0, NULL, 0);
  s = ir_print_literal_to_string(l, 0);
  CHECK_STR(s, "{}", "empty f32[0]");
  free(s);
  int64_t d03[2] = {0, 3}, d20[2] = {2, 0};
  s = ir_print_literal_to_string(make_literal(m, IR_S32, 2, d03, NULL, 0), 0);
  CHECK_STR(s, "{}", "empty s32[0,3]");
  free(s);
  s = ir_print_literal_to_string(make_literal(m, IR_S32, 2, d20, NULL, 0), 0);
  CHECK_STR(s, "{ {}, {} }", "empty s32[2,0]: one empty row per outer index");
  free(s);
  unsigned char pr[3] = {1, 0, 1};
  int64_t d3[1] = {3};
  l = make_literal(m, IR_PRED, 1, d3, pr, 3);
  s = ir_print_literal_to_string(l, 0);
  CHECK_STR(s, "{true, false, true}", "pred[3]");
  free(s);
  double sc = -2.5;
  l = make_literal(m, IR_F64, 0, NULL, &sc, 8);
  s = ir_print_literal_to_string(l, 1);
  CHECK_STR(s, "f64[] -2.5", "f64 scalar with shape");
  free(s);
  int64_t d2[1] = {2};
  l = make_literal(m, IR_F32, 1, d2, NULL, 0);
  l->elided = true;
  s = ir_print_literal_to_string(l, 0);
  CHECK_STR(s, "{...}", "elided");
  free(s);
  /* A tuple literal: elements carry their shapes. */
  int32_t three = 3;
  ir_literal *t = ir_arena_alloc(&m->arena, sizeof *t);
  ir_literal *elems[2] = {make_literal(m, IR_F32, 1, d2, f23, 8), make_literal(m, IR_S32, 0, NULL, &three, 4)};
  ir_shape *es[2] = {elems[0]->shape, elems[1]->shape};
  t->shape = ir_shape_tuple(m, es, 2);
  t->elems = elems;
  t->n_elems = 2;
  s = ir_print_literal_to_string(t, 0);
  CHECK_STR(s, "(f32[2]{0} {1, 2}, s32[] 3)", "tuple literal");
  free(s);
  ir_module_destroy(m);
}

/* ---- instructions and modules built by hand ----------------------------------------------- */

static ir_str S(ir_module *m, const char *s) { return ir_intern(m, s, strlen(s)); }

static ir_instr *param(ir_computation *c, const char *name, int64_t num, ir_shape *shape) {
  ir_instr *p = ir_instr_create(c, IR_OP_PARAMETER, S(c->module, name), shape, NULL, 0);
  p->attrs.u.parameter_number = num;
  return p;
}

static void expect_instr(const ir_instr *in, const char *want) {
  char *s = ir_print_instr_to_string(in);
  CHECK_STR(s, want, ir_opcode_table[in->op].spelling);
  free(s);
}

static void test_instructions(void) {
  ir_module *m = ir_module_create();
  ir_computation *c = ir_computation_add(m, S(m, "e"));
  int64_t d4[2] = {4, 6};
  ir_instr *p = param(c, "p.0", 0, ir_shape_array(m, IR_F32, 2, d4));
  expect_instr(p, "%p.0 = f32[4,6]{1,0} parameter(0)");

  int64_t d22[2] = {2, 3};
  ir_instr *sl = ir_instr_create(c, IR_OP_SLICE, S(m, "slice"), ir_shape_array(m, IR_F32, 2, d22), &p, 1);
  ir_slice_dim sd[2] = {{0, 2, 1}, {0, 6, 2}};
  sl->attrs.u.slice.dims = sd;
  sl->attrs.u.slice.n = 2;
  expect_instr(sl, "%slice = f32[2,3]{1,0} slice(f32[4,6]{1,0} %p.0), slice={[0:2], [0:6:2]}");

  int64_t dpad[2] = {5, 16};
  ir_instr *zero = ir_instr_create(c, IR_OP_CONSTANT, S(m, "zero"), ir_shape_scalar(m, IR_F32), NULL, 0);
  float z = 0;
  zero->attrs.u.literal = make_literal(m, IR_F32, 0, NULL, &z, 4);
  ir_instr *ops[2] = {p, zero};
  ir_instr *pad = ir_instr_create(c, IR_OP_PAD, S(m, "pad"), ir_shape_array(m, IR_F32, 2, dpad), ops, 2);
  ir_pad_dim pd[2] = {{1, 0, 0}, {-1, 1, 2}};
  pad->attrs.u.padding.dims = pd;
  pad->attrs.u.padding.n = 2;
  expect_instr(pad, "%pad = f32[5,16]{1,0} pad(f32[4,6]{1,0} %p.0, f32[] %zero), padding=1_0x-1_1_2");

  ir_instr *cmp_ops[2] = {p, p};
  ir_instr *cmp = ir_instr_create(c, IR_OP_COMPARE, S(m, "lt"), ir_shape_array(m, IR_PRED, 2, d4), cmp_ops, 2);
  cmp->attrs.u.compare.dir = IR_CMP_LT;
  cmp->attrs.u.compare.type = IR_CMPT_TOTALORDER;
  cmp->attrs.u.compare.has_type = true;
  expect_instr(cmp, "%lt = pred[4,6]{1,0} compare(f32[4,6]{1,0} %p.0, f32[4,6]{1,0} %p.0), direction=LT, type=TOTALORDER");

  /* Window: size always, other fields only where they differ from the defaults. */
  ir_instr *rw = ir_instr_create(c, IR_OP_REDUCE_WINDOW, S(m, "rw"), ir_shape_array(m, IR_F32, 2, d22), ops, 2);
  ir_window_dim wd[2] = {{2, 2, 0, 0, 1, 1, false}, {3, 2, 0, 1, 1, 1, false}};
  rw->attrs.u.reduce_window.window = (ir_window){wd, 2, IR_WIN_SIZE | IR_WIN_STRIDE | IR_WIN_PAD | IR_WIN_LHS_DILATE};
  ir_computation *add = ir_computation_add(m, S(m, "add.f32"));
  rw->called = &add;
  rw->n_called = 1;
  expect_instr(rw, "%rw = f32[2,3]{1,0} reduce-window(f32[4,6]{1,0} %p.0, f32[] %zero), "
                   "window={size=2x3 stride=2x2 pad=0_0x0_1}, to_apply=%add.f32");

  /* Convolution dim_labels, with a '?' where no dimension is named. */
  ir_instr *cv = ir_instr_create(c, IR_OP_CONVOLUTION, S(m, "conv"), ir_shape_array(m, IR_F32, 2, d22), cmp_ops, 2);
  int64_t isp[1] = {1}, ksp[1] = {0}, osp[1] = {1};
  ir_conv_dnums dn = {.input_batch = 0, .input_feature = 3, .input_spatial = {isp, 1},
                      .kernel_input_feature = 1, .kernel_output_feature = 2, .kernel_spatial = {ksp, 1},
                      .output_batch = 0, .output_feature = 2, .output_spatial = {osp, 1}, .present = true};
  cv->attrs.u.conv.dnums = dn;
  cv->attrs.u.conv.feature_group_count = 1;
  cv->attrs.u.conv.batch_group_count = 2;
  ir_window_dim cw[1] = {{3, 1, 1, 1, 1, 2, true}};
  cv->attrs.u.conv.window = (ir_window){cw, 1, IR_WIN_SIZE};
  expect_instr(cv, "%conv = f32[2,3]{1,0} convolution(f32[4,6]{1,0} %p.0, f32[4,6]{1,0} %p.0), "
                   "window={size=3 pad=1_1 rhs_dilate=2 rhs_reversal=1}, dim_labels=b0?f_0io->b0f, batch_group_count=2");

  /* custom-call: the target re-escaped, api_version, side effect, verbatim backend_config. */
  ir_instr *cc = ir_instr_create(c, IR_OP_CUSTOM_CALL, S(m, "cc"), ir_shape_array(m, IR_F32, 2, d4), &p, 1);
  cc->attrs.custom_text = S(m, "my \"target\"\\x\n");
  cc->attrs.u.custom_call.feature_group_count = 1;
  cc->attrs.u.custom_call.batch_group_count = 1;
  cc->attrs.u.custom_call.has_side_effect = true;
  cc->attrs.u.custom_call.has_api_version = true;
  cc->attrs.u.custom_call.api_version = IR_CC_API_TYPED_FFI;
  cc->common.backend_config = S(m, "{\"k\": [1, 2]}");
  expect_instr(cc, "%cc = f32[4,6]{1,0} custom-call(f32[4,6]{1,0} %p.0), custom_call_target=\"my \\\"target\\\"\\\\x\\n\", "
                   "custom_call_has_side_effect=true, api_version=API_VERSION_TYPED_FFI, backend_config={\"k\": [1, 2]}");
  /* XLA's order: padding_type before the target, schedule after the side effect. */
  cc->attrs.u.custom_call.padding_type = S(m, "PADDING_SAME");
  cc->attrs.u.custom_call.schedule = S(m, "SCHEDULE_LATEST");
  cc->attrs.custom_text = S(m, "t");
  cc->common.backend_config = (ir_str){NULL, 0};
  expect_instr(cc, "%cc = f32[4,6]{1,0} custom-call(f32[4,6]{1,0} %p.0), padding_type=PADDING_SAME, custom_call_target=\"t\", "
                   "custom_call_has_side_effect=true, schedule=SCHEDULE_LATEST, api_version=API_VERSION_TYPED_FFI");

  /* absl::CEscape's escapes: quotes, backslash, and octal for other non-printable bytes. */
  cc->attrs.custom_text = S(m, "a'b\xc3\x01\x7f");
  cc->attrs.u.custom_call.padding_type = (ir_str){NULL, 0};
  cc->attrs.u.custom_call.schedule = (ir_str){NULL, 0};
  cc->attrs.u.custom_call.has_side_effect = false;
  cc->attrs.u.custom_call.has_api_version = false;
  expect_instr(cc, "%cc = f32[4,6]{1,0} custom-call(f32[4,6]{1,0} %p.0), custom_call_target=\"a\\'b\\303\\001\\177\"");

  /* operand_precision only when some operand is not default (XLA's PrintPrecisionConfig). */
  ir_instr *dot = ir_instr_create(c, IR_OP_DOT, S(m, "dot"), ir_shape_array(m, IR_F32, 2, d4), cmp_ops, 2);
  int64_t one[1] = {1};
  dot->attrs.u.dot.dnums.lhs_contracting = (ir_i64_list){one, 1};
  dot->attrs.u.dot.dnums.rhs_contracting = (ir_i64_list){one, 1};
  dot->attrs.u.dot.n_precision = 2;
  expect_instr(dot, "%dot = f32[4,6]{1,0} dot(f32[4,6]{1,0} %p.0, f32[4,6]{1,0} %p.0), lhs_contracting_dims={1}, rhs_contracting_dims={1}");
  dot->attrs.u.dot.precision[1] = IR_PREC_HIGHEST;
  expect_instr(dot, "%dot = f32[4,6]{1,0} dot(f32[4,6]{1,0} %p.0, f32[4,6]{1,0} %p.0), lhs_contracting_dims={1}, "
                    "rhs_contracting_dims={1}, operand_precision={default,highest}");

  /* Collectives: iota replica groups, channel id. */
  ir_instr *ar = ir_instr_create(c, IR_OP_ALL_REDUCE, S(m, "ar"), ir_shape_array(m, IR_F32, 2, d4), &p, 1);
  int64_t gs[2] = {2, 4}, rs[1] = {8};
  ar->attrs.channel_id = 7;
  ar->attrs.u.collective.replica_groups = (ir_replica_groups){.iota_form = true, .present = true,
                                                              .iota_group_shape = {gs, 2}, .iota_reshape = {rs, 1}};
  ar->attrs.u.collective.use_global_device_ids = true;
  ar->called = &add;
  ar->n_called = 1;
  expect_instr(ar, "%ar = f32[4,6]{1,0} all-reduce(f32[4,6]{1,0} %p.0), channel_id=7, replica_groups=[2,4]<=[8], "
                   "use_global_device_ids=true, to_apply=%add.f32");
  int64_t g0[2] = {0, 1}, g1[2] = {2, 3};
  ir_i64_list groups[2] = {{g0, 2}, {g1, 2}};
  ar->attrs.channel_id = 0;
  ar->attrs.u.collective.replica_groups = (ir_replica_groups){.groups = groups, .n_groups = 2, .present = true};
  ar->attrs.u.collective.use_global_device_ids = false;
  expect_instr(ar, "%ar = f32[4,6]{1,0} all-reduce(f32[4,6]{1,0} %p.0), replica_groups={{0,1},{2,3}}, to_apply=%add.f32");

  /* Common attributes in their fixed order; control predecessors resolved to names. */
  ir_instr *neg = ir_instr_create(c, IR_OP_NEGATE, S(m, "neg"), ir_shape_array(m, IR_F32, 2, d4), &p, 1);
  neg->common.metadata = S(m, "{op_name=\"n\"}");
  neg->common.sharding = S(m, "{replicated}");
  neg->common.frontend_attributes = S(m, "{a=\"b\"}");
  ir_instr *preds[1] = {sl};
  neg->common.control_predecessors = preds;
  neg->common.n_control_predecessors = 1;
  ir_raw_attr unk[1] = {{S(m, "future_attr"), S(m, "{1,2}")}};
  neg->common.unknown = unk;
  neg->common.n_unknown = 1;
  expect_instr(neg, "%neg = f32[4,6]{1,0} negate(f32[4,6]{1,0} %p.0), sharding={replicated}, frontend_attributes={a=\"b\"}, "
                    "control-predecessors={%slice}, metadata={op_name=\"n\"}, future_attr={1,2}");

  /* hloc's broadcasting extensions, after the typed attributes. */
  ir_instr *addi = ir_instr_create(c, IR_OP_ADD, S(m, "add"), ir_shape_array(m, IR_F32, 2, d4), ops, 2);
  addi->attrs.bc.auto_broadcast = IR_AB_PDPD;
  addi->attrs.bc.axis = 1;
  expect_instr(addi, "%add = f32[4,6]{1,0} add(f32[4,6]{1,0} %p.0, f32[] %zero), auto_broadcast=pdpd, axis=1");
  ir_module_destroy(m);
}

/* Shapes: layouts with tiles, element size and memory space; dynamic dims; buffers. */
static void test_shapes(void) {
  ir_module *m = ir_module_create();
  ir_computation *c = ir_computation_add(m, S(m, "e"));
  int64_t dims[3] = {8, 4, 128};
  ir_shape *s = ir_shape_array(m, IR_BF16, 3, dims);
  ir_layout *l = ir_arena_alloc(&m->arena, sizeof *l);
  int64_t m2m[3] = {2, 1, 0}, t0[2] = {8, 128}, t1[2] = {2, 1};
  l->minor_to_major = (ir_i64_list){m2m, 3};
  ir_i64_list tiles[2] = {{t0, 2}, {t1, 2}};
  l->tiles = tiles;
  l->n_tiles = 2;
  l->element_size_bits = 16;
  l->memory_space = 1;
  s->layout = l;
  expect_instr(param(c, "a", 0, s), "%a = bf16[8,4,128]{2,1,0:T(8,128)(2,1)E(16)S(1)} parameter(0)");
  /* Items kept verbatim go where XLA's Layout printer puts them: D first, L after the tiles,
   * M last. */
  int64_t d1[1] = {8}, m1[1] = {0}, t8[1] = {8};
  ir_shape *s1 = ir_shape_array(m, IR_F32, 1, d1);
  ir_layout *l1 = ir_arena_alloc(&m->arena, sizeof *l1);
  l1->minor_to_major = (ir_i64_list){m1, 1};
  ir_i64_list tile8[1] = {{t8, 1}};
  l1->tiles = tile8;
  l1->n_tiles = 1;
  l1->other = S(m, "M(8)L(4)D(D)");
  s1->layout = l1;
  expect_instr(param(c, "o", 3, s1), "%o = f32[8]{0:D(D)T(8)L(4)M(8)} parameter(3)");
  uint8_t dyn[3] = {IR_DIM_STATIC, IR_DIM_BOUNDED, IR_DIM_UNBOUNDED};
  int64_t dd[3] = {2, 5, -1};
  ir_shape *ds = ir_shape_array(m, IR_S32, 3, dd);
  ds->dyn = dyn;
  expect_instr(param(c, "b", 1, ds), "%b = s32[2,<=5,?]{2,1,0} parameter(1)");
  ir_shape *bs = ir_shape_array(m, IR_F32, 1, dims);
  bs->is_buffer = true;
  ir_shape *elems[3] = {bs, ir_shape_scalar(m, IR_TOKEN), ir_shape_tuple(m, NULL, 0)};
  expect_instr(param(c, "t", 2, ir_shape_tuple(m, elems, 3)), "%t = (b(f32[8]{0}), token[], ()) parameter(2)");
  ir_module_destroy(m);
}

/* A whole module: header attributes in their fixed order, signatures, ROOT, threads. */
static void test_module(void) {
  ir_module *m = ir_module_create();
  m->name = S(m, "mod.1");
  m->is_scheduled = 1;
  m->replica_count = 2;
  m->input_output_alias = S(m, "{ {}: (0, {}, may-alias) }");
  ir_computation *sub = ir_computation_add(m, S(m, "add.f32"));
  ir_instr *x = param(sub, "x", 0, ir_shape_scalar(m, IR_F32));
  ir_instr *y = param(sub, "y", 1, ir_shape_scalar(m, IR_F32));
  ir_instr *xy[2] = {x, y};
  sub->root = ir_instr_create(sub, IR_OP_ADD, S(m, "s"), ir_shape_scalar(m, IR_F32), xy, 2);
  sub->params = xy;
  sub->n_params = 2;
  sub->execution_thread = S(m, "host");
  ir_computation *e = ir_computation_add(m, S(m, "main"));
  e->is_entry = true;
  m->entry = e;
  int64_t d2[1] = {2};
  ir_instr *p = param(e, "p", 0, ir_shape_array(m, IR_F32, 1, d2));
  e->params = &p;
  e->n_params = 1;
  e->root = ir_instr_create(e, IR_OP_TUPLE, S(m, "t"), ir_shape_tuple(m, &p->shape, 1), &p, 1);
  char *s = ir_print_module_to_string(m, NULL);
  CHECK_STR(s,
            "HloModule mod.1, is_scheduled=true, input_output_alias={ {}: (0, {}, may-alias) }, replica_count=2\n"
            "\n"
            "%add.f32 (x: f32[], y: f32[]) -> f32[] {\n"
            "  %x = f32[] parameter(0)\n"
            "  %y = f32[] parameter(1)\n"
            "  ROOT %s = f32[] add(f32[] %x, f32[] %y)\n"
            "}, execution_thread=\"host\"\n"
            "\n"
            "ENTRY %main (p: f32[2]) -> (f32[2]) {\n"
            "  %p = f32[2]{0} parameter(0)\n"
            "  ROOT %t = (f32[2]{0}) tuple(f32[2]{0} %p)\n"
            "}\n",
            "module");
  free(s);
  ir_module_destroy(m);
}

/* ir_attr_table (ir/attributes.h): no two rows share a name and a family, so the row the
 * parser stores a value through is the row the printer writes it from; every row can be
 * parsed; enums have their spellings, counted kinds a count, FLAG rows a flag; a fallback row
 * belongs to a family and is its name's only fallback. */
static void test_attr_table(void) {
  for (int i = 0; i < ir_attr_table_n; i++) {
    const ir_attr_desc *d = &ir_attr_table[i];
    bool counted = d->kind == IR_AK_LISTS || d->kind == IR_AK_SLICE || d->kind == IR_AK_PADDING ||
                   d->kind == IR_AK_PRECISION || d->kind == IR_AK_SHAPES;
    bool ok = d->name && d->parse && (d->kind != IR_AK_ENUM || d->names) && (!counted || d->n_at) &&
              (d->when != IR_AW_FLAG || d->flag_at) && (!d->fallback || d->family != IR_ATTR_ANY);
    for (int j = 0; j < i; j++) {
      const ir_attr_desc *e = &ir_attr_table[j];
      if (strcmp(d->name, e->name) == 0 && (d->family == e->family || (d->fallback && e->fallback)))
        ok = false;
    }
    if (!ok) {
      fprintf(stderr, "%s:%d: attribute table row %d (%s) is malformed or repeated\n", __FILE__, __LINE__, i,
              d->name ? d->name : "?");
      failures++;
    }
  }
}

int main(void) {
  test_attr_table();
  test_element_texts();
  test_every_pattern_reads_back();
  test_bf16_four_digits();
  test_escapes_read_back();
  test_literals();
  test_instructions();
  test_shapes();
  test_module();
  if (failures) {
    fprintf(stderr, "print_test: %d failure(s)\n", failures);
    return 1;
  }
  printf("print_test: ok\n");
  return 0;
}
