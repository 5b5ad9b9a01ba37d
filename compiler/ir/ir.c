/* ir.c — construction and queries of the IR declared in ir.h: the opcode and element-type
 * tables (expanded from the .def files), shapes, use lists, dead-code removal, post order.
 * Everything is allocated from the module's arena.  Tests: ir_test.c. */
#include "ir/ir.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const ir_opcode_info ir_opcode_table[IR_OP_COUNT] = {
#define OP(e, s, a, f, fam, rule) [e] = {s, a, f, fam},
#include "ir/opcodes.def"
#undef OP
};

const ir_etype_info ir_etype_table[IR_ETYPE_COUNT] = {
#define ET(e, s, bits, bytes, cls, npy) [e] = {s, bits, bytes, cls, npy},
#include "hlo/elemtypes.def"
#undef ET
};

bool ir_opcode_from_name(const char *s, size_t len, ir_opcode *out_op) {
  for (int i = 0; i < IR_OP_COUNT; i++) {
    const char *sp = ir_opcode_table[i].spelling;
    if (strlen(sp) == len && memcmp(sp, s, len) == 0) {
      *out_op = (ir_opcode)i;
      return true;
    }
  }
  return false;
}

bool ir_etype_from_name(const char *s, size_t len, ir_etype *out_et) {
  for (int i = 0; i < IR_ETYPE_COUNT; i++) {
    const char *sp = ir_etype_table[i].spelling;
    if (strlen(sp) == len && memcmp(sp, s, len) == 0) {
      *out_et = (ir_etype)i;
      return true;
    }
  }
  return false;
}

ir_etype ir_etype_component(ir_etype t) {
  if (t == IR_C64)
    return IR_F32;
  if (t == IR_C128)
    return IR_F64;
  return t;
}

/* ---- shapes ---- */

bool ir_shape_num_elements(const ir_shape *s, int64_t *out_n) {
  int64_t n = 1;
  for (int i = 0; i < s->rank; i++) {
    int64_t d = s->dims[i] < 0 ? 0 : s->dims[i];
    if (d != 0 && n > INT64_MAX / d)
      return false;
    n *= d;
  }
  *out_n = n;
  return true;
}

bool ir_shape_byte_size(const ir_shape *s, int64_t *out_bytes) {
  int64_t n;
  if (!ir_shape_num_elements(s, &n))
    return false;
  int64_t eb = ir_etype_table[s->et].storage_bytes;
  if (eb && n > INT64_MAX / eb)
    return false;
  *out_bytes = n * eb;
  return true;
}

int64_t ir_shape_total_bytes(const ir_shape *s) {
  if (s->et == IR_TUPLE) {
    int64_t n = 0;
    for (int i = 0; i < s->n_elems; i++) {
      int64_t e = ir_shape_total_bytes(s->elems[i]);
      n = e > INT64_MAX - n ? INT64_MAX : n + e;
    }
    return n;
  }
  int64_t b = 0;
  return ir_etype_is_array(s->et) && ir_shape_byte_size(s, &b) ? b : 0;
}

bool ir_shape_same_dims(const ir_shape *a, const ir_shape *b) {
  if (a->rank != b->rank)
    return false;
  for (int i = 0; i < a->rank; i++)
    if (a->dims[i] != b->dims[i])
      return false;
  return true;
}

bool ir_shape_equal(const ir_shape *a, const ir_shape *b) {
  if (a->et != b->et)
    return false;
  if (a->et == IR_TUPLE) {
    if (a->n_elems != b->n_elems)
      return false;
    for (int i = 0; i < a->n_elems; i++)
      if (!ir_shape_equal(a->elems[i], b->elems[i]))
        return false;
    return true;
  }
  if (a->rank != b->rank)
    return false;
  for (int i = 0; i < a->rank; i++) {
    if (a->dims[i] != b->dims[i])
      return false;
    int da = a->dyn ? a->dyn[i] : 0, db = b->dyn ? b->dyn[i] : 0;
    if (da != db)
      return false;
  }
  return true;
}

int ir_shape_count_leaves(const ir_shape *s) {
  if (s->et != IR_TUPLE)
    return 1;
  int n = 0;
  for (int i = 0; i < s->n_elems; i++)
    n += ir_shape_count_leaves(s->elems[i]);
  return n;
}

