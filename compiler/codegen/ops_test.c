/* ops_test.c — reduce, dot, map, reduce-precision and bitcast-convert compiled in-process (parse,
 * verify, passes, cg_emit_module, LLVMVerifyModule, -O0 and default<O2>, ORC LLJIT) and run on
 * C buffers.  Large f32/f64 dots must take the runtime kernel (strided or offset tables, seen
 * in the LLVM module) for every dimension-number form: transposed operands, batch dimensions
 * in the middle, several contracting dimensions in any order, free dimensions that are not
 * adjacent; their expected values come from a long-double loop nest written here from the
 * spec's DotGeneral definition.  mulhi on the sub-byte integer types is checked on every pair of
 * values against floor(a * b / 2^bits).  Everything else is checked against hand-computed values.
 */
#include <complex.h>
#include <llvm-c/Analysis.h>
#include <llvm-c/LLJIT.h>
#include <llvm-c/Orc.h>
#include <llvm-c/Target.h>
#include <llvm-c/TargetMachine.h>
#include <llvm-c/Transforms/PassBuilder.h>
#include <float.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "codegen/codegen.h"
#include "grammar/parse.h"
#include "hlo/abi.h"
#include "hlo/rt.h"
#include "hlo/rt_parallel.h"
#include "passes/passes.h"
#include "shape/shape.h"

static int g_failures, g_checks;

#define CHECK(cond, ...)                                    \
  do {                                                      \
    g_checks++;                                             \
    if (!(cond)) {                                          \
      g_failures++;                                         \
      fprintf(stderr, "%s:%d: FAIL: ", __FILE__, __LINE__); \
      fprintf(stderr, __VA_ARGS__);                         \
      fputc('\n', stderr);                                  \
    }                                                       \
  } while (0)

/* ---- compiling and running one module ------------------------------------------------- */

static LLVMTargetMachineRef host_tm(void) {
  char *triple = LLVMGetDefaultTargetTriple(), *err = NULL;
  LLVMTargetRef target;
  LLVMTargetMachineRef tm = NULL;
  if (!LLVMGetTargetFromTriple(triple, &target, &err))
    tm = LLVMCreateTargetMachine(target, triple, "", "", LLVMCodeGenLevelDefault, LLVMRelocPIC,
                                 LLVMCodeModelJITDefault);
  LLVMDisposeMessage(err);
  LLVMDisposeMessage(triple);
  return tm;
}

