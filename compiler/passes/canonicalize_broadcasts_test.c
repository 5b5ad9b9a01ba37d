/* canonicalize_broadcasts_test.c — pass_canonicalize_broadcasts on parsed modules: the exact
 * instructions it inserts (names, order, shapes, broadcast dimensions, reshapes that drop
 * the size-1 dimensions that broadcast) for every rule — scalar, degenerate, InDim and its
 * composition, numpy, pdpd with trailing 1s, bidirectional, compare — written out by hand
 * from the spec examples; unique names; sub-computations; users rebuilt; and the result
 * verifying under --strict.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "grammar/parse.h"
#include "passes/pass_test_util.h"
#include "passes/passes.h"
#include "shape/shape.h"

static int failures;

/* One line per instruction of computation c: "%name = f32[2,3] op(%x, %y) dims={..}". */
static void describe(const ir_computation *c, char *buf, size_t cap) {
  size_t at = 0;
  buf[0] = 0;
  for (int i = 0; i < c->n_instrs && at < cap; i++) {
    const ir_instr *in = c->instrs[i];
    char sh[128];
    ir_shape_format(in->shape, false, sh, sizeof sh);
    at += (size_t)snprintf(buf + at, cap - at, "%%%s = %s %s(", in->name.p, sh, ir_opcode_table[in->op].spelling);
    for (int k = 0; k < in->n_operands && at < cap; k++)
      at += (size_t)snprintf(buf + at, cap - at, "%s%%%s", k ? ", " : "", in->operands[k]->name.p);
    at += (size_t)snprintf(buf + at, cap - at, ")");
    if (in->op == IR_OP_BROADCAST && in->attrs.has_dimensions && at < cap) {
      at += (size_t)snprintf(buf + at, cap - at, " dims={");
      for (int k = 0; k < in->attrs.dimensions.n && at < cap; k++)
        at += (size_t)snprintf(buf + at, cap - at, "%s%lld", k ? "," : "", (long long)in->attrs.dimensions.v[k]);
      at += (size_t)snprintf(buf + at, cap - at, "}");
    }
    if (at < cap)
      at += (size_t)snprintf(buf + at, cap - at, "\n");
  }
}

static ir_module *parse_verified(const char *what, const char *text) { return pass_test_parse(what, text, &failures); }

static bool verifies_strictly(const char *what, ir_module *m) {
  ir_diag_list d;
  ir_diag_init(&d, "t.hlo", NULL, 0);
  shape_options strict = {.strict = true};
  bool ok = shape_verify_module(m, &strict, &d);
  if (!ok)
    fprintf(stderr, "%s: not strict after the pass: %s\n", what, d.n ? d.items[0].message : "?");
  ir_diag_deinit(&d);
  return ok;
}

/* Runs the pass on `text` and compares computation `comp` (the entry when NULL). */
static void expect(const char *what, const char *text, const char *comp, const char *want) {
  ir_module *m = parse_verified(what, text);
  if (!m)
    return;
  hlo_status st = pass_canonicalize_broadcasts(m);
  if (st) {
    fprintf(stderr, "%s: pass failed: %s\n", what, hlo_status_message(st));
    hlo_status_free(st);
    failures++;
    ir_module_destroy(m);
    return;
  }
  ir_computation *c = comp ? ir_module_find_computation(m, comp, strlen(comp)) : m->entry;
  static char got[8192];
  describe(c, got, sizeof got);
  if (strcmp(got, want) != 0) {
    fprintf(stderr, "%s: got\n%s  want\n%s", what, got, want);
    failures++;
  }
  for (int i = 0; i < c->n_instrs; i++) {
    const ir_broadcast_attrs *bc = &c->instrs[i]->attrs.bc;
    if (bc->has_broadcast_dimensions || bc->auto_broadcast != IR_AB_NONE || bc->axis != -1) {
      fprintf(stderr, "%s: %%%s keeps extension attributes\n", what, c->instrs[i]->name.p);
      failures++;
    }
  }
  if (!verifies_strictly(what, m))
    failures++;
  ir_module_destroy(m);
}

#define MODULE(params, root) "HloModule t\n\nENTRY %main {\n" params "  ROOT %r = " root "\n}\n"

