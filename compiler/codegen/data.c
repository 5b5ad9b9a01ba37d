/* data.c — lowering of the data-movement family: constant (read-only global data), iota,
 * broadcast, reshape/bitcast/copy, transpose, slice, dynamic-slice (XLA's start-index
 * clamping), dynamic-update-slice, concatenate, pad (negative and interior), reverse,
 * bitcast-convert (byte reinterpretation, little-endian, any widths), reduce-precision and
 * dynamic-reshape (row-major over its runtime sizes, zero past them).
 * Each is a loop over output (or operand) elements mapping indices.
 */
#include <stdlib.h>
#include <string.h>

#include "codegen/cg_internal.h"
#include "codegen/ops.h"

static LLVMValueRef leaf0(cg_function *f, const ir_instr *op) { return f->values[op->id].leaves[0]; }

static int64_t count(const ir_shape *s) {
  int64_t n;
  ir_shape_num_elements(s, &n);
  return n;
}

/* The loop over every element of `s`: gives the linear index and the multi-index. */
typedef struct elem_loop {
  cg_loop l;
  LLVMValueRef idx[64];
} elem_loop;

static void elems_begin(cg_function *f, elem_loop *e, const ir_shape *s) {
  e->l = cg_loop_begin(f, cg_i64(f->cm, count(s)), "e");
  cg_unflatten(f, e->l.i, s->dims, s->rank, e->idx);
}

static void copy_bytes(cg_function *f, LLVMValueRef dst, LLVMValueRef src, const ir_shape *s) {
  cg_copy_leaf(f, dst, src, s);
}

LLVMValueRef cg_literal_global(cg_module *cm, const ir_literal *lit, const char *name) {
  LLVMValueRef init = LLVMConstStringInContext(cm->ctx, lit->data ? lit->data : "", (unsigned)lit->nbytes, 1);
  LLVMValueRef g = cg_const_global(cm, init, name);
  LLVMSetAlignment(g, 64);
  LLVMSetUnnamedAddress(g, LLVMGlobalUnnamedAddr);
  return g;
}

static LLVMValueRef literal_global(cg_function *f, const ir_instr *in, const ir_literal *lit) {
  return cg_literal_global(f->cm, lit, in->name.p);
}

LLVMValueRef cg_constant_literal(cg_function *f, const ir_instr *in) {
  return literal_global(f, in, in->attrs.u.literal);
}

static void literal_leaves(const ir_literal *lit, const ir_literal **out, int *n, int cap) {
  if (lit->n_elems > 0 || (lit->shape && lit->shape->et == IR_TUPLE)) {
    for (int i = 0; i < lit->n_elems; i++)
      literal_leaves(lit->elems[i], out, n, cap);
    return;
  }
  if (*n < cap)
    out[*n] = lit;
  (*n)++;
}

void cg_lower_tuple_constant(cg_function *f, ir_instr *in) {
  cg_value v = cg_alloc_result(f, in);
  const ir_literal **leaves = calloc((size_t)v.n + 1, sizeof *leaves);
  int n = 0;
  if (leaves)
    literal_leaves(in->attrs.u.literal, leaves, &n, v.n);
  if (!leaves || n != v.n) {
    cg_fail(f->cm, in, "the tuple constant's literal does not match its shape");
  } else {
    for (int i = 0; i < v.n; i++)
      if (ir_etype_is_array(v.shapes[i]->et) && leaves[i]->data)
        copy_bytes(f, v.leaves[i], literal_global(f, in, leaves[i]), v.shapes[i]);
  }
  free(leaves);
  f->values[in->id] = v;
}

