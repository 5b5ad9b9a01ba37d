/* run.c — everything hlorun does, callable without argv (run.h): find or build the shared
 * object (compile cache keyed by the text, the options and the compiler version), load it,
 * read inputs (.npy files, inline HLO literals, or deterministic random values), call the
 * typed entry point through libffi, write or print the results, compare them with expected
 * .npy files, and time repeated runs.  Errors are statuses whose message is one line.
 */
#include "run.h"

#include <dlfcn.h>
#include <errno.h>
#include <ffi.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "driver/driver.h"
#include "grammar/parse.h"
#include "hlo/runtime.h"
#include "ir/literal.h"
#include "ir/print.h"
#include "npy.h"

/* ---- the compile cache ------------------------------------------------------------------ */

static uint64_t fnv(uint64_t h, const void *p, size_t n) {
  const unsigned char *s = p;
  for (size_t i = 0; i < n; i++)
    h = (h ^ s[i]) * 1099511628211ull;
  return h;
}

static hlo_status read_all(const char *path, char **out, size_t *n) {
  FILE *f = fopen(path, "rb");
  if (!f)
    return hlo_status_make(HLO_NOT_FOUND, "%s: cannot open: %s", path, strerror(errno));
  fseek(f, 0, SEEK_END);
  long len = ftell(f);
  fseek(f, 0, SEEK_SET);
  char *buf = malloc((size_t)(len > 0 ? len : 1));
  if (!buf || (len > 0 && fread(buf, 1, (size_t)len, f) != (size_t)len)) {
    free(buf);
    fclose(f);
    return hlo_status_make(HLO_IO, "%s: cannot read", path);
  }
  fclose(f);
  *out = buf;
  *n = (size_t)(len > 0 ? len : 0);
  return NULL;
}

static void mkdirs(const char *dir) {
  char tmp[4096];
  snprintf(tmp, sizeof tmp, "%s", dir);
  for (char *p = tmp + 1; *p; p++)
    if (*p == '/') {
      *p = 0;
      mkdir(tmp, 0777);
      *p = '/';
    }
  mkdir(tmp, 0777);
}

static hlo_status cached_so(const run_options *o, char *out, size_t cap, bool *out_compiled) {
  *out_compiled = false;
  char *text = NULL;
  size_t n = 0;
  HLO_RETURN_IF_ERROR(read_all(o->model, &text, &n));
  char opts[256];
  snprintf(opts, sizeof opts, "O%d|%s|%d|%s", o->opt_level, o->target_cpu ? o->target_cpu : "native", o->strict,
           HLOC_VERSION);
  uint64_t h = fnv(fnv(1469598103934665603ull, text, n), opts, strlen(opts));
  free(text);
  const char *xdg = getenv("XDG_CACHE_HOME"), *home = getenv("HOME");
  char dir[2048];
  if (xdg && *xdg)
    snprintf(dir, sizeof dir, "%s/hloc", xdg);
  else
    snprintf(dir, sizeof dir, "%s/.cache/hloc", home && *home ? home : "/tmp");
  snprintf(out, cap, "%s/%016llx.so", dir, (unsigned long long)h);
  if (access(out, R_OK) == 0)
    return NULL; /* hit: no parsing, no LLVM */
  mkdirs(dir);
  char tmp[4200];
  snprintf(tmp, sizeof tmp, "%s.%d.tmp.so", out, (int)getpid());
  drv_options d;
  drv_options_init(&d);
  d.opt_level = o->opt_level;
  d.target_cpu = o->target_cpu ? o->target_cpu : "native";
  d.strict = o->strict;
  hlo_status s = drv_compile_file(o->model, tmp, DRV_EMIT_SO, &d);
  if (s) {
    unlink(tmp);
    return s;
  }
  if (rename(tmp, out) != 0) {
    unlink(tmp);
    return hlo_status_make(HLO_IO, "%s: cannot store in the cache: %s", out, strerror(errno));
  }
  *out_compiled = true;
  return NULL;
}

/* ---- inputs ------------------------------------------------------------------------------ */