static void rules(void) {
  expect("scalar (|1 2 3;4 5 6| + 7)",
         MODULE("  %a = f32[2,3] parameter(0)\n  %b = f32[] parameter(1)\n", "add(%a, %b)"), NULL,
         "%a = f32[2,3] parameter()\n%b = f32[] parameter()\n%r.rhs.broadcast = f32[2,3] broadcast(%b) dims={}\n"
         "%r = f32[2,3] add(%a, %r.rhs.broadcast)\n");
  expect("matrix + vector, dimension 1",
         MODULE("  %a = f32[2,3] parameter(0)\n  %b = f32[3] parameter(1)\n", "add(%a, %b), broadcast_dimensions={1}"),
         NULL,
         "%a = f32[2,3] parameter()\n%b = f32[3] parameter()\n%r.rhs.broadcast = f32[2,3] broadcast(%b) dims={1}\n"
         "%r = f32[2,3] add(%a, %r.rhs.broadcast)\n");
  expect("degenerate outer (2,1) + (1,3)",
         MODULE("  %a = f32[2,1] parameter(0)\n  %b = f32[1,3] parameter(1)\n", "add(%a, %b)"), NULL,
         "%a = f32[2,1] parameter()\n%b = f32[1,3] parameter()\n%r.lhs.reshape = f32[2] reshape(%a)\n"
         "%r.lhs.broadcast = f32[2,3] broadcast(%r.lhs.reshape) dims={0}\n%r.rhs.reshape = f32[3] reshape(%b)\n"
         "%r.rhs.broadcast = f32[2,3] broadcast(%r.rhs.reshape) dims={1}\n"
         "%r = f32[2,3] add(%r.lhs.broadcast, %r.rhs.broadcast)\n");
  expect("composition |1 2 3 4| + [5 6]",
         MODULE("  %a = f32[4] parameter(0)\n  %b = f32[1,2] parameter(1)\n", "add(%a, %b), broadcast_dimensions={0}"),
         NULL,
         "%a = f32[4] parameter()\n%b = f32[1,2] parameter()\n%r.lhs.broadcast = f32[4,2] broadcast(%a) dims={0}\n"
         "%r.rhs.reshape = f32[2] reshape(%b)\n%r.rhs.broadcast = f32[4,2] broadcast(%r.rhs.reshape) dims={1}\n"
         "%r = f32[4,2] add(%r.lhs.broadcast, %r.rhs.broadcast)\n");
  expect("composition 1x2 + 4x3x1, dimensions (1,2)",
         MODULE("  %a = f32[1,2] parameter(0)\n  %b = f32[4,3,1] parameter(1)\n",
                "add(%a, %b), broadcast_dimensions={1,2}"),
         NULL,
         "%a = f32[1,2] parameter()\n%b = f32[4,3,1] parameter()\n%r.lhs.reshape = f32[2] reshape(%a)\n"
         "%r.lhs.broadcast = f32[4,3,2] broadcast(%r.lhs.reshape) dims={2}\n%r.rhs.reshape = f32[4,3] reshape(%b)\n"
         "%r.rhs.broadcast = f32[4,3,2] broadcast(%r.rhs.reshape) dims={0,1}\n"
         "%r = f32[4,3,2] add(%r.lhs.broadcast, %r.rhs.broadcast)\n");
  expect("numpy example 7: (2,1,5) + (4,1)",
         MODULE("  %a = f32[2,1,5] parameter(0)\n  %b = f32[4,1] parameter(1)\n", "add(%a, %b), auto_broadcast=numpy"),
         NULL,
         "%a = f32[2,1,5] parameter()\n%b = f32[4,1] parameter()\n%r.lhs.reshape = f32[2,5] reshape(%a)\n"
         "%r.lhs.broadcast = f32[2,4,5] broadcast(%r.lhs.reshape) dims={0,2}\n%r.rhs.reshape = f32[4] reshape(%b)\n"
         "%r.rhs.broadcast = f32[2,4,5] broadcast(%r.rhs.reshape) dims={1}\n"
         "%r = f32[2,4,5] add(%r.lhs.broadcast, %r.rhs.broadcast)\n");
  expect("pdpd example 2: (3,1) at axis 1",
         MODULE("  %a = f32[2,3,4,5] parameter(0)\n  %b = f32[3,1] parameter(1)\n",
                "multiply(%a, %b), auto_broadcast=pdpd, axis=1"),
         NULL,
         "%a = f32[2,3,4,5] parameter()\n%b = f32[3,1] parameter()\n%r.rhs.reshape = f32[3] reshape(%b)\n"
         "%r.rhs.broadcast = f32[2,3,4,5] broadcast(%r.rhs.reshape) dims={1}\n"
         "%r = f32[2,3,4,5] multiply(%a, %r.rhs.broadcast)\n");
  expect("pdpd example 4: (1,3) at axis 0",
         MODULE("  %a = f32[2,3,4,5] parameter(0)\n  %b = f32[1,3] parameter(1)\n",
                "subtract(%a, %b), auto_broadcast=pdpd, axis=0"),
         NULL,
         "%a = f32[2,3,4,5] parameter()\n%b = f32[1,3] parameter()\n%r.rhs.reshape = f32[3] reshape(%b)\n"
         "%r.rhs.broadcast = f32[2,3,4,5] broadcast(%r.rhs.reshape) dims={1}\n"
         "%r = f32[2,3,4,5] subtract(%a, %r.rhs.broadcast)\n");
  expect("bidirectional example 5: (3,1) to {2,1,6}",
         MODULE("  %a = f32[3,1] parameter(0)\n", "broadcast(%a), auto_broadcast=bidirectional, target_shape={2,1,6}"),
         NULL, "%a = f32[3,1] parameter()\n%r.reshape = f32[3] reshape(%a)\n%r = f32[2,3,6] broadcast(%r.reshape) dims={1}\n");
  expect("bidirectional example 2: (2,3) to {3}",
         MODULE("  %a = f32[2,3] parameter(0)\n", "broadcast(%a), auto_broadcast=bidirectional, target_shape={3}"), NULL,
         "%a = f32[2,3] parameter()\n%r = f32[2,3] broadcast(%a) dims={0,1}\n");
  expect("compare keeps the operand type",
         MODULE("  %a = s32[3,3] parameter(0)\n  %b = s32[3] parameter(1)\n",
                "compare(%a, %b), direction=LT, broadcast_dimensions={0}"),
         NULL,
         "%a = s32[3,3] parameter()\n%b = s32[3] parameter()\n%r.rhs.broadcast = s32[3,3] broadcast(%b) dims={0}\n"
         "%r = pred[3,3] compare(%a, %r.rhs.broadcast)\n");
  expect("auto_broadcast=none on equal shapes: attribute dropped only",
         MODULE("  %a = f32[2] parameter(0)\n  %b = f32[2] parameter(1)\n", "add(%a, %b), auto_broadcast=none"), NULL,
         "%a = f32[2] parameter()\n%b = f32[2] parameter()\n%r = f32[2] add(%a, %b)\n");
}

