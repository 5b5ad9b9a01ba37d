/* buffer_plan.c — buffer assignment on the IR (buffer_plan.h): which values get frame buffers,
 * which alias, how long each buffer lives, and where in the frame it sits.
 *
 * Each computation is walked once in execution order.  Every instruction's value holds a set of
 * buffers: its result leaves' own buffers, the buffers it aliases (tuple, get-tuple-element,
 * forwarding ops, a while loop's pass-through state, an operand taken over in place), and for
 * ops whose lowering may keep operand buffers inside its value (async chains, feeds, channels,
 * custom calls, collectives) every buffer its operands hold.  A buffer lives until the last
 * reader of any value holding it, so a buffer dies at position i exactly when its lifetime,
 * extended by every holder so far, ends at i: the test for taking it over in place.
 */
#include "passes/buffer_plan.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "ir/alias_text.h"

/* Past this many buffers in one computation the largest-first placement (quadratic) is
 * skipped and the execution-order placement stays. */
enum { PLACE_BY_SIZE_MAX = 8192 };

typedef struct int_list {
  int *v;
  int n, cap;
} int_list;

static bool list_push(int_list *l, int x) {
  for (int i = 0; i < l->n; i++)
    if (l->v[i] == x)
      return true;
  if (l->n == l->cap) {
    int cap = l->cap ? 2 * l->cap : 8;
    int *p = realloc(l->v, (size_t)cap * sizeof *p);
    if (!p)
      return false;
    l->v = p;
    l->cap = cap;
  }
  l->v[l->n++] = x;
  return true;
}

/* The walk over one computation. */
typedef struct walk {
  const ir_computation *c;
  comp_plan *cp;
  int *last;       /* by id: the position of its last reader (the root: n_instrs) */
  int_list *extra; /* by id: buffers held beyond its result leaves' own */
  int cap_buffers;
  bool oom;
} walk;

static int64_t aligned(int64_t bytes) { return (bytes + BUFFER_PLAN_ALIGN - 1) / BUFFER_PLAN_ALIGN * BUFFER_PLAN_ALIGN; }

/* ---- shared rules ---------------------------------------------------------------------- */

void buffer_plan_result_writers(const ir_computation *c, int *result_leaf) {
  for (int i = 0; i < c->n_instrs; i++)
    result_leaf[i] = -1;
  const ir_instr *root = c->root;
  if (!root)
    return;
  if (root->shape->et != IR_TUPLE) {
    if (root->op != IR_OP_PARAMETER && ir_etype_is_array(root->shape->et))
      result_leaf[root->id] = 0;
    return;
  }
  if (root->op != IR_OP_TUPLE)
    return;
  for (int k = 0, leaf = 0; k < root->n_operands; k++) {
    const ir_instr *op = root->operands[k];
    if (op->shape->et != IR_TUPLE && ir_etype_is_array(op->shape->et) && op->op != IR_OP_PARAMETER &&
        result_leaf[op->id] < 0)
      result_leaf[op->id] = leaf;
    leaf += ir_shape_count_leaves(op->shape);
  }
}

/* How many operands of c's instructions are x. */
static int uses_in(const ir_computation *c, const ir_instr *x) {
  int n = 0;
  for (int i = 0; i < c->n_instrs; i++)
    for (int k = 0; k < c->instrs[i]->n_operands; k++)
      n += c->instrs[i]->operands[k] == x;
  return n;
}

/* Whether element k of the body's root only ever reads state leaf k as the operand of a
 * dynamic-update-slice that nothing else reads: get-tuple-element k of the parameter (the
 * only one, read once) updated and returned.  Then the update can be made in place. */
static bool updates_in_place(const ir_computation *body, const ir_instr *e, int k) {
  if (e->op != IR_OP_DYNAMIC_UPDATE_SLICE || uses_in(body, e) != 1)
    return false;
  const ir_instr *g = e->operands[0];
  if (g->op != IR_OP_GET_TUPLE_ELEMENT || g->operands[0] != body->params[0] || g->attrs.u.tuple_index != k ||
      uses_in(body, g) != 1)
    return false;
  for (int i = 0; i < body->n_instrs; i++) {
    const ir_instr *x = body->instrs[i];
    for (int o = 0; o < x->n_operands; o++)
      if (x != g && x->operands[o] == body->params[0] &&
          (x->op != IR_OP_GET_TUPLE_ELEMENT || x->attrs.u.tuple_index == k))
        return false; /* another reader of the whole state or of leaf k */
  }
  return true;
}

/* A leaf that the body passes through unchanged (element k of its root tuple is
 * get-tuple-element k of its parameter) is read-only in the body and the condition, so the
 * loop uses the init operand's buffer for it: an entry parameter (a generate loop's weights)
 * or a temporary whose lifetime then extends to the loop's last reader, never copied (XLA
 * keeps such loop-invariant elements in place too).  A leaf the body updates with a
 * dynamic-update-slice that is its only reader keeps one buffer of the loop's own. */