/* Clamped start index of dimension d: min(max(start, 0), dim - size), as XLA specifies. */
static LLVMValueRef clamped_start(cg_function *f, const ir_instr *in, int first, int d, int64_t dim, int64_t size) {
  cg_module *cm = f->cm;
  LLVMBuilderRef b = cm->b;
  const ir_instr *idx_op = in->operands[first];
  ir_etype et;
  LLVMValueRef v;
  if (in->n_operands - first == 1 && idx_op->shape->rank == 1) {
    et = idx_op->shape->et;
    v = cg_load(f, et, leaf0(f, idx_op), cg_i64(cm, d));
  } else {
    idx_op = in->operands[first + d];
    et = idx_op->shape->et;
    v = cg_load(f, et, leaf0(f, idx_op), cg_i64(cm, 0));
  }
  /* sign-extended whatever the index type, as XLA's emitter does (u8 200 is -56: clamps to 0) */
  v = LLVMBuildIntCast2(b, v, cm->i64, 1, "start");
  LLVMValueRef zero = cg_i64(cm, 0), hi = cg_i64(cm, dim - size);
  v = LLVMBuildSelect(b, LLVMBuildICmp(b, LLVMIntSLT, v, zero, ""), zero, v, "");
  return LLVMBuildSelect(b, LLVMBuildICmp(b, LLVMIntSGT, v, hi, ""), hi, v, "");
}

static void lower_dynamic_slice(cg_function *f, ir_instr *in, LLVMValueRef out) {
  const ir_shape *s = in->operands[0]->shape;
  LLVMValueRef start[64];
  for (int d = 0; d < s->rank; d++)
    start[d] = clamped_start(f, in, 1, d, s->dims[d], in->shape->dims[d]);
  elem_loop e;
  elems_begin(f, &e, in->shape);
  LLVMValueRef src[64];
  for (int d = 0; d < s->rank; d++)
    src[d] = LLVMBuildAdd(f->cm->b, e.idx[d], start[d], "");
  LLVMValueRef v = cg_load(f, s->et, leaf0(f, in->operands[0]), cg_flatten(f, src, s->dims, s->rank));
  cg_store(f, s->et, out, e.l.i, v);
  cg_loop_end(f, &e.l);
}

/* out = operand 0 with the update written at the clamped start; in place (no copy) when out
 * took over operand 0's buffer (cg_function.in_place, module.c) or is operand 0's buffer at
 * run time (a while loop's state updated in place, control.c). */
static void lower_dynamic_update_slice(cg_function *f, ir_instr *in, LLVMValueRef out) {
  const ir_shape *s = in->shape, *u = in->operands[1]->shape;
  if (f->in_place != in)
    cg_copy_leaf_if_distinct(f, out, leaf0(f, in->operands[0]), s);
  LLVMValueRef start[64];
  for (int d = 0; d < s->rank; d++)
    start[d] = clamped_start(f, in, 2, d, s->dims[d], u->dims[d]);
  elem_loop e;
  elems_begin(f, &e, u);
  LLVMValueRef dst[64];
  for (int d = 0; d < s->rank; d++)
    dst[d] = LLVMBuildAdd(f->cm->b, e.idx[d], start[d], "");
  LLVMValueRef v = cg_load(f, s->et, leaf0(f, in->operands[1]), e.l.i);
  cg_store(f, s->et, out, cg_flatten(f, dst, s->dims, s->rank), v);
  cg_loop_end(f, &e.l);
}

/* Concatenation along d: every operand is `outer` contiguous blocks (its dimensions from d on),
 * each copied whole to its place in the output row, bytes as they are (no value conversion, so
 * a NaN's payload survives, as XLA's copy keeps it). */
static void lower_concatenate(cg_function *f, ir_instr *in, LLVMValueRef out) {
  cg_module *cm = f->cm;
  const ir_shape *r = in->shape;
  int64_t d = in->attrs.dimensions.v[0], esize = ir_etype_table[r->et].storage_bytes;
  int64_t outer = 1, tail = esize; /* bytes of one index step along d */
  for (int64_t k = 0; k < d; k++)
    outer *= r->dims[k];
  for (int64_t k = d + 1; k < r->rank; k++)
    tail *= r->dims[k];
  int64_t out_row = tail * r->dims[d], offset = 0;
  for (int k = 0; k < in->n_operands; k++) {
    int64_t block = tail * in->operands[k]->shape->dims[d];
    if (block > 0 && outer > 0) {
      cg_loop l = cg_loop_begin(f, cg_i64(cm, outer), "cat");
      LLVMValueRef src_at = LLVMBuildMul(cm->b, l.i, cg_i64(cm, block), "");
      LLVMValueRef dst_at = LLVMBuildAdd(cm->b, LLVMBuildMul(cm->b, l.i, cg_i64(cm, out_row), ""), cg_i64(cm, offset), "");
      LLVMValueRef src = LLVMBuildGEP2(cm->b, cm->i8, leaf0(f, in->operands[k]), &src_at, 1, "cat.src");
      LLVMValueRef dst = LLVMBuildGEP2(cm->b, cm->i8, out, &dst_at, 1, "cat.dst");
      LLVMBuildMemCpy(cm->b, dst, 1, src, 1, cg_i64(cm, block));
      cg_loop_end(f, &l);
    }
    offset += block;
  }
}