static void names_order_computations(void) {
  expect("a taken name gets a suffix; later users stay after",
         "HloModule t\n\nENTRY %main {\n  %a = f32[2] parameter(0)\n  %b = f32[] parameter(1)\n"
         "  %r.rhs.broadcast = f32[2] negate(%a)\n  %r = f32[2] add(%r.rhs.broadcast, %b)\n"
         "  ROOT %s = f32[2] multiply(%r, %b)\n}\n",
         NULL,
         "%a = f32[2] parameter()\n%b = f32[] parameter()\n%r.rhs.broadcast = f32[2] negate(%a)\n"
         "%r.rhs.broadcast.1 = f32[2] broadcast(%b) dims={}\n%r = f32[2] add(%r.rhs.broadcast, %r.rhs.broadcast.1)\n"
         "%s.rhs.broadcast = f32[2] broadcast(%b) dims={}\n%s = f32[2] multiply(%r, %s.rhs.broadcast)\n");
  const char *called = "HloModule t\n\n%body (x: f32[3]) -> f32[3] {\n  %x = f32[3] parameter(0)\n"
                       "  %one = f32[] constant(1)\n  ROOT %y = f32[3] add(%x, %one)\n}\n\n"
                       "ENTRY %main {\n  %a = f32[3] parameter(0)\n  ROOT %r = f32[3] call(%a), to_apply=%body\n}\n";
  expect("inside a called computation", called, "body",
         "%x = f32[3] parameter()\n%one = f32[] constant()\n%y.rhs.broadcast = f32[3] broadcast(%one) dims={}\n"
         "%y = f32[3] add(%x, %y.rhs.broadcast)\n");
}