plan_state_leaf *buffer_plan_while_state(const ir_instr *in, int n_leaves) {
  const ir_computation *body = in->called[1];
  const ir_instr *root = body->root;
  plan_state_leaf *kind = calloc((size_t)n_leaves + 1, sizeof *kind);
  if (!kind || body->n_params != 1 || root->op != IR_OP_TUPLE || root->n_operands != n_leaves ||
      in->shape->et != IR_TUPLE || in->shape->n_elems != n_leaves)
    return kind;
  for (int k = 0; k < n_leaves; k++)
    if (in->shape->elems[k]->et == IR_TUPLE)
      return kind; /* nested tuples: every leaf copied */
  for (int k = 0; k < n_leaves; k++) {
    const ir_instr *e = root->operands[k];
    if (e->op == IR_OP_GET_TUPLE_ELEMENT && e->operands[0] == body->params[0] && e->attrs.u.tuple_index == k)
      kind[k] = PLAN_STATE_PASSED;
    else if (updates_in_place(body, e, k))
      kind[k] = PLAN_STATE_IN_PLACE;
  }
  return kind;
}

/* Whether writing result leaf r at position `at` would overwrite a donated parameter that a
 * value read at or after `at` holds. */
static bool donor_still_read(const comp_plan *cp, int r, int at) {
  if (!cp->result_donor || r < 0 || cp->result_donor[r] < 0)
    return false;
  for (int b = 0; b < cp->n_buffers; b++)
    if (cp->buffers[b].param_leaf == cp->result_donor[r] && cp->buffers[b].to >= at)
      return true;
  return false;
}

/* A result writer whose result leaf shares a donated parameter's buffer writes it directly
 * only when no value holding that parameter is read at or after it; else it writes a frame
 * buffer, copied out at the end.  (A get-tuple-element of a fusion or another tuple-writing
 * kernel is decided with it, since it does the writing: fusion_leaves_to_caller.) */
static void check_donated_write(comp_plan *cp, const ir_instr *x) {
  if (x->op != IR_OP_GET_TUPLE_ELEMENT && donor_still_read(cp, cp->result_leaf[x->id], x->id))
    cp->result_leaf[x->id] = -1;
}

/* ---- lookups --------------------------------------------------------------------------- */

const plan_buffer *buffer_plan_leaf(const comp_plan *cp, int id, int leaf) {
  if (!cp || !cp->planned || id < 0 || id >= cp->n_instrs || leaf < 0 || leaf >= cp->first_leaf[id + 1] - cp->first_leaf[id])
    return NULL;
  int b = cp->leaf_buffer[cp->first_leaf[id] + leaf];
  return b >= 0 ? &cp->buffers[b] : NULL;
}

const plan_buffer *buffer_plan_temp(const comp_plan *cp, int id, int k) {
  if (!cp || !cp->planned || id < 0 || id >= cp->n_instrs || k < 0 || k >= cp->first_temp[id + 1] - cp->first_temp[id])
    return NULL;
  int b = cp->temp_buffer[cp->first_temp[id] + k];
  return b >= 0 ? &cp->buffers[b] : NULL;
}

/* ---- the walk ---------------------------------------------------------------------------- */

static int *leaves_of(const walk *w, const ir_instr *x);
static int n_leaves_of(const walk *w, const ir_instr *x);

/* A new frame buffer for leaf `leaf` (or temporary -1 - leaf) of instruction id of shape s, or
 * -1 when s needs none (a token, a tuple, a stack-sized array). */
static int new_buffer(walk *w, int id, int leaf, const ir_shape *s) {
  int64_t bytes = 0;
  if (s->et == IR_TUPLE || !ir_etype_is_array(s->et) || !ir_shape_byte_size(s, &bytes) || bytes <= BUFFER_PLAN_STACK_MAX)
    return -1;
  comp_plan *cp = w->cp;
  if (cp->n_buffers == w->cap_buffers) {
    int cap = w->cap_buffers ? 2 * w->cap_buffers : 32;
    plan_buffer *p = realloc(cp->buffers, (size_t)cap * sizeof *p);
    if (!p) {
      w->oom = true;
      return -1;
    }
    cp->buffers = p;
    w->cap_buffers = cap;
  }
  cp->buffers[cp->n_buffers] = (plan_buffer){id, leaf, bytes, -1, id, id, -1};
  return cp->n_buffers++;
}

/* A 0-byte stand-in for the caller's parameter leaf `param_leaf` (leaf `leaf` of parameter
 * instruction id), whose lifetime the walk then tracks like any buffer's. */
