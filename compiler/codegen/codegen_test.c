/* codegen_test.c — the code generator on small modules, run in-process through LLVM's ORC
 * LLJIT: HLO text -> parse -> verify -> passes -> cg_emit_module -> LLVMVerifyModule ->
 * (unoptimized, and again after LLVM's default<O2>) -> JIT -> SYM_run on C buffers.
 * Covers XLA's edge numerics (integer division by zero and INT_MIN/-1, shifts out of range,
 * NaN in max/min, saturating float->int, bf16 rounding, complex divide/sqrt), data movement,
 * control flow, fft and its plan-releasing destructor, the ABI description, the per-opcode table
 * of lowering rules, the error of an op that has no lowering (cg_rule_none), and a streamed
 * (non-temporal) loop result in an aligned and an unaligned buffer.  Expected values are
 * computed by hand or by C's libm in this file, never taken from our own output.
 */
#include <complex.h>
#ifndef CMPLX /* glibc defines it for GCC only; clang has the builtin */
#define CMPLX(x, y) __builtin_complex((double)(x), (double)(y))
#endif
#include <llvm-c/Analysis.h>
#include <llvm-c/LLJIT.h>
#include <llvm-c/Orc.h>
#include <llvm-c/Target.h>
#include <llvm-c/TargetMachine.h>
#include <llvm-c/Transforms/PassBuilder.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "codegen/cg_internal.h"
#include "codegen/codegen.h"
#include "grammar/parse.h"
#include "hlo/abi.h"
#include "hlo/rt.h"
#include "hlo/rt_parallel.h"
#include "passes/passes.h"
#include "shape/shape.h"

static int g_failures, g_checks;

#define CHECK(cond, ...)                                                   \
  do {                                                                     \
    g_checks++;                                                            \
    if (!(cond)) {                                                         \
      g_failures++;                                                        \
      fprintf(stderr, "%s:%d: FAIL: ", __FILE__, __LINE__);                \
      fprintf(stderr, __VA_ARGS__);                                        \
      fputc('\n', stderr);                                                 \
    }                                                                      \
  } while (0)

/* ---- compiling and running one module ---------------------------------------------------- */

static LLVMTargetMachineRef host_tm(void) {
  char *triple = LLVMGetDefaultTargetTriple();
  LLVMTargetRef target;
  char *err = NULL;
  LLVMTargetMachineRef tm = NULL;
  if (!LLVMGetTargetFromTriple(triple, &target, &err))
    tm = LLVMCreateTargetMachine(target, triple, "", "", LLVMCodeGenLevelDefault, LLVMRelocPIC,
                                 LLVMCodeModelJITDefault);
  LLVMDisposeMessage(err);
  LLVMDisposeMessage(triple);
  return tm;
}

/* Parses, verifies and runs the pipeline's passes; NULL (after reporting) on failure. */
static ir_module *load(const char *text) {
  ir_diag_list d;
  ir_diag_init(&d, "test.hlo", text, strlen(text));
  ir_module *m = NULL;
  hlo_status s = ir_parse_module(text, strlen(text), &d, &m);
  shape_options so = {0};
  if (!s && !shape_verify_module(m, &so, &d))
    s = hlo_status_make(HLO_INVALID_ARGUMENT, "verification failed");
  int filled = 0;
  if (!s)
    s = pass_fill_elided_constants(m, &filled);
  if (!s)
    s = pass_canonicalize_broadcasts(m);
  if (!s)
    s = pass_dce(m);
  if (s) {
    ir_diag_print(&d, stderr);
    fprintf(stderr, "load: %s\n", hlo_status_message(s));
    hlo_status_free(s);
    ir_module_destroy(m);
    m = NULL;
  }
  ir_diag_deinit(&d);
  return m;
}

/* Heap buffers the JIT-run code holds: now, at most, and allocations in all (test_buffer_lifetimes). */
static int g_live_buffers, g_peak_buffers, g_allocations;

static void *counting_alloc(hlo_context *ctx, int64_t bytes) {
  void *p = hlo_rt_alloc(ctx, bytes);
  if (p) {
    g_allocations++;
    if (++g_live_buffers > g_peak_buffers)
      g_peak_buffers = g_live_buffers;
  }
  return p;
}

static void counting_free(hlo_context *ctx, void *p) {
  if (p)
    g_live_buffers--;
  hlo_rt_free(ctx, p);
}

/* The arena the last call asked for (bytes), through the runtime's own acquire. */
static int64_t g_arena_bytes;

static void *counting_arena_acquire(hlo_context *ctx, int64_t bytes, hlo_status *out_status) {
  g_arena_bytes = bytes;
  return hlo_rt_arena_acquire(ctx, bytes, out_status);
}

static void define_runtime(LLVMOrcLLJITRef jit, LLVMOrcJITDylibRef jd) {
  static const struct { const char *name; void (*fn)(void); } rt[] = {
      {"hlo_rt_arena_acquire", (void (*)(void))counting_arena_acquire},
      {"hlo_rt_arena_release", (void (*)(void))hlo_rt_arena_release},
      {"hlo_rt_parallel_for", (void (*)(void))hlo_rt_parallel_for},
      {"hlo_rt_alloc", (void (*)(void))counting_alloc},
      {"hlo_rt_free", (void (*)(void))counting_free},
      {"hlo_rt_error", (void (*)(void))hlo_rt_error},
      {"hlo_rt_complex_op", (void (*)(void))hlo_rt_complex_op},
      {"hlo_rt_f8_to_f32", (void (*)(void))hlo_rt_f8_to_f32},
      {"hlo_rt_f32_to_f8", (void (*)(void))hlo_rt_f32_to_f8},
      {"hlo_rt_poll", (void (*)(void))hlo_rt_poll},
      {"hlo_rt_fft", (void (*)(void))hlo_rt_fft},
      {"hlo_rt_fft_plan_release", (void (*)(void))hlo_rt_fft_plan_release},
  };
  enum { N = sizeof rt / sizeof *rt };
  LLVMOrcCSymbolMapPair pairs[N];
  for (int i = 0; i < N; i++) {
    pairs[i].Name = LLVMOrcLLJITMangleAndIntern(jit, rt[i].name);
    pairs[i].Sym.Address = (LLVMOrcExecutorAddress)(uintptr_t)rt[i].fn;
    pairs[i].Sym.Flags.GenericFlags = LLVMJITSymbolGenericFlagsExported | LLVMJITSymbolGenericFlagsCallable;
    pairs[i].Sym.Flags.TargetFlags = 0;
  }
  LLVMErrorRef e = LLVMOrcJITDylibDefine(jd, LLVMOrcAbsoluteSymbols(pairs, N));
  if (e)
    LLVMConsumeError(e);
  /* libm and libc for the math calls */
  LLVMOrcDefinitionGeneratorRef gen = NULL;
  e = LLVMOrcCreateDynamicLibrarySearchGeneratorForProcess(&gen, LLVMOrcLLJITGetGlobalPrefix(jit), NULL, NULL);
  if (e)
    LLVMConsumeError(e);
  else
    LLVMOrcJITDylibAddGenerator(jd, gen);
}

static bool report_error(const char *what, LLVMErrorRef e) {
  char *msg = LLVMGetErrorMessage(e);
  fprintf(stderr, "%s: %s\n", what, msg);
  LLVMDisposeErrorMessage(msg);
  return false;
}

