/* buffer_plan_test.c — buffer_plan_build on parsed modules, without code generation: which
 * results take over a dying operand's buffer, which write the caller's buffer, aliasing
 * through tuples and a while loop's pass-through state, a copied loop leaf's temporary, array
 * constants read in place (no buffer, never taken over), the
 * exact offsets and frames of small cases worked out by hand; and on random modules, that no
 * two buffers whose lifetimes overlap share bytes and that the frame equals the brute-force
 * peak of simultaneously live bytes (computed here from the text's def-use, independently of
 * the pass) when all buffers have one size.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "passes/buffer_plan.h"
#include "passes/pass_test_util.h"

static int failures;

#define CHECK(what, cond)                                                                                              \
  do {                                                                                                                 \
    if (!(cond)) {                                                                                                     \
      fprintf(stderr, "%s: %s:%d: %s\n", what, __FILE__, __LINE__, #cond);                                             \
      failures++;                                                                                                      \
    }                                                                                                                  \
  } while (0)

/* The module of `text`, numbered, and its plan in *out; NULL (a failure counted) when either
 * fails. */
static ir_module *planned(const char *what, const char *text, buffer_plan **out) {
  *out = NULL;
  ir_module *m = pass_test_parse(what, text, &failures);
  if (!m)
    return NULL;
  ir_rebuild_uses(m);
  hlo_status st = buffer_plan_build(m, out);
  if (st) {
    fprintf(stderr, "%s: %s\n", what, hlo_status_message(st));
    hlo_status_free(st);
    failures++;
    ir_module_destroy(m);
    return NULL;
  }
  return m;
}

static const ir_instr *find(const ir_computation *c, const char *name) {
  for (int i = 0; i < c->n_instrs; i++)
    if (strcmp(c->instrs[i]->name.p, name) == 0)
      return c->instrs[i];
  fprintf(stderr, "no instruction %s\n", name);
  exit(2);
}

static const comp_plan *entry_plan(const buffer_plan *p, const ir_module *m) {
  for (int i = 0; i < m->n_comps; i++)
    if (m->comps[i] == m->entry)
      return &p->comps[i];
  return NULL;
}

/* Every pair of buffers whose lifetimes overlap occupies disjoint bytes, and all lie inside
 * the frame. */
static bool placement_valid(const comp_plan *cp) {
  for (int i = 0; i < cp->n_buffers; i++) {
    const plan_buffer *a = &cp->buffers[i];
    if (a->offset < 0 || a->offset % BUFFER_PLAN_ALIGN || a->offset + a->bytes > cp->frame_bytes)
      return false;
    for (int j = i + 1; j < cp->n_buffers; j++) {
      const plan_buffer *b = &cp->buffers[j];
      bool live_together = a->from <= b->to && b->from <= a->to;
      bool share = a->offset < b->offset + b->bytes && b->offset < a->offset + a->bytes;
      if (live_together && share)
        return false;
    }
  }
  return true;
}

#define F32_1K "f32[16,16]" /* 1024 bytes: a frame buffer */

/* a = exp(x); b = negate(a); c = add(b, x); d = transpose(c); ROOT r = negate(d): b and c take
 * over their dying operand's buffer, d cannot (a transpose reads other elements), r writes
 * the caller's buffer.  Frame: a's buffer (reused by b, c) and d's, both live at d: 2048. */
