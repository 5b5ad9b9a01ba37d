/* broadcast_check.c — the broadcasting-example driver at library level (no hloc, no LLVM):
 *
 *   broadcast_check FILE.hlo
 *
 * FILE's header comments say what to expect: `// EXPECT: f32[2,3]` (the ENTRY root's inferred
 * shape, printed without layout) or `// EXPECT-ERROR: NAME.hlo:L:C: error: ...` (the first
 * line of the first error, diagnostics naming FILE by its basename); `// FLAGS: --strict`
 * verifies with --strict; `// SOURCE: ...` (required) names the spec example.  For a valid
 * case the module then goes through pass_canonicalize_broadcasts and must verify with
 * --strict, keep its root shape, keep a topological instruction order, and have no
 * implicit broadcast or extension attribute left.  Exit 0 on success, 1 with the reason.
 * Registered by tests/broadcast.cmake (one CTest per .hlo file in testdata/broadcast).
 */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "grammar/parse.h"
#include "passes/passes.h"
#include "shape/shape.h"

typedef struct expectation {
  char *shape;    /* EXPECT */
  char *error;    /* EXPECT-ERROR */
  char *source;   /* SOURCE */
  bool strict;    /* FLAGS: --strict */
} expectation;

static char *read_file(const char *path, size_t *out_len) {
  FILE *f = fopen(path, "rb");
  if (!f)
    return NULL;
  size_t cap = 1 << 16, n = 0;
  char *buf = malloc(cap + 1);
  while (buf) {
    n += fread(buf + n, 1, cap - n, f);
    if (n < cap)
      break;
    char *bigger = realloc(buf, cap * 2 + 1);
    if (!bigger) {
      free(buf);
      buf = NULL;
      break;
    }
    buf = bigger;
    cap *= 2;
  }
  bool bad = ferror(f);
  fclose(f);
  if (bad || !buf) {
    free(buf);
    return NULL;
  }
  buf[n] = 0;
  *out_len = n;
  return buf;
}

static char *dup_n(const char *s, size_t n) {
  char *out = malloc(n + 1);
  if (out) {
    memcpy(out, s, n);
    out[n] = 0;
  }
  return out;
}

static const char *base_name(const char *path) {
  const char *slash = strrchr(path, '/');
  return slash ? slash + 1 : path;
}

/* The value of the header comment `// KEY: value` (first occurrence), trimmed; NULL if none. */
static char *header_value(const char *text, const char *key) {
  size_t klen = strlen(key);
  for (const char *ln = text; ln && *ln; ln = strchr(ln, '\n'), ln = ln ? ln + 1 : NULL) {
    if (strncmp(ln, "// ", 3) != 0 || strncmp(ln + 3, key, klen) != 0 || ln[3 + klen] != ':')
      continue;
    const char *v = ln + 4 + klen, *end = v;
    while (*v == ' ')
      v++;
    end = v;
    while (*end && *end != '\n' && *end != '\r')
      end++;
    while (end > v && end[-1] == ' ')
      end--;
    return dup_n(v, (size_t)(end - v));
  }
  return NULL;
}

static int fail(const char *path, const char *fmt, const char *a, const char *b) {
  printf("FAIL %s: ", base_name(path));
  printf(fmt, a, b);
  printf("\n");
  return 1;
}

/* The first line of the first error in d, malloc'd; NULL if there is none. */
static char *first_error(const ir_diag_list *d) {
  for (int i = 0; i < d->n; i++) {
    if (d->items[i].severity != IR_DIAG_ERROR)
      continue;
    char *r = ir_diag_render(d, i);
    char *line = r ? dup_n(r, strcspn(r, "\n")) : NULL;
    free(r);
    return line;
  }
  return NULL;
}

/* After canonicalization: operands come first, every broadcasting op has operands of its
 * result's dimensions, and no extension attribute is left.  NULL or what is wrong. */
