/* fusion_siblings.c — multi-output fusion of siblings (fusion.c's groups of one computation).
 * Pre: the groups are decided, use lists current, ids are positions.  Out: which groups merge
 * into one fusion (sets with a representative), and, once fusion.c has built them, the
 * computation re-sorted so that the users of a multi-output fusion's earlier outputs follow it.
 * Tests: testdata/golden/fusion_mof_* (make_fusion.py), cli.hloc.fusion.
 */
#include <stdlib.h>
#include <string.h>

#include "passes/fusion_siblings.h"

enum {
  FUSION_MAX_OUTPUTS = 8,         /* outputs of one multi-output fusion */
  FUSION_SIBLING_CHECKS = 256,    /* reachability searches per computation */
  FUSION_KEY_STRIDE = 64,         /* sort keys: an original position times this */
};

static hlo_status oom(void) { return hlo_status_make(HLO_RESOURCE_EXHAUSTED, "fusion: out of memory"); }

/* Groups that read the same operand from outside (siblings), each at its elements' own index,
 * are merged into one fusion with several outputs when one loop can compute them all: kLoop
 * groups whose roots have the same dimensions (one loop writes each output), reductions of inputs with the same dimensions over
 * the same dimensions (one pass over the input accumulates each), and a kLoop group whose root
 * has such an input's dimensions with them (written during that pass).  Row fusions and kOutput
 * groups are left alone.  A merge must not make a cycle: neither set of groups may reach the
 * other through the instructions between them (XLA's multi-output fusion rule). */

int fusion_siblings_find(fusion_siblings *s, int g) {
  while (s->parent[g] != g) {
    s->parent[g] = s->parent[s->parent[g]];
    g = s->parent[g];
  }
  return g;
}

/* What one loop over group g's iteration space can merge it with (FUSION_SIB_NONE: nothing). */
static void sib_classify(fusion_siblings *s) {
  for (int g = 0; g < s->n_groups; g++) {
    const ir_instr *root = s->c->instrs[s->roots[g]];
    bool red = root->op == IR_OP_REDUCE;
    s->kind[g] = red && root->n_operands != 2 ? FUSION_SIB_NONE /* variadic: its own kernel */
                 : red                        ? FUSION_SIB_REDUCE
                                              : FUSION_SIB_LOOP;
    s->space[g] = red ? root->operands[0]->shape : root->shape;
    for (int k = 0; red && k < root->attrs.dimensions.n; k++)
      s->reduced[g] |= 1ull << root->attrs.dimensions.v[k];
    if (s->space[g]->rank > 64)
      s->kind[g] = FUSION_SIB_NONE;
  }
  for (int i = 0; i < s->c->n_instrs; i++) {
    const ir_instr *x = s->c->instrs[i];
    bool other = x->op == IR_OP_DOT || x->op == IR_OP_CONVOLUTION;
    for (int k = 0; k < s->mem[i].n; k++)
      if (other || (x->op == IR_OP_REDUCE && s->roots[s->mem[i].groups[k]] != i))
        s->kind[s->mem[i].groups[k]] = FUSION_SIB_NONE; /* kOutput or row fusion */
  }
}

static bool sib_compatible(const fusion_siblings *s, int a, int b) {
  if (s->kind[a] == FUSION_SIB_NONE || s->kind[b] == FUSION_SIB_NONE ||
      s->n_outs[a] + s->n_outs[b] > FUSION_MAX_OUTPUTS || !ir_shape_same_dims(s->space[a], s->space[b]))
    return false;
  if (s->kind[a] == FUSION_SIB_REDUCE && s->kind[b] == FUSION_SIB_REDUCE)
    return s->reduced[a] == s->reduced[b];
  /* A loop joins a reduction's pass over the input only when that pass runs over rows (the
   * minor dimension reduced), which splits over threads as the loop would; a column pass
   * splits only by blocks of the kept minor dimension. */
  int r = s->kind[a] == FUSION_SIB_REDUCE ? a : s->kind[b] == FUSION_SIB_REDUCE ? b : -1;
  return r < 0 || (s->reduced[r] >> (s->space[r]->rank - 1) & 1);
}

/* Pushes the outputs of set r (its groups' roots) once per search. */
static void sib_push_set(fusion_siblings *s, int r, int *sp) {
  if (s->seen[r] == s->stamp)
    return;
  s->seen[r] = s->stamp;
  for (int g = r; g >= 0; g = s->next[g]) {
    ir_instr *root = s->c->instrs[s->roots[g]];
    if (s->visited[root->id] != s->stamp) {
      s->visited[root->id] = s->stamp;
      s->stack[(*sp)++] = root;
    }
  }
}

/* Whether set b depends on set a's outputs: a search from a's roots along users, where reaching
 * a member of a set continues from that set's outputs (its fusion's results). */