static void users_rebuilt(void) {
  ir_module *m = parse_verified("users", MODULE("  %a = f32[2,3] parameter(0)\n  %b = f32[3] parameter(1)\n",
                                                "add(%a, %b), broadcast_dimensions={1}"));
  if (!m)
    return;
  hlo_status st = pass_canonicalize_broadcasts(m);
  ir_computation *c = m->entry;
  ir_instr *b = c->n_instrs == 4 ? c->instrs[2] : NULL;
  bool ok = !st && b && b->n_users == 1 && b->users[0] == c->root && c->instrs[1]->n_users == 1 &&
            c->instrs[1]->users[0] == b && b->id == 2 && c->root->id == 3 && !b->shape->layout;
  if (!ok) {
    fprintf(stderr, "users/ids/layout not as expected after the pass\n");
    failures++;
  }
  hlo_status_free(st);
  ir_module_destroy(m);
}

/* ---- property: every random case the verifier accepts canonicalizes to a strict module ---- */

static uint32_t next_rand(uint32_t *state) {
  *state = *state * 1664525u + 1013904223u;
  return *state >> 8;
}

static int shape_text(uint32_t *st, char *buf, size_t cap, int *out_rank) {
  int rank = (int)(next_rand(st) % 5), at = snprintf(buf, cap, "f32[");
  for (int i = 0; i < rank; i++)
    at += snprintf(buf + at, cap - (size_t)at, "%s%u", i ? "," : "", 1 + next_rand(st) % 3);
  *out_rank = rank;
  return at + snprintf(buf + at, cap - (size_t)at, "]");
}

/* The extension attributes of one random case (may be invalid: the verifier decides). */
static void attr_text(uint32_t *st, int lrank, int rrank, char *buf, size_t cap) {
  int lo = lrank < rrank ? lrank : rrank, hi = lrank < rrank ? rrank : lrank;
  switch (next_rand(st) % 4) {
  case 0:
    snprintf(buf, cap, "%s", "");
    break;
  case 1: { /* an increasing choice of lo dimensions out of hi */
    int at = snprintf(buf, cap, ", broadcast_dimensions={"), n = 0;
    for (int d = 0; d < hi && n < lo; d++)
      if (hi - d == lo - n || next_rand(st) % 2)
        at += snprintf(buf + at, cap - (size_t)at, "%s%d", n++ ? "," : "", d);
    snprintf(buf + at, cap - (size_t)at, "}");
    break;
  }
  case 2:
    snprintf(buf, cap, ", auto_broadcast=numpy");
    break;
  default:
    snprintf(buf, cap, ", auto_broadcast=pdpd, axis=%d", (int)(next_rand(st) % 5) - 1);
  }
}

static void random_cases(void) {
  uint32_t st = 12345;
  int valid = 0;
  for (int k = 0; k < 3000; k++) {
    char l[64], r[64], at[96], text[512];
    int lr, rr;
    shape_text(&st, l, sizeof l, &lr);
    shape_text(&st, r, sizeof r, &rr);
    attr_text(&st, lr, rr, at, sizeof at);
    snprintf(text, sizeof text,
             "HloModule t\n\nENTRY %%main {\n  %%a = %s parameter(0)\n  %%b = %s parameter(1)\n"
             "  ROOT %%r = add(%%a, %%b)%s\n}\n",
             l, r, at);
    ir_diag_list d;
    ir_diag_init(&d, "t.hlo", text, strlen(text));
    ir_module *m = NULL;
    hlo_status s = ir_parse_module(text, strlen(text), &d, &m);
    shape_options o = {0};
    if (!s && shape_verify_module(m, &o, &d)) {
      valid++;
      char before[128], after[128];
      ir_shape_format(m->entry->root->shape, false, before, sizeof before);
      hlo_status p = pass_canonicalize_broadcasts(m);
      ir_shape_format(m->entry->root->shape, false, after, sizeof after);
      if (p || strcmp(before, after) != 0 || !verifies_strictly(text, m)) {
        fprintf(stderr, "random case failed:\n%s", text);
        failures++;
      }
      hlo_status_free(p);
    }
    hlo_status_free(s);
    ir_diag_deinit(&d);
    ir_module_destroy(m);
  }
  printf("%d of 3000 random cases valid\n", valid);
  if (valid < 500) { /* the generator must produce enough valid cases to mean anything */
    fprintf(stderr, "only %d random cases were valid\n", valid);
    failures++;
  }
}

int main(void) {
  rules();
  random_cases();
  names_order_computations();
  users_rebuilt();
  if (failures)
    fprintf(stderr, "%d failures\n", failures);
  return failures != 0;
}