static void lower_pad(cg_function *f, ir_instr *in, LLVMValueRef out) {
  cg_module *cm = f->cm;
  LLVMBuilderRef b = cm->b;
  const ir_shape *s = in->operands[0]->shape, *r = in->shape;
  LLVMValueRef pv = cg_load(f, r->et, leaf0(f, in->operands[1]), cg_i64(cm, 0));
  cg_loop fill = cg_loop_begin(f, cg_i64(cm, count(r)), "fill");
  cg_store(f, r->et, out, fill.i, pv);
  cg_loop_end(f, &fill);
  elem_loop e;
  elems_begin(f, &e, s);
  LLVMValueRef inside = LLVMConstInt(cm->i1, 1, 0), dst[64];
  for (int d = 0; d < s->rank; d++) {
    const ir_pad_dim *p = &in->attrs.u.padding.dims[d];
    dst[d] = LLVMBuildAdd(b, LLVMBuildMul(b, e.idx[d], cg_i64(cm, p->interior + 1), ""), cg_i64(cm, p->lo), "");
    inside = LLVMBuildAnd(b, inside, LLVMBuildICmp(b, LLVMIntSGE, dst[d], cg_i64(cm, 0), ""), "");
    inside = LLVMBuildAnd(b, inside, LLVMBuildICmp(b, LLVMIntSLT, dst[d], cg_i64(cm, r->dims[d]), ""), "");
  }
  LLVMBasicBlockRef yes = LLVMAppendBasicBlockInContext(cm->ctx, f->fn, "pad.in");
  LLVMBasicBlockRef next = LLVMAppendBasicBlockInContext(cm->ctx, f->fn, "pad.next");
  LLVMBuildCondBr(b, inside, yes, next);
  LLVMPositionBuilderAtEnd(b, yes);
  LLVMValueRef v = cg_load(f, s->et, leaf0(f, in->operands[0]), e.l.i);
  cg_store(f, r->et, out, cg_flatten(f, dst, r->dims, r->rank), v);
  LLVMBuildBr(b, next);
  LLVMPositionBuilderAtEnd(b, next);
  cg_loop_end(f, &e.l);
}

/* reduce-precision on the bits of an f32/f64 value (XLA's algorithm). */
static LLVMValueRef reduce_precision(cg_function *f, LLVMValueRef x, int64_t ebits, int64_t mbits) {
  cg_module *cm = f->cm;
  LLVMBuilderRef b = cm->b;
  bool dbl = LLVMTypeOf(x) == cm->f64;
  LLVMTypeRef it = dbl ? cm->i64 : cm->i32;
  int nbits = dbl ? 64 : 32, M = dbl ? 52 : 23, E = dbl ? 11 : 8;
  LLVMValueRef bits = LLVMBuildBitCast(b, x, it, "");
#define C(v) LLVMConstInt(it, (unsigned long long)(v), 0)
  if (mbits < M) {
    uint64_t last = 1ull << (M - mbits);
    LLVMValueRef lastbit = LLVMBuildLShr(b, LLVMBuildAnd(b, bits, C(last), ""), C(M - mbits), "");
    LLVMValueRef bias = LLVMBuildAdd(b, lastbit, C((last >> 1) - 1), "");
    bits = LLVMBuildAnd(b, LLVMBuildAdd(b, bits, bias, ""), C(~(last - 1)), "");
  }
  if (ebits < E) {
    uint64_t sign = 1ull << (nbits - 1), expmask = ((1ull << E) - 1) << M;
    int64_t bias = (1ll << (E - 1)) - 1, rbias = (1ll << (ebits - 1)) - 1;
    LLVMValueRef xe = LLVMBuildAnd(b, bits, C(expmask), "");
    LLVMValueRef over = LLVMBuildICmp(b, LLVMIntUGT, xe, C((uint64_t)(bias + rbias) << M), "");
    LLVMValueRef under = LLVMBuildICmp(b, LLVMIntULE, xe, C((uint64_t)(bias - rbias) << M), "");
    LLVMValueRef szero = LLVMBuildAnd(b, bits, C(sign), "");
    LLVMValueRef sinf = LLVMBuildOr(b, szero, C(expmask), "");
    bits = LLVMBuildSelect(b, over, sinf, LLVMBuildSelect(b, under, szero, bits, ""), "");
  }
#undef C
  LLVMValueRef r = LLVMBuildBitCast(b, bits, LLVMTypeOf(x), "");
  if (mbits > 0)
    r = LLVMBuildSelect(b, LLVMBuildFCmp(b, LLVMRealUNO, x, x, ""), x, r, "");
  return r;
}

