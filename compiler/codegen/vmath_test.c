/* vmath_test.c — accuracy of the vectorized math (vmath.c) as compiled code computes it: each
 * function is one elementwise HLO module (parse, passes, cg_emit_module, default<O2>, ORC
 * LLJIT) run over chunks of inputs and compared with a reference that is correctly rounded
 * for the purpose (double libm for f32, long double libm for f64), in ulps of the result type.
 * As a CTest (no arguments) it runs 2^20 inputs per function and type, every special value
 * included, and fails when a bound in BOUNDS is exceeded.  `vmath_test --full [THREADS]` runs
 * every f32 bit pattern and 2^28 random f64 inputs (`--full THREADS LOG2` sets 2^LOG2 instead)
 * and prints the table of docs/ops.md; `--full THREADS LOG2 LOG2_F32 OPCODE` takes every
 * 2^(32-LOG2_F32)-th f32 bit pattern and runs one function.
 */
#include <float.h>
#include <llvm-c/LLJIT.h>
#include <llvm-c/Orc.h>
#include <llvm-c/Target.h>
#include <llvm-c/TargetMachine.h>
#include <llvm-c/Transforms/PassBuilder.h>
#include <math.h>
#include <pthread.h>
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

enum { CHUNK = 1 << 16 };

typedef struct fn_case {
  const char *op;                  /* HLO opcode */
  double (*ref32)(double);         /* reference for f32 (NULL: pow) */
  long double (*ref64)(long double);
  double bound32, bound64;         /* max ulp the CTest accepts; < 0: f64 not checked */
  bool flush32;                    /* f32 results below FLT_MIN may be 0 (XLA's exp) */
  double limit;                    /* f64 |x| above this is reported apart (sin/cos reduction) */
} fn_case;

static double logistic_d(double x) { return 1.0 / (1.0 + exp(-x)); }
static long double logistic_l(long double x) { return 1.0L / (1.0L + expl(-x)); }
static double rsqrt_d(double x) { return 1.0 / sqrt(x); }
static long double rsqrt_l(long double x) { return 1.0L / sqrtl(x); }

static const fn_case CASES[] = {
    {"exponential", exp, expl, 2, 2, true, INFINITY},
    {"exponential-minus-one", expm1, expm1l, 2, 2, false, INFINITY},
    {"log", log, logl, 2, 2, false, INFINITY},
    {"log-plus-one", log1p, log1pl, 2, 2, false, INFINITY},
    {"tanh", tanh, tanhl, 3, 3, false, INFINITY},
    {"erf", erf, erfl, 3, 1.5, false, INFINITY},
    {"logistic", logistic_d, logistic_l, 3, 3, true, INFINITY},
    {"sine", sin, sinl, 1, 2, false, 1e13},
    {"cosine", cos, cosl, 1, 2, false, 1e13},
    {"rsqrt", rsqrt_d, rsqrt_l, 2, 2, false, INFINITY},
    {"power", NULL, NULL, 2, 2, false, INFINITY},
};
enum { NCASES = sizeof CASES / sizeof *CASES };

/* ---- compiling one module --------------------------------------------------------------- */

typedef struct compiled {
  LLVMOrcLLJITRef jit;
  hlo_generic_entry run;
} compiled;

static ir_module *load(const char *text) {
  ir_diag_list d;
  ir_diag_init(&d, "vmath.hlo", text, strlen(text));
  ir_module *m = NULL;
  shape_options so = {0};
  hlo_status s = ir_parse_module(text, strlen(text), &d, &m);
  if (!s && !shape_verify_module(m, &so, &d))
    s = hlo_status_make(HLO_INVALID_ARGUMENT, "verification failed");
  if (!s)
    s = pass_canonicalize_broadcasts(m);
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

static LLVMTargetMachineRef host_tm(void) {
  char *triple = LLVMGetDefaultTargetTriple(), *err = NULL, *cpu = LLVMGetHostCPUName();
  char *features = LLVMGetHostCPUFeatures();
  LLVMTargetRef target;
  LLVMTargetMachineRef tm = NULL;
  if (!LLVMGetTargetFromTriple(triple, &target, &err))
    tm = LLVMCreateTargetMachine(target, triple, cpu, features, LLVMCodeGenLevelDefault, LLVMRelocPIC,
                                 LLVMCodeModelJITDefault);
  LLVMDisposeMessage(err);
  LLVMDisposeMessage(triple);
  LLVMDisposeMessage(cpu);
  LLVMDisposeMessage(features);
  return tm;
}

static bool report(const char *what, LLVMErrorRef e) {
  char *msg = LLVMGetErrorMessage(e);
  fprintf(stderr, "%s: %s\n", what, msg);
  LLVMDisposeErrorMessage(msg);
  return false;
}

/* The runtime functions generated code may call (hidden in libhlort, so given by address). */
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
}