static int param_buffer(walk *w, int id, int leaf, int param_leaf) {
  int b = new_buffer(w, id, leaf, &(ir_shape){.et = IR_U8, .rank = 1, .dims = (int64_t[]){BUFFER_PLAN_STACK_MAX + 1}});
  if (b >= 0) {
    w->cp->buffers[b].bytes = 0;
    w->cp->buffers[b].param_leaf = param_leaf;
  }
  return b;
}

/* Entry parameters whose buffers a result may share get stand-ins (their lifetimes decide
 * whether that result may be written before the end). */
static void plan_parameter(walk *w, const ir_instr *x) {
  const comp_plan *cp = w->cp;
  if (!cp->result_donor || x->parent != w->c)
    return;
  int base = 0;
  for (int p = 0; p < w->c->n_params && w->c->params[p] != x; p++)
    base += ir_shape_count_leaves(w->c->params[p]->shape);
  int n = n_leaves_of(w, x), nr = ir_shape_count_leaves(w->c->root->shape);
  for (int i = 0; i < n; i++)
    for (int r = 0; r < nr; r++)
      if (cp->result_donor[r] == base + i) {
        leaves_of(w, x)[i] = param_buffer(w, x->id, i, base + i);
        break;
      }
}

static void collect_leaf_shapes(const ir_shape *s, const ir_shape **out, int *n) {
  if (s->et == IR_TUPLE) {
    for (int i = 0; i < s->n_elems; i++)
      collect_leaf_shapes(s->elems[i], out, n);
    return;
  }
  out[(*n)++] = s;
}

static int *leaves_of(const walk *w, const ir_instr *x) { return &w->cp->leaf_buffer[w->cp->first_leaf[x->id]]; }
static int n_leaves_of(const walk *w, const ir_instr *x) {
  return w->cp->first_leaf[x->id + 1] - w->cp->first_leaf[x->id];
}

/* x's leaves are operand `from`'s leaves [start, start + n); x also holds what it holds. */
static void alias_leaves(walk *w, const ir_instr *x, const ir_instr *from, int start) {
  int n = n_leaves_of(w, x);
  if (start + n <= n_leaves_of(w, from))
    memcpy(leaves_of(w, x), leaves_of(w, from) + start, (size_t)n * sizeof(int));
  for (int i = 0; i < w->extra[from->id].n; i++)
    w->oom |= !list_push(&w->extra[x->id], w->extra[from->id].v[i]);
}

/* Every buffer operand `o` holds becomes an extra holding of x. */
static void hold_all_of(walk *w, const ir_instr *x, const ir_instr *o) {
  const int *lb = leaves_of(w, o);
  for (int i = 0; i < n_leaves_of(w, o); i++)
    if (lb[i] >= 0)
      w->oom |= !list_push(&w->extra[x->id], lb[i]);
  for (int i = 0; i < w->extra[o->id].n; i++)
    w->oom |= !list_push(&w->extra[x->id], w->extra[o->id].v[i]);
}

static void plan_tuple(walk *w, const ir_instr *x) {
  int at = 0;
  for (int k = 0; k < x->n_operands; k++) {
    const ir_instr *o = x->operands[k];
    int n = n_leaves_of(w, o);
    memcpy(leaves_of(w, x) + at, leaves_of(w, o), (size_t)n * sizeof(int));
    at += n;
    for (int i = 0; i < w->extra[o->id].n; i++)
      w->oom |= !list_push(&w->extra[x->id], w->extra[o->id].v[i]);
  }
}

static void plan_get_tuple_element(walk *w, const ir_instr *x) {
  const ir_shape *ts = x->operands[0]->shape;
  int start = 0;
  for (int64_t i = 0; i < x->attrs.u.tuple_index && i < ts->n_elems; i++)
    start += ir_shape_count_leaves(ts->elems[i]);
  alias_leaves(w, x, x->operands[0], start);
}

/* Frame buffers for each result leaf of x that does not go to the caller. */
static void plan_fresh_leaves(walk *w, const ir_instr *x, const bool *to_caller) {
  int n = n_leaves_of(w, x);
  const ir_shape **shapes = calloc((size_t)n + 1, sizeof *shapes);
  if (!shapes) {
    w->oom = true;
    return;
  }
  int k = 0;
  collect_leaf_shapes(x->shape, shapes, &k);
  for (int i = 0; i < n; i++)
    leaves_of(w, x)[i] = to_caller && to_caller[i] ? -1 : new_buffer(w, x->id, i, shapes[i]);
  free(shapes);
}