/* ---- construction ---- */

ir_module *ir_module_create(void) {
  ir_module *m = calloc(1, sizeof *m);
  if (!m)
    return NULL;
  ir_arena_init(&m->arena);

  m->is_scheduled = -1;
  m->alias_passthrough_params = -1;
  return m;
}

void ir_module_destroy(ir_module *m) {
  if (!m)
    return;
  ir_arena_deinit(&m->arena);
  free(m);
}

ir_str ir_intern(ir_module *m, const char *s, size_t len) {
  char *p = ir_arena_alloc(&m->arena, len + 1);
  if (!p)
    return (ir_str){NULL, 0};
  if (len)
    memcpy(p, s, len);
  p[len] = 0;
  return (ir_str){p, len};
}

/* Grows an arena-backed pointer array by doubling; capacity = next power of two >= n. */
static bool grow_ptr_array(ir_arena *a, void ***arr, int n) {
  if (n > 0 && (n & (n - 1)) != 0)
    return true; /* still room: capacity is the next power of two */
  int cap = n == 0 ? 4 : n * 2;
  if (n > 0 && n < 4)
    return true;
  void **p = ir_arena_alloc_array(a, (size_t)cap, sizeof(void *));
  if (!p)
    return false;
  if (n)
    memcpy(p, *arr, (size_t)n * sizeof(void *));
  *arr = p;
  return true;
}

ir_computation *ir_computation_add(ir_module *m, ir_str name) {
  ir_computation *c = ir_arena_alloc(&m->arena, sizeof *c);
  if (!c || !grow_ptr_array(&m->arena, (void ***)&m->comps, m->n_comps))
    return NULL;
  c->name = name;
  c->module = m;
  c->id = m->n_comps;
  m->comps[m->n_comps++] = c;
  return c;
}

ir_instr *ir_instr_create(ir_computation *c, ir_opcode op, ir_str name, ir_shape *shape,
                          ir_instr *const *operands, int n_operands) {
  ir_arena *a = &c->module->arena;
  ir_instr *in = ir_arena_alloc(a, sizeof *in);
  if (!in || !grow_ptr_array(a, (void ***)&c->instrs, c->n_instrs))
    return NULL;
  if (n_operands) {
    in->operands = ir_arena_dup(a, operands, (size_t)n_operands * sizeof(ir_instr *));
    if (!in->operands)
      return NULL;
  }
  in->n_operands = n_operands;
  in->op = op;
  in->name = name;
  in->shape = shape;
  in->parent = c;
  in->attrs.channel_id = 0;
  in->attrs.bc.axis = -1; /* pdpd's default: "not written" */
  if (op == IR_OP_RESHAPE)
    in->attrs.u.inferred_dimension = -1;
  if (ir_opcode_table[op].family == IR_FAM_COLLECTIVE)
    in->attrs.u.collective.has_dynamic_root = -1;
  in->id = c->n_instrs;
  c->instrs[c->n_instrs++] = in;
  return in;
}

ir_shape *ir_shape_array(ir_module *m, ir_etype et, int rank, const int64_t *dims) {
  ir_shape *s = ir_arena_alloc(&m->arena, sizeof *s);
  if (!s)
    return NULL;
  s->et = et;
  s->rank = rank;
  if (rank) {
    s->dims = ir_arena_dup(&m->arena, dims, (size_t)rank * sizeof(int64_t));
    if (!s->dims)
      return NULL;
  }
  return s;
}

ir_shape *ir_shape_scalar(ir_module *m, ir_etype et) { return ir_shape_array(m, et, 0, NULL); }

ir_shape *ir_shape_tuple(ir_module *m, ir_shape *const *elems, int n) {
  ir_shape *s = ir_arena_alloc(&m->arena, sizeof *s);
  if (!s)
    return NULL;
  s->et = IR_TUPLE;
  if (n) {
    s->elems = ir_arena_dup(&m->arena, elems, (size_t)n * sizeof(ir_shape *));
    if (!s->elems)
      return NULL;
  }
  s->n_elems = n;
  return s;
}

