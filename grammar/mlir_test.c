/* mlir_test.c — unit tests of the StableHLO front end (grammar/mlir.h): what single ops and
 * constants translate to (expected HLO text written by hand), file detection, the check
 * table, and every prefix of a real module translating or failing with a diagnostic, never
 * crashing.  Run as unit.mlir_test.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "grammar/mlir.h"

static int failures;

/* Translates `text`; returns the HLO (malloc'd) or NULL, with the first diagnostic in err. */
static char *translate(const char *text, mlir_checks *checks, char *err, size_t cap) {
  ir_diag_list d;
  ir_diag_init(&d, "t.mlir", text, strlen(text));
  char *hlo = NULL;
  hlo_status s = ir_mlir_to_hlo(text, strlen(text), &d, &hlo, NULL, NULL, NULL, checks);
  if (err)
    snprintf(err, cap, "%s", s ? hlo_status_message(s) : "");
  hlo_status_free(s);
  ir_diag_deinit(&d);
  return hlo;
}

static void expect_contains(const char *what, const char *body, const char *want) {
  char text[4096];
  snprintf(text, sizeof text, "func.func @main() {\n%s\n  return\n}\n", body);
  char err[512];
  char *hlo = translate(text, NULL, err, sizeof err);
  if (!hlo || !strstr(hlo, want)) {
    fprintf(stderr, "FAIL %s: want \"%s\" in:\n%s%s\n", what, want, hlo ? hlo : "", err);
    failures++;
  }
  free(hlo);
}

static void expect_error(const char *what, const char *text, const char *want) {
  char err[512];
  char *hlo = translate(text, NULL, err, sizeof err);
  if (hlo || !strstr(err, want)) {
    fprintf(stderr, "FAIL %s: want an error containing \"%s\", got \"%s\"\n", what, want, err);
    failures++;
  }
  free(hlo);
}

static void constants(void) {
  expect_contains("hex splat", "  %0 = stablehlo.constant dense<\"0x0000803F\"> : tensor<3xf32>",
                  "f32[3] constant({1,1,1})");
  expect_contains("hex elements", "  %0 = stablehlo.constant dense<\"0x0100FFFF\"> : tensor<2xi16>",
                  "s16[2] constant({1,-1})");
  expect_contains("pred list", "  %0 = stablehlo.constant dense<[true, false]> : tensor<2xi1>",
                  "pred[2] constant({true,false})");
  expect_contains("complex", "  %0 = stablehlo.constant dense<[(1.0, -2.5)]> : tensor<1xcomplex<f32>>",
                  "c64[1] constant({(1, -2.5)})");
  expect_contains("float bits", "  %0 = stablehlo.constant dense<[0x7F800000, -0.5]> : tensor<2xf32>",
                  "f32[2] constant({inf,-0.5})");
  expect_contains("nested", "  %0 = stablehlo.constant dense<[[1, 2], [3, 4]]> : tensor<2x2xui8>",
                  "u8[2,2] constant({{1,2},{3,4}})");
  expect_contains("empty splat", "  %0 = stablehlo.constant dense<(0.0, 0.0)> : tensor<0x2xcomplex<f64>>",
                  "c128[0,2] constant({})");
  expect_contains("bf16", "  %0 = stablehlo.constant dense<1.5> : tensor<bf16>", "bf16[] constant(1.5)");
}

static void ops(void) {
  const char *args = "  %a = stablehlo.constant dense<1.0> : tensor<2x3x4xf32>\n"
                     "  %b = stablehlo.constant dense<1.0> : tensor<2x4x5xf32>\n";
  char body[2048];
  snprintf(body, sizeof body,
           "%s  %%d = stablehlo.dot_general %%a, %%b, batching_dims = [0] x [0], contracting_dims = [2] x [1] : "
           "(tensor<2x3x4xf32>, tensor<2x4x5xf32>) -> tensor<2x3x5xf32>",
           args);
  expect_contains("dot_general", body,
                  "f32[2,3,5] dot(%v0, %v1), lhs_batch_dims={0}, rhs_batch_dims={0}, lhs_contracting_dims={2}, "
                  "rhs_contracting_dims={1}");
  expect_contains("pad",
                  "  %a = stablehlo.constant dense<1.0> : tensor<2xf32>\n"
                  "  %z = stablehlo.constant dense<0.0> : tensor<f32>\n"
                  "  %p = stablehlo.pad %a, %z, low = [1], high = [0], interior = [1] : (tensor<2xf32>, tensor<f32>) -> "
                  "tensor<4xf32> loc(#loc3)",
                  "f32[4] pad(%v0, %v1), padding=1_0_1");
  expect_contains("compare",
                  "  %a = stablehlo.constant dense<1> : tensor<2xi32>\n"
                  "  %c = stablehlo.compare  LT, %a, %a,  SIGNED : (tensor<2xi32>, tensor<2xi32>) -> tensor<2xi1>",
                  "pred[2] compare(%v0, %v0), direction=LT, type=SIGNED");
  expect_contains("slice",
                  "  %a = stablehlo.constant dense<1> : tensor<6xi32>\n"
                  "  %s = stablehlo.slice %a [1:5:2] : (tensor<6xi32>) -> tensor<2xi32>",
                  "s32[2] slice(%v0), slice={[1:5:2]}");
  expect_contains("generic iota", "  %i = \"stablehlo.iota\"() <{iota_dimension = 1 : i64}> : () -> tensor<2x3xui32>",
                  "u32[2,3] iota(), iota_dimension=1");
  expect_contains("broadcast_in_dim",
                  "  %a = stablehlo.constant dense<1> : tensor<3xi64>\n"
                  "  %b = stablehlo.broadcast_in_dim %a, dims = [1] : (tensor<3xi64>) -> tensor<2x3xi64>",
                  "s64[2,3] broadcast(%v0), dimensions={1}");
}