static void plan_while(walk *w, const ir_instr *x) {
  int n = n_leaves_of(w, x);
  const ir_instr *init = x->operands[0];
  plan_state_leaf *kind = buffer_plan_while_state(x, n);
  const ir_shape **shapes = calloc((size_t)n + 1, sizeof *shapes);
  if (!kind || !shapes || n_leaves_of(w, init) != n) {
    w->oom |= !kind || !shapes;
    free(kind);
    free(shapes);
    if (!w->oom)
      plan_fresh_leaves(w, x, NULL);
    return;
  }
  int k = 0;
  collect_leaf_shapes(x->shape, shapes, &k);
  int t = w->cp->first_temp[x->id];
  for (int i = 0; i < n; i++) {
    if (kind[i] == PLAN_STATE_PASSED) {
      leaves_of(w, x)[i] = leaves_of(w, init)[i];
      continue;
    }
    leaves_of(w, x)[i] = new_buffer(w, x->id, i, shapes[i]);
    if (kind[i] == PLAN_STATE_COPIED)
      w->cp->temp_buffer[t + i] = new_buffer(w, x->id, -1 - i, shapes[i]);
  }
  for (int i = 0; i < w->extra[init->id].n; i++)
    w->oom |= !list_push(&w->extra[x->id], w->extra[init->id].v[i]);
  free(kind);
  free(shapes);
}

bool buffer_plan_tuple_writes_results(const ir_instr *in) {
  if (in->shape->et != IR_TUPLE || ir_shape_count_leaves(in->shape) != in->shape->n_elems)
    return false;
  switch (in->op) {
  case IR_OP_FUSION: case IR_OP_SORT: case IR_OP_REDUCE: case IR_OP_REDUCE_WINDOW: case IR_OP_SCATTER:
  case IR_OP_BATCH_NORM_TRAINING: case IR_OP_BATCH_NORM_GRAD: case IR_OP_TOPK: case IR_OP_RNG_BIT_GENERATOR:
    return true;
  default: return false;
  }
}

/* The leaves of a tuple-valued instruction (buffer_plan_tuple_writes_results) that the root
 * returns through a get-tuple-element which writes the caller's result: the kernel writes
 * those there. */
static bool *fusion_leaves_to_caller(const walk *w, const ir_instr *x) {
  if (!buffer_plan_tuple_writes_results(x))
    return NULL;
  bool *to = calloc((size_t)x->shape->n_elems + 1, sizeof *to);
  for (int i = 0; to && i < w->c->n_instrs; i++) {
    const ir_instr *g = w->c->instrs[i];
    if (g->op == IR_OP_GET_TUPLE_ELEMENT && g->operands[0] == x && w->cp->result_leaf[g->id] >= 0 &&
        g->attrs.u.tuple_index < x->shape->n_elems) {
      if (donor_still_read(w->cp, w->cp->result_leaf[g->id], x->id))
        w->cp->result_leaf[g->id] = -1; /* the fusion would overwrite a parameter still read */
      else
        to[g->attrs.u.tuple_index] = true;
    }
  }
  return to;
}

/* A dynamic-update-slice, or a scatter of one operand: its kernel starts from a copy of operand
 * 0 (none when it is the result's own buffer) and writes the updates over it. */
static bool writes_over_operand0(const ir_instr *x) {
  return x->op == IR_OP_DYNAMIC_UPDATE_SLICE || (x->op == IR_OP_SCATTER && x->n_operands == 3 && x->shape->et != IR_TUPLE);
}

/* Whether operand k's single buffer dies at x and x may take it over: x's kernel writes over
 * it (a dynamic-update-slice's or a one-operand scatter's operand 0, or an operand read only at
 * the element written), no
 * other operand of x holds it, and no value holding it is read after x. */
static int dying_operand_buffer(const walk *w, const ir_instr *x, int k) {
  const ir_instr *o = x->operands[k];
  bool fits = writes_over_operand0(x) ? k == 0 && o->shape->et == x->shape->et
                                      : buffer_plan_reads_only_own_element(x, k);
  if (!fits || n_leaves_of(w, o) != 1 || w->extra[o->id].n)
    return -1;
  int b = leaves_of(w, o)[0];
  if (b < 0 || w->cp->buffers[b].to != x->id || w->cp->buffers[b].param_leaf >= 0)
    return -1;
  for (int j = 0; j < x->n_operands; j++) {
    const ir_instr *p = x->operands[j];
    if (p == o)
      continue;
    for (int l = 0; l < n_leaves_of(w, p); l++)
      if (leaves_of(w, p)[l] == b)
        return -1;
    for (int l = 0; l < w->extra[p->id].n; l++)
      if (w->extra[p->id].v[l] == b)
        return -1;
  }
  return b;
}