/* JIT-compiles mod (consumed) and calls t_run(NULL, params, results); checks t_describe. */
static bool jit_run(LLVMOrcThreadSafeContextRef tsc, LLVMModuleRef mod, void *const *params, void *const *results,
                    int n_params, int n_results) {
  LLVMOrcLLJITRef jit;
  LLVMErrorRef e = LLVMOrcCreateLLJIT(&jit, NULL);
  if (e) {
    LLVMDisposeModule(mod);
    return report_error("LLJIT", e);
  }
  LLVMOrcJITDylibRef jd = LLVMOrcLLJITGetMainJITDylib(jit);
  define_runtime(jit, jd);
  bool ok = false;
  e = LLVMOrcLLJITAddLLVMIRModule(jit, jd, LLVMOrcCreateNewThreadSafeModule(mod, tsc));
  LLVMOrcExecutorAddress run_addr = 0, desc_addr = 0;
  if (!e)
    e = LLVMOrcLLJITLookup(jit, &run_addr, "t_run");
  if (!e)
    e = LLVMOrcLLJITLookup(jit, &desc_addr, "t_describe");
  if (e) {
    report_error("JIT", e);
  } else {
    const hlo_module_desc *desc = ((hlo_describe_fn)(uintptr_t)desc_addr)();
    CHECK(desc->num_params == n_params && desc->num_results == n_results, "describe: %d params %d results",
          desc->num_params, desc->num_results);
    hlo_status s = ((hlo_generic_entry)(uintptr_t)run_addr)(NULL, params, results);
    ok = s == NULL;
    if (s)
      fprintf(stderr, "run: %s\n", hlo_status_message(s));
    hlo_status_free(s);
  }
  LLVMErrorRef de = LLVMOrcDisposeLLJIT(jit);
  if (de)
    LLVMConsumeError(de);
  return ok;
}

/* Emits `text` unoptimized or after default<O2>, verifies the LLVM module and runs it into
 * `results`.  stream: every streamable result streamed (cg_options.nontemporal_min_bytes = 1),
 * the stores marked as the driver marks them, and some store must be non-temporal. */
static bool run_opt(const char *text, void *const *params, void *const *results, const int64_t *result_bytes,
                    int n_params, int n_results, bool optimize, bool stream) {
  ir_module *m = load(text);
  if (!m)
    return false;
  LLVMTargetMachineRef tm = host_tm();
  LLVMOrcThreadSafeContextRef tsc = LLVMOrcCreateNewThreadSafeContext();
  LLVMContextRef ctx = LLVMOrcThreadSafeContextGetContext(tsc);
  cg_options co = {.symbol = "t", .opt_level = optimize ? 2 : 0, .nontemporal_min_bytes = stream ? 1 : 0};
  LLVMModuleRef mod = NULL;
  hlo_status s = cg_emit_module(m, &co, ctx, tm, &mod);
  bool ok = false;
  if (s) {
    fprintf(stderr, "emit: %s\n", hlo_status_message(s));
    hlo_status_free(s);
  } else {
    char *msg = NULL;
    bool broken = LLVMVerifyModule(mod, LLVMReturnStatusAction, &msg);
    CHECK(!broken, "LLVMVerifyModule: %s", msg ? msg : "");
    LLVMDisposeMessage(msg);
    if (optimize && !broken) {
      LLVMPassBuilderOptionsRef po = LLVMCreatePassBuilderOptions();
      LLVMErrorRef pe = LLVMRunPasses(mod, "default<O2>", tm, po);
      if (pe)
        report_error("passes", pe);
      LLVMDisposePassBuilderOptions(po);
    }
    if (stream) {
      cg_mark_nontemporal_stores(mod, true);
      char *ir = LLVMPrintModuleToString(mod);
      CHECK(strstr(ir, "!nontemporal") && strstr(ir, "llvm.x86.sse.sfence"), "no non-temporal store in:\n%s", text);
      LLVMDisposeMessage(ir);
    }
    ok = !broken && jit_run(tsc, mod, params, results, n_params, n_results);
  }
  (void)result_bytes;
  LLVMOrcDisposeThreadSafeContext(tsc);
  LLVMDisposeTargetMachine(tm);
  ir_module_destroy(m);
  return ok;
}

/* Runs unoptimized and optimized; both must succeed and produce the same bytes. */
static bool run(const char *text, void *const *params, int n_params, void *const *results, const int64_t *bytes,
                int n_results) {
  void *o0[8];
  for (int i = 0; i < n_results; i++)
    o0[i] = calloc(1, (size_t)bytes[i] + 1);
  bool ok = run_opt(text, params, o0, bytes, n_params, n_results, false, false) &&
            run_opt(text, params, results, bytes, n_params, n_results, true, false);
  for (int i = 0; i < n_results; i++) {
    if (ok)
      CHECK(memcmp(o0[i], results[i], (size_t)bytes[i]) == 0, "-O0 and -O2 results differ (result %d)", i);
    free(o0[i]);
  }
  CHECK(ok, "module did not compile and run:\n%s", text);
  return ok;
}

/* One parameter, one result. */
static bool run1(const char *text, const void *in, void *out, int64_t out_bytes) {
  void *p[1] = {(void *)in}, *r[1] = {out};
  return run(text, p, 1, r, &out_bytes, 1);
}

static bool run2(const char *text, const void *a, const void *b, void *out, int64_t out_bytes) {
  void *p[2] = {(void *)a, (void *)b}, *r[1] = {out};
  return run(text, p, 2, r, &out_bytes, 1);
}

static bool same_float(float a, float b) { return (isnan(a) && isnan(b)) || (a == b && signbit(a) == signbit(b)); }
static bool same_double(double a, double b) { return (isnan(a) && isnan(b)) || (a == b && signbit(a) == signbit(b)); }
static bool close_double(double a, double b, double rtol) {
  return (isnan(a) && isnan(b)) || a == b || fabs(a - b) <= rtol * fabs(b);
}

/* ---- integers --------------------------------------------------------------------------------- */

static void test_int_divide(void) {
  const char *div = "HloModule m\nENTRY e {\n  a = s32[6] parameter(0)\n  b = s32[6] parameter(1)\n"
                    "  ROOT d = s32[6] divide(a, b)\n}\n";
  const char *rem = "HloModule m\nENTRY e {\n  a = s32[6] parameter(0)\n  b = s32[6] parameter(1)\n"
                    "  ROOT d = s32[6] remainder(a, b)\n}\n";
  int32_t a[6] = {7, -7, 5, INT32_MIN, INT32_MIN, 3}, b[6] = {2, 2, 0, -1, 0, -1};
  int32_t q[6], r[6];
  const int32_t eq[6] = {3, -3, -1, INT32_MIN, -1, -3}, er[6] = {1, -1, 5, 0, INT32_MIN, 0};
  if (run2(div, a, b, q, sizeof q))
    for (int i = 0; i < 6; i++)
      CHECK(q[i] == eq[i], "s32 %d / %d = %d, want %d", a[i], b[i], q[i], eq[i]);
  if (run2(rem, a, b, r, sizeof r))
    for (int i = 0; i < 6; i++)
      CHECK(r[i] == er[i], "s32 %d %% %d = %d, want %d", a[i], b[i], r[i], er[i]);
  const char *udiv = "HloModule m\nENTRY e {\n  a = u8[3] parameter(0)\n  b = u8[3] parameter(1)\n"
                     "  d = u8[3] divide(a, b)\n  r = u8[3] remainder(a, b)\n  ROOT t = (u8[3], u8[3]) tuple(d, r)\n}\n";
  uint8_t ua[3] = {200, 7, 9}, ub[3] = {0, 2, 10}, uq[3], ur[3];
  void *p[2] = {ua, ub}, *o[2] = {uq, ur};
  int64_t bytes[2] = {3, 3};
  if (run(udiv, p, 2, o, bytes, 2)) {
    CHECK(uq[0] == 255 && uq[1] == 3 && uq[2] == 0, "u8 divide: %d %d %d", uq[0], uq[1], uq[2]);
    CHECK(ur[0] == 200 && ur[1] == 1 && ur[2] == 9, "u8 remainder: %d %d %d", ur[0], ur[1], ur[2]);
  }
}