static void chain(void) {
  const char *text = "HloModule chain\n"
                     "ENTRY main {\n"
                     "  x = " F32_1K " parameter(0)\n"
                     "  a = " F32_1K " exponential(x)\n"
                     "  b = " F32_1K " negate(a)\n"
                     "  c = " F32_1K " add(b, x)\n"
                     "  d = " F32_1K " transpose(c), dimensions={1,0}\n"
                     "  ROOT r = " F32_1K " negate(d)\n"
                     "}\n";
  buffer_plan *p;
  ir_module *m = planned("chain", text, &p);
  if (!m)
    return;
  const comp_plan *cp = entry_plan(p, m);
  const ir_computation *c = m->entry;
  int a = find(c, "a")->id, b = find(c, "b")->id, cc = find(c, "c")->id, d = find(c, "d")->id, r = find(c, "r")->id;
  CHECK("chain", cp->planned);
  CHECK("chain", cp->reuse[a] == -1 && cp->reuse[b] == 0 && cp->reuse[cc] == 0 && cp->reuse[d] == -1);
  CHECK("chain", buffer_plan_leaf(cp, b, 0) == buffer_plan_leaf(cp, a, 0));
  CHECK("chain", buffer_plan_leaf(cp, cc, 0) == buffer_plan_leaf(cp, a, 0));
  CHECK("chain", buffer_plan_leaf(cp, d, 0) && buffer_plan_leaf(cp, d, 0) != buffer_plan_leaf(cp, a, 0));
  CHECK("chain", buffer_plan_leaf(cp, r, 0) == NULL && cp->result_leaf[r] == 0);
  CHECK("chain", buffer_plan_leaf(cp, a, 0)->from == a && buffer_plan_leaf(cp, a, 0)->to == d);
  CHECK("chain", cp->n_buffers == 2 && cp->frame_bytes == 2048 && cp->live_peak == 2048);
  CHECK("chain", placement_valid(cp));
  buffer_plan_free(p);
  ir_module_destroy(m);
}

/* An operand read again later is not taken over; two operands that are one buffer are not
 * either (the kernel would see it twice). */
static void no_reuse(void) {
  const char *text = "HloModule no_reuse\n"
                     "ENTRY main {\n"
                     "  x = " F32_1K " parameter(0)\n"
                     "  a = " F32_1K " exponential(x)\n"
                     "  b = " F32_1K " negate(a)\n"
                     "  s = " F32_1K " multiply(b, b)\n"
                     "  ROOT t = (" F32_1K ", " F32_1K ") tuple(s, a)\n"
                     "}\n";
  buffer_plan *p;
  ir_module *m = planned("no_reuse", text, &p);
  if (!m)
    return;
  const comp_plan *cp = entry_plan(p, m);
  const ir_computation *c = m->entry;
  int a = find(c, "a")->id, b = find(c, "b")->id, s = find(c, "s")->id;
  CHECK("no_reuse", cp->reuse[b] == -1); /* a is returned: it lives on */
  CHECK("no_reuse", cp->reuse[s] == -1); /* both operands are b */
  CHECK("no_reuse", cp->result_leaf[s] == 0 && cp->result_leaf[a] == 1);
  CHECK("no_reuse", buffer_plan_leaf(cp, a, 0) == NULL && buffer_plan_leaf(cp, s, 0) == NULL);
  CHECK("no_reuse", buffer_plan_leaf(cp, b, 0) && cp->frame_bytes == 1024);
  buffer_plan_free(p);
  ir_module_destroy(m);
}

/* A while loop carrying w = exp(p) (computed, so a frame buffer) unchanged and a counter and
 * an accumulator it updates: w's leaf is the init's buffer (no copy, no buffer of the loop's),
 * which therefore lives until the last reader of the loop's result; the accumulator is copied
 * (a buffer and a next-state temporary). */