/* dynamic-reshape's size of result dimension d, clamped to [0, bound]: operand 1 + d, or
 * element d of the s32[rank] vector operand (hloc's extension form). */
static LLVMValueRef reshape_size(cg_function *f, const ir_instr *in, int d) {
  cg_module *cm = f->cm;
  LLVMBuilderRef b = cm->b;
  bool vector_form = in->n_operands != in->shape->rank + 1;
  const ir_instr *op = in->operands[vector_form ? 1 : 1 + d];
  LLVMValueRef v = cg_load(f, IR_S32, leaf0(f, op), cg_i64(cm, vector_form ? d : 0));
  v = LLVMBuildSExt(b, v, cm->i64, "size");
  LLVMValueRef zero = cg_i64(cm, 0), hi = cg_i64(cm, in->shape->dims[d]);
  v = LLVMBuildSelect(b, LLVMBuildICmp(b, LLVMIntSLT, v, zero, ""), zero, v, "");
  return LLVMBuildSelect(b, LLVMBuildICmp(b, LLVMIntSGT, v, hi, ""), hi, v, "");
}

/* dynamic-reshape: the operand's elements in row-major order laid out row-major over the
 * runtime sizes; each result buffer keeps its bound, and elements past a size are zero. */
static void lower_dynamic_reshape(cg_function *f, ir_instr *in, LLVMValueRef out) {
  cg_module *cm = f->cm;
  LLVMBuilderRef b = cm->b;
  const ir_shape *r = in->shape, *s = in->operands[0]->shape;
  LLVMValueRef size[64];
  for (int d = 0; d < r->rank; d++)
    size[d] = reshape_size(f, in, d);
  LLVMValueRef zero = LLVMConstNull(cg_compute_type(cm, r->et));
  elem_loop e;
  elems_begin(f, &e, r);
  LLVMValueRef inside = LLVMConstInt(cm->i1, 1, 0), lin = cg_i64(cm, 0);
  for (int d = 0; d < r->rank; d++) {
    inside = LLVMBuildAnd(b, inside, LLVMBuildICmp(b, LLVMIntULT, e.idx[d], size[d], ""), "");
    lin = LLVMBuildAdd(b, LLVMBuildMul(b, lin, size[d], ""), e.idx[d], "");
  }
  int64_t n = count(s);
  LLVMValueRef v = zero;
  if (n > 0) {
    inside = LLVMBuildAnd(b, inside, LLVMBuildICmp(b, LLVMIntULT, lin, cg_i64(cm, n), ""), "");
    LLVMValueRef at = LLVMBuildSelect(b, inside, lin, cg_i64(cm, 0), "");
    v = LLVMBuildSelect(b, inside, cg_load(f, s->et, leaf0(f, in->operands[0]), at), zero, "");
  }
  cg_store(f, r->et, out, e.l.i, v);
  cg_loop_end(f, &e.l);
}