static const char *dtype_name(int32_t dt) { return dt >= 0 && dt < IR_ETYPE_COUNT ? ir_etype_table[dt].spelling : "?"; }

static void desc_text(const hlo_array_desc *d, char *buf, size_t cap) {
  int k = snprintf(buf, cap, "%s[", dtype_name(d->dtype));
  for (int i = 0; i < d->rank && (size_t)k < cap; i++)
    k += snprintf(buf + k, cap - (size_t)k, "%s%lld", i ? "," : "", (long long)d->dims[i]);
  if ((size_t)k < cap)
    snprintf(buf + k, cap - (size_t)k, "]");
}

/* Does the .npy dtype store this element type (DESIGN.md: types numpy lacks are raw bits)? */
static bool npy_matches(const npy_array *a, int32_t dt) {
  const ir_etype_info *e = &ir_etype_table[dt];
  if (dt == IR_PRED)
    return (a->kind == 'b' || a->kind == 'u') && a->itemsize == 1;
  if (dt == IR_BF16)
    return (a->kind == 'u' || a->kind == 'V') && a->itemsize == 2;
  char want_kind = e->npy_descr[1];
  int want_size = atoi(e->npy_descr + 2);
  return a->kind == want_kind && a->itemsize == want_size;
}

static bool dims_match(const npy_array *a, const hlo_array_desc *d) {
  if (a->rank != d->rank)
    return false;
  for (int i = 0; i < d->rank; i++)
    if (a->dims[i] != d->dims[i])
      return false;
  return true;
}

static hlo_status input_from_npy(const char *path, int k, const hlo_array_desc *d, void *dst) {
  npy_array a;
  HLO_RETURN_IF_ERROR(npy_read(path, &a));
  char want[256], got[256];
  desc_text(d, want, sizeof want);
  npy_describe(&a, got, sizeof got);
  hlo_status s = NULL;
  if (!dims_match(&a, d)) {
    s = hlo_status_make(HLO_INVALID_ARGUMENT, "%s: parameter %d (%%%s) expects %s, got %s", path, k, d->name, want, got);
  } else if (d->dtype == IR_BF16 && a.kind == 'f' && a.itemsize == 4) {
    int64_t n = a.nbytes / 4; /* f32 -> bf16, round to nearest even */
    for (int64_t i = 0; i < n; i++)
      ir_lit_encode_float(IR_BF16, ((float *)a.data)[i], 0, (unsigned char *)dst + 2 * i);
  } else if (!npy_matches(&a, d->dtype)) {
    s = hlo_status_make(HLO_INVALID_ARGUMENT, "%s: parameter %d (%%%s) expects %s, got %s", path, k, d->name, want, got);
  } else {
    memcpy(dst, a.data, (size_t)a.nbytes);
  }
  free(a.data);
  return s;
}

static hlo_status input_from_literal(const char *text, int k, const hlo_array_desc *d, void *dst) {
  char module[65536];
  int n = snprintf(module, sizeof module, "HloModule input\n\nENTRY %%e {\n  ROOT %%c = %s\n}\n", text);
  char *sp = strchr(text, ' ');
  if (!sp || n >= (int)sizeof module)
    return hlo_status_make(HLO_INVALID_ARGUMENT, "--input '%s': expected a file or a literal like 'f32[2] {1, 2}'", text);
  /* "SHAPE VALUE" -> "SHAPE constant(VALUE)" */
  snprintf(module, sizeof module, "HloModule input\n\nENTRY %%e {\n  ROOT %%c = %.*s constant(%s)\n}\n", (int)(sp - text),
           text, sp + 1);
  ir_diag_list diags;
  ir_diag_init(&diags, "--input", module, strlen(module));
  ir_module *m = NULL;
  hlo_status s = ir_parse_module(module, strlen(module), &diags, &m);
  ir_diag_deinit(&diags);
  if (s) {
    hlo_status_free(s);
    return hlo_status_make(HLO_INVALID_ARGUMENT, "--input '%s' for parameter %d (%%%s): not a valid HLO literal", text, k,
                           d->name);
  }
  ir_literal *lit = m->entry->root->attrs.u.literal;
  char want[256], got[256];
  desc_text(d, want, sizeof want);
  ir_shape_format(lit->shape, false, got, sizeof got);
  if (strcmp(want, got) != 0 || lit->nbytes != d->byte_size) {
    s = hlo_status_make(HLO_INVALID_ARGUMENT, "--input '%s': parameter %d (%%%s) expects %s, got %s", text, k, d->name,
                        want, got);
  } else {
    memcpy(dst, lit->data, (size_t)lit->nbytes);
  }
  ir_module_destroy(m);
  return s;
}

