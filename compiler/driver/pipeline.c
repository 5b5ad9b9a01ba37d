/* pipeline.c — the order of the stages on one screen: read -> parse -> verify (shape
 * inference) -> passes -> emit.  Each pass can be dumped (--dump-dir) and timed
 * (--time-passes).  Everything hloc does is callable from here without argv.
 * Tests: tests/hloc_cli.cmake, the round trip and error goldens.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "driver/driver.h"
#include "driver/driver_internal.h"
#include "grammar/mlir.h"
#include "grammar/parse.h"
#include "ir/print.h"
#include "passes/passes.h"
#include "shape/shape.h"

void drv_options_init(drv_options *o) {
  memset(o, 0, sizeof *o);
  o->opt_level = 2;
  o->target_cpu = "native";
}

static FILE *diag_out(const drv_options *o) { return o->diag_out ? o->diag_out : stderr; }

/* The --time-passes table: one row per stage in the order they ran, then the total. */
static void print_timings(const drv_timings *t, const char *path) {
  double total = 0;
  for (int i = 0; i < t->n; i++)
    total += t->rows[i].ms;
  fprintf(stderr, "time-passes: %s\n  %-28s %10s %7s\n", path, "stage", "ms", "%");
  for (int i = 0; i < t->n; i++)
    fprintf(stderr, "  %-28s %10.3f %6.1f%%\n", t->rows[i].stage, t->rows[i].ms,
            total > 0 ? 100.0 * t->rows[i].ms / total : 0.0);
  fprintf(stderr, "  %-28s %10.3f %6.1f%%\n", "total", total, 100.0);
}

/* Reads a whole file; the caller frees *out. */
static hlo_status read_file(const char *path, char **out, size_t *out_len) {
  FILE *f = fopen(path, "rb");
  if (!f)
    return hlo_status_make(HLO_NOT_FOUND, "%s: cannot open: %s", path, strerror(errno));
  struct stat st;
  if (fstat(fileno(f), &st) == 0 && S_ISDIR(st.st_mode)) {
    fclose(f);
    return hlo_status_make(HLO_INVALID_ARGUMENT, "%s: is a directory, not an HLO text file", path);
  }
  size_t cap = 1 << 16, n = 0;
  char *buf = malloc(cap);
  while (buf) {
    size_t got = fread(buf + n, 1, cap - n, f);
    n += got;
    if (n < cap)
      break;
    char *bigger = realloc(buf, cap * 2);
    if (!bigger) {
      free(buf);
      buf = NULL;
      break;
    }
    buf = bigger;
    cap *= 2;
  }
  int read_errno = errno;
  bool err = ferror(f);
  fclose(f);
  if (!buf)
    return hlo_status_make(HLO_RESOURCE_EXHAUSTED, "%s: out of memory", path);
  if (err) {
    free(buf);
    return hlo_status_make(HLO_IO, "%s: read error: %s", path, strerror(read_errno));
  }
  *out = buf;
  *out_len = n;
  return NULL;
}

static hlo_status dump_module(const drv_options *o, const ir_module *m, int step, const char *name) {
  if (!o->dump_dir)
    return NULL;
  if (mkdir(o->dump_dir, 0777) != 0 && errno != EEXIST)
    return hlo_status_make(HLO_IO, "--dump-dir %s: cannot create: %s", o->dump_dir, strerror(errno));
  char path[4096];
  snprintf(path, sizeof path, "%s/%02d-%s.hlo", o->dump_dir, step, name);
  FILE *f = fopen(path, "w");
  if (!f)
    return hlo_status_make(HLO_IO, "%s: cannot write: %s", path, strerror(errno));
  hlo_status s = ir_print_module(m, f);
  if (fclose(f) != 0 && !s)
    s = hlo_status_make(HLO_IO, "%s: write error", path);
  return s;
}

typedef struct pass_row {
  const char *name;
  hlo_status (*run)(ir_module *m, int *note_count);
} pass_row;