static bool sib_reaches(fusion_siblings *s, int a, int b) {
  s->stamp++;
  int sp = 0;
  sib_push_set(s, a, &sp);
  while (sp) {
    ir_instr *v = s->stack[--sp];
    for (int u = 0; u < v->n_users; u++) {
      ir_instr *y = v->users[u];
      const fusion_membership *my = &s->mem[y->id];
      for (int k = 0; k < my->n; k++) {
        int r = fusion_siblings_find(s, my->groups[k]);
        if (r == b)
          return true;
        if (r != a)
          sib_push_set(s, r, &sp);
      }
      if (my->n == 0 && s->visited[y->id] != s->stamp) {
        s->visited[y->id] = s->stamp;
        s->stack[sp++] = y;
      }
    }
  }
  return false;
}

static void sib_union(fusion_siblings *s, int a, int b) {
  int r = a < b ? a : b, o = a < b ? b : a; /* groups are numbered from the end: r's root is last */
  if (s->kind[o] == FUSION_SIB_REDUCE) {
    s->kind[r] = FUSION_SIB_REDUCE;
    s->reduced[r] = s->reduced[o];
  }
  s->n_outs[r] += s->n_outs[o];
  s->parent[o] = r;
  /* Keep the list in group order: r's list and o's interleave by number. */
  int head = -1, *at = &head, x = r, y = o;
  while (x >= 0 || y >= 0) {
    int *pick = y < 0 || (x >= 0 && x < y) ? &x : &y;
    *at = *pick;
    at = &s->next[*pick];
    *pick = s->next[*pick];
  }
  *at = -1;
}

/* An operand worth sharing: an array of more than one element that is not a constant. */
static bool sib_shared(const ir_instr *x) {
  int64_t n = 0;
  return x->op != IR_OP_CONSTANT && x->shape->et != IR_TUPLE && ir_etype_is_array(x->shape->et) && !x->shape->dyn &&
         ir_shape_num_elements(x->shape, &n) && n > 1;
}

/* Whether user u reads each element of x at the index of x's own loop: an elementwise op of x's
 * dimensions, or a reduce of x.  Siblings that read x only elsewhere (slices at different
 * offsets, XLA's non-overlapping parameter slices) share no element: nothing to gain. */
static bool reads_at_own_index(const ir_instr *u, const ir_instr *x) {
  if (u->op == IR_OP_REDUCE)
    return u->operands[0] == x;
  return (ir_opcode_table[u->op].flags & OPF_ELEMENTWISE) && ir_shape_same_dims(u->shape, x->shape);
}

/* Tries to merge the groups that read x from outside, at the elements' own index, pairwise:
 * one pass then reads each element of x once for all of them. */
static void sib_merge_readers(fusion_siblings *s, const ir_instr *x, int *readers) {
  int n = 0;
  for (int u = 0; u < x->n_users; u++) {
    if (!reads_at_own_index(x->users[u], x))
      continue;
    const fusion_membership *mu = &s->mem[x->users[u]->id];
    for (int k = 0; k < mu->n; k++) {
      int g = mu->groups[k];
      bool dup = fusion_membership_has(&s->mem[x->id], g);
      for (int j = 0; j < n && !dup; j++)
        dup = readers[j] == g;
      if (!dup)
        readers[n++] = g;
    }
  }
  for (int i = 0; i < n; i++)
    for (int j = i + 1; j < n; j++) {
      int a = fusion_siblings_find(s, readers[i]), b = fusion_siblings_find(s, readers[j]);
      if (a == b || !sib_compatible(s, a, b) || !ir_shape_same_dims(x->shape, s->space[a]) || s->budget <= 0)
        continue;
      s->budget -= 2;
      if (!sib_reaches(s, a, b) && !sib_reaches(s, b, a))
        sib_union(s, a, b);
    }
}

void fusion_siblings_free(fusion_siblings *s) {
  free(s->parent);
  free(s->next);
  free(s->kind);
  free(s->space);
  free(s->reduced);
  free(s->n_outs);
  free(s->seen);
  free(s->visited);
  free(s->stack);
}

/* Decides the merges; s->parent (by group) says which set each group belongs to. */
hlo_status fusion_siblings_merge(fusion_siblings *s, const ir_computation *c, const fusion_membership *mem,
                                 const int *roots, int n_groups) {
  s->c = c;
  s->mem = mem;
  s->roots = roots;
  s->parent = malloc(((size_t)n_groups + 1) * sizeof *s->parent);
  if (!s->parent)
    return oom();
  for (int g = 0; g < n_groups; g++)
    s->parent[g] = g;
  int n = s->c->n_instrs;
  size_t ng = (size_t)n_groups + 1;
  s->n_groups = n_groups;
  s->budget = FUSION_SIBLING_CHECKS;
  s->next = malloc(ng * sizeof *s->next);
  s->kind = calloc(ng, sizeof *s->kind);
  s->space = calloc(ng, sizeof *s->space);
  s->reduced = calloc(ng, sizeof *s->reduced);
  s->n_outs = malloc(ng * sizeof *s->n_outs);
  s->seen = calloc(ng, sizeof *s->seen);
  s->visited = calloc((size_t)n + 1, sizeof *s->visited);
  s->stack = malloc(((size_t)n + 1) * sizeof *s->stack);
  int *readers = malloc(ng * sizeof *readers);
  if (!s->next || !s->kind || !s->space || !s->reduced || !s->n_outs || !s->seen || !s->visited ||
      !s->stack || !readers) {
    free(readers);
    return oom();
  }
  for (int g = 0; g < n_groups; g++) {
    s->next[g] = -1;
    s->n_outs[g] = 1;
  }
  bool control = false;
  for (int i = 0; i < n; i++)
    control |= s->c->instrs[i]->common.n_control_predecessors > 0;
  sib_classify(s);
  for (int i = 0; i < n && !control; i++)
    if (sib_shared(s->c->instrs[i]))
      sib_merge_readers(s, s->c->instrs[i], readers);
  free(readers);
  return NULL;
}