static void random_fill(uint64_t seed, int k, const hlo_array_desc *d, void *dst) {
  uint64_t st = seed * 0x9E3779B97F4A7C15ull + (uint64_t)k * 0xBF58476D1CE4E5B9ull + 1;
  int eb = ir_etype_table[d->dtype].storage_bytes;
  int64_t n = eb ? d->byte_size / eb : 0;
  for (int64_t i = 0; i < n; i++) {
    st ^= st >> 12;
    st ^= st << 25;
    st ^= st >> 27;
    uint64_t r = st * 2685821657736338717ull;
    unsigned char *p = (unsigned char *)dst + i * eb;
    ir_etype et = (ir_etype)d->dtype;
    if (ir_etype_is_float(et) || ir_etype_is_complex(et)) {
      double v = (double)(r >> 11) / 9007199254740992.0 * 2 - 1;
      ir_etype ct = ir_etype_component(et);
      ir_lit_encode_float(ct, v, 0, p);
      if (ir_etype_is_complex(et))
        ir_lit_encode_float(ct, v * 0.5, 0, p + eb / 2);
    } else if (et == IR_PRED) {
      p[0] = (unsigned char)(r >> 63);
    } else {
      int64_t v = (int64_t)(r >> 61); /* 0..7: valid as an index into most dimensions */
      ir_lit_encode_int(et, v, 0, false, p);
    }
  }
}

/* ---- results ------------------------------------------------------------------------------ */

static double element_as_double(int32_t dt, const unsigned char *p, int part) {
  ir_etype et = (ir_etype)dt;
  if (ir_etype_is_complex(et))
    return ir_lit_decode_float(ir_etype_component(et), p + part * ir_etype_table[et].storage_bytes / 2);
  if (ir_etype_is_float(et))
    return ir_lit_decode_float(et, p);
  int64_t v = 0;
  uint64_t u = 0;
  memcpy(&u, p, (size_t)ir_etype_table[et].storage_bytes);
  int bits = ir_etype_table[et].storage_bytes * 8;
  if (ir_etype_is_signed(et))
    v = bits == 64 ? (int64_t)u : (int64_t)(u << (64 - bits)) >> (64 - bits);
  else
    return (double)u;
  return (double)v;
}

