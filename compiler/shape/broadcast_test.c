/* broadcast_test.c — shape_broadcast_binary, shape_broadcast_to_target and
 * shape_broadcast_operand_map on hand-built shapes: XLA's rules (scalar, degenerate, InDim
 * and its composition), OpenVINO's numpy/pdpd/bidirectional rules, --strict, dynamic
 * dimensions (XLA's degenerate table), ranks past 64, and the exact messages.  Expected
 * shapes are worked out by hand from the spec documents (the four broadcasting files in ../shared/spec).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "shape/shape.h"

static int failures;

#define D(...) ((const int64_t[]){__VA_ARGS__})

static ir_shape *arr(ir_module *m, ir_etype et, int rank, const int64_t *dims) { return ir_shape_array(m, et, rank, dims); }

/* "f32[<=3,?]" style dimension kinds: 'b' bounded, 'u' unbounded, '.' static. */
static ir_shape *dyn(ir_module *m, int rank, const int64_t *dims, const char *kinds) {
  ir_shape *s = arr(m, IR_F32, rank, dims);
  s->dyn = ir_arena_alloc_array(&m->arena, (size_t)rank, 1);
  for (int i = 0; i < rank; i++)
    s->dyn[i] = kinds[i] == 'b' ? IR_DIM_BOUNDED : kinds[i] == 'u' ? IR_DIM_UNBOUNDED : IR_DIM_STATIC;
  return s;
}

static ir_broadcast_attrs no_attrs(void) { return (ir_broadcast_attrs){.axis = -1}; }

static ir_broadcast_attrs bd(ir_module *m, int n, const int64_t *v) {
  ir_broadcast_attrs a = no_attrs();
  a.has_broadcast_dimensions = true;
  a.broadcast_dimensions = ir_i64_list_copy(m, v, n);
  return a;
}

static ir_broadcast_attrs ab(ir_auto_broadcast kind, int64_t axis) {
  ir_broadcast_attrs a = no_attrs();
  a.auto_broadcast = kind;
  a.axis = axis;
  return a;
}

/* Expects `want` (formatted without layout) or, when want is NULL, the error `msg`. */
static void check(ir_module *m, const char *what, const ir_shape *l, const ir_shape *r, const ir_broadcast_attrs *a,
                  bool strict, const char *want, const char *msg) {
  ir_diag_list d;
  ir_diag_init(&d, "t.hlo", NULL, 0);
  shape_options o = {.strict = strict};
  ir_shape *s = shape_broadcast_binary(m, l, r, a, &o, "%r", (ir_loc){1, 1}, &d);
  char got[256] = "(none)";
  if (s)
    ir_shape_format(s, false, got, sizeof got);
  const char *got_msg = d.n ? d.items[0].message : "(no error)";
  if (want && (!s || strcmp(got, want) != 0 || d.n)) {
    fprintf(stderr, "%s: got %s / %s, want %s\n", what, got, got_msg, want);
    failures++;
  } else if (!want && (s || strcmp(got_msg, msg) != 0)) {
    fprintf(stderr, "%s: got %s / %s\n  want the error %s\n", what, got, got_msg, msg);
    failures++;
  } else if (s && s->layout) {
    fprintf(stderr, "%s: the result has a layout\n", what);
    failures++;
  }
  ir_diag_deinit(&d);
}