/* ---- ordering after multi-output fusion --------------------------------------------------------- */

/* A binary min-heap of positions by key. */
static void heap_push(int *h, int *n, const int64_t *key, int v) {
  int i = (*n)++;
  for (; i > 0 && key[h[(i - 1) / 2]] > key[v]; i = (i - 1) / 2)
    h[i] = h[(i - 1) / 2];
  h[i] = v;
}

static int heap_pop(int *h, int *n, const int64_t *key) {
  int top = h[0], v = h[--*n], i = 0;
  for (;;) {
    int c = 2 * i + 1;
    if (c >= *n)
      break;
    if (c + 1 < *n && key[h[c + 1]] < key[h[c]])
      c++;
    if (key[h[c]] >= key[v])
      break;
    h[i] = h[c];
    i = c;
  }
  if (*n)
    h[i] = v;
  return top;
}

/* Puts c's instructions in an order where each follows its operands and control predecessors,
 * keeping their order otherwise: a multi-output fusion sits at its last output's place, so the
 * users of its earlier outputs (now of get-tuple-elements appended at the end) move after it.
 * The first n_orig positions keep their order; an appended get-tuple-element follows its
 * fusion. */
hlo_status fusion_siblings_sort(ir_computation *c, int n_orig) {
  int n = c->n_instrs;
  for (int i = 0; i < n; i++)
    c->instrs[i]->id = i;
  int64_t *key = malloc(((size_t)n + 1) * sizeof *key);
  int *indeg = calloc((size_t)n + 1, sizeof *indeg), *start = calloc((size_t)n + 2, sizeof *start);
  int *edges = NULL, *heap = malloc(((size_t)n + 1) * sizeof *heap);
  ir_instr **order = malloc(((size_t)n + 1) * sizeof *order);
  hlo_status st = key && indeg && start && heap && order ? NULL : oom();
  for (int i = 0; i < n && !st; i++) {
    ir_instr *x = c->instrs[i];
    key[i] = i < n_orig ? (int64_t)i * FUSION_KEY_STRIDE
                        : (int64_t)x->operands[0]->id * FUSION_KEY_STRIDE + 1 + x->attrs.u.tuple_index;
    indeg[i] = x->n_operands + x->common.n_control_predecessors;
    for (int k = 0; k < x->n_operands; k++)
      start[x->operands[k]->id + 1]++;
    for (int k = 0; k < x->common.n_control_predecessors; k++)
      start[x->common.control_predecessors[k]->id + 1]++;
  }
  for (int i = 0; i < n && !st; i++)
    start[i + 1] += start[i];
  edges = st ? NULL : malloc(((size_t)start[n] + 1) * sizeof *edges);
  int *fill = st || !edges ? NULL : calloc((size_t)n + 1, sizeof *fill);
  if (!st && !fill)
    st = oom();
  for (int i = 0; i < n && !st; i++) {
    ir_instr *x = c->instrs[i];
    for (int k = 0; k < x->n_operands; k++)
      edges[start[x->operands[k]->id] + fill[x->operands[k]->id]++] = i;
    for (int k = 0; k < x->common.n_control_predecessors; k++) {
      int p = x->common.control_predecessors[k]->id;
      edges[start[p] + fill[p]++] = i;
    }
  }
  int hn = 0, done = 0;
  for (int i = 0; i < n && !st; i++)
    if (!indeg[i])
      heap_push(heap, &hn, key, i);
  while (hn && !st) {
    int v = heap_pop(heap, &hn, key);
    order[done++] = c->instrs[v];
    for (int e = start[v]; e < start[v + 1]; e++)
      if (--indeg[edges[e]] == 0)
        heap_push(heap, &hn, key, edges[e]);
  }
  if (!st && done != n)
    st = hlo_status_make(HLO_INTERNAL, "fusion: internal error: a multi-output fusion made a cycle in '%s'", c->name.p);
  if (!st) {
    memcpy(c->instrs, order, (size_t)n * sizeof *order);
    for (int i = 0; i < n; i++)
      c->instrs[i]->id = i;
  }
  free(key);
  free(indeg);
  free(start);
  free(edges);
  free(fill);
  free(heap);
  free(order);
  return st;
}