static void test_shifts(void) {
  static const char *ops[3] = {"shift-left", "shift-right-arithmetic", "shift-right-logical"};
  int32_t a[5] = {1, -8, -8, 1, -8}, s[5] = {3, 1, 40, 32, -1};
  const int32_t want[3][5] = {{8, -16, 0, 0, 0}, {0, -4, -1, 0, -1}, {0, 0x7FFFFFFC, 0, 0, 0}};
  for (int k = 0; k < 3; k++) {
    char text[256];
    snprintf(text, sizeof text,
             "HloModule m\nENTRY e {\n  a = s32[5] parameter(0)\n  b = s32[5] parameter(1)\n  ROOT d = s32[5] %s(a, b)\n}\n",
             ops[k]);
    int32_t out[5];
    if (run2(text, a, s, out, sizeof out))
      for (int i = 0; i < 5; i++)
        CHECK(out[i] == want[k][i], "%s(%d, %d) = %d, want %d", ops[k], a[i], s[i], out[i], want[k][i]);
  }
}

static void test_int_misc(void) {
  /* power: XLA's integer pow, negative exponents give 0 except for base 1 */
  const char *pw = "HloModule m\nENTRY e {\n  a = s32[5] parameter(0)\n  b = s32[5] parameter(1)\n"
                   "  ROOT d = s32[5] power(a, b)\n}\n";
  int32_t a[5] = {2, -3, 1, 2, 0}, b[5] = {10, 3, -4, -1, 0}, out[5];
  const int32_t want[5] = {1024, -27, 1, 0, 1};
  if (run2(pw, a, b, out, sizeof out))
    for (int i = 0; i < 5; i++)
      CHECK(out[i] == want[i], "power(%d, %d) = %d, want %d", a[i], b[i], out[i], want[i]);
  /* clz, popcnt, abs, sign, not on s16 */
  const char *un = "HloModule m\nENTRY e {\n  a = s16[4] parameter(0)\n  c = s16[4] count-leading-zeros(a)\n"
                   "  p = s16[4] popcnt(a)\n  b = s16[4] abs(a)\n  s = s16[4] sign(a)\n  n = s16[4] not(a)\n"
                   "  ROOT t = (s16[4], s16[4], s16[4], s16[4], s16[4]) tuple(c, p, b, s, n)\n}\n";
  int16_t x[4] = {0, 1, -1, INT16_MIN}, r[5][4];
  void *p[1] = {x}, *o[5] = {r[0], r[1], r[2], r[3], r[4]};
  int64_t bytes[5] = {8, 8, 8, 8, 8};
  const int16_t want_u[5][4] = {{16, 15, 0, 0}, {0, 1, 16, 1}, {0, 1, 1, INT16_MIN}, {0, 1, -1, -1}, {-1, -2, 0, INT16_MAX}};
  if (run(un, p, 1, o, bytes, 5))
    for (int k = 0; k < 5; k++)
      for (int i = 0; i < 4; i++)
        CHECK(r[k][i] == want_u[k][i], "unary #%d of %d = %d, want %d", k, x[i], r[k][i], want_u[k][i]);
  /* s4 wraps at 4 bits and is stored sign-extended in its byte */
  const char *s4 = "HloModule m\nENTRY e {\n  a = s4[3] parameter(0)\n  b = s4[3] parameter(1)\n"
                   "  ROOT d = s4[3] add(a, b)\n}\n";
  int8_t sa[3] = {7, -8, 3}, sb[3] = {1, -1, 2}, so[3];
  if (run2(s4, sa, sb, so, sizeof so))
    CHECK(so[0] == -8 && so[1] == 7 && so[2] == 5, "s4 add: %d %d %d", so[0], so[1], so[2]);
}

/* ---- floating point ----------------------------------------------------------------------------- */

static void test_minmax_nan(void) {
  const char *text = "HloModule m\nENTRY e {\n  a = f32[4] parameter(0)\n  b = f32[4] parameter(1)\n"
                     "  x = f32[4] maximum(a, b)\n  n = f32[4] minimum(a, b)\n  ROOT t = (f32[4], f32[4]) tuple(x, n)\n}\n";
  float a[4] = {NAN, 1, 2, -0.0f}, b[4] = {1, NAN, 3, 0.0f}, mx[4], mn[4];
  void *p[2] = {a, b}, *o[2] = {mx, mn};
  int64_t bytes[2] = {16, 16};
  if (run(text, p, 2, o, bytes, 2)) {
    CHECK(isnan(mx[0]) && isnan(mx[1]) && mx[2] == 3, "maximum: %g %g %g", mx[0], mx[1], mx[2]);
    CHECK(isnan(mn[0]) && isnan(mn[1]) && mn[2] == 2, "minimum: %g %g %g", mn[0], mn[1], mn[2]);
    CHECK(mx[3] == 0 && !signbit(mx[3]) && mn[3] == 0 && signbit(mn[3]), "max/min of -0 and +0");
  }
}

static void test_convert_saturating(void) {
  const char *text = "HloModule m\nENTRY e {\n  a = f32[6] parameter(0)\n  ROOT c = s32[6] convert(a)\n}\n";
  float a[6] = {NAN, 3e9f, -3e9f, -2.7f, 2.7f, INFINITY};
  int32_t out[6];
  const int32_t want[6] = {0, INT32_MAX, INT32_MIN, -2, 2, INT32_MAX};
  if (run1(text, a, out, sizeof out))
    for (int i = 0; i < 6; i++)
      CHECK(out[i] == want[i], "convert f32 %g -> s32 = %d, want %d", a[i], out[i], want[i]);
  const char *u8 = "HloModule m\nENTRY e {\n  a = f32[4] parameter(0)\n  ROOT c = u8[4] convert(a)\n}\n";
  float b[4] = {-5, 300, 255.4f, NAN};
  uint8_t ub[4];
  if (run1(u8, b, ub, sizeof ub))
    CHECK(ub[0] == 0 && ub[1] == 255 && ub[2] == 255 && ub[3] == 0, "convert f32 -> u8: %d %d %d %d", ub[0], ub[1],
          ub[2], ub[3]);
  /* s32 -> pred, pred -> f32, c64 -> f32 takes the real part */
  const char *pr = "HloModule m\nENTRY e {\n  a = s32[3] parameter(0)\n  p = pred[3] convert(a)\n"
                   "  ROOT f = f32[3] convert(p)\n}\n";
  int32_t pa[3] = {0, 5, -1};
  float pf[3];
  if (run1(pr, pa, pf, sizeof pf))
    CHECK(pf[0] == 0 && pf[1] == 1 && pf[2] == 1, "s32 -> pred -> f32: %g %g %g", pf[0], pf[1], pf[2]);
}

/* bf16 bits of a float, round to nearest even (the expected value, written independently). */
static uint16_t bf16_of(float x) {
  uint32_t w;
  memcpy(&w, &x, 4);
  uint32_t lower = w & 0xFFFF, upper = w >> 16;
  if (lower > 0x8000 || (lower == 0x8000 && (upper & 1)))
    upper++;
  return (uint16_t)upper;
}

static float f32_of_bf16(uint16_t h) {
  uint32_t w = (uint32_t)h << 16;
  float x;
  memcpy(&x, &w, 4);
  return x;
}