void cg_lower_data(cg_function *f, ir_instr *in, LLVMValueRef out) {
  cg_module *cm = f->cm;
  LLVMBuilderRef b = cm->b;
  const ir_shape *r = in->shape;
  const ir_instr *op0 = in->n_operands ? in->operands[0] : NULL;
  switch (in->op) {
  case IR_OP_CONSTANT:
    copy_bytes(f, out, literal_global(f, in, in->attrs.u.literal), r);
    return;
  case IR_OP_RESHAPE:
  case IR_OP_BITCAST:
  case IR_OP_COPY:
  case IR_OP_BITCAST_CONVERT:
    if (in->op == IR_OP_BITCAST_CONVERT && cg_bitcast_convert_bits(f, in, out))
      return; /* sub-byte element types (convert_bits.c) */
    copy_bytes(f, out, leaf0(f, op0), r);
    return;
  case IR_OP_DYNAMIC_SLICE: lower_dynamic_slice(f, in, out); return;
  case IR_OP_DYNAMIC_UPDATE_SLICE: lower_dynamic_update_slice(f, in, out); return;
  case IR_OP_CONCATENATE: lower_concatenate(f, in, out); return;
  case IR_OP_PAD: lower_pad(f, in, out); return;
  case IR_OP_DYNAMIC_RESHAPE: lower_dynamic_reshape(f, in, out); return;
  default: break;
  }
  elem_loop e;
  elems_begin(f, &e, r);
  LLVMValueRef v = NULL, src[64];
  const ir_shape *s = op0 ? op0->shape : NULL;
  switch (in->op) {
  case IR_OP_IOTA: {
    LLVMValueRef k = e.idx[in->attrs.u.iota_dimension];
    v = cg_convert(f, k, IR_S64, r->et);
    break;
  }
  case IR_OP_BROADCAST:
    for (int k = 0; k < s->rank; k++) {
      int64_t od = in->attrs.dimensions.v[k];
      src[k] = s->dims[k] == 1 && r->dims[od] != 1 ? cg_i64(cm, 0) : e.idx[od];
    }
    v = cg_load(f, s->et, leaf0(f, op0), s->rank ? cg_flatten(f, src, s->dims, s->rank) : cg_i64(cm, 0));
    break;
  case IR_OP_TRANSPOSE:
    for (int k = 0; k < r->rank; k++)
      src[in->attrs.dimensions.v[k]] = e.idx[k];
    v = cg_load(f, s->et, leaf0(f, op0), cg_flatten(f, src, s->dims, s->rank));
    break;
  case IR_OP_SLICE:
    for (int k = 0; k < r->rank; k++) {
      const ir_slice_dim *d = &in->attrs.u.slice.dims[k];
      src[k] = LLVMBuildAdd(b, LLVMBuildMul(b, e.idx[k], cg_i64(cm, d->stride), ""), cg_i64(cm, d->start), "");
    }
    v = cg_load(f, s->et, leaf0(f, op0), cg_flatten(f, src, s->dims, s->rank));
    break;
  case IR_OP_REVERSE:
    for (int k = 0; k < r->rank; k++)
      src[k] = e.idx[k];
    for (int i = 0; i < in->attrs.dimensions.n; i++) {
      int64_t d = in->attrs.dimensions.v[i];
      src[d] = LLVMBuildSub(b, cg_i64(cm, r->dims[d] - 1), e.idx[d], "");
    }
    v = cg_load(f, s->et, leaf0(f, op0), cg_flatten(f, src, s->dims, s->rank));
    break;
  case IR_OP_REDUCE_PRECISION: {
    LLVMValueRef x = cg_load(f, s->et, leaf0(f, op0), e.l.i);
    bool half = s->et == IR_F16;
    if (half)
      x = LLVMBuildFPExt(b, x, cm->f32, "");
    v = reduce_precision(f, x, in->attrs.u.reduce_precision.exponent_bits, in->attrs.u.reduce_precision.mantissa_bits);
    if (half)
      v = LLVMBuildFPTrunc(b, v, cm->f16, "");
    break;
  }
  default:
    cg_fail(cm, in, "opcode '%s' cannot be compiled yet", ir_opcode_table[in->op].spelling);
    cg_loop_end(f, &e.l);
    return;
  }
  cg_store(f, r->et, out, e.l.i, v);
  cg_loop_end(f, &e.l);
}