static hlo_status compare(const run_options *o, const char *path, int k, const hlo_array_desc *d, const void *got) {
  npy_array a;
  HLO_RETURN_IF_ERROR(npy_read(path, &a));
  char want[256], have[256];
  desc_text(d, want, sizeof want);
  npy_describe(&a, have, sizeof have);
  if (!dims_match(&a, d) || !npy_matches(&a, d->dtype)) {
    free(a.data);
    return hlo_status_make(HLO_INVALID_ARGUMENT, "%s: result %d is %s but the expected array is %s", path, k, want, have);
  }
  int eb = ir_etype_table[d->dtype].storage_bytes;
  int64_t n = eb ? d->byte_size / eb : 0;
  int parts = ir_etype_is_complex((ir_etype)d->dtype) ? 2 : 1;
  double worst = 0;
  int64_t worst_i = -1;
  double wg = 0, we = 0;
  for (int64_t i = 0; i < n; i++)
    for (int c = 0; c < parts; c++) {
      double g = element_as_double(d->dtype, (const unsigned char *)got + i * eb, c);
      double e = element_as_double(d->dtype, (const unsigned char *)a.data + i * eb, c);
      double err;
      if (isnan(g) && isnan(e))
        continue;
      if (isnan(g) || isnan(e) || (isinf(g) || isinf(e) ? g != e : false))
        err = INFINITY;
      else if (g == e)
        continue;
      else {
        double tol = o->atol + o->rtol * fabs(e);
        err = fabs(g - e) - tol;
        if (o->ulp > 0 && ir_etype_is_float(ir_etype_component((ir_etype)d->dtype))) {
          double ulp = fabs(e) > 0 ? fabs(nextafter(e, INFINITY) - e) : 1e-300;
          if (ir_etype_component((ir_etype)d->dtype) != IR_F64)
            ulp = fabs(e) > 0 ? fabs(nextafterf((float)e, INFINITY) - (float)e) : 1e-45;
          if (fabs(g - e) <= o->ulp * ulp)
            continue;
        }
        if (err <= 0)
          continue;
      }
      if (worst_i < 0 || err > worst) {
        worst = err;
        worst_i = i;
        wg = g;
        we = e;
      }
    }
  free(a.data);
  if (worst_i < 0)
    return NULL;
  int64_t idx[64], rest = worst_i;
  for (int di = d->rank - 1; di >= 0; di--) {
    idx[di] = d->dims[di] ? rest % d->dims[di] : 0;
    rest = d->dims[di] ? rest / d->dims[di] : 0;
  }
  char where[512];
  int w = snprintf(where, sizeof where, "[");
  for (int di = 0; di < d->rank && (size_t)w < sizeof where; di++)
    w += snprintf(where + w, sizeof where - (size_t)w, "%s%lld", di ? "," : "", (long long)idx[di]);
  snprintf(where + w, sizeof where - (size_t)w, "]");
  return hlo_status_make(HLO_FAILED_PRECONDITION,
                         "result %d does not match %s: worst element %s got %.9g expected %.9g (|error| %.3g; rtol %g atol %g)",
                         k, path, where, wg, we, fabs(wg - we), o->rtol, o->atol);
}

/* XLA's literal printer format: "f32[2,3] {\n  { 1, 2, 3 },\n  { 4, 5, 6 }\n}", rank 1 as
 * "f32[3] {1, 2, 3}", scalars "f32[] 1.5"; pred elements of arrays as 1/0; for rank > 3 the
 * outer braces carry an index comment. */
static void print_level(FILE *out, const hlo_array_desc *d, const unsigned char *data, int dim, int64_t *lin,
                        int64_t *idx) {
  int rank = d->rank, eb = ir_etype_table[d->dtype].storage_bytes;
  int64_t n = d->dims[dim];
  bool innermost = dim == rank - 1;
  if (rank == 1)
    fputs("{", out);
  else if (innermost)
    fputs(n <= 1 ? "  {" : "  { ", out);
  else if (rank > 3 && dim > 0)
    fprintf(out, "{ /*i%d=%lld*/\n", dim - 1, (long long)idx[dim - 1]);
  else
    fputs("{\n", out);
  for (int64_t i = 0; i < n; i++) {
    idx[dim] = i;
    if (innermost) {
      char buf[128];
      const unsigned char *e = data + (*lin)++ * eb;
      if (d->dtype == IR_PRED)
        snprintf(buf, sizeof buf, "%d", e[0] ? 1 : 0);
      else
        ir_format_element((ir_etype)d->dtype, e, buf, sizeof buf);
      fputs(buf, out);
    } else {
      print_level(out, d, data, dim + 1, lin, idx);
    }
    if (i + 1 < n)
      fputs(innermost ? ", " : ",\n", out);
  }
  if (rank == 1)
    fputs("}", out);
  else if (innermost)
    fputs(n <= 1 ? "}" : " }", out);
  else
    fputs("\n}", out);
}