static hlo_status run_fill_elided(ir_module *m, int *n) { return pass_fill_elided_constants(m, n); }
static hlo_status run_canonicalize(ir_module *m, int *n) { (void)n; return pass_canonicalize_broadcasts(m); }
static hlo_status run_expand_dots(ir_module *m, int *n) { (void)n; return pass_expand_dots(m); }
static hlo_status run_expand_shuffle(ir_module *m, int *n) { (void)n; return pass_expand_shuffle(m); }
static hlo_status run_dynamic_padder(ir_module *m, int *n) { (void)n; return pass_dynamic_padder(m); }
static hlo_status run_fold_dot_transposes(ir_module *m, int *n) { (void)n; return pass_fold_dot_transposes(m); }
static hlo_status run_dce(ir_module *m, int *n) { (void)n; return pass_dce(m); }

static hlo_status run_fusion(ir_module *m, int *n) { (void)n; return pass_fusion(m); }

/* THE pass order. */
static const pass_row passes[] = {
    {"fill-elided-constants", run_fill_elided},
    {"canonicalize-broadcasts", run_canonicalize},
    {"fold-dot-transposes", run_fold_dot_transposes},
    {"dce", run_dce},
    {"expand-dots", run_expand_dots},
    {"expand-shuffle", run_expand_shuffle},
    {"dynamic-padder", run_dynamic_padder},
    {"fusion", run_fusion},
};

static hlo_status verify(ir_module *m, const drv_options *o, bool compiling, ir_diag_list *d) {
  shape_options so = {.strict = o->strict, .async_chains = compiling};
  if (shape_verify_module(m, &so, d))
    return NULL;
  return hlo_status_make(HLO_INVALID_ARGUMENT, "verification failed");
}

static hlo_status run_passes(ir_module *m, const drv_options *o, ir_diag_list *d) {
  int replicas = 0; /* an analysis, not a rewrite: not in the table, nothing to dump */
  HLO_RETURN_IF_ERROR(pass_infer_replica_count(m, &replicas));
  if (replicas)
    fprintf(diag_out(o), "%s: note: the module states no replica_count, and its collectives name replicas 0 to %d: "
            "it runs as %d replicas (hlorun --replicas N overrides)\n", d->filename, replicas - 1, replicas);
  for (size_t i = 0; i < sizeof passes / sizeof *passes; i++) {
    double t0 = drv_now_ms();
    int count = 0;
    HLO_RETURN_IF_ERROR(passes[i].run(m, &count));
    if (count && passes[i].run == run_fill_elided)
      fprintf(diag_out(o), "%s: note: filled %d elided constant%s (constant({...})) with deterministic values\n",
              d->filename, count, count == 1 ? "" : "s");
    drv_time_stage(o, passes[i].name, t0);
    HLO_RETURN_IF_ERROR(dump_module(o, m, (int)i + 1, passes[i].name));
    if (o->verify_each) {
      t0 = drv_now_ms();
      hlo_status s = verify(m, o, true, d);
      drv_time_stage(o, "verify (--verify-each)", t0);
      if (s) {
        hlo_status_free(s);
        return hlo_status_make(HLO_INTERNAL, "internal error: the module does not verify after pass %s "
                                             "(the errors above)", passes[i].name);
      }
    }
  }
  return NULL;
}

static hlo_status name_file(hlo_status s, const char *path);

bool drv_is_mlir(const char *path, const char *text, size_t len) {
  size_t n = strlen(path);
  if (n > 5 && strcmp(path + n - 5, ".mlir") == 0)
    return true;
  return ir_text_is_mlir(text, len);
}

hlo_status drv_load(const char *path, const drv_options *o, bool run_pipeline, ir_module **out_module) {
  *out_module = NULL;
  char *text = NULL;
  size_t len = 0;
  HLO_RETURN_IF_ERROR(read_file(path, &text, &len));
  ir_diag_list d;
  ir_diag_init(&d, path, text, len);
  ir_module *m = NULL;
  double t0 = drv_now_ms();
  hlo_status s = drv_is_mlir(path, text, len) ? ir_parse_mlir(text, len, &d, &m, NULL)
                                              : ir_parse_module(text, len, &d, &m);
  drv_time_stage(o, "parse", t0);
  if (!s) {
    t0 = drv_now_ms();
    s = verify(m, o, run_pipeline, &d);
    drv_time_stage(o, "verify", t0);
  }
  if (!s)
    s = dump_module(o, m, 0, "parsed");
  if (!s && run_pipeline)
    s = name_file(run_passes(m, o, &d), path);
  if (s && d.n_errors)
    ir_diag_print(&d, diag_out(o));
  if (s && d.n_errors && hlo_status_code_of(s) == HLO_INVALID_ARGUMENT) {
    hlo_status_free(s);
    s = hlo_status_make(HLO_INVALID_ARGUMENT, "%s: %d error%s", path, d.n_errors, d.n_errors == 1 ? "" : "s");
  }
  ir_diag_deinit(&d);
  free(text);
  if (s) {
    ir_module_destroy(m);
    return s;
  }
  *out_module = m;
  return NULL;
}