static void detection(void) {
  struct { const char *text; bool mlir; } cases[] = {
      {"module @m {\n}", true}, {"// a comment\nfunc.func @f() {", true}, {"#loc = loc(unknown)\nmodule {", true},
      {"\"builtin.module\"() ({", true}, {"HloModule m\n\nENTRY e {", false}, {"ENTRY e {\n}", false},
      {"modules", false}};
  for (size_t i = 0; i < sizeof cases / sizeof *cases; i++)
    if (ir_text_is_mlir(cases[i].text, strlen(cases[i].text)) != cases[i].mlir) {
      fprintf(stderr, "FAIL detection of \"%s\"\n", cases[i].text);
      failures++;
    }
}

static void checks(void) {
  const char *text =
      "func.func @main() -> tensor<2xf32> {\n"
      "  %a = stablehlo.constant dense<1.0> : tensor<2xf32>\n"
      "  stablehlo.custom_call @check.expect_close(%a, %a) {has_side_effect = true} : (tensor<2xf32>, tensor<2xf32>) -> ()\n"
      "  check.expect_close %a, %a, max_ulp_difference = 5 : tensor<2xf32>, tensor<2xf32>\n"
      "  \"stablehlo.custom_call\"(%a, %a) <{call_target_name = \"check.expect_almost_eq\"}> : (tensor<2xf32>, tensor<2xf32>) -> ()\n"
      "  return %a : tensor<2xf32>\n"
      "}\n";
  mlir_checks ch;
  char err[512];
  char *hlo = translate(text, &ch, err, sizeof err);
  if (!hlo || ch.n != 3 || ch.first_check_result != 1 || ch.items[0].kind != MLIR_CHECK_CLOSE ||
      ch.items[0].max_ulp != 3 || ch.items[0].line != 3 || ch.items[0].actual != 1 || ch.items[0].expected != 2 ||
      ch.items[1].max_ulp != 5 || ch.items[2].kind != MLIR_CHECK_ALMOST_EQ || ch.items[2].tolerance != 0.001 ||
      ch.items[2].actual != 5) {
    fprintf(stderr, "FAIL check table (%d checks) %s\n", hlo ? ch.n : -1, err);
    failures++;
  }
  if (hlo)
    mlir_checks_free(&ch);
  free(hlo);
}

/* Shardy's mesh definitions and sharding attributes are read and ignored. */
static void shardy(void) {
  const char *text = "module @m attributes {mhlo.frontend_attributes = {xla.sdy.meshes = \"{}\"}} {\n"
                     "  sdy.mesh @mesh = <[\"x\"=2, \"y\"=1]>\n"
                     "  func.func public @main(%a: tensor<4xf32> {sdy.sharding = #sdy.sharding<@mesh, [{\"x\"}]>}) -> "
                     "tensor<4xf32> {\n"
                     "    %0 = stablehlo.negate %a : tensor<4xf32>\n"
                     "    return %0 : tensor<4xf32>\n  }\n}\n";
  char err[512];
  char *hlo = translate(text, NULL, err, sizeof err);
  if (!hlo || !strstr(hlo, "f32[4] negate(%v0)")) {
    fprintf(stderr, "FAIL shardy: %s\n%s\n", err, hlo ? hlo : "");
    failures++;
  }
  free(hlo);
}

static void errors(void) {
  expect_error("unknown op", "func.func @f() {\n  %0 = stablehlo.nope : tensor<f32>\n  return\n}\n",
               "t.mlir:2:3: error: unsupported operation stablehlo.nope");
  expect_error("undefined", "func.func @f() {\n  %0 = stablehlo.abs %q : tensor<f32>\n  return\n}\n",
               "use of undefined value %q");
  expect_error("hex length", "func.func @f() {\n  %0 = stablehlo.constant dense<\"0x0000\"> : tensor<3xf32>\n  return\n}\n",
               "hex constant has 2 bytes");
  expect_error("empty", "", "t.mlir:1:1: error:");
}

/* Every prefix of a real module translates or fails with a diagnostic (no crash). */
static void prefixes(void) {
  FILE *f = fopen("testdata/mlir/ok/regions.mlir", "rb");
  if (!f) {
    fprintf(stderr, "FAIL cannot open testdata/mlir/ok/regions.mlir\n");
    failures++;
    return;
  }
  static char buf[1 << 16];
  size_t n = fread(buf, 1, sizeof buf - 1, f);
  fclose(f);
  for (size_t len = 0; len <= n; len += 7) {
    ir_diag_list d;
    ir_diag_init(&d, "p.mlir", buf, len);
    char *hlo = NULL;
    hlo_status s = ir_mlir_to_hlo(buf, len, &d, &hlo, NULL, NULL, NULL, NULL);
    if (s && d.n_errors == 0) {
      fprintf(stderr, "FAIL prefix %zu: an error without a diagnostic\n", len);
      failures++;
    }
    hlo_status_free(s);
    free(hlo);
    ir_diag_deinit(&d);
  }
}

int main(void) {
  constants();
  ops();
  detection();
  checks();
  shardy();
  errors();
  prefixes();
  if (failures)
    fprintf(stderr, "%d failure%s\n", failures, failures == 1 ? "" : "s");
  else
    printf("mlir_test: ok\n");
  return failures ? 1 : 0;
}