static hlo_status print_result(const hlo_array_desc *d, const void *data, FILE *out) {
  char shape[512];
  desc_text(d, shape, sizeof shape);
  fprintf(out, "%s ", shape);
  if (d->dtype == IR_TOKEN) {
    fputs("token\n", out);
    return NULL;
  }
  if (d->rank == 0) {
    char buf[128];
    ir_format_element((ir_etype)d->dtype, data, buf, sizeof buf);
    fprintf(out, "%s\n", buf);
    return NULL;
  }
  int64_t lin = 0, idx[64] = {0};
  print_level(out, d, data, 0, &lin, idx);
  fputs("\n", out);
  return NULL;
}

/* ---- the call ------------------------------------------------------------------------------ */

static double now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

static hlo_status call_model(const hlo_module_desc *desc, hlo_context *ctx, void **params, void **results) {
  int n = 1 + desc->num_params + desc->num_results;
  ffi_type **types = calloc((size_t)n, sizeof *types);
  void **values = calloc((size_t)n, sizeof *values);
  void **ptrs = calloc((size_t)n, sizeof *ptrs);
  if (!types || !values || !ptrs) {
    free(types);
    free(values);
    free(ptrs);
    return hlo_status_make(HLO_RESOURCE_EXHAUSTED, "out of memory");
  }
  ptrs[0] = ctx;
  for (int i = 0; i < desc->num_params; i++)
    ptrs[1 + i] = params[i];
  for (int i = 0; i < desc->num_results; i++)
    ptrs[1 + desc->num_params + i] = results[i];
  for (int i = 0; i < n; i++) {
    types[i] = &ffi_type_pointer;
    values[i] = &ptrs[i];
  }
  ffi_cif cif;
  hlo_status st = NULL;
  if (ffi_prep_cif(&cif, FFI_DEFAULT_ABI, (unsigned)n, &ffi_type_pointer, types) != FFI_OK) {
    st = hlo_status_make(HLO_INTERNAL, "libffi cannot describe the entry point");
  } else {
    void *ret = NULL;
    ffi_call(&cif, FFI_FN(desc->typed_entry), &ret, values);
    st = (hlo_status)ret;
  }
  free(types);
  free(values);
  free(ptrs);
  return st;
}

void run_options_init(run_options *o) {
  memset(o, 0, sizeof *o);
  o->opt_level = 2;
  o->rtol = 1e-5;
  o->atol = 1e-6;
}