/* The module computing `op` elementwise over CHUNK elements of type et, optimized and JITted
 * for the host CPU (the code hloc's default --target-cpu=native gives). */
static bool compile(const char *op, const char *et, compiled *out) {
  char text[512];
  bool pow = strcmp(op, "power") == 0;
  snprintf(text, sizeof text,
           "HloModule m\nENTRY e {\n  p = %s[%d] parameter(0)\n%s  ROOT r = %s[%d] %s(p%s)\n}\n", et, CHUNK,
           pow ? (strcmp(et, "f32") == 0 ? "  q = f32[65536] parameter(1)\n" : "  q = f64[65536] parameter(1)\n") : "",
           et, CHUNK, op, pow ? ", q" : "");
  ir_module *m = load(text);
  if (!m)
    return false;
  LLVMTargetMachineRef tm = host_tm();
  LLVMOrcThreadSafeContextRef tsc = LLVMOrcCreateNewThreadSafeContext();
  cg_options co = {.symbol = "t", .opt_level = 2};
  LLVMModuleRef mod = NULL;
  hlo_status s = cg_emit_module(m, &co, LLVMOrcThreadSafeContextGetContext(tsc), tm, &mod);
  ir_module_destroy(m);
  bool ok = false;
  if (s) {
    fprintf(stderr, "emit: %s\n", hlo_status_message(s));
    hlo_status_free(s);
  } else {
    LLVMPassBuilderOptionsRef po = LLVMCreatePassBuilderOptions();
    LLVMErrorRef e = LLVMRunPasses(mod, "default<O2>", tm, po);
    LLVMDisposePassBuilderOptions(po);
    if (e)
      report("passes", e);
    LLVMOrcJITTargetMachineBuilderRef jtmb = LLVMOrcJITTargetMachineBuilderCreateFromTargetMachine(host_tm());
    LLVMOrcLLJITBuilderRef jb = LLVMOrcCreateLLJITBuilder();
    LLVMOrcLLJITBuilderSetJITTargetMachineBuilder(jb, jtmb);
    e = LLVMOrcCreateLLJIT(&out->jit, jb);
    if (e) {
      LLVMDisposeModule(mod);
      report("LLJIT", e);
    } else {
      LLVMOrcJITDylibRef jd = LLVMOrcLLJITGetMainJITDylib(out->jit);
      define_runtime(out->jit, jd);
      LLVMOrcDefinitionGeneratorRef gen = NULL;
      e = LLVMOrcCreateDynamicLibrarySearchGeneratorForProcess(&gen, LLVMOrcLLJITGetGlobalPrefix(out->jit), NULL, NULL);
      if (!e)
        LLVMOrcJITDylibAddGenerator(jd, gen);
      LLVMOrcExecutorAddress addr = 0;
      if (!e)
        e = LLVMOrcLLJITAddLLVMIRModule(out->jit, jd, LLVMOrcCreateNewThreadSafeModule(mod, tsc));
      if (!e)
        e = LLVMOrcLLJITLookup(out->jit, &addr, "t_run");
      ok = e ? report("JIT", e) : true;
      out->run = (hlo_generic_entry)(uintptr_t)addr;
    }
  }
  LLVMOrcDisposeThreadSafeContext(tsc);
  LLVMDisposeTargetMachine(tm);
  return ok;
}

/* ---- ulp error ------------------------------------------------------------------------------ */

/* |got - ref| in ulps of the result type (mant bits of precision, min_normal its smallest
 * normal): 0 for matching NaN/inf, 1e9 for a wrong special value. */
static double ulp_err(long double got, long double ref, int mant, long double min_normal, long double max) {
  if (isnan(ref) || isnan(got))
    return isnan(ref) && isnan(got) ? 0 : 1e9;
  long double rounded_inf = max * (1 + ldexpl(1, -mant - 1)); /* refs beyond round to inf */
  if (fabsl(ref) >= rounded_inf)
    ref = copysignl(INFINITY, ref);
  if (isinf(ref) || isinf(got))
    return got == ref ? 0 : 1e9;
  long double a = fabsl(ref);
  int e;
  frexpl(a < min_normal ? min_normal : a, &e);
  long double ulp = ldexpl(1, e - mant);
  return (double)(fabsl(got - ref) / ulp);
}