bool drv_emit_from_suffix(const char *out_path, drv_emit *out_emit) {
  static const struct { const char *suffix; drv_emit emit; } table[] = {
      {".so", DRV_EMIT_SO}, {".o", DRV_EMIT_OBJ}, {".ll", DRV_EMIT_LLVM},
      {".s", DRV_EMIT_ASM}, {".hlo", DRV_EMIT_HLO}, {".h", DRV_EMIT_HEADER}};
  size_t n = strlen(out_path);
  for (size_t i = 0; i < sizeof table / sizeof *table; i++) {
    size_t k = strlen(table[i].suffix);
    if (n > k && strcmp(out_path + n - k, table[i].suffix) == 0) {
      *out_emit = table[i].emit;
      return true;
    }
  }
  return false;
}

static hlo_status write_hlo(const ir_module *m, const char *out_path) {
  bool to_stdout = !out_path || strcmp(out_path, "-") == 0;
  FILE *f = to_stdout ? stdout : fopen(out_path, "w");
  if (!f)
    return hlo_status_make(HLO_IO, "%s: cannot write: %s", out_path, strerror(errno));
  hlo_status s = ir_print_module(m, f);
  if (to_stdout) {
    if (fflush(f) != 0 && !s)
      s = hlo_status_make(HLO_IO, "write error on standard output");
  } else if (fclose(f) != 0 && !s) {
    s = hlo_status_make(HLO_IO, "%s: write error", out_path);
  }
  return s;
}

/* A "LINE:COL: %name: ..." status from a pass or the code generator gets the file name in front, so
 * that it reads like a diagnostic. */
static hlo_status name_file(hlo_status s, const char *path) {
  if (!s || hlo_status_message(s)[0] < '0' || hlo_status_message(s)[0] > '9')
    return s;
  hlo_status named = hlo_status_make(hlo_status_code_of(s), "%s:%s", path, hlo_status_message(s));
  hlo_status_free(s);
  return named;
}

static hlo_status compile_loaded(ir_module *m, const char *out_path, drv_emit emit, const drv_options *o) {
  if (emit == DRV_EMIT_HLO)
    HLO_RETURN_IF_ERROR(write_hlo(m, out_path));
  else if (emit == DRV_EMIT_HEADER)
    HLO_RETURN_IF_ERROR(drv_write_header(m, o, out_path));
  else if (emit != DRV_EMIT_NONE)
    HLO_RETURN_IF_ERROR(drv_emit_native(m, out_path, emit, o));
  if (o->header_path && !(emit == DRV_EMIT_HEADER && strcmp(o->header_path, out_path) == 0))
    return drv_write_header(m, o, o->header_path);
  return NULL;
}

hlo_status drv_compile_file(const char *path, const char *out_path, drv_emit emit, const drv_options *o) {
  drv_timings timings = {0};
  drv_options local = *o;
  int64_t arena = -1;
  if (!local.arena_out)
    local.arena_out = &arena;
  if (o->time_passes && !o->timings)
    local.timings = &timings;
  bool lowering = emit == DRV_EMIT_SO || emit == DRV_EMIT_OBJ || emit == DRV_EMIT_LLVM || emit == DRV_EMIT_ASM;
  ir_module *m;
  hlo_status s = drv_load(path, &local, lowering || (emit == DRV_EMIT_HLO && o->after_passes), &m);
  if (!s) {
    s = name_file(compile_loaded(m, out_path ? out_path : "-", emit, &local), path);
    ir_module_destroy(m);
  }
  if (local.timings == &timings)
    print_timings(&timings, path);
  return s;
}
