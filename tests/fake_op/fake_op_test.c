/* fake_op_test.c — adding an elementwise op the way docs/architecture.md "Adding an elementwise
 * op" says, and proving the table path works for it: fake_op.def adds the opcode
 * `fake-negate-double` (y = -2x) to a second build of the compiler, and this file defines its
 * one lowering rule.  A module using it is parsed, printed back, verified, run through the
 * passes (fusion included) and code generation by the real driver, linked into a model.so,
 * loaded and run; the results are checked against values computed here by hand.  Built and
 * registered by tests/fake_op.cmake; fails if the parser, the shape rule or the lowering
 * table does not reach the new op.
 */
#include <dlfcn.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "codegen/cg_internal.h"
#include "driver/driver.h"
#include "hlo/abi.h"

/* ---- the op's lowering rule: one element function ----------------------------------------- */

static LLVMValueRef element_fake_negate_double(cg_function *f, ir_instr *in, LLVMValueRef *v) {
  LLVMBuilderRef b = f->cm->b;
  if (!ir_etype_is_float(in->shape->et)) {
    cg_fail(f->cm, in, "'fake-negate-double' of %s cannot be compiled", ir_etype_table[in->shape->et].spelling);
    return v[0];
  }
  return LLVMBuildFNeg(b, LLVMBuildFAdd(b, v[0], v[0], ""), "");
}

const cg_lower_rule cg_rule_fake_negate_double = {.lower = cg_lower_elementwise,
                                                  .element = element_fake_negate_double};

/* ---- the test ------------------------------------------------------------------------------ */

static int g_failures;

#define CHECK(cond, ...)                                    \
  do {                                                      \
    if (!(cond)) {                                          \
      g_failures++;                                         \
      fprintf(stderr, "%s:%d: FAIL: ", __FILE__, __LINE__); \
      fprintf(stderr, __VA_ARGS__);                         \
      fputc('\n', stderr);                                  \
    }                                                       \
  } while (0)

/* An array (a fused loop kernel), a scalar (inline) and an f64 array feeding another op. */
static const char *const k_module =
    "HloModule fake\n\n"
    "ENTRY e {\n"
    "  x = f32[1000]{0} parameter(0)\n"
    "  s = f32[] parameter(1)\n"
    "  z = f64[4]{0} parameter(2)\n"
    "  y = f32[1000]{0} fake-negate-double(x)\n"
    "  t = f32[] fake-negate-double(s)\n"
    "  d = f64[4]{0} fake-negate-double(z)\n"
    "  w = f64[4]{0} add(d, z)\n"
    "  ROOT r = (f32[1000]{0}, f32[], f64[4]{0}) tuple(y, t, w)\n"
    "}\n";

static char *read_all(const char *path) {
  FILE *fp = fopen(path, "rb");
  if (!fp)
    return NULL;
  static char buf[4096];
  size_t n = fread(buf, 1, sizeof buf - 1, fp);
  buf[n] = 0;
  fclose(fp);
  return buf;
}

static void write_all(const char *path, const char *text) {
  FILE *fp = fopen(path, "wb");
  if (fp) {
    fputs(text, fp);
    fclose(fp);
  }
}

static bool compile(const char *src, const char *out, drv_emit emit) {
  drv_options o;
  drv_options_init(&o);
  o.symbol = "fake";
  hlo_status s = drv_compile_file(src, out, emit, &o);
  CHECK(!s, "compiling to %s: %s", out, s ? hlo_status_message(s) : "");
  hlo_status_free(s);
  return !s;
}

/* The printer writes the op back in its spelling. */
static void test_print(const char *dir, const char *src) {
  char out[512];
  snprintf(out, sizeof out, "%s/fake.out.hlo", dir);
  if (!compile(src, out, DRV_EMIT_HLO))
    return;
  const char *text = read_all(out);
  CHECK(text && strstr(text, "%y = f32[1000]{0} fake-negate-double(f32[1000]{0} %x)"), "printed back: %s",
        text ? text : "(none)");
}

static void check_results(const float *y, float t, const double *w, const float *x, float s, const double *z) {
  for (int i = 0; i < 1000; i++)
    CHECK(y[i] == -2.0f * x[i], "y[%d] = %g, want %g", i, y[i], -2.0f * x[i]);
  CHECK(t == -7.0f && s == 3.5f, "t = %g, want -7", t);
  const double want[4] = {-1.5, 0.25, 0.0, 1e300}; /* -2z + z = -z, and -0 + 0 = +0 */
  for (int i = 0; i < 4; i++)
    CHECK(w[i] == want[i] && signbit(w[i]) == signbit(want[i]), "w[%d] = %g, want %g", i, w[i], want[i]);
}

/* Compiled to model.so by the driver (all passes, -O2), loaded and run. */
static void test_run(const char *dir, const char *src) {
  char so[512];
  snprintf(so, sizeof so, "%s/fake.so", dir);
  if (!compile(src, so, DRV_EMIT_SO))
    return;
  void *h = dlopen(so, RTLD_NOW | RTLD_LOCAL);
  CHECK(h, "dlopen: %s", dlerror());
  if (!h)
    return;
  hlo_generic_entry run = (hlo_generic_entry)(uintptr_t)dlsym(h, "fake_run");
  CHECK(run, "fake_run not exported");
  static float x[1000], y[1000];
  for (int i = 0; i < 1000; i++)
    x[i] = (float)(i % 17) * 0.25f - 2.0f;
  float s = 3.5f, t = 0;
  double z[4] = {1.5, -0.25, 0.0, -1e300}, w[4] = {0};
  void *params[3] = {x, &s, z}, *results[3] = {y, &t, w};
  hlo_status st = run ? run(NULL, params, results) : NULL;
  CHECK(run && !st, "run: %s", st ? hlo_status_message(st) : "");
  hlo_status_free(st);
  if (run)
    check_results(y, t, w, x, s, z);
  dlclose(h);
}

int main(void) {
  char dir[] = "/tmp/hloc_fake_op_XXXXXX";
  if (!mkdtemp(dir)) {
    perror("mkdtemp");
    return 1;
  }
  char src[512];
  snprintf(src, sizeof src, "%s/fake.hlo", dir);
  write_all(src, k_module);
  ir_opcode op;
  CHECK(ir_opcode_from_name("fake-negate-double", 18, &op) && op == IR_OP_FAKE_NEGATE_DOUBLE,
        "the opcode table has the row");
  CHECK(cg_lower_rules[IR_OP_FAKE_NEGATE_DOUBLE] == &cg_rule_fake_negate_double, "the lowering table has the rule");
  test_print(dir, src);
  test_run(dir, src);
  char cmd[600];
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
  if (system(cmd) != 0)
    fprintf(stderr, "could not remove %s\n", dir);
  printf("fake_op_test: %s\n", g_failures ? "FAILED" : "ok");
  return g_failures ? 1 : 0;
}