typedef struct stats {
  double max_ulp, max_at, max_ref, far_ulp, far_at; /* far: |x| above the case's limit */
  double max_y;
  long long n, flushed;
} stats;

static void stats_add(stats *s, double err, double x, double y, double ref, bool far) {
  s->n++;
  if (far) {
    if (err > s->far_ulp)
      s->far_ulp = err, s->far_at = x;
    return;
  }
  if (err > s->max_ulp)
    s->max_ulp = err, s->max_at = x, s->max_y = y, s->max_ref = ref;
}

static void stats_merge(stats *a, const stats *b) {
  if (b->max_ulp > a->max_ulp)
    a->max_ulp = b->max_ulp, a->max_at = b->max_at, a->max_y = b->max_y, a->max_ref = b->max_ref;
  if (b->far_ulp > a->far_ulp)
    a->far_ulp = b->far_ulp, a->far_at = b->far_at;
  a->n += b->n;
  a->flushed += b->flushed;
}

/* ---- inputs --------------------------------------------------------------------------------- */

static uint64_t rng_next(uint64_t *s) { /* splitmix64 */
  uint64_t z = (*s += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

static const double SPECIALS[] = {0.0, -0.0, 1.0, -1.0, 0.5, -0.5, 2.0, -2.0, 3.0, -3.0, 2.5, -2.5, 10.0, 0.1,
                                  INFINITY, -INFINITY, NAN, 88.72, 88.73, -87.33, -87.34, -103.9, 709.78, -708.4,
                                  -745.2, 1e-30, -1e-30, 1e-40, 3.9, 9.1, 20.0, 1e6, 1e10, 1e30, 3.4e38, 1e300};
enum { NSPECIAL = sizeof SPECIALS / sizeof *SPECIALS };

/* Input j (of a block starting at base) of pattern `mode`: 0 = f32 bit pattern base + j,
 * 1 = strided f32 bit patterns, 2 = random f64 (bits or a moderate range). */
static double input_x(int mode, bool dbl, uint64_t idx, uint64_t *rng, bool pow) {
  if ((mode != 0 || pow) && idx < NSPECIAL * (pow ? NSPECIAL : 1))
    return SPECIALS[idx % NSPECIAL];
  if (pow) { /* |x| log-uniform in [2^-20, 2^20], either sign */
    double m = ldexp(1.0 + (double)(rng_next(rng) >> 11) * 0x1p-53, (int)(rng_next(rng) % 41) - 20);
    return rng_next(rng) & 1 ? -m : m;
  }
  if (!dbl) {
    uint32_t u = mode == 0 ? (uint32_t)idx : (uint32_t)(idx * 4099u + 17u);
    float x;
    memcpy(&x, &u, 4);
    return x;
  }
  uint64_t r = rng_next(rng), u;
  if (r & 1) { /* any bit pattern */
    u = rng_next(rng);
  } else { /* exponent within 2^-30 .. 2^10, where the interesting values lie */
    double m = ldexp(1.0 + (double)(rng_next(rng) >> 11) * 0x1p-53, (int)(r >> 1 & 63) - 40);
    memcpy(&u, &m, 8);
    u |= (r & 2) << 62;
  }
  double x;
  memcpy(&x, &u, 8);
  return x;
}

static double input_y(uint64_t idx, uint64_t *rng) {
  if (idx < NSPECIAL * NSPECIAL)
    return SPECIALS[idx / NSPECIAL];
  uint64_t r = rng_next(rng);
  double y = ((double)(r >> 11) * 0x1p-53 - 0.5) * 60.0;
  return r & 3 ? y : rint(y);
}

/* ---- running ---------------------------------------------------------------------------- */

typedef struct job {
  const fn_case *c;
  bool dbl;
  int mode;
  uint64_t first, count; /* inputs first .. first+count-1 */
  int shift;             /* mode 0: input i is the bit pattern i << shift */
  hlo_generic_entry run;
  stats st;
  bool ok;
} job;

/* ulp of a float result near the double r (r finite): 2^(exponent - 23), 2^-149 below FLT_MIN. */
static double ulp32(double r) {
  uint64_t u;
  memcpy(&u, &r, 8);
  int e = (int)(u >> 52 & 0x7ff) - 1023;
  e = e < -126 ? -126 : e;
  u = (uint64_t)(e - 23 + 1023) << 52;
  memcpy(&r, &u, 8);
  return r;
}

/* The float path of check_chunk in double arithmetic (every bit pattern goes through here). */
static void check_chunk32(job *jb, const float *xs, const float *ys, const float *out, int n) {
  const fn_case *c = jb->c;
  for (int j = 0; j < n; j++) {
    double x = xs[j], got = out[j];
    double ref = c->ref32 ? c->ref32(x) : pow(x, ys[j]);
    double err;
    if (c->flush32 && got == 0 && fabs(ref) < FLT_MIN) {
      jb->st.flushed++;
      continue;
    }
    if (isnan(ref) || isnan(got)) {
      err = isnan(ref) && isnan(got) ? 0 : 1e9;
    } else {
      if (fabs(ref) >= (double)FLT_MAX * (1 + 0x1p-25))
        ref = copysign(INFINITY, ref);
      err = isinf(ref) || isinf(got) ? (got == ref ? 0 : 1e9) : fabs(got - ref) / ulp32(ref);
    }
    if (err > jb->st.max_ulp)
      stats_add(&jb->st, err, x, ys ? ys[j] : 0, ref, false);
    else
      jb->st.n++;
  }
}

static void check_chunk(job *jb, const void *xs, const void *ys, const void *out, int n) {
  const fn_case *c = jb->c;
  for (int j = 0; j < n; j++) {
    long double x = jb->dbl ? ((const double *)xs)[j] : ((const float *)xs)[j];
    long double y = !ys ? 0 : jb->dbl ? ((const double *)ys)[j] : ((const float *)ys)[j];
    long double got = jb->dbl ? ((const double *)out)[j] : ((const float *)out)[j];
    long double ref;
    if (!c->ref32)
      ref = jb->dbl ? powl(x, y) : pow((double)x, (double)y);
    else
      ref = jb->dbl ? c->ref64(x) : c->ref32((double)x);
    if (!jb->dbl && c->flush32 && got == 0 && fabsl(ref) < FLT_MIN) {
      jb->st.flushed++;
      continue;
    }
    double err = jb->dbl ? ulp_err(got, ref, 53, DBL_MIN, DBL_MAX) : ulp_err(got, ref, 24, FLT_MIN, FLT_MAX);
    stats_add(&jb->st, err, (double)x, (double)y, (double)ref, fabsl(x) > c->limit);
  }
}

static void *job_run(void *arg) {
  job *jb = arg;
  size_t es = jb->dbl ? 8 : 4;
  char *xs = malloc(CHUNK * es), *ys = malloc(CHUNK * es), *out = malloc(CHUNK * es);
  uint64_t rng = jb->first * 0x2545F4914F6CDD1Dull + 1;
  bool pow = !jb->c->ref32;
  jb->ok = true;
  for (uint64_t at = 0; at < jb->count && jb->ok; at += CHUNK) {
    int n = jb->count - at < CHUNK ? (int)(jb->count - at) : CHUNK;
    for (int j = 0; j < CHUNK; j++) {
      uint64_t idx = jb->first + at + (uint64_t)(j < n ? j : 0);
      double x = input_x(jb->mode, jb->dbl, jb->mode == 0 ? idx << jb->shift : idx, &rng, pow), y = pow ? input_y(idx, &rng) : 0;
      if (jb->dbl)
        ((double *)xs)[j] = x, ((double *)ys)[j] = y;
      else
        ((float *)xs)[j] = (float)x, ((float *)ys)[j] = (float)y;
    }
    void *params[2] = {xs, ys}, *results[1] = {out};
    hlo_status s = jb->run(NULL, params, results);
    if (s) {
      fprintf(stderr, "run: %s\n", hlo_status_message(s));
      hlo_status_free(s);
      jb->ok = false;
    }
    if (jb->dbl)
      check_chunk(jb, xs, pow ? ys : NULL, out, n);
    else
      check_chunk32(jb, (const float *)xs, pow ? (const float *)ys : NULL, (const float *)out, n);
  }
  free(xs);
  free(ys);
  free(out);
  return NULL;
}

/* Measures c over `count` inputs on `threads` threads; false when it could not run. */
static bool measure(const fn_case *c, bool dbl, int mode, uint64_t count, int threads, stats *out, int shift) {
  compiled cp = {0};
  if (!compile(c->op, dbl ? "f64" : "f32", &cp))
    return false;
  job jobs[64];
  pthread_t th[64];
  uint64_t per = (count / (uint64_t)threads + CHUNK - 1) / CHUNK * CHUNK;
  memset(out, 0, sizeof *out);
  bool ok = true;
  for (int t = 0; t < threads; t++) {
    uint64_t first = per * (uint64_t)t;
    jobs[t] = (job){.c = c, .dbl = dbl, .mode = mode, .first = first, .run = cp.run, .shift = shift,
                    .count = first >= count ? 0 : (count - first < per ? count - first : per)};
    pthread_create(&th[t], NULL, job_run, &jobs[t]);
  }
  for (int t = 0; t < threads; t++) {
    pthread_join(th[t], NULL);
    ok = ok && jobs[t].ok;
    stats_merge(out, &jobs[t].st);
  }
  LLVMErrorRef e = LLVMOrcDisposeLLJIT(cp.jit);
  if (e)
    LLVMConsumeError(e);
  return ok;
}

static void print_row(const fn_case *c, bool dbl, const stats *s) {
  printf("| %s | %s | %.2f | x = %.9g", c->op, dbl ? "f64" : "f32", s->max_ulp, s->max_at);
  if (!c->ref32)
    printf(", y = %.9g", s->max_y);
  printf(" (exact %.9g) | %lld", s->max_ref, s->n);
  if (s->flushed)
    printf(", %lld subnormal results flushed to 0", s->flushed);
  if (s->far_ulp > 0)
    printf("; for |x| > %g: %.3g ulp at x = %.9g", c->limit, s->far_ulp, s->far_at);
  printf(" |\n");
  fflush(stdout);
}

int main(int argc, char **argv) {
  bool full = argc > 1 && strcmp(argv[1], "--full") == 0;
  int threads = full && argc > 2 ? atoi(argv[2]) : 1;
  threads = threads < 1 ? 1 : threads > 64 ? 64 : threads;
  int log2_f64 = full && argc > 3 ? atoi(argv[3]) : 28; /* f64 (and pow) samples: 2^log2_f64 */
  log2_f64 = log2_f64 < 16 ? 16 : log2_f64 > 34 ? 34 : log2_f64;
  int log2_f32 = full && argc > 4 ? atoi(argv[4]) : 32; /* f32: every 2^(32-log2_f32)-th pattern */
  log2_f32 = log2_f32 < 16 ? 16 : log2_f32 > 32 ? 32 : log2_f32;
  const char *only = full && argc > 5 ? argv[5] : NULL; /* one function (its HLO opcode) */
  LLVMInitializeNativeTarget();
  LLVMInitializeNativeAsmPrinter();
  int failures = 0;
  printf("| function | type | max ulp | where | inputs |\n|---|---|---:|---|---|\n");
  for (int i = 0; i < NCASES; i++) {
    for (int d = 0; d < 2; d++) {
      const fn_case *c = &CASES[i];
      if (only && strcmp(only, c->op) != 0)
        continue;
      uint64_t count = full ? (d || !c->ref32 ? (uint64_t)1 << log2_f64 : (uint64_t)1 << log2_f32) : (uint64_t)1 << 20;
      stats s;
      if (!measure(c, d == 1, full ? 0 : 1, count, threads, &s, full ? 32 - log2_f32 : 0)) {
        fprintf(stderr, "FAIL: %s %s did not compile and run\n", c->op, d ? "f64" : "f32");
        failures++;
        continue;
      }
      if (full && d == 0 && c->ref32)
        s.n = (long long)count; /* every (2^(32-log2_f32)-th) bit pattern, flushed ones included */
      print_row(c, d == 1, &s);
      double bound = d ? c->bound64 : c->bound32;
      if (!full && s.max_ulp > bound) {
        fprintf(stderr, "FAIL: %s %s: %.2f ulp at x = %.17g (bound %g)\n", c->op, d ? "f64" : "f32", s.max_ulp,
                s.max_at, bound);
        failures++;
      }
    }
  }
  if (failures)
    fprintf(stderr, "%d failures\n", failures);
  return failures ? 1 : 0;
}