static void xla_rules(ir_module *m) {
  ir_broadcast_attrs none = no_attrs();
  ir_shape *m23 = arr(m, IR_F32, 2, D(2, 3)), *v3 = arr(m, IR_F32, 1, D(3)), *sc = arr(m, IR_F32, 0, NULL);
  check(m, "equal", m23, m23, &none, false, "f32[2,3]", NULL);
  check(m, "null attrs", m23, sc, NULL, false, "f32[2,3]", NULL);
  check(m, "scalar rhs", m23, sc, &none, false, "f32[2,3]", NULL);
  check(m, "scalar lhs", sc, m23, &none, false, "f32[2,3]", NULL);
  check(m, "scalars", sc, sc, &none, false, "f32[]", NULL);
  check(m, "ranks need dims", m23, v3, &none, false, NULL,
        "%r: operands f32[2,3] and f32[3] have different ranks; write broadcast_dimensions={...} to say how the "
        "lower-rank one maps");
  ir_broadcast_attrs d1 = bd(m, 1, D(1)), d0 = bd(m, 1, D(0));
  check(m, "indim {1}", m23, v3, &d1, false, "f32[2,3]", NULL);
  check(m, "indim {1}, vector on lhs", v3, m23, &d1, false, "f32[2,3]", NULL);
  check(m, "indim {0} on 2x3 vs 3", m23, v3, &d0, false, NULL,
        "%r: operands f32[2,3] and f32[3] are not broadcast-compatible (broadcast_dimensions): dimension 0 of lhs "
        "(size 2) vs dimension 0 of rhs (size 3)");
  check(m, "indim {0}, vector on lhs", v3, m23, &d0, false, NULL,
        "%r: operands f32[3] and f32[2,3] are not broadcast-compatible (broadcast_dimensions): dimension 0 of lhs "
        "(size 3) vs dimension 0 of rhs (size 2)");
  /* Composition: (4) + (1,2) with {0} -> 4x2; (1,2) + (4,3,1) with {1,2} -> 4x3x2. */
  check(m, "composition 1", arr(m, IR_F32, 1, D(4)), arr(m, IR_F32, 2, D(1, 2)), &d0, false, "f32[4,2]", NULL);
  ir_broadcast_attrs d12 = bd(m, 2, D(1, 2));
  check(m, "composition 2", arr(m, IR_F32, 2, D(1, 2)), arr(m, IR_F32, 3, D(4, 3, 1)), &d12, false, "f32[4,3,2]", NULL);
  check(m, "degenerate outer", arr(m, IR_F32, 2, D(2, 1)), arr(m, IR_F32, 2, D(1, 3)), &none, false, "f32[2,3]", NULL);
  check(m, "degenerate mismatch", arr(m, IR_F32, 3, D(7, 2, 5)), arr(m, IR_F32, 3, D(7, 2, 6)), &none, false, NULL,
        "%r: operands f32[7,2,5] and f32[7,2,6] are not broadcast-compatible (degenerate dimensions): dimension 2 "
        "of lhs (size 5) vs dimension 2 of rhs (size 6)");
  ir_broadcast_attrs empty = bd(m, 0, NULL), id = bd(m, 2, D(0, 1)), swap = bd(m, 2, D(1, 0));
  check(m, "scalar with {}", m23, sc, &empty, false, "f32[2,3]", NULL);
  check(m, "identity on equal ranks", arr(m, IR_F32, 2, D(2, 1)), m23, &id, false, "f32[2,3]", NULL);
  check(m, "non-identity on equal ranks", m23, m23, &swap, false, NULL,
        "%r: broadcast_dimensions={1,0} on operands of the same rank must be the identity or be left out");
  check(m, "vector with {}", m23, v3, &empty, false, NULL,
        "%r: broadcast_dimensions={} has 0 entries but the lower-rank operand f32[3] has rank 1");
  ir_broadcast_attrs neg = bd(m, 1, D(-1)), order = bd(m, 2, D(2, 1));
  check(m, "negative dim", m23, v3, &neg, false, NULL,
        "%r: broadcast_dimensions={-1}: dimension -1 is out of range for the higher-rank operand f32[2,3] (rank 2)");
  check(m, "order", arr(m, IR_F32, 4, D(2, 3, 4, 5)), arr(m, IR_F32, 2, D(4, 3)), &order, false, NULL,
        "%r: broadcast_dimensions={2,1} must be strictly increasing, but 1 follows 2");
  check(m, "element type from lhs", arr(m, IR_S32, 1, D(3)), arr(m, IR_S32, 0, NULL), &none, false, "s32[3]", NULL);
}