static void test_bf16(void) {
  const char *text = "HloModule m\nENTRY e {\n  a = bf16[4] parameter(0)\n  b = bf16[4] parameter(1)\n"
                     "  ROOT d = bf16[4] add(a, b)\n}\n";
  /* 1 + 2^-8 is a tie between 1 and 1+2^-7: rounds to even (1); 1 + 3*2^-9 rounds up. */
  float fa[4] = {1.0f, 1.0f, 256.0f, -3.0f}, fb[4] = {0x1p-8f, 0x1.8p-8f, 1.0f, 0.5f};
  uint16_t a[4], b[4], out[4];
  for (int i = 0; i < 4; i++) {
    a[i] = bf16_of(fa[i]);
    b[i] = bf16_of(fb[i]);
  }
  if (run2(text, a, b, out, sizeof out))
    for (int i = 0; i < 4; i++) {
      uint16_t want = bf16_of(f32_of_bf16(a[i]) + f32_of_bf16(b[i]));
      CHECK(out[i] == want, "bf16 %g + %g = 0x%04x, want 0x%04x", fa[i], fb[i], out[i], want);
    }
  uint16_t nan_in[4] = {0x7FC0, 0xFF80, 0x7F80, 0x3F80}, one[4] = {0x3F80, 0x3F80, 0xFF80, 0x3F80};
  if (run2(text, nan_in, one, out, sizeof out)) {
    CHECK((out[0] & 0x7F80) == 0x7F80 && (out[0] & 0x7F), "NaN + 1 is a bf16 NaN: 0x%04x", out[0]);
    CHECK(out[1] == 0xFF80, "-inf + 1 = -inf: 0x%04x", out[1]);
    CHECK((out[2] & 0x7F80) == 0x7F80 && (out[2] & 0x7F), "inf + -inf is NaN: 0x%04x", out[2]);
    CHECK(out[3] == 0x4000, "1 + 1 = 2: 0x%04x", out[3]);
  }
}

static void test_f16_math(void) {
  const char *text = "HloModule m\nENTRY e {\n  a = f16[3] parameter(0)\n  x = f16[3] exponential(a)\n"
                     "  t = f16[3] tanh(a)\n  ROOT r = (f16[3], f16[3]) tuple(x, t)\n}\n";
  _Float16 a[3] = {(_Float16)0.5f, (_Float16)-2.0f, (_Float16)10.0f}, ex[3], th[3];
  void *p[1] = {a}, *o[2] = {ex, th};
  int64_t bytes[2] = {6, 6};
  if (run(text, p, 1, o, bytes, 2))
    for (int i = 0; i < 3; i++) {
      CHECK((_Float16)expf((float)a[i]) == ex[i], "f16 exp(%g) = %g, want %g", (double)a[i], (double)ex[i],
            (double)expf((float)a[i]));
      CHECK((_Float16)tanhf((float)a[i]) == th[i], "f16 tanh(%g) = %g", (double)a[i], (double)th[i]);
    }
}

static void test_float_unary(void) {
  const char *text = "HloModule m\nENTRY e {\n  a = f64[5] parameter(0)\n  s = f64[5] sign(a)\n"
                     "  r = f64[5] round-nearest-afz(a)\n  v = f64[5] round-nearest-even(a)\n  l = f64[5] logistic(a)\n"
                     "  f = pred[5] is-finite(a)\n  ROOT t = (f64[5], f64[5], f64[5], f64[5], pred[5]) tuple(s, r, v, l, f)\n}\n";
  double a[5] = {-2.5, -0.0, 0.5, NAN, INFINITY}, sg[5], ra[5], re[5], lg[5];
  uint8_t fin[5];
  void *p[1] = {a}, *o[5] = {sg, ra, re, lg, fin};
  int64_t bytes[5] = {40, 40, 40, 40, 5};
  const double wsg[5] = {-1, -0.0, 1, NAN, 1}, wra[5] = {-3, -0.0, 1, NAN, INFINITY}, wre[5] = {-2, -0.0, 0, NAN, INFINITY};
  const uint8_t wfin[5] = {1, 1, 1, 0, 0};
  if (run(text, p, 1, o, bytes, 5))
    for (int i = 0; i < 5; i++) {
      CHECK(same_double(sg[i], wsg[i]), "sign(%g) = %g", a[i], sg[i]);
      CHECK(same_double(ra[i], wra[i]), "round-nearest-afz(%g) = %g", a[i], ra[i]);
      CHECK(same_double(re[i], wre[i]), "round-nearest-even(%g) = %g", a[i], re[i]);
      CHECK(close_double(lg[i], 1 / (1 + exp(-a[i])), 1e-15), "logistic(%g) = %g", a[i], lg[i]);
      CHECK(fin[i] == wfin[i], "is-finite(%g) = %d", a[i], fin[i]);
    }
  /* remainder is fmod; atan2; power */
  const char *bin = "HloModule m\nENTRY e {\n  a = f32[3] parameter(0)\n  b = f32[3] parameter(1)\n"
                    "  r = f32[3] remainder(a, b)\n  t = f32[3] atan2(a, b)\n  p = f32[3] power(a, b)\n"
                    "  ROOT o = (f32[3], f32[3], f32[3]) tuple(r, t, p)\n}\n";
  float x[3] = {5.5f, -5.5f, 2.0f}, y[3] = {2.0f, 2.0f, 0.5f}, rr[3], tt[3], pp[3];
  void *p2[2] = {x, y}, *o2[3] = {rr, tt, pp};
  int64_t b2[3] = {12, 12, 12};
  if (run(bin, p2, 2, o2, b2, 3))
    for (int i = 0; i < 3; i++) {
      CHECK(same_float(rr[i], fmodf(x[i], y[i])), "remainder(%g, %g) = %g", x[i], y[i], rr[i]);
      CHECK(same_float(tt[i], atan2f(x[i], y[i])), "atan2(%g, %g) = %g", x[i], y[i], tt[i]);
      CHECK(same_float(pp[i], powf(x[i], y[i])), "power(%g, %g) = %g", x[i], y[i], pp[i]);
    }
}

static void test_compare(void) {
  /* TOTALORDER: -NaN < -inf < -1 < -0 < +0 < 1 < inf < NaN */
  const char *text = "HloModule m\nENTRY e {\n  a = f32[6] parameter(0)\n  b = f32[6] parameter(1)\n"
                     "  ROOT c = pred[6] compare(a, b), direction=LT, type=TOTALORDER\n}\n";
  float a[6] = {-0.0f, -NAN, 1, NAN, -INFINITY, 0.0f}, b[6] = {0.0f, -INFINITY, NAN, NAN, -1, -0.0f};
  uint8_t out[6];
  const uint8_t want[6] = {1, 1, 1, 0, 1, 0};
  if (run2(text, a, b, out, sizeof out))
    for (int i = 0; i < 6; i++)
      CHECK(out[i] == want[i], "totalorder %g < %g = %d", a[i], b[i], out[i]);
  const char *ne = "HloModule m\nENTRY e {\n  a = f32[2] parameter(0)\n  b = f32[2] parameter(1)\n"
                   "  ROOT c = pred[2] compare(a, b), direction=NE\n}\n";
  float na[2] = {NAN, 1}, nb[2] = {NAN, 1};
  uint8_t no[2];
  if (run2(ne, na, nb, no, sizeof no))
    CHECK(no[0] == 1 && no[1] == 0, "NE with NaN: %d %d", no[0], no[1]);
  const char *us = "HloModule m\nENTRY e {\n  a = u32[2] parameter(0)\n  b = u32[2] parameter(1)\n"
                   "  ROOT c = pred[2] compare(a, b), direction=LT\n}\n";
  uint32_t ua[2] = {UINT32_MAX, 1}, ub[2] = {1, 2};
  uint8_t uo[2];
  if (run2(us, ua, ub, uo, sizeof uo))
    CHECK(uo[0] == 0 && uo[1] == 1, "unsigned compare: %d %d", uo[0], uo[1]);
}

