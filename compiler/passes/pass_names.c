/* pass_names.c — the set of names a pass must not reuse (open addressing over interned
 * views), fresh names derived from an existing one, and placing a pass's new instructions
 * before their users. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "passes/pass_names.h"

static uint64_t name_hash(const char *p, size_t len) {
  uint64_t h = 1469598103934665603u;
  for (size_t i = 0; i < len; i++)
    h = (h ^ (unsigned char)p[i]) * 1099511628211u;
  return h;
}

/* The slot holding `p`, or the empty slot where it would go (s->cap > 0). */
static ir_str *name_find(const pass_names *s, const char *p, size_t len) {
  for (size_t i = name_hash(p, len) & (s->cap - 1);; i = (i + 1) & (s->cap - 1)) {
    ir_str *e = &s->slot[i];
    if (!e->p || (e->len == len && memcmp(e->p, p, len) == 0))
      return e;
  }
}

static bool name_taken(const pass_names *s, const char *p, size_t len) { return s->cap && name_find(s, p, len)->p; }

static bool name_add(pass_names *s, ir_str name) {
  if (2 * (s->n + 1) > s->cap) {
    pass_names g = {calloc(s->cap ? 2 * s->cap : 64, sizeof(ir_str)), s->cap ? 2 * s->cap : 64, 0};
    if (!g.slot)
      return false;
    for (size_t i = 0; i < s->cap; i++)
      if (s->slot[i].p)
        *name_find(&g, s->slot[i].p, s->slot[i].len) = s->slot[i], g.n++;
    free(s->slot);
    *s = g;
  }
  ir_str *e = name_find(s, name.p, name.len);
  if (!e->p) {
    *e = name;
    s->n++;
  }
  return true;
}

bool pass_names_init(pass_names *s, const ir_module *m) {
  *s = (pass_names){0};
  for (int ci = 0; ci < m->n_comps; ci++) {
    const ir_computation *c = m->comps[ci];
    if (!name_add(s, c->name))
      return false;
    for (int i = 0; i < c->n_instrs; i++)
      if (!name_add(s, c->instrs[i]->name))
        return false;
  }
  return true;
}

ir_str pass_names_fresh(pass_names *s, ir_module *m, ir_str base, const char *what) {
  char buf[600];
  int keep = base.len > 400 ? 400 : (int)base.len;
  int n = snprintf(buf, sizeof buf, "%.*s.%s", keep, base.p, what);
  for (int k = 1; name_taken(s, buf, (size_t)n); k++)
    n = snprintf(buf, sizeof buf, "%.*s.%s.%d", keep, base.p, what, k);
  ir_str name = ir_intern(m, buf, (size_t)n);
  if (!name.p || !name_add(s, name))
    return (ir_str){NULL, 0};
  return name;
}

void pass_names_free(pass_names *s) {
  free(s->slot);
  *s = (pass_names){0};
}

bool pass_place_new_instrs(ir_computation *c, int n0, const int *made) {
  ir_instr **order = malloc((size_t)c->n_instrs * sizeof *order);
  if (!order)
    return false;
  int at = 0, next_new = n0;
  for (int i = 0; i < n0; i++) {
    for (int j = 0; j < made[i]; j++)
      order[at++] = c->instrs[next_new++];
    order[at++] = c->instrs[i];
  }
  memcpy(c->instrs, order, (size_t)c->n_instrs * sizeof *order);
  free(order);
  return true;
}
