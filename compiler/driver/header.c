/* header.c — the C header of a compiled model (--header FILE.h, --emit=header): SYM_describe,
 * SYM_run and the typed entry `hlo_status SYM(hlo_context *ctx, const T *param, ..., T *out)`
 * with one pointer per parameter leaf, then per result leaf (docs/abi.md).  Parameter names
 * come from the HLO names made C identifiers, never a C keyword, `ctx` or a name used twice;
 * each argument has a comment with its HLO shape.  Tests: tests/hloc_cli.cmake (a header with
 * clashing names compiles), tests/abi_example.cmake.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "codegen/codegen.h"
#include "driver/driver_internal.h"

/* C keywords (C17 and C23), the names <stdbool.h> defines, and the context argument. */
static const char *const reserved[] = {
    "auto", "break", "case", "char", "const", "continue", "default", "do", "double", "else", "enum",
    "extern", "float", "for", "goto", "if", "inline", "int", "long", "register", "restrict", "return",
    "short", "signed", "sizeof", "static", "struct", "switch", "typedef", "union", "unsigned", "void",
    "volatile", "while", "alignas", "alignof", "bool", "constexpr", "false", "nullptr", "static_assert",
    "thread_local", "true", "typeof", "typeof_unqual", "ctx", "NULL"};

/* The argument names given so far (malloc'd strings). */
typedef struct name_set {
  char **v;
  int n, cap;
} name_set;

static bool name_taken(const name_set *s, const char *name) {
  for (size_t i = 0; i < sizeof reserved / sizeof *reserved; i++)
    if (strcmp(name, reserved[i]) == 0)
      return true;
  for (int i = 0; i < s->n; i++)
    if (strcmp(name, s->v[i]) == 0)
      return true;
  return false;
}

/* `want` as a C identifier (other characters become '_'; a leading digit gets "p"). */
static void c_ident(const char *want, char *out, size_t cap) {
  size_t k = 0;
  if (want[0] >= '0' && want[0] <= '9')
    out[k++] = 'p';
  for (size_t i = 0; want[i] && k + 1 < cap; i++) {
    char c = want[i];
    bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
    out[k++] = ok ? c : '_';
  }
  out[k] = 0;
}

/* Adds a unique identifier made from `want` to the set; *out_name points into the set. */
static hlo_status name_add(name_set *s, const char *want, const char **out_name) {
  char ident[200], base[208], name[224];
  c_ident(want, ident, sizeof ident);
  /* _X and __x belong to the implementation: such names get a prefix. */
  snprintf(base, sizeof base, "%s%s", ident[0] && ident[0] != '_' ? "" : "arg", ident);
  snprintf(name, sizeof name, "%s", base);
  for (int k = 2; name_taken(s, name); k++)
    snprintf(name, sizeof name, "%s_%d", base, k);
  if (s->n == s->cap) {
    int cap = s->cap ? s->cap * 2 : 16;
    char **v = realloc(s->v, (size_t)cap * sizeof *v);
    if (!v)
      return hlo_status_make(HLO_RESOURCE_EXHAUSTED, "out of memory writing the header");
    s->v = v;
    s->cap = cap;
  }
  if (!(s->v[s->n] = strdup(name)))
    return hlo_status_make(HLO_RESOURCE_EXHAUSTED, "out of memory writing the header");
  *out_name = s->v[s->n++];
  return NULL;
}

static void name_set_deinit(name_set *s) {
  for (int i = 0; i < s->n; i++)
    free(s->v[i]);
  free(s->v);
}

/* The C type of one element of a buffer (storage per hlo/elemtypes.def). */
static const char *c_type(ir_etype et) {
  switch (et) {
  case IR_PRED: return "bool";
  case IR_S1: case IR_S2: case IR_S4: case IR_S8: return "int8_t";
  case IR_S16: return "int16_t";
  case IR_S32: return "int32_t";
  case IR_S64: return "int64_t";
  case IR_U16: case IR_BF16: return "uint16_t";
  case IR_U32: return "uint32_t";
  case IR_U64: return "uint64_t";
  case IR_F16: return "_Float16";
  case IR_F32: return "float";
  case IR_F64: return "double";
  case IR_C64: return "float _Complex";
  case IR_C128: return "double _Complex";
  case IR_TOKEN: return "void";
  default: return "uint8_t"; /* u1..u8, f8 types, f4e2m1fn: one byte each */
  }
}