static void while_pass_through(void) {
  const char *text = "HloModule loop\n"
                     "cond {\n"
                     "  s = (s32[], " F32_1K ", " F32_1K ") parameter(0)\n"
                     "  i = s32[] get-tuple-element(s), index=0\n"
                     "  n = s32[] constant(8)\n"
                     "  ROOT lt = pred[] compare(i, n), direction=LT\n"
                     "}\n"
                     "body {\n"
                     "  s = (s32[], " F32_1K ", " F32_1K ") parameter(0)\n"
                     "  i = s32[] get-tuple-element(s), index=0\n"
                     "  one = s32[] constant(1)\n"
                     "  j = s32[] add(i, one)\n"
                     "  w = " F32_1K " get-tuple-element(s), index=1\n"
                     "  acc = " F32_1K " get-tuple-element(s), index=2\n"
                     "  wt = " F32_1K " transpose(w), dimensions={1,0}\n"
                     "  acc2 = " F32_1K " add(acc, wt)\n"
                     "  ROOT t = (s32[], " F32_1K ", " F32_1K ") tuple(j, w, acc2)\n"
                     "}\n"
                     "ENTRY main {\n"
                     "  p = " F32_1K " parameter(0)\n"
                     "  w0 = " F32_1K " exponential(p)\n"
                     "  z = f32[] constant(0)\n"
                     "  acc0 = " F32_1K " broadcast(z), dimensions={}\n"
                     "  i0 = s32[] constant(0)\n"
                     "  init = (s32[], " F32_1K ", " F32_1K ") tuple(i0, w0, acc0)\n"
                     "  loop = (s32[], " F32_1K ", " F32_1K ") while(init), condition=cond, body=body\n"
                     "  wl = " F32_1K " get-tuple-element(loop), index=1\n"
                     "  al = " F32_1K " get-tuple-element(loop), index=2\n"
                     "  ROOT r = " F32_1K " add(wl, al)\n"
                     "}\n";
  buffer_plan *p;
  ir_module *m = planned("while", text, &p);
  if (!m)
    return;
  const comp_plan *cp = entry_plan(p, m);
  const ir_computation *c = m->entry;
  int w0 = find(c, "w0")->id, acc0 = find(c, "acc0")->id, loop = find(c, "loop")->id, r = find(c, "r")->id;
  const plan_buffer *bw = buffer_plan_leaf(cp, w0, 0);
  CHECK("while", bw && buffer_plan_leaf(cp, loop, 1) == bw);
  CHECK("while", bw && bw->to == r); /* read through the loop's result until r */
  const plan_buffer *bacc = buffer_plan_leaf(cp, loop, 2);
  CHECK("while", bacc && bacc != buffer_plan_leaf(cp, acc0, 0) && bacc->instr == loop);
  CHECK("while", buffer_plan_temp(cp, loop, 2) && buffer_plan_temp(cp, loop, 1) == NULL);
  CHECK("while", buffer_plan_leaf(cp, loop, 0) == NULL); /* an s32[] lives on the stack */
  /* Live at the loop: w0, acc0 (read by the init copy), the loop's accumulator, its temporary. */
  CHECK("while", cp->live_peak == 4096 && cp->frame_bytes == 4096);
  CHECK("while", placement_valid(cp));
  plan_state_leaf *kind = buffer_plan_while_state(find(c, "loop"), 3);
  CHECK("while", kind && kind[0] == PLAN_STATE_COPIED && kind[1] == PLAN_STATE_PASSED && kind[2] == PLAN_STATE_COPIED);
  free(kind);
  buffer_plan_free(p);
  ir_module_destroy(m);
}

/* ---- random modules: validity, and the frame against the brute-force live peak ----------- */

static unsigned next_random(unsigned *s) {
  *s = *s * 1103515245u + 12345u;
  return (*s >> 16) & 0x7fff;
}

/* A module of n instructions over f32[16,16] values that never take over an operand's buffer
 * (transpose, reverse, dot), each reading one or two earlier values, with a root tuple of two
 * of them.  Writes into live[] the brute-force peak of live buffer bytes: a value that is not
 * a root operand has a 1024-byte buffer from its definition to its last reader. */
static char *random_module(unsigned seed, int n, int64_t *peak) {
  size_t cap = 256 + (size_t)n * 160;
  char *t = malloc(cap);
  int *last = calloc((size_t)n + 2, sizeof *last);
  int len = snprintf(t, cap, "HloModule r%u\nENTRY main {\n  v0 = " F32_1K " parameter(0)\n", seed);
  for (int i = 1; i <= n; i++) {
    int a = (int)(next_random(&seed) % (unsigned)i), b = (int)(next_random(&seed) % (unsigned)i);
    switch (next_random(&seed) % 3) {
    case 0:
      len += snprintf(t + len, cap - (size_t)len, "  v%d = " F32_1K " transpose(v%d), dimensions={1,0}\n", i, a);
      b = a;
      break;
    case 1:
      len += snprintf(t + len, cap - (size_t)len, "  v%d = " F32_1K " reverse(v%d), dimensions={0}\n", i, a);
      b = a;
      break;
    default:
      len += snprintf(t + len, cap - (size_t)len,
                      "  v%d = " F32_1K " dot(v%d, v%d), lhs_contracting_dims={1}, rhs_contracting_dims={0}\n", i, a, b);
    }
    last[a] = last[a] > i ? last[a] : i;
    last[b] = last[b] > i ? last[b] : i;
  }
  int r1 = n, r2 = n / 2 + 1;
  snprintf(t + len, cap - (size_t)len, "  ROOT t = (" F32_1K ", " F32_1K ") tuple(v%d, v%d)\n}\n", r1, r2);
  /* Positions: v_i is instruction i; the root tuple is n + 1. */
  *peak = 0;
  for (int pos = 1; pos <= n + 1; pos++) {
    int64_t live = 0;
    for (int i = 1; i <= n; i++) {
      if (i == r1 || i == r2)
        continue;
      int end = last[i] > i ? last[i] : i;
      if (i <= pos && pos <= end)
        live += 1024;
    }
    *peak = live > *peak ? live : *peak;
  }
  free(last);
  return t;
}