/* 8-bit floats: bit patterns worked out by hand from each format's definition. */
static void test_f8(void) {
  const char *text = "HloModule m\nENTRY e {\n  a = f32[8] parameter(0)\n  x = f8e4m3fn[8] convert(a)\n"
                     "  y = f8e5m2[8] convert(a)\n  z = f8e4m3fnuz[8] convert(a)\n"
                     "  ROOT t = (f8e4m3fn[8], f8e5m2[8], f8e4m3fnuz[8]) tuple(x, y, z)\n}\n";
  /* 1.0625 and 1.1875 are ties at a 3-bit mantissa: to even (1.0 and 1.25) */
  float a[8] = {1.0f, 448.0f, 500.0f, -0.0f, 0x1p-9f, 1.0625f, 1.1875f, NAN};
  uint8_t x[8], y[8], z[8];
  void *p[1] = {a}, *o[3] = {x, y, z};
  int64_t bytes[3] = {8, 8, 8};
  const uint8_t wx[8] = {0x38, 0x7E, 0x7F, 0x80, 0x01, 0x38, 0x3A, 0x7F};
  /* e5m2: 448 = 1.75*2^8; 500 rounds to 512 = 2^9; 2^-9 normal; 1.0625: tie -> 1.0; 1.1875 -> 1.25 */
  const uint8_t wy[8] = {0x3C, 0x5F, 0x60, 0x80, 0x18, 0x3C, 0x3D, 0x7F};
  /* e4m3fnuz (bias 8): 448 and 500 exceed 240 -> NaN 0x80; -0 -> +0; 2^-9 = 2^-7 * 2^-2 */
  const uint8_t wz[8] = {0x40, 0x80, 0x80, 0x00, 0x02, 0x40, 0x42, 0x80};
  if (run(text, p, 1, o, bytes, 3))
    for (int i = 0; i < 8; i++) {
      CHECK(x[i] == wx[i], "f32 %g -> f8e4m3fn = 0x%02x, want 0x%02x", a[i], x[i], wx[i]);
      CHECK(y[i] == wy[i], "f32 %g -> f8e5m2 = 0x%02x, want 0x%02x", a[i], y[i], wy[i]);
      CHECK(z[i] == wz[i], "f32 %g -> f8e4m3fnuz = 0x%02x, want 0x%02x", a[i], z[i], wz[i]);
    }
  const char *add = "HloModule m\nENTRY e {\n  a = f8e4m3fn[3] parameter(0)\n  b = f8e4m3fn[3] parameter(1)\n"
                    "  s = f8e4m3fn[3] add(a, b)\n  ROOT f = f32[3] convert(s)\n}\n";
  uint8_t fa[3] = {0x38, 0x7E, 0x01}, fb[3] = {0x28, 0x7E, 0x01}; /* 1 + 0.25, 448 + 448, 2^-9 + 2^-9 */
  float sum[3];
  if (run2(add, fa, fb, sum, sizeof sum))
    CHECK(sum[0] == 1.25f && isnan(sum[1]) && sum[2] == 0x1p-8f, "f8e4m3fn add: %g %g %g", sum[0], sum[1], sum[2]);
}

/* ---- complex -------------------------------------------------------------------------------- */

static void test_complex(void) {
  const char *text = "HloModule m\nENTRY e {\n  a = c64[3] parameter(0)\n  b = c64[3] parameter(1)\n"
                     "  m = c64[3] multiply(a, b)\n  d = c64[3] divide(a, b)\n  ab = f32[3] abs(a)\n"
                     "  ROOT t = (c64[3], c64[3], f32[3]) tuple(m, d, ab)\n}\n";
  float a[6] = {1, 2, -3, 0.5f, 3e30f, 4e30f}, b[6] = {3, -4, 0, 2, 1e30f, -1e30f};
  float mu[6], dv[6], ab[3];
  void *p[2] = {a, b}, *o[3] = {mu, dv, ab};
  int64_t bytes[3] = {24, 24, 12};
  if (run(text, p, 2, o, bytes, 3))
    for (int i = 0; i < 3; i++) {
      double complex x = CMPLX(a[2 * i], a[2 * i + 1]), y = CMPLX(b[2 * i], b[2 * i + 1]);
      double complex q = x / y;
      if (i < 2) /* the product of the third overflows f32 */
        CHECK(close_double(mu[2 * i], creal(x * y), 1e-6) && close_double(mu[2 * i + 1], cimag(x * y), 1e-6),
              "c64 multiply #%d = (%g, %g)", i, mu[2 * i], mu[2 * i + 1]);
      CHECK(close_double(dv[2 * i], creal(q), 1e-6) && close_double(dv[2 * i + 1], cimag(q), 1e-6),
            "c64 divide #%d = (%g, %g), want (%g, %g)", i, dv[2 * i], dv[2 * i + 1], creal(q), cimag(q));
      CHECK(close_double(ab[i], cabs(x), 1e-6), "c64 abs #%d = %g, want %g", i, ab[i], cabs(x));
    }
  /* sqrt keeps a tiny imaginary part next to a large real one; sqrt(0) = 0 */
  const char *sq = "HloModule m\nENTRY e {\n  a = c128[3] parameter(0)\n  ROOT s = c128[3] sqrt(a)\n}\n";
  double z[6] = {1e16, 1, 4, 0, 0, 0}, r[6];
  if (run1(sq, z, r, sizeof r))
    for (int i = 0; i < 3; i++) {
      double complex w = csqrt(CMPLX(z[2 * i], z[2 * i + 1]));
      CHECK(close_double(r[2 * i], creal(w), 1e-12) && fabs(r[2 * i + 1] - cimag(w)) <= 1e-12 * cabs(w),
            "c128 sqrt #%d = (%g, %g), want (%g, %g)", i, r[2 * i], r[2 * i + 1], creal(w), cimag(w));
    }
  /* power: z^0 = 1 even for infinite z, 0^2 = 0, 1^w = 1 */
  const char *pw = "HloModule m\nENTRY e {\n  a = c128[3] parameter(0)\n  b = c128[3] parameter(1)\n"
                   "  ROOT p = c128[3] power(a, b)\n}\n";
  double pa[6] = {INFINITY, 0, 0, 0, 1, 0}, pb[6] = {0, 0, 2, 0, NAN, 3}, pr[6];
  const double wpr[6] = {1, 0, 0, 0, 1, 0};
  if (run2(pw, pa, pb, pr, sizeof pr))
    for (int i = 0; i < 6; i++)
      CHECK(same_double(pr[i], wpr[i]), "complex power component %d = %g, want %g", i, pr[i], wpr[i]);
  /* divide by zero follows XLA: infinities signed by the dividend */
  const char *dz = "HloModule m\nENTRY e {\n  a = c128[1] parameter(0)\n  b = c128[1] parameter(1)\n"
                   "  ROOT d = c128[1] divide(a, b)\n}\n";
  double n1[2] = {1, -2}, z1[2] = {0, 0}, q1[2];
  if (run2(dz, n1, z1, q1, sizeof q1))
    CHECK(q1[0] == INFINITY && q1[1] == -INFINITY, "(1-2i)/0 = (%g, %g)", q1[0], q1[1]);
}

/* ---- data movement ---------------------------------------------------------------------------- */