/* An instruction whose value is exactly a fresh result written by its kernel (the default). */
static void plan_fresh(walk *w, const ir_instr *x) {
  comp_plan *cp = w->cp;
  if (x->shape->et != IR_TUPLE && cp->result_leaf[x->id] >= 0)
    return; /* writes the caller's buffer */
  if (x->shape->et != IR_TUPLE && x->op != IR_OP_PARAMETER)
    for (int k = 0; k < x->n_operands; k++) {
      int b = dying_operand_buffer(w, x, k);
      if (b >= 0) {
        leaves_of(w, x)[0] = b;
        cp->reuse[x->id] = k;
        return;
      }
    }
  bool *to_caller = fusion_leaves_to_caller(w, x);
  plan_fresh_leaves(w, x, to_caller);
  free(to_caller);
}

/* Ops whose lowering may keep operand buffers in its value: no frame buffers of their own
 * (code generation places theirs after the planned ones), and every operand buffer held. */
static bool keeps_operand_buffers(const ir_instr *x) {
  switch (ir_opcode_table[x->op].family) {
  case IR_FAM_ASYNC: case IR_FAM_ASYNC_DONE: case IR_FAM_COPY_ASYNC: case IR_FAM_SEND: case IR_FAM_RECV:
  case IR_FAM_CUSTOM_CALL: case IR_FAM_COLLECTIVE: case IR_FAM_INFEED: case IR_FAM_OUTFEED:
    return true;
  case IR_FAM_TOKEN: return x->op != IR_OP_ADD_DEPENDENCY;
  default: return false;
  }
}

/* buffer_plan_constant_by_reference while the walk decides (the plan not finished yet). */
static bool constant_in_literal(const comp_plan *cp, const ir_instr *x) {
  return x->op == IR_OP_CONSTANT && x->shape->et != IR_TUPLE && ir_etype_is_array(x->shape->et) &&
         cp->result_leaf && x->id >= 0 && x->id < cp->n_instrs && cp->result_leaf[x->id] < 0;
}

bool buffer_plan_constant_by_reference(const comp_plan *cp, const ir_instr *x) {
  return cp && cp->planned && constant_in_literal(cp, x);
}

bool buffer_plan_forwards_operand(const ir_instr *x) {
  switch (ir_opcode_table[x->op].family) {
  case IR_FAM_OPT_BARRIER: case IR_FAM_DOMAIN: return x->n_operands > 0;
  case IR_FAM_TOKEN: return x->op == IR_OP_ADD_DEPENDENCY;
  case IR_FAM_DIMENSION_SIZE: return x->op != IR_OP_GET_DIMENSION_SIZE;
  case IR_FAM_RESHAPE:
  case IR_FAM_BITCAST: {
    if (x->op != IR_OP_RESHAPE && x->op != IR_OP_BITCAST)
      return false;
    const ir_shape *r = x->shape, *o = x->operands[0]->shape;
    int64_t rb = 0, ob = 0;
    return r->et != IR_TUPLE && o->et != IR_TUPLE && ir_etype_is_array(r->et) && !r->dyn && !o->dyn &&
           ir_shape_byte_size(r, &rb) && ir_shape_byte_size(o, &ob) && rb == ob;
  }
  default: return false;
  }
}

static void plan_instr(walk *w, const ir_instr *x) {
  ir_family fam = ir_opcode_table[x->op].family;
  if (x->op == IR_OP_PARAMETER) {
    plan_parameter(w, x);
    return;
  }
  check_donated_write(w->cp, x);
  if (fam == IR_FAM_CONSTANT && (x->shape->et == IR_TUPLE || constant_in_literal(w->cp, x)))
    return; /* a tuple's leaves: code generation's; an array: its literal, read where it lies */
  if (x->op == IR_OP_TUPLE)
    plan_tuple(w, x);
  else if (x->op == IR_OP_GET_TUPLE_ELEMENT)
    plan_get_tuple_element(w, x);
  else if (buffer_plan_forwards_operand(x))
    alias_leaves(w, x, x->operands[0], 0);
  else if (fam == IR_FAM_WHILE)
    plan_while(w, x);
  else if (keeps_operand_buffers(x))
    for (int k = 0; k < x->n_operands; k++)
      hold_all_of(w, x, x->operands[k]);
  else
    plan_fresh(w, x);
}

/* Extends the lifetime of every buffer x holds to x's last reader. */
static void extend_lifetimes(walk *w, const ir_instr *x) {
  int end = w->last[x->id];
  const int *lb = leaves_of(w, x);
  for (int i = 0; i < n_leaves_of(w, x); i++)
    if (lb[i] >= 0 && w->cp->buffers[lb[i]].to < end)
      w->cp->buffers[lb[i]].to = end;
  for (int i = 0; i < w->extra[x->id].n; i++) {
    plan_buffer *b = &w->cp->buffers[w->extra[x->id].v[i]];
    if (b->to < end)
      b->to = end;
  }
}

/* ---- placement --------------------------------------------------------------------------- */

typedef struct range {
  int64_t offset, bytes;
} range;