static const char *canonical_form_error(const ir_module *m) {
  for (int ci = 0; ci < m->n_comps; ci++) {
    const ir_computation *c = m->comps[ci];
    for (int i = 0; i < c->n_instrs; i++) {
      const ir_instr *in = c->instrs[i];
      const ir_broadcast_attrs *bc = &in->attrs.bc;
      if (bc->has_broadcast_dimensions || bc->auto_broadcast != IR_AB_NONE)
        return "an extension attribute is left";
      for (int k = 0; k < in->n_operands; k++) {
        const ir_instr *op = in->operands[k];
        if (op->parent == c && (op->id >= in->id || c->instrs[op->id] != op))
          return "an operand comes after its user";
        if ((ir_opcode_table[in->op].flags & OPF_BROADCASTS) && !ir_shape_same_dims(op->shape, in->shape))
          return "an implicit broadcast is left";
      }
    }
  }
  return NULL;
}

/* Valid case: root shape, then canonicalization and the strict verification. */
static int check_valid(const char *path, const expectation *e, ir_module *m, const char *text, size_t len) {
  char got[512];
  ir_shape_format(m->entry->root->shape, false, got, sizeof got);
  if (strcmp(got, e->shape) != 0)
    return fail(path, "inferred shape %s, expected %s", got, e->shape);
  hlo_status st = pass_canonicalize_broadcasts(m);
  if (st) {
    int rc = fail(path, "canonicalization failed: %s%s", hlo_status_message(st), "");
    hlo_status_free(st);
    return rc;
  }
  const char *bad = canonical_form_error(m);
  if (bad)
    return fail(path, "after canonicalization %s%s", bad, "");
  ir_diag_list d;
  ir_diag_init(&d, base_name(path), text, len);
  shape_options strict = {.strict = true};
  bool ok = shape_verify_module(m, &strict, &d);
  char *err = first_error(&d);
  ir_diag_deinit(&d);
  int rc = 0;
  if (!ok || err)
    rc = fail(path, "the canonicalized module does not verify with --strict: %s%s", err ? err : "(no message)", "");
  free(err);
  ir_shape_format(m->entry->root->shape, false, got, sizeof got);
  if (!rc && strcmp(got, e->shape) != 0)
    rc = fail(path, "canonicalization changed the root shape to %s (expected %s)", got, e->shape);
  return rc;
}

static int check(const char *path, const expectation *e, const char *text, size_t len) {
  ir_diag_list d;
  ir_diag_init(&d, base_name(path), text, len);
  ir_module *m = NULL;
  hlo_status st = ir_parse_module(text, len, &d, &m);
  bool ok = !st;
  if (ok) {
    shape_options opts = {.strict = e->strict};
    ok = shape_verify_module(m, &opts, &d);
  }
  hlo_status_free(st);
  char *err = first_error(&d);
  ir_diag_deinit(&d);
  int rc = 0;
  if (e->error) {
    if (ok || !err || strcmp(err, e->error) != 0)
      rc = fail(path, "expected the error\n  %s\ngot\n  %s", e->error, err ? err : "(no error)");
  } else if (!ok || err) {
    rc = fail(path, "expected shape %s, got the error\n  %s", e->shape, err ? err : "(no message)");
  } else {
    rc = check_valid(path, e, m, text, len);
  }
  free(err);
  ir_module_destroy(m);
  return rc;
}

int main(int argc, char **argv) {
  if (argc != 2) {
    fprintf(stderr, "usage: broadcast_check FILE.hlo\n");
    return 2;
  }
  size_t len = 0;
  char *text = read_file(argv[1], &len);
  if (!text) {
    fprintf(stderr, "broadcast_check: cannot read %s\n", argv[1]);
    return 1;
  }
  expectation e = {header_value(text, "EXPECT"), header_value(text, "EXPECT-ERROR"), header_value(text, "SOURCE"),
                   false};
  char *flags = header_value(text, "FLAGS");
  e.strict = flags && strstr(flags, "--strict");
  int rc;
  if (!e.source)
    rc = fail(argv[1], "no // SOURCE: line naming the spec example%s%s", "", "");
  else if (!e.shape == !e.error)
    rc = fail(argv[1], "needs exactly one of // EXPECT: and // EXPECT-ERROR:%s%s", "", "");
  else
    rc = check(argv[1], &e, text, len);
  if (rc == 0)
    printf("ok %s\n", base_name(argv[1]));
  free(e.shape);
  free(e.error);
  free(e.source);
  free(flags);
  free(text);
  return rc;
}