hlo_status run_model(const run_options *o, FILE *out) {
  char so[4096];
  size_t ml = strlen(o->model);
  bool compiled = false; /* the compiler already printed its notes */
  if (ml > 3 && strcmp(o->model + ml - 3, ".so") == 0)
    snprintf(so, sizeof so, "%s", o->model);
  else
    HLO_RETURN_IF_ERROR(cached_so(o, so, sizeof so, &compiled));
  char resolved[4200];
  snprintf(resolved, sizeof resolved, "%s%s", strchr(so, '/') ? "" : "./", so);
  void *h = dlopen(resolved, RTLD_NOW | RTLD_LOCAL);
  if (!h)
    return hlo_status_make(HLO_NOT_FOUND, "%s: cannot load: %s", so, dlerror());
  hlo_describe_fn describe = (hlo_describe_fn)dlsym(h, "hlo_module_describe");
  const hlo_module_desc *desc = describe ? describe() : NULL;
  if (!desc || desc->abi_version != HLO_ABI_VERSION) {
    dlclose(h);
    return hlo_status_make(HLO_INVALID_ARGUMENT, "%s: not a model built by this version of hloc", so);
  }
  if ((desc->features & HLO_FEATURE_ELIDED_CONSTANTS) && !compiled)
    fprintf(stderr, "%s: note: elided constants (constant({...})) were filled with deterministic values\n", o->model);
  hlo_status s = NULL;
  int np = desc->num_params, nr = desc->num_results;
  void **params = calloc((size_t)np + 1, sizeof *params), **results = calloc((size_t)nr + 1, sizeof *results);
  if (!o->random_inputs && o->n_inputs != np)
    s = hlo_status_make(HLO_INVALID_ARGUMENT, "%s takes %d input%s but %d %s given (one --input per parameter, in order)",
                        o->model, np, np == 1 ? "" : "s", o->n_inputs, o->n_inputs == 1 ? "was" : "were");
  else if (o->n_outputs && o->n_outputs != nr)
    s = hlo_status_make(HLO_INVALID_ARGUMENT, "%s has %d result%s but %d --output %s given", o->model, nr, nr == 1 ? "" : "s",
                        o->n_outputs, o->n_outputs == 1 ? "was" : "were");
  else if (o->n_expected && o->n_expected != nr)
    s = hlo_status_make(HLO_INVALID_ARGUMENT, "%s has %d result%s but %d --expected %s given", o->model, nr,
                        nr == 1 ? "" : "s", o->n_expected, o->n_expected == 1 ? "was" : "were");
  for (int i = 0; i < np && !s; i++) {
    const hlo_array_desc *d = &desc->params[i];
    params[i] = d->byte_size ? aligned_alloc(64, ((size_t)d->byte_size + 63) & ~(size_t)63) : NULL;
    if (d->byte_size && !params[i])
      s = hlo_status_make(HLO_RESOURCE_EXHAUSTED, "out of memory for parameter %d", i);
    else if (d->dtype == IR_TOKEN || !d->byte_size)
      continue;
    else if (o->random_inputs)
      random_fill(o->seed, i, d, params[i]);
    else if (access(o->inputs[i], F_OK) != 0 && strchr(o->inputs[i], '[') && strchr(o->inputs[i], ' '))
      s = input_from_literal(o->inputs[i], i, d, params[i]);
    else
      s = input_from_npy(o->inputs[i], i, d, params[i]);
  }
  for (int i = 0; i < nr && !s; i++) {
    int64_t bytes = desc->results[i].byte_size;
    results[i] = aligned_alloc(64, ((size_t)(bytes ? bytes : 1) + 63) & ~(size_t)63);
    if (!results[i])
      s = hlo_status_make(HLO_RESOURCE_EXHAUSTED, "out of memory for result %d", i);
  }
  hlo_context *ctx = NULL;
  if (!s) {
    hlo_context_options co;
    hlo_context_options_init(&co);
    co.num_threads = o->threads;
    s = hlo_context_create(&co, &ctx);
  }
  if (!s)
    s = call_model(desc, ctx, params, results);
  if (!s && o->benchmark > 0) {
    double *t = calloc((size_t)o->benchmark, sizeof *t);
    for (int k = 0; k < o->benchmark && !s && t; k++) {
      double t0 = now_ms();
      s = call_model(desc, ctx, params, results);
      t[k] = now_ms() - t0;
    }
    if (!s && t) {
      qsort(t, (size_t)o->benchmark, sizeof *t, cmp_double);
      fprintf(out, "benchmark: iterations=%d min_ms=%.4f median_ms=%.4f max_ms=%.4f\n", o->benchmark, t[0],
              t[o->benchmark / 2], t[o->benchmark - 1]);
    }
    free(t);
  }
  for (int i = 0; i < nr && !s; i++) {
    const hlo_array_desc *d = &desc->results[i];
    if (o->n_outputs)
      s = npy_write(o->outputs[i], ir_etype_table[d->dtype].npy_descr, d->rank, d->dims, results[i], d->byte_size);
    else if (o->output_dir) {
      char path[4096];
      snprintf(path, sizeof path, "%s/out%d.npy", o->output_dir, i);
      s = npy_write(path, ir_etype_table[d->dtype].npy_descr, d->rank, d->dims, results[i], d->byte_size);
    } else if (!o->n_expected && o->benchmark <= 0)
      s = print_result(d, results[i], out);
  }
  for (int i = 0; i < o->n_expected && !s; i++)
    s = compare(o, o->expected[i], i, &desc->results[i], results[i]);
  hlo_context_destroy(ctx);
  for (int i = 0; i < np; i++)
    free(params[i]);
  for (int i = 0; i < nr; i++)
    free(results[i]);
  free(params);
  free(results);
  dlclose(h);
  return s;
}