static int by_offset(const void *a, const void *b) {
  const range *x = a, *y = b;
  return (x->offset > y->offset) - (x->offset < y->offset);
}

/* The lowest best-fitting offset for `need` bytes beside the ranges `used` (n of them). */
static int64_t best_gap(range *used, int n, int64_t need) {
  qsort(used, (size_t)n, sizeof *used, by_offset);
  int64_t best = -1, best_size = 0, end = 0;
  for (int k = 0; k < n; k++) {
    int64_t gap = used[k].offset - end;
    if (gap >= need && (best < 0 || gap < best_size)) {
      best = end;
      best_size = gap;
    }
    if (used[k].offset + used[k].bytes > end)
      end = used[k].offset + used[k].bytes;
  }
  return best >= 0 ? best : end;
}

static bool overlap(const plan_buffer *a, const plan_buffer *b) { return a->from <= b->to && b->from <= a->to; }

/* Places buffers in `order` one after the other, each at the best-fitting gap among the
 * already placed ones whose lifetimes overlap its own.  Writes off[] and returns the frame. */
static int64_t place_in_order(const comp_plan *cp, const int *order, int64_t *off, range *used) {
  int64_t peak = 0;
  for (int k = 0; k < cp->n_buffers; k++) {
    const plan_buffer *b = &cp->buffers[order[k]];
    int nu = 0;
    for (int j = 0; j < k; j++)
      if (overlap(&cp->buffers[order[j]], b))
        used[nu++] = (range){off[order[j]], aligned(cp->buffers[order[j]].bytes)};
    off[order[k]] = best_gap(used, nu, aligned(b->bytes));
    if (off[order[k]] + aligned(b->bytes) > peak)
      peak = off[order[k]] + aligned(b->bytes);
  }
  return peak;
}

/* Inserts the free range r into the sorted free list (n of them), merging with neighbours. */
static int release_range(range *fr, int n, range r) {
  int k = 0;
  while (k < n && fr[k].offset < r.offset)
    k++;
  memmove(&fr[k + 1], &fr[k], (size_t)(n - k) * sizeof *fr);
  fr[k] = r;
  n++;
  if (k + 1 < n && fr[k].offset + fr[k].bytes == fr[k + 1].offset) {
    fr[k].bytes += fr[k + 1].bytes;
    memmove(&fr[k + 1], &fr[k + 2], (size_t)(n - k - 2) * sizeof *fr);
    n--;
  }
  if (k > 0 && fr[k - 1].offset + fr[k - 1].bytes == fr[k].offset) {
    fr[k - 1].bytes += fr[k].bytes;
    memmove(&fr[k], &fr[k + 1], (size_t)(n - k - 1) * sizeof *fr);
    n--;
  }
  return n;
}

static int by_end(const void *a, const void *b, void *arg) {
  const plan_buffer *bufs = arg, *x = &bufs[*(const int *)a], *y = &bufs[*(const int *)b];
  if (x->to != y->to)
    return x->to < y->to ? -1 : 1;
  return (*(const int *)a > *(const int *)b) - (*(const int *)a < *(const int *)b);
}

/* Execution order: a best-fit heap simulation.  Buffers are created in definition order, so
 * index order is allocation order; a buffer is released once every position up to its end
 * has run, before the allocations of the next position.  Writes off[] and returns the frame,
 * or -1 when out of memory. */
static int64_t place_by_time(const comp_plan *cp, int64_t *off, range *free_ranges) {
  int n = cp->n_buffers, nf = 0, released = 0;
  int *order = malloc(((size_t)n + 1) * sizeof *order);
  if (!order)
    return -1;
  for (int i = 0; i < n; i++)
    order[i] = i;
  qsort_r(order, (size_t)n, sizeof *order, by_end, cp->buffers);
  int64_t peak = 0;
  for (int i = 0; i < n; i++) {
    const plan_buffer *b = &cp->buffers[i];
    for (; released < n && cp->buffers[order[released]].to < b->from; released++) {
      int d = order[released];
      nf = release_range(free_ranges, nf, (range){off[d], aligned(cp->buffers[d].bytes)});
    }
    int64_t need = aligned(b->bytes);
    int best = -1;
    for (int k = 0; k < nf; k++)
      if (free_ranges[k].bytes >= need && (best < 0 || free_ranges[k].bytes < free_ranges[best].bytes))
        best = k;
    if (best >= 0) {
      off[i] = free_ranges[best].offset;
      free_ranges[best].offset += need;
      free_ranges[best].bytes -= need;
      if (!free_ranges[best].bytes) {
        memmove(&free_ranges[best], &free_ranges[best + 1], (size_t)(nf - best - 1) * sizeof *free_ranges);
        nf--;
      }
    } else if (nf && free_ranges[nf - 1].offset + free_ranges[nf - 1].bytes == peak) {
      off[i] = free_ranges[--nf].offset; /* grow the free tail */
      peak = off[i] + need;
    } else {
      off[i] = peak;
      peak += need;
    }
  }
  free(order);
  return peak;
}