static void openvino_rules(ir_module *m) {
  ir_broadcast_attrs np = ab(IR_AB_NUMPY, -1), nn = ab(IR_AB_EXPLICIT, -1);
  check(m, "numpy 7", arr(m, IR_F32, 3, D(2, 1, 5)), arr(m, IR_F32, 2, D(4, 1)), &np, false, "f32[2,4,5]", NULL);
  check(m, "numpy 9", arr(m, IR_F32, 3, D(1, 5, 3)), arr(m, IR_F32, 4, D(5, 2, 1, 3)), &np, false, "f32[5,2,5,3]", NULL);
  check(m, "numpy 11", arr(m, IR_F32, 3, D(3, 1, 5)), arr(m, IR_F32, 3, D(4, 4, 5)), &np, false, NULL,
        "%r: operands f32[3,1,5] and f32[4,4,5] are not broadcast-compatible (numpy): dimension 0 of lhs (size 3) vs "
        "dimension 0 of rhs (size 4)");
  check(m, "numpy, shorter lhs", arr(m, IR_F32, 1, D(4)), arr(m, IR_F32, 3, D(2, 3, 5)), &np, false, NULL,
        "%r: operands f32[4] and f32[2,3,5] are not broadcast-compatible (numpy): dimension 0 of lhs (size 4) vs "
        "dimension 2 of rhs (size 5)");
  check(m, "none", arr(m, IR_F32, 1, D(3)), arr(m, IR_F32, 1, D(3)), &nn, false, "f32[3]", NULL);
  ir_shape *a = arr(m, IR_F32, 4, D(2, 3, 4, 5));
  ir_broadcast_attrs p1 = ab(IR_AB_PDPD, 1), pd = ab(IR_AB_PDPD, -1), p0 = ab(IR_AB_PDPD, 0), p3 = ab(IR_AB_PDPD, 3);
  check(m, "pdpd 2", a, arr(m, IR_F32, 2, D(3, 1)), &p1, false, "f32[2,3,4,5]", NULL);
  check(m, "pdpd 4", a, arr(m, IR_F32, 2, D(1, 3)), &p0, false, "f32[2,3,4,5]", NULL);
  check(m, "pdpd 6 default", a, arr(m, IR_F32, 1, D(5)), &pd, false, "f32[2,3,4,5]", NULL);
  check(m, "pdpd trailing 1s past lhs", a, arr(m, IR_F32, 3, D(5, 1, 1)), &p3, false, "f32[2,3,4,5]", NULL);
  check(m, "pdpd all ones", a, arr(m, IR_F32, 2, D(1, 1)), &pd, false, "f32[2,3,4,5]", NULL);
  check(m, "pdpd 7", arr(m, IR_F32, 4, D(8, 1, 6, 1)), arr(m, IR_F32, 3, D(7, 1, 5)), &p1, false, NULL,
        "%r: operands f32[8,1,6,1] and f32[7,1,5] are not broadcast-compatible (pdpd broadcasts rhs into lhs only): "
        "dimension 1 of lhs (size 1) vs dimension 0 of rhs (size 7)");
  check(m, "pdpd result is lhs", arr(m, IR_F32, 2, D(1, 3)), arr(m, IR_F32, 2, D(2, 3)), &pd, false, NULL,
        "%r: operands f32[1,3] and f32[2,3] are not broadcast-compatible (pdpd broadcasts rhs into lhs only): "
        "dimension 0 of lhs (size 1) vs dimension 0 of rhs (size 2)");
  ir_broadcast_attrs big = ab(IR_AB_PDPD, 5);
  ir_broadcast_attrs huge = ab(IR_AB_PDPD, INT64_MAX);
  check(m, "pdpd axis INT64_MAX", a, arr(m, IR_F32, 2, D(4, 5)), &huge, false, NULL,
        "%r: auto_broadcast=pdpd: rhs f32[4,5] does not fit in lhs f32[2,3,4,5] at axis 9223372036854775807 (its 2 "
        "dimensions without trailing 1s would end at dimension 9223372036854775807)");
  check(m, "pdpd axis past the end", a, arr(m, IR_F32, 0, NULL), &big, false, NULL,
        "%r: auto_broadcast=pdpd: rhs f32[] does not fit in lhs f32[2,3,4,5] at axis 5 (its 0 dimensions without "
        "trailing 1s would end at dimension 4)");
}