ir_shape *ir_shape_clone(ir_module *m, const ir_shape *src) {
  ir_shape *s = ir_arena_dup(&m->arena, src, sizeof *s);
  if (!s)
    return NULL;
  if (src->rank) {
    s->dims = ir_arena_dup(&m->arena, src->dims, (size_t)src->rank * sizeof(int64_t));
    if (src->dyn)
      s->dyn = ir_arena_dup(&m->arena, src->dyn, (size_t)src->rank);
  }
  if (src->n_elems) {
    s->elems = ir_arena_alloc_array(&m->arena, (size_t)src->n_elems, sizeof(ir_shape *));
    if (!s->elems)
      return NULL;
    for (int i = 0; i < src->n_elems; i++)
      if (!(s->elems[i] = ir_shape_clone(m, src->elems[i])))
        return NULL;
  }
  return s;
}

void ir_shape_set_default_layout(ir_module *m, ir_shape *s) {
  if (s->et == IR_TUPLE) {
    for (int i = 0; i < s->n_elems; i++)
      ir_shape_set_default_layout(m, s->elems[i]);
    return;
  }
  if (!ir_etype_is_array(s->et))
    return;
  ir_layout *l = ir_arena_alloc(&m->arena, sizeof *l);
  if (!l)
    return;
  l->minor_to_major.n = s->rank;
  if (s->rank) {
    l->minor_to_major.v = ir_arena_alloc_array(&m->arena, (size_t)s->rank, sizeof(int64_t));
    if (!l->minor_to_major.v)
      return;
    for (int i = 0; i < s->rank; i++)
      l->minor_to_major.v[i] = s->rank - 1 - i;
  }
  s->layout = l;
}

ir_i64_list ir_i64_list_copy(ir_module *m, const int64_t *v, int n) {
  ir_i64_list l = {NULL, n};
  if (n)
    l.v = ir_arena_dup(&m->arena, v, (size_t)n * sizeof(int64_t));
  if (n && !l.v)
    l.n = 0;
  return l;
}

/* ---- uses ---- */

void ir_rebuild_uses(ir_module *m) {
  for (int ci = 0; ci < m->n_comps; ci++) {
    ir_computation *c = m->comps[ci];
    for (int i = 0; i < c->n_instrs; i++) {
      c->instrs[i]->n_users = 0;
      c->instrs[i]->id = i;
    }
    for (int i = 0; i < c->n_instrs; i++) {
      ir_instr *in = c->instrs[i];
      for (int k = 0; k < in->n_operands; k++)
        in->operands[k]->n_users++;
    }
    for (int i = 0; i < c->n_instrs; i++) {
      ir_instr *in = c->instrs[i];
      in->users = in->n_users
                      ? ir_arena_alloc_array(&m->arena, (size_t)in->n_users, sizeof(ir_instr *))
                      : NULL;
      if (in->n_users && !in->users)
        in->n_users = 0;  /* out of memory: leave use lists empty rather than corrupt */
      else
        in->n_users = 0;
    }
    for (int i = 0; i < c->n_instrs; i++) {
      ir_instr *in = c->instrs[i];
      for (int k = 0; k < in->n_operands; k++) {
        ir_instr *op = in->operands[k];
        if (op->users)
          op->users[op->n_users++] = in;
      }
    }
  }
}

void ir_replace_all_uses(ir_computation *c, ir_instr *from, ir_instr *to) {
  for (int i = 0; i < c->n_instrs; i++) {
    ir_instr *in = c->instrs[i];
    if (in == to)
      continue;
    for (int k = 0; k < in->n_operands; k++)
      if (in->operands[k] == from)
        in->operands[k] = to;
  }
  if (c->root == from)
    c->root = to;
}

static void push_live(ir_instr *in, unsigned char *live, ir_instr **work, int *n) {
  if (live[in->id])
    return;
  live[in->id] = 1;
  work[(*n)++] = in; /* each instruction is pushed once: n_instrs slots suffice */
}