static void test_data(void) {
  const char *tr = "HloModule m\nENTRY e {\n  a = s32[2,3] parameter(0)\n  ROOT t = s32[3,2] transpose(a), dimensions={1,0}\n}\n";
  int32_t a[6] = {1, 2, 3, 4, 5, 6}, t[6];
  const int32_t wt[6] = {1, 4, 2, 5, 3, 6};
  if (run1(tr, a, t, sizeof t))
    CHECK(memcmp(t, wt, sizeof t) == 0, "transpose: %d %d %d %d %d %d", t[0], t[1], t[2], t[3], t[4], t[5]);
  const char *sl = "HloModule m\nENTRY e {\n  a = s32[10] parameter(0)\n  ROOT s = s32[3] slice(a), slice={[1:9:3]}\n}\n";
  int32_t ten[10] = {0, 1, 2, 3, 4, 5, 6, 7, 8, 9}, s[3];
  if (run1(sl, ten, s, sizeof s))
    CHECK(s[0] == 1 && s[1] == 4 && s[2] == 7, "strided slice: %d %d %d", s[0], s[1], s[2]);
  /* pad: low -1 drops the first element, interior 1 puts one pad value between, high 2 */
  const char *pd = "HloModule m\nENTRY e {\n  a = f32[3] parameter(0)\n  z = f32[] constant(9)\n"
                   "  ROOT p = f32[6] pad(a, z), padding=-1_2_1\n}\n";
  float pa[3] = {1, 2, 3}, po[6];
  const float wp[6] = {9, 2, 9, 3, 9, 9};
  if (run1(pd, pa, po, sizeof po))
    CHECK(memcmp(po, wp, sizeof po) == 0, "pad: %g %g %g %g %g %g", po[0], po[1], po[2], po[3], po[4], po[5]);
  /* dynamic-slice: start 3 of a size-2 window in 4 elements clamps to 2; -5 clamps to 0 */
  const char *ds = "HloModule m\nENTRY e {\n  a = s32[4] parameter(0)\n  i = s32[] parameter(1)\n"
                   "  ROOT d = s32[2] dynamic-slice(a, i), dynamic_slice_sizes={2}\n}\n";
  int32_t four[4] = {10, 11, 12, 13}, starts[3] = {3, -5, 1}, dso[2];
  const int32_t wds[3] = {12, 10, 11};
  for (int k = 0; k < 3; k++)
    if (run2(ds, four, &starts[k], dso, sizeof dso))
      CHECK(dso[0] == wds[k] && dso[1] == wds[k] + 1, "dynamic-slice at %d: %d %d", starts[k], dso[0], dso[1]);
  /* an unsigned start index is sign-extended like XLA's emitter does: u8 200 is -56 -> 0 */
  const char *du8 = "HloModule m\nENTRY e {\n  a = s32[4] parameter(0)\n  i = u8[] parameter(1)\n"
                    "  ROOT d = s32[2] dynamic-slice(a, i), dynamic_slice_sizes={2}\n}\n";
  uint8_t u200 = 200;
  if (run2(du8, four, &u200, dso, sizeof dso))
    CHECK(dso[0] == 10 && dso[1] == 11, "dynamic-slice at u8 200: %d %d", dso[0], dso[1]);
  const char *dus = "HloModule m\nENTRY e {\n  a = s32[4] parameter(0)\n  u = s32[2] constant({7, 8})\n"
                    "  i = s32[] constant(5)\n  ROOT d = s32[4] dynamic-update-slice(a, u, i)\n}\n";
  int32_t duo[4];
  const int32_t wdu[4] = {10, 11, 7, 8};
  if (run1(dus, four, duo, sizeof duo))
    CHECK(memcmp(duo, wdu, sizeof duo) == 0, "dynamic-update-slice: %d %d %d %d", duo[0], duo[1], duo[2], duo[3]);
  const char *cc = "HloModule m\nENTRY e {\n  a = s32[2,2] parameter(0)\n  b = s32[2,1] constant({{5}, {6}})\n"
                   "  ROOT c = s32[2,3] concatenate(a, b), dimensions={1}\n}\n";
  int32_t ca[4] = {1, 2, 3, 4}, co[6];
  const int32_t wc[6] = {1, 2, 5, 3, 4, 6};
  if (run1(cc, ca, co, sizeof co))
    CHECK(memcmp(co, wc, sizeof co) == 0, "concatenate: %d %d %d %d %d %d", co[0], co[1], co[2], co[3], co[4], co[5]);
  const char *rv = "HloModule m\nENTRY e {\n  a = s32[2,3] parameter(0)\n  ROOT r = s32[2,3] reverse(a), dimensions={1}\n}\n";
  int32_t ro[6];
  const int32_t wr[6] = {3, 2, 1, 6, 5, 4};
  if (run1(rv, a, ro, sizeof ro))
    CHECK(memcmp(ro, wr, sizeof ro) == 0, "reverse: %d %d %d %d %d %d", ro[0], ro[1], ro[2], ro[3], ro[4], ro[5]);
  const char *io = "HloModule m\nENTRY e {\n  a = s32[] parameter(0)\n  i = s32[2,3] iota(), iota_dimension=1\n"
                   "  b = s32[2,3] broadcast(a), dimensions={}\n  ROOT s = s32[2,3] add(i, b)\n}\n";
  int32_t base = 100, iot[6];
  const int32_t wi[6] = {100, 101, 102, 100, 101, 102};
  if (run1(io, &base, iot, sizeof iot))
    CHECK(memcmp(iot, wi, sizeof iot) == 0, "iota + broadcast: %d %d %d", iot[0], iot[1], iot[2]);
  /* a large constant (kept as global data) and tuple / get-tuple-element */
  char big[4096];
  int n = snprintf(big, sizeof big, "HloModule m\nENTRY e {\n  a = s32[] parameter(0)\n  c = s32[300] constant({");
  for (int i = 0; i < 300; i++)
    n += snprintf(big + n, sizeof big - (size_t)n, "%s%d", i ? "," : "", i * 3);
  snprintf(big + n, sizeof big - (size_t)n,
           "})\n  t = (s32[300], s32[]) tuple(c, a)\n  g = s32[300] get-tuple-element(t), index=0\n"
           "  h = s32[] get-tuple-element(t), index=1\n  hb = s32[300] broadcast(h), dimensions={}\n"
           "  ROOT s = s32[300] add(g, hb)\n}\n");
  int32_t one = 1, bo[300];
  if (run1(big, &one, bo, sizeof bo)) {
    bool all = true;
    for (int i = 0; i < 300; i++)
      all = all && bo[i] == i * 3 + 1;
    CHECK(all, "large constant + tuple/gte: %d %d", bo[0], bo[299]);
  }
}

static void test_tuple_constant(void) {
  const char *text = "HloModule m\nENTRY e {\n  a = s32[] parameter(0)\n"
                     "  c = (s32[2], (f32[], pred[2])) constant(({3, 4}, (2.5, {true, false})))\n"
                     "  x = s32[2] get-tuple-element(c), index=0\n  t = (f32[], pred[2]) get-tuple-element(c), index=1\n"
                     "  y = f32[] get-tuple-element(t), index=0\n  p = pred[2] get-tuple-element(t), index=1\n"
                     "  ab = s32[2] broadcast(a), dimensions={}\n  s = s32[2] add(x, ab)\n"
                     "  ROOT r = (s32[2], f32[], pred[2]) tuple(s, y, p)\n}\n";
  int32_t a = 10, s[2];
  float y;
  uint8_t p[2];
  void *in[1] = {&a}, *out[3] = {s, &y, p};
  int64_t bytes[3] = {8, 4, 2};
  if (run(text, in, 1, out, bytes, 3))
    CHECK(s[0] == 13 && s[1] == 14 && y == 2.5f && p[0] == 1 && p[1] == 0, "tuple constant: %d %d %g %d %d", s[0], s[1],
          y, p[0], p[1]);
}

/* ---- control flow ------------------------------------------------------------------------------ */