static void strict_and_combinations(ir_module *m) {
  ir_shape *m23 = arr(m, IR_F32, 2, D(2, 3)), *v3 = arr(m, IR_F32, 1, D(3));
  ir_broadcast_attrs none = no_attrs(), np = ab(IR_AB_NUMPY, -1), pd = ab(IR_AB_PDPD, 1), d1 = bd(m, 1, D(1));
  check(m, "strict equal", m23, m23, &none, true, "f32[2,3]", NULL);
  check(m, "strict degenerate", arr(m, IR_F32, 2, D(1, 3)), m23, &none, true, NULL,
        "%r: operand shapes f32[1,3] and f32[2,3] differ; implicit broadcasting is an hloc extension (rejected by "
        "--strict)");
  check(m, "strict dims", m23, v3, &d1, true, NULL, "%r: broadcast_dimensions={1} is an hloc extension (rejected by --strict)");
  check(m, "strict numpy on equal shapes", m23, m23, &np, true, NULL,
        "%r: auto_broadcast=numpy is an hloc extension (rejected by --strict)");
  check(m, "strict pdpd", m23, v3, &pd, true, NULL, "%r: auto_broadcast=pdpd is an hloc extension (rejected by --strict)");
  ir_broadcast_attrs both = bd(m, 1, D(1)), bi = ab(IR_AB_BIDIRECTIONAL, -1), ax = ab(IR_AB_NONE, 2);
  both.auto_broadcast = IR_AB_PDPD;
  check(m, "dims + pdpd", m23, v3, &both, false, NULL, "%r: broadcast_dimensions={1} cannot be combined with auto_broadcast=pdpd");
  check(m, "bidirectional on a binary op", m23, v3, &bi, false, NULL,
        "%r: auto_broadcast=bidirectional applies to broadcast only; elementwise operations take auto_broadcast=none, "
        "numpy or pdpd");
  check(m, "axis alone", m23, v3, &ax, false, NULL, "%r: axis=2 applies only to auto_broadcast=pdpd");
}

static void dynamic_dims(ir_module *m) {
  ir_broadcast_attrs none = no_attrs();
  /* XLA's degenerate table: 1 | <=X -> <=X; X | ? -> X; <=X | ? -> ?; ? | ? -> ?; X | <=X -> <=X. */
  check(m, "1 vs <=4", arr(m, IR_F32, 1, D(1)), dyn(m, 1, D(4), "b"), &none, false, "f32[<=4]", NULL);
  check(m, "3 vs ?", arr(m, IR_F32, 1, D(3)), dyn(m, 1, D(-1), "u"), &none, false, "f32[3]", NULL);
  check(m, "<=3 vs ?", dyn(m, 1, D(3), "b"), dyn(m, 1, D(-1), "u"), &none, false, "f32[?]", NULL);
  check(m, "? vs ?", dyn(m, 1, D(-1), "u"), dyn(m, 1, D(-1), "u"), &none, false, "f32[?]", NULL);
  check(m, "4 vs <=4", arr(m, IR_F32, 1, D(4)), dyn(m, 1, D(4), "b"), &none, false, "f32[<=4]", NULL);
  check(m, "scalar vs ?x2", arr(m, IR_F32, 0, NULL), dyn(m, 2, D(-1, 2), "u."), &none, false, "f32[?,2]", NULL);
}

static void big_rank(ir_module *m) {
  int64_t dims[100];
  for (int i = 0; i < 100; i++)
    dims[i] = i == 99 ? 1 : 1 + i % 2;
  ir_broadcast_attrs np = ab(IR_AB_NUMPY, -1);
  ir_diag_list d;
  ir_diag_init(&d, "t.hlo", NULL, 0);
  shape_options o = {0};
  ir_shape *s = shape_broadcast_binary(m, arr(m, IR_F32, 100, dims), arr(m, IR_F32, 1, D(5)), &np, &o, "%r", (ir_loc){1, 1}, &d);
  if (!s || s->rank != 100 || s->dims[0] != 1 || s->dims[1] != 2 || s->dims[98] != 1 || s->dims[99] != 5) {
    fprintf(stderr, "rank 100: wrong result\n");
    failures++;
  }
  ir_diag_deinit(&d);
}

static void to_target(ir_module *m) {
  ir_diag_list d;
  ir_diag_init(&d, "t.hlo", NULL, 0);
  ir_i64_list t = ir_i64_list_copy(m, D(2, 1, 6), 3);
  shape_options strict = {.strict = true};
  ir_shape *op = arr(m, IR_F32, 2, D(3, 1));
  char got[64] = "";
  ir_shape *s = shape_broadcast_to_target(m, op, &t, NULL, "%r", (ir_loc){1, 1}, &d);
  if (s)
    ir_shape_format(s, false, got, sizeof got);
  if (strcmp(got, "f32[2,3,6]") != 0 || d.n) { /* bidirectional example 5 */
    fprintf(stderr, "bidirectional 5: got %s\n", got);
    failures++;
  }
  s = shape_broadcast_to_target(m, op, &t, &strict, "%r", (ir_loc){1, 1}, &d);
  if (s || d.n != 1 || strcmp(d.items[0].message, "%r: auto_broadcast=bidirectional is an hloc extension (rejected by --strict)")) {
    fprintf(stderr, "bidirectional under --strict: %s\n", d.n ? d.items[0].message : "(no error)");
    failures++;
  }
  ir_diag_deinit(&d);
}