static int by_size_desc(const void *a, const void *b, void *arg) {
  const plan_buffer *bufs = arg, *x = &bufs[*(const int *)a], *y = &bufs[*(const int *)b];
  if (x->bytes != y->bytes)
    return x->bytes > y->bytes ? -1 : 1;
  if (x->from != y->from)
    return x->from < y->from ? -1 : 1;
  return (*(const int *)a > *(const int *)b) - (*(const int *)a < *(const int *)b);
}

/* The most bytes live at one position: a lower bound of any placement's frame. */
static int64_t live_peak(const comp_plan *cp) {
  int64_t *delta = calloc((size_t)cp->n_instrs + 2, sizeof *delta);
  if (!delta)
    return 0;
  for (int i = 0; i < cp->n_buffers; i++) {
    const plan_buffer *b = &cp->buffers[i];
    delta[b->from] += aligned(b->bytes);
    delta[(b->to < cp->n_instrs ? b->to : cp->n_instrs) + 1] -= aligned(b->bytes);
  }
  int64_t live = 0, peak = 0;
  for (int p = 0; p <= cp->n_instrs; p++) {
    live += delta[p];
    peak = live > peak ? live : peak;
  }
  free(delta);
  return peak;
}

static bool place(comp_plan *cp) {
  int n = cp->n_buffers;
  int64_t *off = malloc(((size_t)n + 1) * sizeof *off), *off2 = malloc(((size_t)n + 1) * sizeof *off2);
  range *scratch = malloc(((size_t)n + 1) * sizeof *scratch);
  int *order = malloc(((size_t)n + 1) * sizeof *order);
  bool ok = off && off2 && scratch && order;
  if (ok) {
    int64_t frame = place_by_time(cp, off, scratch);
    ok = frame >= 0;
    if (ok && n <= PLACE_BY_SIZE_MAX) {
      for (int i = 0; i < n; i++)
        order[i] = i;
      qsort_r(order, (size_t)n, sizeof *order, by_size_desc, cp->buffers);
      int64_t by_size = place_in_order(cp, order, off2, scratch);
      if (by_size < frame) {
        memcpy(off, off2, (size_t)n * sizeof *off);
        frame = by_size;
      }
    }
    for (int i = 0; ok && i < n; i++)
      cp->buffers[i].offset = off[i];
    cp->frame_bytes = frame;
    cp->live_peak = live_peak(cp);
  }
  free(off);
  free(off2);
  free(scratch);
  free(order);
  return ok;
}

/* ---- per computation --------------------------------------------------------------------- */

static bool numbered_by_position(const ir_computation *c) {
  for (int i = 0; i < c->n_instrs; i++)
    if (c->instrs[i]->id != i)
      return false;
  return c->root != NULL;
}

static int *last_readers(const ir_computation *c) {
  int *last = malloc(((size_t)c->n_instrs + 1) * sizeof *last);
  if (!last)
    return NULL;
  for (int i = 0; i < c->n_instrs; i++)
    last[i] = i;
  for (int i = 0; i < c->n_instrs; i++)
    for (int j = 0; j < c->instrs[i]->n_operands; j++) {
      int o = c->instrs[i]->operands[j]->id;
      if (o >= 0 && o < c->n_instrs && last[o] < i)
        last[o] = i;
    }
  last[c->root->id] = c->n_instrs;
  return last;
}

static bool alloc_tables(comp_plan *cp, const ir_computation *c) {
  int n = c->n_instrs;
  cp->n_instrs = n;
  cp->first_leaf = malloc(((size_t)n + 1) * sizeof(int));
  cp->first_temp = malloc(((size_t)n + 1) * sizeof(int));
  cp->reuse = malloc(((size_t)n + 1) * sizeof(int));
  cp->result_leaf = malloc(((size_t)n + 1) * sizeof(int));
  if (!cp->first_leaf || !cp->first_temp || !cp->reuse || !cp->result_leaf)
    return false;
  cp->first_leaf[0] = cp->first_temp[0] = 0;
  for (int i = 0; i < n; i++) {
    const ir_instr *x = c->instrs[i];
    int leaves = ir_shape_count_leaves(x->shape);
    cp->first_leaf[i + 1] = cp->first_leaf[i] + leaves;
    cp->first_temp[i + 1] = cp->first_temp[i] + (ir_opcode_table[x->op].family == IR_FAM_WHILE ? leaves : 0);
    cp->reuse[i] = -1;
  }
  cp->leaf_buffer = malloc(((size_t)cp->first_leaf[n] + 1) * sizeof(int));
  cp->temp_buffer = malloc(((size_t)cp->first_temp[n] + 1) * sizeof(int));
  if (!cp->leaf_buffer || !cp->temp_buffer)
    return false;
  for (int i = 0; i < cp->first_leaf[n]; i++)
    cp->leaf_buffer[i] = -1;
  for (int i = 0; i < cp->first_temp[n]; i++)
    cp->temp_buffer[i] = -1;
  buffer_plan_result_writers(c, cp->result_leaf);
  return true;
}