static void test_while(void) {
  const char *text =
      "HloModule m\n"
      "cond {\n  p = (s32[], s32[]) parameter(0)\n  i = s32[] get-tuple-element(p), index=0\n"
      "  n = s32[] constant(10)\n  ROOT c = pred[] compare(i, n), direction=LE\n}\n"
      "body {\n  p = (s32[], s32[]) parameter(0)\n  i = s32[] get-tuple-element(p), index=0\n"
      "  s = s32[] get-tuple-element(p), index=1\n  one = s32[] constant(1)\n  i2 = s32[] add(i, one)\n"
      "  s2 = s32[] add(s, i)\n  ROOT t = (s32[], s32[]) tuple(i2, s2)\n}\n"
      "ENTRY e {\n  a = s32[] parameter(0)\n  z = s32[] constant(0)\n  t = (s32[], s32[]) tuple(a, z)\n"
      "  w = (s32[], s32[]) while(t), condition=cond, body=body\n  ROOT r = s32[] get-tuple-element(w), index=1\n}\n";
  int32_t start = 1, sum = 0;
  if (run1(text, &start, &sum, sizeof sum))
    CHECK(sum == 55, "while: sum 1..10 = %d", sum);
  start = 11;
  if (run1(text, &start, &sum, sizeof sum))
    CHECK(sum == 0, "while that never runs its body: %d", sum);
}

static void test_conditional(void) {
  const char *text =
      "HloModule m\n"
      "b0 {\n  x = f32[2] parameter(0)\n  ROOT n = f32[2] negate(x)\n}\n"
      "b1 {\n  x = f32[2] parameter(0)\n  ROOT a = f32[2] add(x, x)\n}\n"
      "b2 {\n  x = f32[2] parameter(0)\n  ROOT m = f32[2] multiply(x, x)\n}\n"
      "ENTRY e {\n  i = s32[] parameter(0)\n  v = f32[2] parameter(1)\n"
      "  ROOT c = f32[2] conditional(i, v, v, v), branch_computations={b0, b1, b2}\n}\n";
  float v[2] = {3, -4}, out[2];
  int32_t idx[5] = {0, 1, 2, 7, -1};
  const float want[5][2] = {{-3, 4}, {6, -8}, {9, 16}, {9, 16}, {9, 16}}; /* out of range: the last branch */
  for (int k = 0; k < 5; k++)
    if (run2(text, &idx[k], v, out, sizeof out))
      CHECK(out[0] == want[k][0] && out[1] == want[k][1], "conditional index %d: %g %g", idx[k], out[0], out[1]);
  const char *pred =
      "HloModule m\n"
      "t {\n  x = s32[] parameter(0)\n  one = s32[] constant(1)\n  ROOT a = s32[] add(x, one)\n}\n"
      "f {\n  x = s32[] parameter(0)\n  one = s32[] constant(1)\n  ROOT a = s32[] subtract(x, one)\n}\n"
      "ENTRY e {\n  p = pred[] parameter(0)\n  x = s32[] constant(41)\n"
      "  ROOT c = s32[] conditional(p, x, x), true_computation=t, false_computation=f\n}\n";
  uint8_t pv[2] = {1, 0};
  int32_t r;
  for (int k = 0; k < 2; k++)
    if (run1(pred, &pv[k], &r, sizeof r))
      CHECK(r == (pv[k] ? 42 : 40), "conditional on %d: %d", pv[k], r);
}

static void test_call(void) {
  const char *text =
      "HloModule m\n"
      "sq {\n  x = f64[3] parameter(0)\n  y = f64[3] parameter(1)\n  m = f64[3] multiply(x, x)\n"
      "  ROOT t = (f64[3], f64[3]) tuple(m, y)\n}\n"
      "ENTRY e {\n  a = f64[3] parameter(0)\n  c = (f64[3], f64[3]) call(a, a), to_apply=sq\n"
      "  x = f64[3] get-tuple-element(c), index=0\n  y = f64[3] get-tuple-element(c), index=1\n"
      "  ROOT s = f64[3] subtract(x, y)\n}\n";
  double a[3] = {2, -1, 0.5}, out[3];
  if (run1(text, a, out, sizeof out))
    CHECK(out[0] == 2 && out[1] == 2 && out[2] == -0.25, "call: %g %g %g", out[0], out[1], out[2]);
}

/* ---- errors ------------------------------------------------------------------------------------- */

/* Buffers die after their last reader, across tuple/get-tuple-element aliases, and their
 * arena ranges are reused: a chain of 4 KiB results holds at most three at once (the root
 * writes the caller's buffer), an early value read at the end stays valid, and nothing comes
 * from the heap. */
static void test_buffer_lifetimes(void) {
  const char *text =
      "HloModule m\nENTRY e {\n  x = f32[1024] parameter(0)\n"
      "  a = f32[1024] add(x, x)\n  b = f32[1024] multiply(a, a)\n"
      "  t = (f32[1024], f32[1024]) tuple(a, b)\n  c = f32[1024] negate(b)\n"
      "  d = f32[1024] add(c, c)\n  e = f32[1024] add(d, d)\n  f = f32[1024] add(e, e)\n"
      "  g = f32[1024] get-tuple-element(t), index=0\n  h = f32[1024] subtract(f, g)\n"
      "  ROOT r = f32[1024] add(h, x)\n}\n";
  static float x[1024], out[1024];
  for (int i = 0; i < 1024; i++)
    x[i] = (float)(i % 7) - 3.0f;
  g_live_buffers = g_peak_buffers = g_allocations = 0;
  g_arena_bytes = -1;
  if (!run1(text, x, out, sizeof out))
    return;
  bool ok = true;
  for (int i = 0; i < 1024 && ok; i++) {
    float a = x[i] + x[i], b = a * a, f = -b * 8.0f;
    ok = out[i] == (f - a) + x[i];
  }
  CHECK(ok, "buffer lifetimes: wrong result");
  /* a (held by t until g), then two of the chain's results: never all seven at once */
  CHECK(g_arena_bytes >= 2 * 4096 && g_arena_bytes <= 4 * 4096, "buffer lifetimes: an arena of %lld bytes",
        (long long)g_arena_bytes);
  CHECK(g_allocations == 0 && g_live_buffers == 0, "buffer lifetimes: %d heap buffers, %d never freed", g_allocations,
        g_live_buffers);
}

/* ---- fft ------------------------------------------------------------------------------------- */

/* A 4-point FFT of two unit impulses and a 3-point RFFT, by hand: DFT(e0) = 1, DFT(e1)[k] =
 * (-i)^k; RFFT(1, 2, 3) = (6, -1.5 + i sqrt(3)/2). */
static void test_fft_values(void) {
  const char *text = "HloModule m\nENTRY e {\n  a = c64[2,4] parameter(0)\n"
                     "  ROOT f = c64[2,4] fft(a), fft_type=FFT, fft_length={4}\n}\n";
  float a[16] = {1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0}, r[16];
  const float want[16] = {1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 0, -1, -1, 0, 0, 1};
  if (run1(text, a, r, sizeof r))
    for (int i = 0; i < 16; i++)
      CHECK(fabsf(r[i] - want[i]) <= 1e-6f, "fft component %d = %g, want %g", i, r[i], want[i]);
  const char *rf = "HloModule m\nENTRY e {\n  a = f64[3] parameter(0)\n"
                   "  ROOT f = c128[2] fft(a), fft_type=RFFT, fft_length={3}\n}\n";
  double x[3] = {1, 2, 3}, y[4];
  const double wy[4] = {6, 0, -1.5, sqrt(3.0) / 2};
  if (run1(rf, x, y, sizeof y))
    for (int i = 0; i < 4; i++)
      CHECK(fabs(y[i] - wy[i]) <= 1e-12, "rfft component %d = %g, want %g", i, y[i], wy[i]);
}