/* ---- shape_broadcast_operand_map on instructions built by hand ------------------------------ */

static void expect_map(ir_instr *in, int which, int n, const int64_t *want, const char *what) {
  int64_t got[8] = {0};
  bool ok = shape_broadcast_operand_map(in, which, got);
  if (!ok || memcmp(got, want, (size_t)n * sizeof *want) != 0) {
    fprintf(stderr, "%s: map of operand %d: ok=%d got {%lld,%lld,%lld,%lld}\n", what, which, ok, (long long)got[0],
            (long long)got[1], (long long)got[2], (long long)got[3]);
    failures++;
  }
}

static ir_instr *binary(ir_computation *c, ir_shape *res, ir_shape *l, ir_shape *r, ir_broadcast_attrs a) {
  ir_module *m = c->module;
  ir_instr *p0 = ir_instr_create(c, IR_OP_PARAMETER, ir_intern(m, "a", 1), l, NULL, 0);
  ir_instr *p1 = ir_instr_create(c, IR_OP_PARAMETER, ir_intern(m, "b", 1), r, NULL, 0);
  ir_instr *ops[2] = {p0, p1};
  ir_instr *in = ir_instr_create(c, IR_OP_ADD, ir_intern(m, "r", 1), res, ops, 2);
  in->attrs.bc = a;
  return in;
}

static void operand_maps(ir_module *m) {
  ir_computation *c = ir_computation_add(m, ir_intern(m, "c", 1));
  ir_shape *r432 = arr(m, IR_F32, 3, D(4, 3, 2));
  ir_instr *in = binary(c, r432, arr(m, IR_F32, 2, D(1, 2)), arr(m, IR_F32, 3, D(4, 3, 1)), bd(m, 2, D(1, 2)));
  expect_map(in, 0, 2, D(1, 2), "indim lower-rank");
  expect_map(in, 1, 3, D(0, 1, 2), "indim higher-rank");
  ir_shape *r2345 = arr(m, IR_F32, 4, D(2, 3, 4, 5));
  in = binary(c, r2345, r2345, arr(m, IR_F32, 2, D(3, 1)), ab(IR_AB_PDPD, 1));
  expect_map(in, 1, 2, D(1, -1), "pdpd trailing 1 dropped");
  in = binary(c, r2345, r2345, arr(m, IR_F32, 2, D(4, 5)), ab(IR_AB_PDPD, -1));
  expect_map(in, 1, 2, D(2, 3), "pdpd default axis");
  in = binary(c, arr(m, IR_F32, 3, D(2, 4, 5)), arr(m, IR_F32, 3, D(2, 1, 5)), arr(m, IR_F32, 2, D(4, 1)),
              ab(IR_AB_NUMPY, -1));
  expect_map(in, 1, 2, D(1, 2), "numpy right-aligned");
  in = binary(c, arr(m, IR_F32, 2, D(2, 3)), arr(m, IR_F32, 2, D(2, 1)), arr(m, IR_F32, 2, D(1, 3)), no_attrs());
  expect_map(in, 0, 2, D(0, 1), "degenerate identity");
  ir_instr *x = ir_instr_create(c, IR_OP_PARAMETER, ir_intern(m, "x", 1), arr(m, IR_F32, 2, D(3, 1)), NULL, 0);
  ir_instr *b = ir_instr_create(c, IR_OP_BROADCAST, ir_intern(m, "y", 1), arr(m, IR_F32, 3, D(2, 3, 6)), &x, 1);
  b->attrs.bc = ab(IR_AB_BIDIRECTIONAL, -1);
  expect_map(b, 0, 2, D(1, 2), "bidirectional right-aligned");
}

int main(void) {
  ir_module *m = ir_module_create();
  if (!m)
    return 1;
  xla_rules(m);
  openvino_rules(m);
  strict_and_combinations(m);
  dynamic_dims(m);
  big_rank(m);
  to_target(m);
  operand_maps(m);
  ir_module_destroy(m);
  if (failures)
    fprintf(stderr, "%d failures\n", failures);
  return failures != 0;
}