/* Writes one argument per leaf of `s` (depth first); tuple elements are named base_i. */
static hlo_status write_leaves(FILE *f, const ir_shape *s, const char *base, bool is_result, name_set *names) {
  if (s->et == IR_TUPLE) {
    for (int i = 0; i < s->n_elems; i++) {
      char sub[200];
      snprintf(sub, sizeof sub, "%s_%d", base, i);
      HLO_RETURN_IF_ERROR(write_leaves(f, s->elems[i], sub, is_result, names));
    }
    return NULL;
  }
  const char *name = "";
  HLO_RETURN_IF_ERROR(name_add(names, base, &name));
  char shape[512];
  ir_shape_format(s, false, shape, sizeof shape);
  fprintf(f, ",\n    %s%s *%s /* %s */", is_result ? "" : "const ", c_type(s->et), name, shape);
  return NULL;
}

static void write_prologue(FILE *f, const ir_module *m, const char *sym, const char *path, int64_t arena) {
  const char *file = strrchr(path, '/') ? strrchr(path, '/') + 1 : path;
  if (strcmp(path, "-") == 0)
    fprintf(f, "/* %s.h — generated", sym);
  else
    fprintf(f, "/* %s — generated", file);
  fprintf(f, " by hloc %s from HLO module %s.  Do not edit. */\n", HLOC_VERSION, m->name.p);
  fprintf(f, "#ifndef HLO_MODEL_%s_H\n#define HLO_MODEL_%s_H\n\n", sym, sym);
  fprintf(f, "#include <stdbool.h>\n#include <stdint.h>\n\n#include <hlo/abi.h>\n\n");
  fprintf(f, "#ifdef __cplusplus\nextern \"C\" {\n#endif\n\n");
  fprintf(f, "/* The module's signature, entry points and leaf shapes. */\n");
  fprintf(f, "const hlo_module_desc *%s_describe(void);\n", sym);
  fprintf(f, "hlo_status %s_run(hlo_context *ctx, void *const *params, void *const *results);\n\n", sym);
  int64_t params = 0, results = 0;
  for (int i = 0; i < m->entry->n_params; i++)
    params += ir_shape_total_bytes(m->entry->params[i]->shape);
  results = ir_shape_total_bytes(m->entry->root->shape);
  fprintf(f, "/* Bytes of the parameter and of the result buffers (each call reads and writes them): with\n"
             "   the arena, what one context's call needs (what hlorun checks against MemAvailable). */\n"
             "#define %s_PARAMETER_BYTES %lldLL\n#define %s_RESULT_BYTES %lldLL\n\n", sym, (long long)params, sym,
          (long long)results);
  if (arena >= 0)
    fprintf(f, "/* Bytes of scratch arena one call needs (hlo_context_set_arena in hlo/runtime.h). */\n"
               "#define %s_ARENA_BYTES %lldLL\n\n", sym, (long long)arena);
  else
    fprintf(f, "/* The scratch arena one call needs: %s_describe()->arena_bytes. */\n\n", sym);
  fprintf(f, "/* Typed entry: parameters (dense row-major buffers), then results (caller-allocated).\n"
             "   Returns NULL on success, else a status to read and free (hlo/status.h). */\n");
  fprintf(f, "hlo_status %s(hlo_context *ctx", sym);
}

static hlo_status write_entry_args(FILE *f, const ir_computation *e) {
  name_set names = {0};
  hlo_status s = NULL;
  for (int i = 0; i < e->n_params && !s; i++)
    s = write_leaves(f, e->params[i]->shape, e->params[i]->name.p, false, &names);
  if (!s)
    s = write_leaves(f, e->root->shape, "out", true, &names);
  name_set_deinit(&names);
  return s;
}

hlo_status drv_write_header(const ir_module *m, const drv_options *o, const char *path) {
  char *sym = o->symbol ? strdup(o->symbol) : cg_symbol_for_module(m->name.p);
  if (!sym)
    return hlo_status_make(HLO_RESOURCE_EXHAUSTED, "out of memory writing the header");
  bool to_stdout = strcmp(path, "-") == 0;
  FILE *f = to_stdout ? stdout : fopen(path, "w");
  if (!f) {
    free(sym);
    return hlo_status_make(HLO_IO, "%s: cannot write: %s", path, strerror(errno));
  }
  write_prologue(f, m, sym, path, o->arena_out ? *o->arena_out : -1);
  hlo_status s = write_entry_args(f, m->entry);
  fprintf(f, ");\n\n#ifdef __cplusplus\n}\n#endif\n#endif\n");
  free(sym);
  bool bad = to_stdout ? fflush(f) != 0 : false;
  bad |= ferror(f) != 0;
  if (!to_stdout && fclose(f) != 0)
    bad = true;
  if (!s && bad)
    s = hlo_status_make(HLO_IO, "%s: write error", path);
  return s;
}