static void random_modules(void) {
  for (unsigned seed = 1; seed <= 200; seed++) {
    int n = 3 + (int)(seed % 20);
    int64_t peak = 0;
    char *text = random_module(seed, n, &peak);
    char what[32];
    snprintf(what, sizeof what, "random %u", seed);
    buffer_plan *p;
    ir_module *m = planned(what, text, &p);
    if (m) {
      const comp_plan *cp = entry_plan(p, m);
      CHECK(what, placement_valid(cp));
      CHECK(what, cp->live_peak == peak);
      CHECK(what, cp->frame_bytes == peak); /* equal sizes: best fit reaches the lower bound */
      if (cp->frame_bytes != peak)
        fprintf(stderr, "%s: frame %lld, peak %lld\n%s", what, (long long)cp->frame_bytes, (long long)peak, text);
    }
    buffer_plan_free(p);
    ir_module_destroy(m);
    free(text);
  }
}

/* Array constants are read where their literal lies: c, read by a (which could take over a
 * dying operand's buffer), has none and a gets one of its own; e, returned by the root,
 * writes the caller's buffer as any root leaf does. */
static void constants(void) {
  char lit[16 * 16 * 4 + 64], *at = lit; /* {{0,1,...},{...}}: 16 rows of 16 */
  for (int i = 0; i < 256; i++)
    at += sprintf(at, "%s%d%s", i % 16 ? "," : i ? "},{" : "{", i % 7, i == 255 ? "}" : "");
  char text[4096];
  snprintf(text, sizeof text,
           "HloModule constants\n"
           "ENTRY main {\n"
           "  x = " F32_1K " parameter(0)\n"
           "  c = " F32_1K " constant({%s})\n"
           "  a = " F32_1K " add(c, x)\n"
           "  b = " F32_1K " negate(a)\n"
           "  e = " F32_1K " constant({%s})\n"
           "  ROOT t = (" F32_1K ", " F32_1K ") tuple(b, e)\n"
           "}\n",
           lit, lit);
  buffer_plan *p;
  ir_module *m = planned("constants", text, &p);
  if (!m)
    return;
  const comp_plan *cp = entry_plan(p, m);
  const ir_computation *c = m->entry;
  const ir_instr *ci = find(c, "c"), *ei = find(c, "e");
  int a = find(c, "a")->id;
  CHECK("constants", buffer_plan_constant_by_reference(cp, ci) && buffer_plan_leaf(cp, ci->id, 0) == NULL);
  CHECK("constants", cp->reuse[a] == -1 && buffer_plan_leaf(cp, a, 0) != NULL);
  CHECK("constants", !buffer_plan_constant_by_reference(cp, ei) && cp->result_leaf[ei->id] == 1);
  CHECK("constants", !buffer_plan_constant_by_reference(cp, find(c, "x")));
  CHECK("constants", cp->n_buffers == 1 && cp->frame_bytes == 1024 && placement_valid(cp));
  buffer_plan_free(p);
  ir_module_destroy(m);
}

int main(void) {
  chain();
  no_reuse();
  while_pass_through();
  constants();
  random_modules();
  if (failures)
    fprintf(stderr, "%d failures\n", failures);
  return failures != 0;
}