bool ir_computation_remove_dead(ir_computation *c) {
  if (!c->root || c->n_instrs == 0)
    return true;
  for (int i = 0; i < c->n_instrs; i++)
    c->instrs[i]->id = i;
  unsigned char *live = calloc((size_t)c->n_instrs, 1);
  ir_instr **work = malloc((size_t)c->n_instrs * sizeof *work);
  if (!live || !work) {
    free(live);
    free(work);
    return false;
  }
  int n = 0;
  push_live(c->root, live, work, &n);
  for (int i = 0; i < c->n_instrs; i++) {
    ir_instr *in = c->instrs[i];
    if ((ir_opcode_table[in->op].flags & OPF_SIDE_EFFECT) || in->op == IR_OP_PARAMETER)
      push_live(in, live, work, &n);
  }
  while (n > 0) {
    ir_instr *in = work[--n];
    for (int k = 0; k < in->n_operands; k++)
      push_live(in->operands[k], live, work, &n);
    for (int k = 0; k < in->common.n_control_predecessors; k++)
      push_live(in->common.control_predecessors[k], live, work, &n);
  }
  int j = 0;
  for (int i = 0; i < c->n_instrs; i++)
    if (live[i])
      c->instrs[j++] = c->instrs[i];
  c->n_instrs = j;
  for (int i = 0; i < c->n_instrs; i++)
    c->instrs[i]->id = i;
  free(live);
  free(work);
  return true;
}

static void post_order_visit(ir_instr *in, unsigned char *state, ir_instr **out, int *n) {
  /* Iterative DFS would avoid deep recursion on 30 000-instruction chains. */
  typedef struct { ir_instr *in; int next; } frame;
  int cap = 64, sp = 0;
  frame *st = malloc((size_t)cap * sizeof *st);
  if (!st)
    return;
  if (state[in->id]) {
    free(st);
    return;
  }
  state[in->id] = 1;
  st[sp++] = (frame){in, 0};
  while (sp) {
    frame *f = &st[sp - 1];
    int n_deps = f->in->n_operands + f->in->common.n_control_predecessors;
    if (f->next < n_deps) {
      int k = f->next++;
      ir_instr *d = k < f->in->n_operands ? f->in->operands[k]
                                          : f->in->common.control_predecessors[k - f->in->n_operands];
      if (d->parent != f->in->parent || state[d->id])
        continue;
      state[d->id] = 1;
      if (sp == cap) {
        frame *bigger = realloc(st, (size_t)cap * 2 * sizeof *st);
        if (!bigger)
          break;
        st = bigger;
        cap *= 2;
      }
      st[sp++] = (frame){d, 0};
    } else {
      out[(*n)++] = f->in;
      sp--;
    }
  }
  free(st);
}

bool ir_is_elementwise(const ir_instr *in) {
  switch (ir_opcode_table[in->op].family) {
  case IR_FAM_UNARY: case IR_FAM_BINARY: case IR_FAM_COMPARE: case IR_FAM_SELECT: case IR_FAM_CLAMP:
  case IR_FAM_CONVERT: case IR_FAM_STOCHASTIC_CONVERT:
    return true;
  default:
    return false;
  }
}

int ir_computation_post_order(ir_computation *c, ir_instr **out) {
  for (int i = 0; i < c->n_instrs; i++)
    c->instrs[i]->id = i;
  unsigned char *state = calloc((size_t)c->n_instrs + 1, 1);
  if (!state)
    return 0;
  int n = 0;
  /* Parameters first, in order, so that codegen sees them before anything else. */
  for (int i = 0; i < c->n_instrs; i++)
    if (c->instrs[i]->op == IR_OP_PARAMETER)
      post_order_visit(c->instrs[i], state, out, &n);
  for (int i = 0; i < c->n_instrs; i++)
    if (ir_opcode_table[c->instrs[i]->op].flags & OPF_SIDE_EFFECT)
      post_order_visit(c->instrs[i], state, out, &n);
  if (c->root)
    post_order_visit(c->root, state, out, &n);
  free(state);
  return n;
}

ir_computation *ir_module_find_computation(const ir_module *m, const char *name, size_t len) {
  for (int i = 0; i < m->n_comps; i++) {
    ir_str s = m->comps[i]->name;
    if (s.len == len && memcmp(s.p, name, len) == 0)
      return m->comps[i];
  }
  return NULL;
}