/* Parse, verify, the pipeline's passes; NULL after printing the reason. */
static ir_module *load(const char *text) {
  ir_diag_list d;
  ir_diag_init(&d, "ops.hlo", text, strlen(text));
  ir_module *m = NULL;
  hlo_status s = ir_parse_module(text, strlen(text), &d, &m);
  shape_options so = {0};
  int filled = 0;
  if (!s && !shape_verify_module(m, &so, &d))
    s = hlo_status_make(HLO_INVALID_ARGUMENT, "verification failed");
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

/* The runtime functions generated code may call, by address (the test links libhlort). */
static void define_runtime(LLVMOrcLLJITRef jit, LLVMOrcJITDylibRef jd) {
  static const struct {
    const char *name;
    void (*fn)(void);
  } rt[] = {
      {"hlo_rt_arena_acquire", (void (*)(void))hlo_rt_arena_acquire},
      {"hlo_rt_arena_release", (void (*)(void))hlo_rt_arena_release},
      {"hlo_rt_parallel_for", (void (*)(void))hlo_rt_parallel_for},
      {"hlo_rt_alloc", (void (*)(void))hlo_rt_alloc},
      {"hlo_rt_free", (void (*)(void))hlo_rt_free},
      {"hlo_rt_error", (void (*)(void))hlo_rt_error},
      {"hlo_rt_complex_op", (void (*)(void))hlo_rt_complex_op},
      {"hlo_rt_f8_to_f32", (void (*)(void))hlo_rt_f8_to_f32},
      {"hlo_rt_f32_to_f8", (void (*)(void))hlo_rt_f32_to_f8},
      {"hlo_rt_gemm_strided_f32", (void (*)(void))hlo_rt_gemm_strided_f32},
      {"hlo_rt_gemm_strided_f64", (void (*)(void))hlo_rt_gemm_strided_f64},
      {"hlo_rt_gemm_indexed_f32", (void (*)(void))hlo_rt_gemm_indexed_f32},
      {"hlo_rt_gemm_indexed_f64", (void (*)(void))hlo_rt_gemm_indexed_f64},
      {"hlo_rt_gemm_strided_bf16", (void (*)(void))hlo_rt_gemm_strided_bf16},
      {"hlo_rt_gemm_indexed_bf16", (void (*)(void))hlo_rt_gemm_indexed_bf16},
      {"hlo_rt_gemm_strided_f16", (void (*)(void))hlo_rt_gemm_strided_f16},
      {"hlo_rt_gemm_indexed_f16", (void (*)(void))hlo_rt_gemm_indexed_f16},
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
  LLVMOrcDefinitionGeneratorRef gen = NULL;
  e = LLVMOrcCreateDynamicLibrarySearchGeneratorForProcess(&gen, LLVMOrcLLJITGetGlobalPrefix(jit), NULL, NULL);
  if (e)
    LLVMConsumeError(e);
  else
    LLVMOrcJITDylibAddGenerator(jd, gen);
}

static bool jit_error(const char *what, LLVMErrorRef e) {
  char *msg = LLVMGetErrorMessage(e);
  fprintf(stderr, "%s: %s\n", what, msg);
  LLVMDisposeErrorMessage(msg);
  return false;
}

/* JIT-compiles mod (consumed) and calls t_run(NULL, params, results). */
static bool jit_run(LLVMOrcThreadSafeContextRef tsc, LLVMModuleRef mod, void *const *params, void *const *results) {
  LLVMOrcLLJITRef jit;
  LLVMErrorRef e = LLVMOrcCreateLLJIT(&jit, NULL);
  if (e) {
    LLVMDisposeModule(mod);
    return jit_error("LLJIT", e);
  }
  LLVMOrcJITDylibRef jd = LLVMOrcLLJITGetMainJITDylib(jit);
  define_runtime(jit, jd);
  bool ok = false;
  LLVMOrcExecutorAddress run_addr = 0;
  e = LLVMOrcLLJITAddLLVMIRModule(jit, jd, LLVMOrcCreateNewThreadSafeModule(mod, tsc));
  if (!e)
    e = LLVMOrcLLJITLookup(jit, &run_addr, "t_run");
  if (e) {
    jit_error("JIT", e);
  } else {
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

/* The runtime function a module calls, if any, among the matrix kernels. */
static const char *gemm_called(LLVMModuleRef mod) {
  static const char *names[] = {"hlo_rt_gemm_strided_bf16", "hlo_rt_gemm_indexed_bf16", "hlo_rt_gemm_strided_f16",
                                "hlo_rt_gemm_indexed_f16",  "hlo_rt_gemm_strided_f32",  "hlo_rt_gemm_strided_f64",
                                "hlo_rt_gemm_indexed_f32",  "hlo_rt_gemm_indexed_f64"};
  for (int i = 0; i < 8; i++)
    if (LLVMGetNamedFunction(mod, names[i]))
      return names[i];
  return "";
}

/* Emits and runs `text` once (optimized or not); *out_gemm gets the kernel it calls. */
static bool run_once(const char *text, void *const *params, void *const *results, bool optimize,
                     const char **out_gemm) {
  ir_module *m = load(text);
  if (!m)
    return false;
  LLVMTargetMachineRef tm = host_tm();
  LLVMOrcThreadSafeContextRef tsc = LLVMOrcCreateNewThreadSafeContext();
  cg_options co = {.symbol = "t", .opt_level = optimize ? 2 : 0};
  LLVMModuleRef mod = NULL;
  hlo_status s = cg_emit_module(m, &co, LLVMOrcThreadSafeContextGetContext(tsc), tm, &mod);
  bool ok = false;
  if (s) {
    fprintf(stderr, "emit: %s\n", hlo_status_message(s));
    hlo_status_free(s);
  } else {
    char *msg = NULL;
    bool broken = LLVMVerifyModule(mod, LLVMReturnStatusAction, &msg);
    CHECK(!broken, "LLVMVerifyModule: %s", msg ? msg : "");
    LLVMDisposeMessage(msg);
    *out_gemm = gemm_called(mod);
    if (optimize && !broken) {
      LLVMPassBuilderOptionsRef po = LLVMCreatePassBuilderOptions();
      LLVMErrorRef pe = LLVMRunPasses(mod, "default<O2>", tm, po);
      if (pe)
        jit_error("passes", pe);
      LLVMDisposePassBuilderOptions(po);
    }
    if (broken)
      LLVMDisposeModule(mod);
    else
      ok = jit_run(tsc, mod, params, results);
  }
  LLVMOrcDisposeThreadSafeContext(tsc);
  LLVMDisposeTargetMachine(tm);
  ir_module_destroy(m);
  return ok;
}

/* Runs unoptimized, then optimized into `results`; both must run and agree byte for byte.
 * Returns the kernel the module calls ("" for none) through out_gemm when not NULL. */
static bool run(const char *text, void *const *params, void *const *results, const int64_t *bytes, int n_results,
                const char **out_gemm) {
  void *o0[8];
  const char *g0 = "", *g2 = "";
  for (int i = 0; i < n_results; i++)
    o0[i] = calloc(1, (size_t)bytes[i] + 1);
  bool ok = run_once(text, params, o0, false, &g0) && run_once(text, params, results, true, &g2);
  for (int i = 0; i < n_results; i++) {
    if (ok)
      CHECK(memcmp(o0[i], results[i], (size_t)bytes[i]) == 0, "-O0 and -O2 results differ (result %d)", i);
    free(o0[i]);
  }
  CHECK(ok, "module did not compile and run:\n%s", text);
  if (out_gemm)
    *out_gemm = g2;
  return ok;
}

static bool run1(const char *text, const void *in, void *out, int64_t bytes) {
  void *p[1] = {(void *)in}, *r[1] = {out};
  return run(text, p, r, &bytes, 1, NULL);
}

static bool run2(const char *text, const void *a, const void *b, void *out, int64_t bytes) {
  void *p[2] = {(void *)a, (void *)b}, *r[1] = {out};
  return run(text, p, r, &bytes, 1, NULL);
}

static uint32_t bits_of(float x) {
  uint32_t u;
  memcpy(&u, &x, 4);
  return u;
}

static float float_of(uint32_t u) {
  float x;
  memcpy(&x, &u, 4);
  return x;
}

/* ---- dot through the runtime kernel ----------------------------------------------------- */

typedef struct dot_case {
  const char *et; /* "f32" or "f64" */
  int lr, rr;     /* ranks */
  int64_t ld[6], rd[6];
  int nb, nc; /* batch and contracting pairs */
  int64_t lb[4], rb[4], lc[4], rc[4];
  const char *kernel; /* the runtime function the module must call */
} dot_case;

static bool listed(const int64_t *v, int n, int64_t d) {
  for (int i = 0; i < n; i++)
    if (v[i] == d)
      return true;
  return false;
}

static int append(char *buf, int at, int cap, const char *fmt, ...) __attribute__((format(printf, 4, 5)));
static int append(char *buf, int at, int cap, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  int n = at < cap ? vsnprintf(buf + at, (size_t)(cap - at), fmt, ap) : 0;
  va_end(ap);
  return at + (n > 0 ? n : 0);
}

static int append_dims(char *buf, int at, int cap, const int64_t *v, int n) {
  for (int i = 0; i < n; i++)
    at = append(buf, at, cap, "%s%lld", i ? "," : "", (long long)v[i]);
  return at;
}

/* The result dimensions of the spec's DotGeneral: batch (lhs order), lhs free, rhs free. */
static int result_dims(const dot_case *c, int64_t *out) {
  int r = 0;
  for (int i = 0; i < c->nb; i++)
    out[r++] = c->ld[c->lb[i]];
  for (int d = 0; d < c->lr; d++)
    if (!listed(c->lb, c->nb, d) && !listed(c->lc, c->nc, d))
      out[r++] = c->ld[d];
  for (int d = 0; d < c->rr; d++)
    if (!listed(c->rb, c->nb, d) && !listed(c->rc, c->nc, d))
      out[r++] = c->rd[d];
  return r;
}

static void dot_text(const dot_case *c, char *buf, int cap) {
  int64_t od[12];
  int orank = result_dims(c, od), at = 0;
  at = append(buf, at, cap, "HloModule m\nENTRY e {\n  a = %s[", c->et);
  at = append_dims(buf, at, cap, c->ld, c->lr);
  at = append(buf, at, cap, "] parameter(0)\n  b = %s[", c->et);
  at = append_dims(buf, at, cap, c->rd, c->rr);
  at = append(buf, at, cap, "] parameter(1)\n  ROOT d = %s[", c->et);
  at = append_dims(buf, at, cap, od, orank);
  at = append(buf, at, cap, "] dot(a, b)");
  if (c->nb) {
    at = append(buf, at, cap, ", lhs_batch_dims={");
    at = append_dims(buf, at, cap, c->lb, c->nb);
    at = append(buf, at, cap, "}, rhs_batch_dims={");
    at = append_dims(buf, at, cap, c->rb, c->nb);
    at = append(buf, at, cap, "}");
  }
  at = append(buf, at, cap, ", lhs_contracting_dims={");
  at = append_dims(buf, at, cap, c->lc, c->nc);
  at = append(buf, at, cap, "}, rhs_contracting_dims={");
  at = append_dims(buf, at, cap, c->rc, c->nc);
  append(buf, at, cap, "}\n}\n");
}

static int64_t count_of(const int64_t *d, int r) {
  int64_t n = 1;
  for (int i = 0; i < r; i++)
    n *= d[i];
  return n;
}

static int64_t linear(const int64_t *idx, const int64_t *dims, int r) {
  int64_t l = 0;
  for (int i = 0; i < r; i++)
    l = l * dims[i] + idx[i];
  return l;
}

/* Result element o (row-major over the result) by the definition, with the sum of the terms'
 * magnitudes in *mag. */
static long double dot_ref(const dot_case *c, const double *a, const double *b, int64_t o, long double *mag) {
  int64_t od[12], oi[12], li[6] = {0}, ri[6] = {0}, cd[4], ci[4] = {0};
  int orank = result_dims(c, od), r = 0;
  for (int i = orank - 1; i >= 0; i--) {
    oi[i] = o % od[i];
    o /= od[i];
  }
  for (int i = 0; i < c->nb; i++, r++)
    li[c->lb[i]] = ri[c->rb[i]] = oi[r];
  for (int d = 0; d < c->lr; d++)
    if (!listed(c->lb, c->nb, d) && !listed(c->lc, c->nc, d))
      li[d] = oi[r++];
  for (int d = 0; d < c->rr; d++)
    if (!listed(c->rb, c->nb, d) && !listed(c->rc, c->nc, d))
      ri[d] = oi[r++];
  for (int i = 0; i < c->nc; i++)
    cd[i] = c->ld[c->lc[i]];
  long double s = 0;
  *mag = 0;
  for (int64_t t = 0, total = count_of(cd, c->nc); t < total; t++) {
    for (int64_t i = c->nc - 1, u = t; i >= 0; i--) {
      ci[i] = u % cd[i];
      u /= cd[i];
    }
    for (int i = 0; i < c->nc; i++)
      li[c->lc[i]] = ri[c->rc[i]] = ci[i];
    long double x = (long double)a[linear(li, c->ld, c->lr)] * b[linear(ri, c->rd, c->rr)];
    s += x;
    *mag += fabsl(x);
  }
  return s;
}

/* Pseudo-random values in [-1, 1) that are exact in f32. */
static void fill(double *v, int64_t n, uint32_t seed) {
  for (int64_t i = 0; i < n; i++) {
    seed = seed * 1664525u + 1013904223u;
    v[i] = (double)(float)((double)(seed >> 8) / 8388608.0 - 1.0);
  }
}

/* The value and the bits of bf16 x truncated (test data: exact in bf16 afterwards). */
static uint16_t bf16_trunc(double *x) {
  uint32_t u = bits_of((float)*x) & 0xFFFF0000u;
  *x = float_of(u);
  return (uint16_t)(u >> 16);
}

/* The same for f16 (11 significant bits; below f16's normal range, 0). */
static uint16_t f16_trunc(double *x) {
  uint32_t u = bits_of((float)*x) & 0xFFFFE000u, e = (u >> 23) & 0xFF;
  if (e < 113) { /* |x| < 2^-14 */
    *x = 0;
    return 0;
  }
  *x = float_of(u);
  return (uint16_t)((u >> 16 & 0x8000u) | (e - 112) << 10 | (u >> 13 & 0x3FFu));
}

/* An f16 result as a value (normal, zero or subnormal; the tests give no infinities). */
static long double f16_value(uint16_t h) {
  int e = h >> 10 & 0x1F;
  long double m = h & 0x3FF, v = e ? ldexpl(1024 + m, e - 25) : ldexpl(m, -24);
  return h & 0x8000 ? -v : v;
}

static void run_dot_case(const dot_case *c, uint32_t seed) {
  bool f32 = strcmp(c->et, "f32") == 0, bf = strcmp(c->et, "bf16") == 0, h = strcmp(c->et, "f16") == 0;
  int64_t od[12], na = count_of(c->ld, c->lr), nb = count_of(c->rd, c->rr);
  int64_t no = count_of(od, result_dims(c, od)), es = f32 ? 4 : bf || h ? 2 : 8;
  char text[1024];
  dot_text(c, text, sizeof text);
  double *a = malloc(sizeof(double) * (size_t)na), *b = malloc(sizeof(double) * (size_t)nb);
  void *pa = malloc((size_t)(na * es)), *pb = malloc((size_t)(nb * es)), *po = malloc((size_t)(no * es));
  fill(a, na, seed);
  fill(b, nb, seed * 7 + 1);
  for (int64_t i = 0; i < na; i++)
    bf ? (void)(((uint16_t *)pa)[i] = bf16_trunc(&a[i]))
    : h ? (void)(((uint16_t *)pa)[i] = f16_trunc(&a[i]))
    : f32 ? (void)(((float *)pa)[i] = (float)a[i]) : (void)(((double *)pa)[i] = a[i]);
  for (int64_t i = 0; i < nb; i++)
    bf ? (void)(((uint16_t *)pb)[i] = bf16_trunc(&b[i]))
    : h ? (void)(((uint16_t *)pb)[i] = f16_trunc(&b[i]))
    : f32 ? (void)(((float *)pb)[i] = (float)b[i]) : (void)(((double *)pb)[i] = b[i]);
  void *p[2] = {pa, pb}, *r[1] = {po};
  int64_t bytes = no * es;
  const char *kernel = "";
  if (run(text, p, r, &bytes, 1, &kernel)) {
    CHECK(strcmp(kernel, c->kernel) == 0, "%s: calls '%s', expected '%s'", text, kernel, c->kernel);
    int64_t k = 1;
    for (int i = 0; i < c->nc; i++)
      k *= c->ld[c->lc[i]];
    long double eps = f32 || bf || h ? FLT_EPSILON : DBL_EPSILON;
    for (int64_t o = 0; o < no; o++) {
      long double mag, want = dot_ref(c, a, b, o, &mag);
      long double got = f32  ? ((float *)po)[o]
                        : bf ? float_of((uint32_t)((uint16_t *)po)[o] << 16)
                        : h  ? f16_value(((uint16_t *)po)[o])
                             : ((double *)po)[o];
      /* bf16, f16: f32 accumulation, then one rounding to 8 or 11 significant bits (and f16's
       * subnormal spacing) */
      long double round = bf ? 0x1p-8L * fabsl(want) : h ? 0x1p-11L * fabsl(want) + 0x1p-25L : 0;
      if (fabsl(got - want) > (k + 2) * eps * mag + round) {
        CHECK(false, "%s: element %lld = %.10Lg, expected %.10Lg", text, (long long)o, got, want);
        break;
      }
    }
  }
  free(a), free(b), free(pa), free(pb), free(po);
}

static void test_dot_gemm(void) {
  static const dot_case cases[] = {
      /* plain matrix product */
      {"f32", 2, 2, {64, 48}, {48, 40}, 0, 1, {0}, {0}, {1}, {0}, "hlo_rt_gemm_strided_f32"},
      /* both operands transposed */
      {"f32", 2, 2, {48, 64}, {40, 48}, 0, 1, {0}, {0}, {0}, {1}, "hlo_rt_gemm_strided_f32"},
      {"f64", 2, 2, {48, 64}, {40, 48}, 0, 1, {0}, {0}, {0}, {1}, "hlo_rt_gemm_strided_f64"},
      /* batch first, odd sizes */
      {"f32", 3, 3, {3, 41, 53}, {3, 53, 29}, 1, 1, {0}, {0}, {2}, {1}, "hlo_rt_gemm_strided_f32"},
      /* batch in the middle of the lhs and last in the rhs */
      {"f64", 3, 3, {50, 4, 33}, {33, 29, 4}, 1, 1, {1}, {2}, {2}, {0}, "hlo_rt_gemm_strided_f64"},
      /* two contracting dimensions, in row-major order on both sides (one strided depth) */
      {"f32", 3, 3, {37, 6, 9}, {6, 9, 41}, 0, 2, {0}, {0}, {1, 2}, {0, 1}, "hlo_rt_gemm_strided_f32"},
      /* two contracting dimensions listed in reverse order, batch in the middle: tables */
      {"f32", 4, 4, {8, 2, 40, 6}, {6, 2, 8, 30}, 1, 2, {1}, {1}, {3, 0}, {0, 2}, "hlo_rt_gemm_indexed_f32"},
      /* lhs free dimensions not adjacent: tables */
      {"f64", 3, 2, {5, 64, 7}, {64, 30}, 0, 1, {0}, {0}, {1}, {0}, "hlo_rt_gemm_indexed_f64"},
      /* vector times matrix and matrix times vector */
      {"f32", 1, 2, {1000}, {1000, 40}, 0, 1, {0}, {0}, {0}, {0}, "hlo_rt_gemm_strided_f32"},
      {"f32", 2, 1, {40, 1000}, {1000}, 0, 1, {0}, {0}, {1}, {0}, "hlo_rt_gemm_strided_f32"},
      /* two batch dimensions swapped between the operands */
      {"f32", 4, 4, {2, 3, 40, 30}, {3, 2, 30, 35}, 2, 1, {0, 1}, {1, 0}, {3}, {2}, "hlo_rt_gemm_indexed_f32"},
      /* bf16: the bf16 kernel, strided (plain, transposed, batched) and with tables */
      {"bf16", 2, 2, {64, 48}, {48, 40}, 0, 1, {0}, {0}, {1}, {0}, "hlo_rt_gemm_strided_bf16"},
      {"bf16", 2, 2, {48, 64}, {40, 48}, 0, 1, {0}, {0}, {0}, {1}, "hlo_rt_gemm_strided_bf16"},
      {"bf16", 3, 3, {3, 41, 53}, {3, 53, 29}, 1, 1, {0}, {0}, {2}, {1}, "hlo_rt_gemm_strided_bf16"},
      {"bf16", 4, 4, {8, 2, 40, 6}, {6, 2, 8, 30}, 1, 2, {1}, {1}, {3, 0}, {0, 2}, "hlo_rt_gemm_indexed_bf16"},
      /* f16: the f16 entry (widened while packed), strided and with tables */
      {"f16", 2, 2, {64, 48}, {48, 40}, 0, 1, {0}, {0}, {1}, {0}, "hlo_rt_gemm_strided_f16"},
      {"f16", 2, 2, {48, 64}, {40, 48}, 0, 1, {0}, {0}, {0}, {1}, "hlo_rt_gemm_strided_f16"},
      {"f16", 3, 3, {3, 41, 53}, {3, 53, 29}, 1, 1, {0}, {0}, {2}, {1}, "hlo_rt_gemm_strided_f16"},
      {"f16", 4, 4, {8, 2, 40, 6}, {6, 2, 8, 30}, 1, 2, {1}, {1}, {3, 0}, {0, 2}, "hlo_rt_gemm_indexed_f16"},
      /* small: the inline loop nest */
      {"f32", 2, 2, {7, 13}, {13, 5}, 0, 1, {0}, {0}, {1}, {0}, ""},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
    run_dot_case(&cases[i], (uint32_t)(i * 977 + 5));
}

/* ---- small dots: mixed types, integers, complex (the loop nest) ------------------------ */

static uint16_t bf16_bits(float x) { return (uint16_t)(bits_of(x) >> 16); } /* exact inputs only */

static void test_dot_types(void) {
  /* bf16 x bf16 -> bf16 accumulates in f32 and rounds once: 1 + 2^-8 + 2^-8 = 1 + 2^-7 exactly,
   * where bf16 accumulation would round 1 + 2^-8 to 1 twice. */
  const char *bb = "HloModule m\nENTRY e {\n  a = bf16[1,3] parameter(0)\n  b = bf16[3,1] parameter(1)\n"
                   "  ROOT d = bf16[1,1] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}\n}\n";
  uint16_t a[3] = {bf16_bits(1), bf16_bits(0x1p-8f), bf16_bits(0x1p-8f)}, b[3], o = 0;
  for (int i = 0; i < 3; i++)
    b[i] = bf16_bits(1);
  if (run2(bb, a, b, &o, 2))
    CHECK(o == bf16_bits(1 + 0x1p-7f), "bf16 dot: bits %#x, want %#x", o, bf16_bits(1 + 0x1p-7f));
  /* bf16 x bf16 -> f32 (preferred element type) */
  const char *bf = "HloModule m\nENTRY e {\n  a = bf16[2,2] parameter(0)\n  b = bf16[2,2] parameter(1)\n"
                   "  ROOT d = f32[2,2] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}\n}\n";
  uint16_t x[4] = {bf16_bits(1.5f), bf16_bits(-2), bf16_bits(0.25f), bf16_bits(3)};
  uint16_t y[4] = {bf16_bits(2), bf16_bits(1), bf16_bits(-1), bf16_bits(0.5f)};
  float fo[4];
  const float fw[4] = {1.5f * 2 + 2, 1.5f - 1, 0.5f - 3, 0.25f + 1.5f};
  if (run2(bf, x, y, fo, sizeof fo))
    for (int i = 0; i < 4; i++)
      CHECK(fo[i] == fw[i], "bf16 x bf16 -> f32 [%d] = %g, want %g", i, fo[i], fw[i]);
  /* s8 x s8 -> s32: products beyond s8 */
  const char *s8 = "HloModule m\nENTRY e {\n  a = s8[3] parameter(0)\n  b = s8[3] parameter(1)\n"
                   "  ROOT d = s32[] dot(a, b), lhs_contracting_dims={0}, rhs_contracting_dims={0}\n}\n";
  int8_t sa[3] = {100, -128, 127}, sb[3] = {100, -128, 127};
  int32_t so = 0;
  if (run2(s8, sa, sb, &so, 4))
    CHECK(so == 10000 + 16384 + 16129, "s8 dot -> s32 = %d", so);
  /* s32 wraps like XLA's integer arithmetic */
  const char *s32 = "HloModule m\nENTRY e {\n  a = s32[2] parameter(0)\n  b = s32[2] parameter(1)\n"
                    "  ROOT d = s32[] dot(a, b), lhs_contracting_dims={0}, rhs_contracting_dims={0}\n}\n";
  int32_t ia[2] = {65536, 1}, ib[2] = {65536, 5}, io = 0;
  if (run2(s32, ia, ib, &io, 4))
    CHECK(io == 5, "s32 dot wraps: %d", io);
  /* c64: (1+2i)(3+4i) + (5+6i)(7+8i) = -18+92i */
  const char *cc = "HloModule m\nENTRY e {\n  a = c64[2] parameter(0)\n  b = c64[2] parameter(1)\n"
                   "  ROOT d = c64[] dot(a, b), lhs_contracting_dims={0}, rhs_contracting_dims={0}\n}\n";
  float ca[4] = {1, 2, 5, 6}, cb[4] = {3, 4, 7, 8}, co[2] = {0, 0};
  if (run2(cc, ca, cb, co, 8))
    CHECK(co[0] == -18 && co[1] == 92, "c64 dot = %g%+gi", co[0], co[1]);
}

/* ---- reduce ------------------------------------------------------------------------------ */

static void test_reduce(void) {
  /* x[i][j][k] = 12i + 4j + k summed over {0, 2}: 60 + 32j */
  const char *sum = "HloModule m\nadd {\n  x = f32[] parameter(0)\n  y = f32[] parameter(1)\n"
                    "  ROOT s = f32[] add(x, y)\n}\nENTRY e {\n  a = f32[2,3,4] parameter(0)\n"
                    "  z = f32[] constant(0)\n  ROOT r = f32[3] reduce(a, z), dimensions={0,2}, to_apply=add\n}\n";
  float a[24], o[3];
  for (int i = 0; i < 24; i++)
    a[i] = (float)i;
  if (run1(sum, a, o, sizeof o))
    for (int j = 0; j < 3; j++)
      CHECK(o[j] == 60 + 32 * j, "reduce sum over {0,2}: [%d] = %g", j, o[j]);
  /* max over {1} with the init value taking part: rows of s32[2,3] */
  const char *mx = "HloModule m\nmax {\n  x = s32[] parameter(0)\n  y = s32[] parameter(1)\n"
                   "  ROOT s = s32[] maximum(x, y)\n}\nENTRY e {\n  a = s32[2,3] parameter(0)\n"
                   "  z = s32[] constant(-5)\n  ROOT r = s32[2] reduce(a, z), dimensions={1}, to_apply=max\n}\n";
  int32_t m[6] = {-9, 4, 2, -7, -8, -6}, mo[2];
  if (run1(mx, m, mo, sizeof mo))
    CHECK(mo[0] == 4 && mo[1] == -5, "reduce max: %d %d", mo[0], mo[1]);
  /* all dimensions of f64[2,2,2] to a scalar, init 0.5 */
  const char *all = "HloModule m\nadd {\n  x = f64[] parameter(0)\n  y = f64[] parameter(1)\n"
                    "  ROOT s = f64[] add(x, y)\n}\nENTRY e {\n  a = f64[2,2,2] parameter(0)\n"
                    "  z = f64[] constant(0.5)\n  ROOT r = f64[] reduce(a, z), dimensions={0,1,2}, to_apply=add\n}\n";
  double d[8] = {1, 2, 3, 4, 5, 6, 7, 8.25}, dout = 0;
  if (run1(all, d, &dout, 8))
    CHECK(dout == 36.75, "reduce f64 to scalar: %g", dout);
  /* pred and / or */
  const char *pand = "HloModule m\nand {\n  x = pred[] parameter(0)\n  y = pred[] parameter(1)\n"
                     "  ROOT s = pred[] and(x, y)\n}\nor {\n  x = pred[] parameter(0)\n  y = pred[] parameter(1)\n"
                     "  ROOT s = pred[] or(x, y)\n}\nENTRY e {\n  a = pred[2,3] parameter(0)\n"
                     "  t = pred[] constant(true)\n  f = pred[] constant(false)\n"
                     "  r = pred[2] reduce(a, t), dimensions={1}, to_apply=and\n"
                     "  s = pred[3] reduce(a, f), dimensions={0}, to_apply=or\n  ROOT u = (pred[2], pred[3]) tuple(r, s)\n}\n";
  uint8_t pa[6] = {1, 1, 1, 1, 0, 0}, pr[2] = {9, 9}, ps[3] = {9, 9, 9};
  void *pp[1] = {pa}, *po[2] = {pr, ps};
  int64_t pb[2] = {2, 3};
  if (run(pand, pp, po, pb, 2, NULL)) {
    CHECK(pr[0] == 1 && pr[1] == 0, "reduce and: %d %d", pr[0], pr[1]);
    CHECK(ps[0] == 1 && ps[1] == 1 && ps[2] == 1, "reduce or: %d %d %d", ps[0], ps[1], ps[2]);
  }
}

/* Variadic reduce: argmax as (value, index) pairs; ties keep the smaller index. */
static void test_reduce_variadic(void) {
  const char *text =
      "HloModule m\nargmax {\n  av = f32[] parameter(0)\n  ai = s32[] parameter(1)\n  bv = f32[] parameter(2)\n"
      "  bi = s32[] parameter(3)\n  gt = pred[] compare(av, bv), direction=GT\n  eq = pred[] compare(av, bv), direction=EQ\n"
      "  lt = pred[] compare(ai, bi), direction=LT\n  tie = pred[] and(eq, lt)\n  take = pred[] or(gt, tie)\n"
      "  v = f32[] select(take, av, bv)\n  i = s32[] select(take, ai, bi)\n  ROOT t = (f32[], s32[]) tuple(v, i)\n}\n"
      "ENTRY e {\n  a = f32[2,5] parameter(0)\n  io = s32[2,5] iota(), iota_dimension=1\n"
      "  ninf = f32[] constant(-inf)\n  z = s32[] constant(0)\n"
      "  ROOT r = (f32[2], s32[2]) reduce(a, io, ninf, z), dimensions={1}, to_apply=argmax\n}\n";
  float a[10] = {3, 7, 7, 1, 5, -2, -1, -4, -1, -3}, v[2];
  int32_t idx[2];
  void *p[1] = {a}, *o[2] = {v, idx};
  int64_t bytes[2] = {8, 8};
  if (run(text, p, o, bytes, 2, NULL)) {
    CHECK(v[0] == 7 && idx[0] == 1, "argmax row 0: (%g, %d)", v[0], idx[0]);
    CHECK(v[1] == -1 && idx[1] == 1, "argmax row 1: (%g, %d)", v[1], idx[1]);
  }
}

/* ---- map ------------------------------------------------------------------------------------- */

static void test_map(void) {
  const char *text = "HloModule m\nfma {\n  x = f32[] parameter(0)\n  y = f32[] parameter(1)\n"
                     "  p = f32[] multiply(x, y)\n  one = f32[] constant(1)\n  ROOT s = f32[] add(p, one)\n}\n"
                     "ENTRY e {\n  a = f32[2,2] parameter(0)\n  b = f32[2,2] parameter(1)\n"
                     "  ROOT m = f32[2,2] map(a, b), dimensions={0,1}, to_apply=fma\n}\n";
  float a[4] = {1, 2, -3, 0.5f}, b[4] = {4, -5, 6, 8}, o[4];
  const float w[4] = {5, -9, -17, 5};
  if (run2(text, a, b, o, sizeof o))
    for (int i = 0; i < 4; i++)
      CHECK(o[i] == w[i], "map x*y+1 [%d] = %g, want %g", i, o[i], w[i]);
  /* a map whose computation changes the type: s32 -> pred */
  const char *cmp = "HloModule m\npos {\n  x = s32[] parameter(0)\n  z = s32[] constant(0)\n"
                    "  ROOT c = pred[] compare(x, z), direction=GT\n}\nENTRY e {\n  a = s32[3] parameter(0)\n"
                    "  ROOT m = pred[3] map(a), dimensions={0}, to_apply=pos\n}\n";
  int32_t ia[3] = {-1, 0, 7};
  uint8_t po[3];
  if (run1(cmp, ia, po, 3))
    CHECK(po[0] == 0 && po[1] == 0 && po[2] == 1, "map s32 -> pred: %d %d %d", po[0], po[1], po[2]);
}

/* ---- reduce-precision -------------------------------------------------------------------- */

static void test_reduce_precision(void) {
  const char *bf = "HloModule m\nENTRY e {\n  a = f32[6] parameter(0)\n"
                   "  ROOT r = f32[6] reduce-precision(a), exponent_bits=8, mantissa_bits=7\n}\n";
  /* ties to even at 7 mantissa bits; the largest float rounds up into infinity */
  float a[6] = {1 + 0x1p-8f, 1 + 3 * 0x1p-8f, -(1 + 0x1p-7f + 0x1p-9f), NAN, FLT_MAX, 0x1p-140f}, o[6];
  const uint32_t want[5] = {0x3F800000, 0x3F820000, 0xBF810000, 0, 0x7F800000};
  if (run1(bf, a, o, sizeof o)) {
    for (int i = 0; i < 5; i++)
      if (i != 3)
        CHECK(bits_of(o[i]) == want[i], "rp(8,7) of %a = %#x, want %#x", a[i], bits_of(o[i]), want[i]);
    CHECK(isnan(o[3]), "rp(8,7) of NaN = %g", o[3]);
    /* 2^-140 is an f32 denormal, bits 0x200: below half of the kept bit 16, so it rounds to 0 */
    CHECK(bits_of(o[5]) == 0, "rp(8,7) of 2^-140 = %#x", bits_of(o[5]));
  }
  const char *h = "HloModule m\nENTRY e {\n  a = f32[8] parameter(0)\n"
                  "  ROOT r = f32[8] reduce-precision(a), exponent_bits=5, mantissa_bits=10\n}\n";
  /* f16 range: 65504 stays, 65520 rounds to 65536 = overflow, 1e-5 is below the smallest
   * normal 2^-14 and flushes to a signed zero, 1/3 rounds to 0x3555's value, NaN stays */
  float x[8] = {65504, 65520, -70000, 1e-5f, -1e-5f, 1.0f / 3, NAN, 0x1p-14f}, y[8];
  if (run1(h, x, y, sizeof y)) {
    CHECK(y[0] == 65504, "rp(5,10) 65504 -> %g", y[0]);
    CHECK(isinf(y[1]) && y[1] > 0, "rp(5,10) 65520 -> %g", y[1]);
    CHECK(isinf(y[2]) && y[2] < 0, "rp(5,10) -70000 -> %g", y[2]);
    CHECK(y[3] == 0 && !signbit(y[3]), "rp(5,10) 1e-5 -> %g", y[3]);
    CHECK(y[4] == 0 && signbit(y[4]), "rp(5,10) -1e-5 -> %g", y[4]);
    CHECK(y[5] == 0.333251953125f, "rp(5,10) 1/3 -> %.12g", y[5]);
    CHECK(isnan(y[6]), "rp(5,10) NaN -> %g", y[6]);
    CHECK(y[7] == 0x1p-14f, "rp(5,10) 2^-14 -> %g", y[7]);
  }
  /* f64 input; mantissa_bits=0 has no NaN correction in XLA's algorithm: the quiet NaN
   * 0x7FF8000000000000 plus the rounding bias 2^51 carries out of the exponent into the sign
   * bit (0x8000000000000000), and that zero exponent then underflows to -0 */
  const char *d = "HloModule m\nENTRY e {\n  a = f64[2] parameter(0)\n  r = f64[2] reduce-precision(a), "
                  "exponent_bits=5, mantissa_bits=10\n  s = f64[2] reduce-precision(a), exponent_bits=8, mantissa_bits=0\n"
                  "  ROOT t = (f64[2], f64[2]) tuple(r, s)\n}\n";
  double da[2] = {1.0 / 3, NAN}, dr[2], ds[2];
  da[1] = fabs(da[1]); /* the positive quiet NaN 0x7FF8000000000000 */
  void *dp[1] = {da}, *dout[2] = {dr, ds};
  int64_t db[2] = {16, 16};
  if (run(d, dp, dout, db, 2, NULL)) {
    CHECK(dr[0] == 0.333251953125 && isnan(dr[1]), "rp(5,10) f64: %.12g %g", dr[0], dr[1]);
    CHECK(ds[0] == 0.25 && ds[1] == 0 && signbit(ds[1]), "rp(8,0) f64: %g %g", ds[0], ds[1]);
  }
}

/* ---- bitcast-convert --------------------------------------------------------------------- */

static void test_bitcast_convert(void) {
  const char *s32 = "HloModule m\nENTRY e {\n  a = f32[3] parameter(0)\n  ROOT b = s32[3] bitcast-convert(a)\n}\n";
  float a[3] = {1.0f, -2.0f, -0.0f};
  int32_t si[3];
  if (run1(s32, a, si, sizeof si))
    CHECK((uint32_t)si[0] == 0x3F800000u && (uint32_t)si[1] == 0xC0000000u && (uint32_t)si[2] == 0x80000000u,
          "f32 -> s32: %#x %#x %#x", (uint32_t)si[0], (uint32_t)si[1], (uint32_t)si[2]);
  /* wider to narrower: a last dimension of 4 bytes, least significant first */
  const char *u8 = "HloModule m\nENTRY e {\n  a = f32[2] parameter(0)\n  ROOT b = u8[2,4] bitcast-convert(a)\n}\n";
  float b[2] = {1.0f, -3.5f}; /* 0x3F800000, 0xC0600000 */
  uint8_t u[8];
  const uint8_t uw[8] = {0, 0, 0x80, 0x3F, 0, 0, 0x60, 0xC0};
  if (run1(u8, b, u, sizeof u))
    CHECK(memcmp(u, uw, 8) == 0, "f32 -> u8[2,4]: %02x %02x %02x %02x | %02x %02x %02x %02x", u[0], u[1], u[2],
          u[3], u[4], u[5], u[6], u[7]);
  /* narrower to wider consumes the last dimension */
  const char *back = "HloModule m\nENTRY e {\n  a = u8[2,4] parameter(0)\n  ROOT b = f32[2] bitcast-convert(a)\n}\n";
  float fb[2];
  if (run1(back, uw, fb, sizeof fb))
    CHECK(fb[0] == 1.0f && fb[1] == -3.5f, "u8[2,4] -> f32: %g %g", fb[0], fb[1]);
  /* f64 -> f32[2]: 1.0 = 0x3FF0000000000000 gives the low word 0 then 0x3FF00000 = 1.875 */
  const char *d2 = "HloModule m\nENTRY e {\n  a = f64[] parameter(0)\n  ROOT b = f32[2] bitcast-convert(a)\n}\n";
  double one = 1.0;
  float two[2];
  if (run1(d2, &one, two, sizeof two))
    CHECK(bits_of(two[0]) == 0 && two[1] == float_of(0x3FF00000u), "f64 -> f32[2]: %g %g", two[0], two[1]);
  /* s16[2] -> bf16 bits and back through f32 */
  const char *h = "HloModule m\nENTRY e {\n  a = u16[2] parameter(0)\n  h = bf16[2] bitcast-convert(a)\n"
                  "  ROOT f = f32[2] convert(h)\n}\n";
  uint16_t hb[2] = {0x3FC0, 0xC120};
  float hf[2];
  if (run1(h, hb, hf, sizeof hf))
    CHECK(hf[0] == 1.5f && hf[1] == -10.0f, "u16 -> bf16 -> f32: %g %g", hf[0], hf[1]);
}

/* Sub-byte types: equal widths reinterpret the 4 bits; lanes split and join lowest first. */
static void test_bitcast_convert_subbyte(void) {
  const char *same = "HloModule m\nENTRY e {\n  a = s4[4] parameter(0)\n  ROOT b = u4[4] bitcast-convert(a)\n}\n";
  int8_t s4[4] = {-1, 7, -8, 0};
  uint8_t u4[4];
  if (run1(same, s4, u4, 4))
    CHECK(u4[0] == 15 && u4[1] == 7 && u4[2] == 8 && u4[3] == 0, "s4 -> u4: %d %d %d %d", u4[0], u4[1], u4[2], u4[3]);
  const char *back = "HloModule m\nENTRY e {\n  a = u4[3] parameter(0)\n  ROOT b = s4[3] bitcast-convert(a)\n}\n";
  uint8_t ub[3] = {15, 8, 7};
  int8_t sb[3];
  if (run1(back, ub, sb, 3))
    CHECK(sb[0] == -1 && sb[1] == -8 && sb[2] == 7, "u4 -> s4: %d %d %d", sb[0], sb[1], sb[2]);
  /* 0x1F -> lanes 0xF (-1), 0x1; 0xC8 -> 0x8 (-8), 0xC (-4) */
  const char *split = "HloModule m\nENTRY e {\n  a = u8[2] parameter(0)\n  ROOT b = s4[2,2] bitcast-convert(a)\n}\n";
  uint8_t bytes[2] = {0x1F, 0xC8};
  int8_t lanes[4];
  if (run1(split, bytes, lanes, 4))
    CHECK(lanes[0] == -1 && lanes[1] == 1 && lanes[2] == -8 && lanes[3] == -4, "u8 -> s4[2,2]: %d %d %d %d",
          lanes[0], lanes[1], lanes[2], lanes[3]);
  const char *join = "HloModule m\nENTRY e {\n  a = s4[3,2] parameter(0)\n  ROOT b = u8[3] bitcast-convert(a)\n}\n";
  int8_t in[6] = {1, 2, -1, 0, -8, 7};
  uint8_t joined[3];
  if (run1(join, in, joined, 3))
    CHECK(joined[0] == 0x21 && joined[1] == 0x0F && joined[2] == 0x78, "s4[3,2] -> u8: %#x %#x %#x", joined[0],
          joined[1], joined[2]);
  /* s16 0x1234 -> u4[4] {4, 3, 2, 1}; u2[4] {1, 2, 3, 0} -> u8 0b00111001 */
  const char *wide = "HloModule m\nENTRY e {\n  a = s16[] parameter(0)\n  ROOT b = u4[4] bitcast-convert(a)\n}\n";
  int16_t w = 0x1234;
  uint8_t nib[4];
  if (run1(wide, &w, nib, 4))
    CHECK(nib[0] == 4 && nib[1] == 3 && nib[2] == 2 && nib[3] == 1, "s16 -> u4[4]: %d %d %d %d", nib[0], nib[1],
          nib[2], nib[3]);
  const char *u2 = "HloModule m\nENTRY e {\n  a = u2[4] parameter(0)\n  ROOT b = u8[] bitcast-convert(a)\n}\n";
  uint8_t twos[4] = {1, 2, 3, 0}, one = 0;
  if (run1(u2, twos, &one, 1))
    CHECK(one == 0x39, "u2[4] -> u8: %#x", one);
}

/* mulhi on every sub-byte integer type, all pairs of values, against floor(a * b / 2^bits)
 * (stored one per byte, signed types sign-extended). */
static void test_mulhi_subbyte(void) {
  static const struct { const char *name; int bits; bool is_signed; } types[] = {
      {"s1", 1, true}, {"s2", 2, true}, {"s4", 4, true}, {"u1", 1, false}, {"u2", 2, false}, {"u4", 4, false}};
  for (size_t t = 0; t < sizeof types / sizeof *types; t++) {
    int bits = types[t].bits, n = 1 << bits, lo = types[t].is_signed ? -(n / 2) : 0;
    int8_t a[256], b[256], got[256];
    for (int i = 0; i < n * n; i++) {
      a[i] = (int8_t)(lo + i / n);
      b[i] = (int8_t)(lo + i % n);
    }
    char text[256];
    snprintf(text, sizeof text, "HloModule m\nENTRY e {\n  a = %s[%d] parameter(0)\n  b = %s[%d] parameter(1)\n"
             "  ROOT r = %s[%d] mulhi(a, b)\n}\n", types[t].name, n * n, types[t].name, n * n, types[t].name, n * n);
    if (!run2(text, a, b, got, n * n))
      continue;
    for (int i = 0; i < n * n; i++) {
      int p = a[i] * b[i], want = p >= 0 ? p >> bits : -((-p + n - 1) >> bits); /* floor(p / 2^bits) */
      CHECK(got[i] == want, "%s mulhi(%d, %d) = %d, expected %d", types[t].name, a[i], b[i], got[i], want);
    }
  }
}

int main(void) {
  LLVMInitializeNativeTarget();
  LLVMInitializeNativeAsmPrinter();
  test_dot_gemm();
  test_dot_types();
  test_reduce();
  test_reduce_variadic();
  test_map();
  test_reduce_precision();
  test_bitcast_convert();
  test_bitcast_convert_subbyte();
  test_mulhi_subbyte();
  printf("ops_test: %d checks, %d failed\n", g_checks, g_failures);
  return g_failures ? 1 : 0;
}
