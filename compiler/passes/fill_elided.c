/* fill_elided.c — gives elided constants (`constant({...})`, as TensorFlow dumps print large
 * weights) deterministic values so that a model can run.  Pre: verified (shapes known).
 *
 * Values: a xorshift64* stream seeded from the constant's element count and position in the
 * module, mapped to [-0.5, 0.5) for floats (real and imaginary parts, rounded to the type),
 * {0, 1} for pred, [-8, 8) for signed and [0, 16) for unsigned integers (the whole range of
 * s1/s2 and u1/u2).  The same module always gets the same values.  Tests:
 * tests/hloc_cli.cmake (cli.hloc.elided_*), hlorun's elided-constants note.
 */
#include <string.h>

#include "ir/literal.h"
#include "passes/passes.h"

static uint64_t next_random(uint64_t *s) {
  *s ^= *s >> 12;
  *s ^= *s << 25;
  *s ^= *s >> 27;
  return *s * 2685821657736338717ull;
}

static void fill_element(ir_etype et, uint64_t *rng, unsigned char *out) {
  uint64_t r = next_random(rng);
  if (ir_etype_is_complex(et)) {
    ir_etype ct = ir_etype_component(et);
    int half = ir_etype_table[et].storage_bytes / 2;
    fill_element(ct, rng, out);
    fill_element(ct, rng, out + half);
  } else if (ir_etype_is_float(et)) {
    double d = (double)(r >> 11) / 9007199254740992.0 - 0.5;
    if (ir_lit_encode_float(et, d, 0, out) != IR_LIT_OK)
      memset(out, 0, (size_t)ir_etype_table[et].storage_bytes);
  } else if (et == IR_PRED) {
    out[0] = (unsigned char)(r >> 63);
  } else {
    int b = ir_etype_table[et].bits < 4 ? ir_etype_table[et].bits : 4;
    int64_t v = (int64_t)(r >> (64 - b)); /* [0, 2^b) */
    if (ir_etype_is_signed(et))
      v -= (int64_t)1 << (b - 1);
    if (ir_lit_encode_int(et, v, 0, false, out) != IR_LIT_OK)
      memset(out, 0, (size_t)ir_etype_table[et].storage_bytes);
  }
}

static hlo_status fill_literal(ir_module *m, ir_literal *lit, uint64_t seed, int *count) {
  if (lit->shape->et == IR_TUPLE) {
    for (int i = 0; i < lit->n_elems; i++)
      HLO_RETURN_IF_ERROR(fill_literal(m, lit->elems[i], seed * 31 + (uint64_t)i, count));
    return NULL;
  }
  if (!lit->elided)
    return NULL;
  int64_t n, bytes;
  if (!ir_shape_num_elements(lit->shape, &n) || !ir_shape_byte_size(lit->shape, &bytes))
    return hlo_status_make(HLO_INVALID_ARGUMENT, "elided constant is too large");
  lit->data = ir_arena_alloc(&m->arena, (size_t)(bytes ? bytes : 1));
  if (!lit->data)
    return hlo_status_make(HLO_RESOURCE_EXHAUSTED, "out of memory filling an elided constant");
  uint64_t rng = 0x9E3779B97F4A7C15ull ^ (seed * 0xBF58476D1CE4E5B9ull) ^ (uint64_t)n;
  if (!rng)
    rng = 1;
  int eb = ir_etype_table[lit->shape->et].storage_bytes;
  for (int64_t i = 0; i < n; i++)
    fill_element(lit->shape->et, &rng, (unsigned char *)lit->data + i * eb);
  lit->nbytes = bytes;
  lit->elided = false;
  (*count)++;
  return NULL;
}

hlo_status pass_fill_elided_constants(ir_module *m, int *out_count) {
  int count = 0;
  uint64_t position = 0;
  for (int c = 0; c < m->n_comps; c++)
    for (int i = 0; i < m->comps[c]->n_instrs; i++) {
      ir_instr *in = m->comps[c]->instrs[i];
      position++;
      if (in->op == IR_OP_CONSTANT && in->attrs.u.literal)
        HLO_RETURN_IF_ERROR(fill_literal(m, in->attrs.u.literal, position, &count));
    }
  *out_count = count;
  m->n_filled_constants += count;
  return NULL;
}