/* Emits `text`; NULL (after reporting) when it does not compile. */
static LLVMModuleRef emit_only(const char *text, LLVMContextRef ctx, ir_module **out_m, hlo_status *out_s) {
  *out_m = load(text);
  *out_s = NULL;
  if (!*out_m)
    return NULL;
  cg_options co = {.symbol = "t"};
  LLVMModuleRef mod = NULL;
  *out_s = cg_emit_module(*out_m, &co, ctx, NULL, &mod);
  return mod;
}

/* Every fft call site has its own plan slot, and the module's destructor (llvm.global_dtors)
 * releases each slot's plan. */
static void test_fft_plan_release(void) {
  const char *text = "HloModule m\nENTRY e {\n  a = c64[4,8] parameter(0)\n"
                     "  f1 = c64[4,8] fft(a), fft_type=FFT, fft_length={8}\n"
                     "  ROOT f2 = c64[4,8] fft(f1), fft_type=IFFT, fft_length={4,8}\n}\n";
  LLVMContextRef ctx = LLVMContextCreate();
  ir_module *m = NULL;
  hlo_status s = NULL;
  LLVMModuleRef mod = emit_only(text, ctx, &m, &s);
  CHECK(mod && !s, "two ffts compile: %s", s ? hlo_status_message(s) : "");
  if (mod) {
    LLVMValueRef dtors = LLVMGetNamedGlobal(mod, "llvm.global_dtors");
    LLVMValueRef init = dtors ? LLVMGetInitializer(dtors) : NULL;
    CHECK(init && LLVMGetNumOperands(init) == 1, "one destructor is registered");
    LLVMValueRef fn = init ? LLVMGetOperand(LLVMGetOperand(init, 0), 1) : NULL;
    LLVMValueRef s1 = LLVMGetNamedGlobal(mod, "fft.plan.f1"), s2 = LLVMGetNamedGlobal(mod, "fft.plan.f2");
    CHECK(s1 && s2 && s1 != s2, "each fft has its own plan slot");
    bool released[2] = {false, false};
    LLVMBasicBlockRef bb = fn ? LLVMGetEntryBasicBlock(fn) : NULL;
    for (LLVMValueRef i = bb ? LLVMGetFirstInstruction(bb) : NULL; i; i = LLVMGetNextInstruction(i)) {
      if (LLVMGetInstructionOpcode(i) != LLVMCall)
        continue;
      size_t len = 0;
      const char *callee = LLVMGetValueName2(LLVMGetCalledValue(i), &len);
      if (strcmp(callee, "hlo_rt_fft_plan_release") == 0) {
        released[0] |= LLVMGetOperand(i, 0) == s1;
        released[1] |= LLVMGetOperand(i, 0) == s2;
      }
    }
    CHECK(released[0] && released[1], "the destructor releases both plans");
    LLVMDisposeModule(mod);
  }
  hlo_status_free(s);
  ir_module_destroy(m);
  LLVMContextDispose(ctx);
}

/* ---- the lowering table ------------------------------------------------------------------------ */

/* Every opcode has a rule that lowers it; exactly the elementwise ones have an element function;
 * an opcode whose rule is cg_rule_none (ragged-dot: expand_dots rewrites it, a pass load()
 * does not run) fails to compile with an internal error instead of emitting anything. */
static void test_lower_rules(void) {
  for (int op = 0; op < IR_OP_COUNT; op++) {
    const cg_lower_rule *r = cg_lower_rules[op];
    ir_instr x = {.op = (ir_opcode)op};
    CHECK(r && r->lower, "'%s' has a lowering rule", ir_opcode_table[op].spelling);
    CHECK(r && (r->element != NULL) == ir_is_elementwise(&x), "'%s': an element function iff elementwise",
          ir_opcode_table[op].spelling);
  }
  CHECK(cg_lower_rules[IR_OP_RAGGED_DOT] == &cg_rule_none && cg_lower_rules[IR_OP_SHUFFLE] == &cg_rule_none &&
            cg_lower_rules[IR_OP_ADD] == &cg_rule_binary,
        "rules by opcode as opcodes.def names them");
  const char *text = "HloModule m\nENTRY e {\n  p0 = f32[6,4] parameter(0)\n  p1 = f32[3,4,5] parameter(1)\n"
                     "  p2 = s32[3] parameter(2)\n  ROOT r = f32[6,5] ragged-dot(p0, p1, p2), lhs_contracting_dims={1},"
                     " rhs_contracting_dims={1}, lhs_ragged_dims={0}, rhs_group_dims={0}\n}\n";
  LLVMContextRef ctx = LLVMContextCreate();
  ir_module *m = NULL;
  hlo_status s = NULL;
  LLVMModuleRef mod = emit_only(text, ctx, &m, &s);
  CHECK(m && s && strstr(hlo_status_message(s), "internal error: opcode 'ragged-dot' reached no lowering"),
        "ragged-dot without expand_dots: %s", s ? hlo_status_message(s) : "compiled");
  if (mod)
    LLVMDisposeModule(mod);
  hlo_status_free(s);
  ir_module_destroy(m);
  LLVMContextDispose(ctx);
}

/* Non-temporal stores (fused.c emit_streamed, nontemporal.c): a streamed loop writes its result
 * alike into a 64-byte aligned buffer (its streaming copy) and into one 4 bytes past that (its
 * ordinary copy, taken for a caller's unaligned buffer); both as computed here. */
static void test_nontemporal(void) {
  enum { N = 5003 };
  static const char text[] = "HloModule t\nENTRY main {\n  x = f32[5003] parameter(0)\n"
                             "  y = f32[5003] parameter(1)\n  ROOT s = f32[5003] add(x, y)\n}\n";
  float *x = malloc(N * sizeof(float)), *y = malloc(N * sizeof(float));
  enum { OUT_BYTES = ((N + 16) * sizeof(float) + 63) / 64 * 64 }; /* aligned_alloc: a multiple of 64 */
  unsigned char *out = aligned_alloc(64, OUT_BYTES);
  CHECK(x && y && out, "out of memory");
  if (!x || !y || !out) {
    free(x);
    free(y);
    free(out);
    return;
  }
  for (int i = 0; i < N; i++)
    x[i] = (float)i * 0.5f, y[i] = (float)(N - i);
  void *params[2] = {x, y};
  for (int skew = 0; skew <= 4; skew += 4) {
    float *r = (float *)(out + skew);
    memset(out, 0, OUT_BYTES);
    void *results[1] = {r};
    int64_t bytes = N * sizeof(float);
    if (!run_opt(text, params, results, &bytes, 2, 1, true, true))
      CHECK(0, "streamed module did not run (result %d bytes past 64-byte alignment)", skew);
    int bad = 0;
    for (int i = 0; i < N; i++)
      bad += r[i] != (float)i * 0.5f + (float)(N - i);
    CHECK(bad == 0, "%d wrong elements with the result %d bytes past 64-byte alignment", bad, skew);
  }
  free(x);
  free(y);
  free(out);
}

int main(void) {
  LLVMInitializeNativeTarget();
  LLVMInitializeNativeAsmPrinter();
  test_int_divide();
  test_shifts();
  test_int_misc();
  test_minmax_nan();
  test_convert_saturating();
  test_bf16();
  test_f8();
  test_f16_math();
  test_float_unary();
  test_compare();
  test_complex();
  test_data();
  test_tuple_constant();
  test_while();
  test_conditional();
  test_call();
  test_buffer_lifetimes();
  test_fft_values();
  test_fft_plan_release();
  test_lower_rules();
  test_nontemporal();
  printf("codegen_test: %d checks, %d failed\n", g_checks, g_failures);
  return g_failures ? 1 : 0;
}