/* The flat parameter leaf that leaf `leaf` of x's value is, through tuples, get-tuple-element
 * and forwarding ops, or -1 when it is computed. */
static int source_param_leaf(const ir_computation *c, const ir_instr *x, int leaf) {
  for (int depth = 0; depth < 4096; depth++) {
    if (x->op == IR_OP_PARAMETER) {
      int base = 0;
      for (int p = 0; p < c->n_params && c->params[p] != x; p++)
        base += ir_shape_count_leaves(c->params[p]->shape);
      return x->parent == c ? base + leaf : -1;
    }
    if (x->op == IR_OP_TUPLE) {
      int k = 0;
      while (k < x->n_operands && leaf >= ir_shape_count_leaves(x->operands[k]->shape))
        leaf -= ir_shape_count_leaves(x->operands[k++]->shape);
      if (k == x->n_operands)
        return -1;
      x = x->operands[k];
    } else if (x->op == IR_OP_GET_TUPLE_ELEMENT) {
      const ir_shape *ts = x->operands[0]->shape;
      for (int64_t i = 0; i < x->attrs.u.tuple_index && i < ts->n_elems; i++)
        leaf += ir_shape_count_leaves(ts->elems[i]);
      x = x->operands[0];
    } else if (buffer_plan_forwards_operand(x)) {
      x = x->operands[0];
    } else {
      return -1;
    }
  }
  return -1;
}

/* The entry's donations that hold: a result leaf that is itself another parameter's leaf keeps
 * no donor (copying it out would overwrite the donor before other copies read it). */
static int *donations(const ir_module *m, const ir_computation *c) {
  int nr = ir_shape_count_leaves(c->root->shape);
  int *donor = malloc(((size_t)nr + 1) * sizeof *donor);
  if (!donor || !ir_alias_pairs(m, donor)) {
    free(donor);
    return NULL;
  }
  for (int r = 0; r < nr; r++) {
    int q = donor[r] >= 0 ? source_param_leaf(c, c->root, r) : -1;
    if (q >= 0 && q != donor[r])
      donor[r] = -1;
  }
  return donor;
}

static bool plan_computation(const ir_module *m, const ir_computation *c, comp_plan *cp) {
  if (!numbered_by_position(c))
    return true; /* planned stays false: code generation places everything itself */
  if (!alloc_tables(cp, c))
    return false;
  if (c == m->entry && m->input_output_alias.len)
    cp->result_donor = donations(m, c);
  walk w = {c, cp, cp->last_reader = last_readers(c), calloc((size_t)c->n_instrs + 1, sizeof(int_list)), 0, false};
  bool ok = w.last && w.extra;
  for (int i = 0; ok && i < c->n_instrs; i++) {
    plan_instr(&w, c->instrs[i]);
    extend_lifetimes(&w, c->instrs[i]);
    ok = !w.oom;
  }
  if (w.extra)
    for (int i = 0; i < c->n_instrs; i++)
      free(w.extra[i].v);
  free(w.extra);
  cp->planned = ok && place(cp);
  return ok && cp->planned;
}

hlo_status buffer_plan_build(const ir_module *m, buffer_plan **out) {
  *out = NULL;
  buffer_plan *p = calloc(1, sizeof *p);
  if (!p || !(p->comps = calloc((size_t)m->n_comps + 1, sizeof *p->comps))) {
    free(p);
    return hlo_status_make(HLO_RESOURCE_EXHAUSTED, "out of memory planning buffers");
  }
  p->n_comps = m->n_comps;
  for (int i = 0; i < m->n_comps; i++)
    if (!plan_computation(m, m->comps[i], &p->comps[i])) {
      buffer_plan_free(p);
      return hlo_status_make(HLO_RESOURCE_EXHAUSTED, "out of memory planning buffers");
    }
  *out = p;
  return NULL;
}

void buffer_plan_free(buffer_plan *p) {
  if (!p)
    return;
  for (int i = 0; i < p->n_comps; i++) {
    comp_plan *cp = &p->comps[i];
    free(cp->buffers);
    free(cp->first_leaf);
    free(cp->leaf_buffer);
    free(cp->first_temp);
    free(cp->temp_buffer);
    free(cp->reuse);
    free(cp->result_leaf);
    free(cp->last_reader);
    free(cp->result_donor);
  }
  free(p->comps);
  free(p);
}
