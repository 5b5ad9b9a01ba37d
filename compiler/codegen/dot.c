/* dot.c — the matrix-multiply path of dot.  A dot whose operands and result are all f64, or
 * each f32, bf16 or f16, and that does at least 32768 multiply-adds per batch becomes one call
 * of the runtime's blocked kernel (runtime/src/kernels/rt_gemm.c), which accumulates in f32 or f64 as
 * XLA's CPU backend does.  bf16 x bf16 dots (bf16 or f32 result) call the bf16 kernel
 * (runtime/src/kernels/rt_gemm_bf16.c) on the operands as they are, on every host: AMX tiles
 * where the CPU has them, else the f32 kernels widening bf16 as they pack (the bits of f32
 * copies, without the copies), f32 accumulation either way, a bf16 result rounded once from
 * its f32 product.  f16 x f16 dots (f16 or f32 result) call the f16 entry, which widens as it
 * packs in the same way, and round an f16 result once from the f32 product.  Other mixes
 * with bf16 or f16 operands are converted to f32 copies first and a bf16/f16 result is
 * rounded once from the f32 product.  Each operand's dimensions fall in index groups (batch, rows or columns,
 * depth) in the order the result and the contraction pair them; when every group is one
 * strided dimension of the row-major buffer the call passes strides (transposed operands cost
 * nothing), else it passes element-offset tables emitted as constant globals.  Every other
 * dot keeps control.c's loop nest.  A kOutput fusion's dot of the strided kind, all f32 or all
 * f64, hands the fusion's elementwise tail to the kernel as an epilogue that runs on each part
 * of the result once it is final (cg_dot_gemm_epilogue, called from fused.c).  Tests:
 * compiler/codegen/ops_test.c, conformance 'dot', golden fusion_output_*.
 */
#include <stdio.h>
#include <stdlib.h>

#include "codegen/ops.h"

/* Per batch, fewer multiply-adds than this run faster in the inline loop nest. */
#define DOT_GEMM_MIN_WORK 32768.0
/* Operands of higher rank keep the loop nest (their index groups are fixed arrays). */
#define DOT_MAX_RANK 64
/* At most this many table entries (8 bytes each) for an operand layout without strides. */
#define DOT_MAX_TABLE (1 << 20)

/* One index group of one operand: its dimension numbers in the order of the group's
 * row-major linear index. */
typedef struct dot_group {
  int n;
  int64_t dims[DOT_MAX_RANK];
} dot_group;

typedef struct dot_plan {
  int64_t batch, m, n, k;
  dot_group lb, lm, lk; /* lhs: batch, rows (free dims ascending), depth */
  dot_group rb, rk, rn; /* rhs: batch, depth, columns (free dims ascending) */
} dot_plan;

static int64_t dim_stride(const ir_shape *s, int64_t d) {
  int64_t st = 1;
  for (int64_t e = d + 1; e < s->rank; e++)
    st *= s->dims[e];
  return st;
}

static int64_t group_size(const ir_shape *s, const dot_group *g) {
  int64_t n = 1;
  for (int i = 0; i < g->n; i++)
    n *= s->dims[g->dims[i]];
  return n;
}

/* The stride of the group's linear index when the group is one strided dimension (size-1
 * dimensions do not count); false otherwise. */
static bool group_stride(const ir_shape *s, const dot_group *g, int64_t *out) {
  int64_t prev = -1;
  *out = 0;
  for (int i = 0; i < g->n; i++) {
    int64_t d = g->dims[i];
    if (s->dims[d] == 1)
      continue;
    if (prev >= 0 && dim_stride(s, prev) != dim_stride(s, d) * s->dims[d])
      return false;
    prev = d;
    *out = dim_stride(s, d);
  }
  return true;
}

/* out[i] = the element offset of the group's linear index i (row-major over the group). */
static void group_offsets(const ir_shape *s, const dot_group *g, int64_t *out) {
  int64_t idx[DOT_MAX_RANK] = {0}, total = group_size(s, g), off = 0;
  for (int64_t i = 0; i < total; i++) {
    out[i] = off;
    for (int j = g->n - 1; j >= 0; j--) { /* odometer step, innermost dimension last */
      int64_t d = g->dims[j];
      off += dim_stride(s, d);
      if (++idx[j] < s->dims[d])
        break;
      off -= idx[j] * dim_stride(s, d);
      idx[j] = 0;
    }
  }
}

static void add_list(dot_group *g, const ir_i64_list *l) {
  for (int i = 0; i < l->n; i++)
    g->dims[g->n++] = l->v[i];
}

/* The free dimensions of s (in neither list), ascending. */
static void add_free(dot_group *g, const ir_shape *s, const ir_i64_list *batch, const ir_i64_list *contracting) {
  for (int64_t d = 0; d < s->rank; d++) {
    bool used = false;
    for (int i = 0; i < batch->n; i++)
      used |= batch->v[i] == d;
    for (int i = 0; i < contracting->n; i++)
      used |= contracting->v[i] == d;
    if (!used)
      g->dims[g->n++] = d;
  }
}

/* Element types the f32 kernel takes (bf16 and f16 converted to f32 first). */
static bool dot_f32_type(ir_etype et) { return et == IR_F32 || et == IR_BF16 || et == IR_F16; }

/* Fills p when `in` qualifies for the kernel. */
static bool dot_plan_make(const ir_instr *in, dot_plan *p) {
  const ir_shape *l = in->operands[0]->shape, *r = in->operands[1]->shape;
  const ir_dot_dnums *d = &in->attrs.u.dot.dnums;
  ir_etype et = in->shape->et;
  bool wide = et == IR_F64 && l->et == et && r->et == et;
  if (in->op != IR_OP_DOT || (!wide && !(dot_f32_type(et) && dot_f32_type(l->et) && dot_f32_type(r->et))))
    return false;
  if (l->rank > DOT_MAX_RANK || r->rank > DOT_MAX_RANK)
    return false;
  *p = (dot_plan){0};
  add_list(&p->lb, &d->lhs_batch);
  add_free(&p->lm, l, &d->lhs_batch, &d->lhs_contracting);
  add_list(&p->lk, &d->lhs_contracting);
  add_list(&p->rb, &d->rhs_batch);
  add_list(&p->rk, &d->rhs_contracting);
  add_free(&p->rn, r, &d->rhs_batch, &d->rhs_contracting);
  p->batch = group_size(l, &p->lb);
  p->m = group_size(l, &p->lm);
  p->k = group_size(l, &p->lk);
  p->n = group_size(r, &p->rn);
  return (double)p->m * (double)p->n * (double)p->k >= DOT_GEMM_MIN_WORK;
}

/* A constant global holding the offsets of groups g0, g1, g2 of s, one after the other. */
static LLVMValueRef offsets_global(cg_function *f, const ir_shape *s, const dot_group *g0, const dot_group *g1,
                                   const dot_group *g2, const char *name) {
  cg_module *cm = f->cm;
  const dot_group *gs[3] = {g0, g1, g2};
  int64_t n = group_size(s, g0) + group_size(s, g1) + group_size(s, g2), at = 0;
  int64_t *v = malloc(sizeof *v * (size_t)n);
  if (!v)
    return NULL;
  for (int i = 0; i < 3; i++) {
    group_offsets(s, gs[i], v + at);
    at += group_size(s, gs[i]);
  }
  LLVMValueRef g = cg_const_i64_table(cm, v, n, name);
  free(v);
  return g;
}

/* The f32 copies a bf16/f16 dot needs: slot 0 and 1 its operands', slot 2 its product.  They
 * go in the kernel's scratch (the frame area its callees would use; a dot calls none), at
 * fixed offsets, so a call allocates nothing; without a frame, in a buffer of their own of n
 * elements.  NULL, with the error recorded, without memory. */
enum { DOT_SLOT_LHS, DOT_SLOT_RHS, DOT_SLOT_PRODUCT, DOT_SLOT_ALIGN = 64 };

/* Bytes of slot for a shape: its elements as f32, rounded up to the alignment; 0 when the
 * array is f32 or f64 already (used in place) -- except the product, always a slot. */
static int64_t dot_slot_bytes(const ir_shape *s, bool always) {
  int64_t n = 0;
  ir_shape_num_elements(s, &n);
  bool in_place = !always && (s->et == IR_F32 || s->et == IR_F64);
  return in_place ? 0 : (n * 4 + DOT_SLOT_ALIGN - 1) / DOT_SLOT_ALIGN * DOT_SLOT_ALIGN;
}

static bool dot_half(const ir_instr *in);

static LLVMValueRef dot_scratch_f32(cg_function *f, ir_instr *in, int slot, int64_t n) {
  bool copies = !dot_half(in); /* the bf16 and f16 entries read their operands as they are */
  int64_t bytes[3] = {copies ? dot_slot_bytes(in->operands[0]->shape, false) : 0,
                      copies ? dot_slot_bytes(in->operands[1]->shape, false) : 0, dot_slot_bytes(in->shape, true)};
  LLVMValueRef base = cg_kernel_scratch(f, bytes[0] + bytes[1] + bytes[2], in);
  if (base) {
    LLVMValueRef at = cg_i64(f->cm, slot == DOT_SLOT_LHS ? 0 : slot == DOT_SLOT_RHS ? bytes[0] : bytes[0] + bytes[1]);
    return LLVMBuildGEP2(f->cm->b, f->cm->i8, base, &at, 1, "dot.f32");
  }
  ir_shape *s = ir_shape_array(in->parent->module, IR_F32, 1, &n);
  if (!s) {
    cg_fail(f->cm, in, "out of memory");
    return NULL;
  }
  return cg_alloc_leaf(f, s);
}

/* Copies n elements of type `from` at src to type `to` at dst (rounding once). */
static void dot_convert(cg_function *f, LLVMValueRef src, ir_etype from, LLVMValueRef dst, ir_etype to, int64_t n) {
  cg_loop lp = cg_loop_begin(f, cg_i64(f->cm, n), "dot.cvt");
  cg_store(f, to, dst, lp.i, cg_convert(f, cg_load(f, from, src, lp.i), from, to));
  cg_loop_end(f, &lp);
}

/* Operand k in the kernel's element type: itself, or an f32 copy of a bf16/f16 operand. */
static LLVMValueRef dot_operand(cg_function *f, ir_instr *in, int k) {
  const ir_instr *op = in->operands[k];
  LLVMValueRef v = f->values[op->id].leaves[0];
  if (op->shape->et == IR_F32 || op->shape->et == IR_F64)
    return v;
  int64_t n = 1;
  for (int64_t i = 0; i < op->shape->rank; i++)
    n *= op->shape->dims[i];
  LLVMValueRef t = dot_scratch_f32(f, in, k == 0 ? DOT_SLOT_LHS : DOT_SLOT_RHS, n);
  if (t)
    dot_convert(f, v, op->shape->et, t, IR_F32, n);
  return t;
}

/* A bf16/f16 result: the f32 product in `product` rounded once into `out`. */
static void dot_finish(cg_function *f, ir_instr *in, LLVMValueRef product, LLVMValueRef out, int64_t n) {
  if (product != out)
    dot_convert(f, product, IR_F32, out, in->shape->et, n);
}

/* The six strides of p's index groups (lhs batch, rows, depth; rhs batch, depth, columns)
 * when each group is one strided dimension. */
static bool dot_strides(const ir_instr *in, const dot_plan *p, int64_t st[6]) {
  const ir_shape *l = in->operands[0]->shape, *r = in->operands[1]->shape;
  return group_stride(l, &p->lb, &st[0]) && group_stride(l, &p->lm, &st[1]) && group_stride(l, &p->lk, &st[2]) &&
         group_stride(r, &p->rb, &st[3]) && group_stride(r, &p->rk, &st[4]) && group_stride(r, &p->rn, &st[5]);
}

bool cg_dot_gemm_epilogue_ok(const ir_instr *in) {
  dot_plan p;
  int64_t st[6];
  ir_etype et = in->shape->et;
  return dot_plan_make(in, &p) && (et == IR_F32 || et == IR_F64) && in->operands[0]->shape->et == et &&
         in->operands[1]->shape->et == et && dot_strides(in, &p, st);
}

bool cg_dot_gemm_epilogue(cg_function *f, ir_instr *in, LLVMValueRef out, LLVMValueRef epi, LLVMValueRef epi_arg) {
  cg_module *cm = f->cm;
  dot_plan p;
  int64_t st[6];
  if (!cg_dot_gemm_epilogue_ok(in) || !dot_plan_make(in, &p) || !dot_strides(in, &p, st))
    return false;
  LLVMValueRef a = f->values[in->operands[0]->id].leaves[0], b = f->values[in->operands[1]->id].leaves[0];
  LLVMValueRef args[16] = {f->ctx_arg,        cg_i64(cm, p.batch), cg_i64(cm, p.m),   cg_i64(cm, p.n),
                           cg_i64(cm, p.k),   a,                   cg_i64(cm, st[0]), cg_i64(cm, st[1]),
                           cg_i64(cm, st[2]), b,                   cg_i64(cm, st[3]), cg_i64(cm, st[4]),
                           cg_i64(cm, st[5]), out,                 epi,               epi_arg};
  cg_runtime_call(cm, in->shape->et == IR_F64 ? CG_RT_hlo_rt_gemm_strided_epi_f64 : CG_RT_hlo_rt_gemm_strided_epi_f32,
                  args, 16, "");
  return true;
}

/* Whether the half-precision kernels take the dot: bf16 x bf16 or f16 x f16 operands, a
 * result of the same type or f32. */
static bool dot_half(const ir_instr *in) {
  ir_etype et = in->shape->et, o = in->operands[0]->shape->et;
  return (o == IR_BF16 || o == IR_F16) && in->operands[1]->shape->et == o && (et == o || et == IR_F32);
}

/* The half-precision kernel's call: the operands as they are, the f32 product into `out` (an
 * f32 result) or into `scratch` (f32, the result's size), rounded into `out` (a bf16 or f16
 * result): by the bf16 kernel itself, after the f16 kernel by dot_finish. */
static void dot_gemm_half(cg_function *f, ir_instr *in, const dot_plan *p, LLVMValueRef out, LLVMValueRef scratch) {
  cg_module *cm = f->cm;
  const ir_shape *l = in->operands[0]->shape, *r = in->operands[1]->shape;
  LLVMValueRef a = f->values[in->operands[0]->id].leaves[0], b = f->values[in->operands[1]->id].leaves[0];
  LLVMValueRef c = in->shape->et == IR_F32 ? out : scratch;
  bool bf16 = l->et == IR_BF16;
  int rounding_arg = bf16; /* the bf16 entries take the rounded result's pointer last */
  LLVMValueRef rounded = in->shape->et == IR_BF16 ? out : LLVMConstPointerNull(LLVMTypeOf(out));
  int64_t st[6], n = p->batch * p->m * p->n;
  if (dot_strides(in, p, st)) {
    LLVMValueRef args[15] = {f->ctx_arg,         cg_i64(cm, p->batch), cg_i64(cm, p->m),  cg_i64(cm, p->n),
                             cg_i64(cm, p->k),   a,                    cg_i64(cm, st[0]), cg_i64(cm, st[1]),
                             cg_i64(cm, st[2]),  b,                    cg_i64(cm, st[3]), cg_i64(cm, st[4]),
                             cg_i64(cm, st[5]),  c,                    rounded};
    cg_runtime_call(cm, bf16 ? CG_RT_hlo_rt_gemm_strided_bf16 : CG_RT_hlo_rt_gemm_strided_f16, args,
                    14 + rounding_arg, "");
  } else {
    LLVMValueRef ao = offsets_global(f, l, &p->lb, &p->lm, &p->lk, "dot.lhs.offsets");
    LLVMValueRef bo = ao ? offsets_global(f, r, &p->rb, &p->rk, &p->rn, "dot.rhs.offsets") : NULL;
    if (!bo) {
      cg_fail(cm, in, "out of memory");
      return;
    }
    LLVMValueRef args[11] = {f->ctx_arg, cg_i64(cm, p->batch), cg_i64(cm, p->m), cg_i64(cm, p->n), cg_i64(cm, p->k),
                             a,          ao,                   b,                bo,               c,
                             rounded};
    cg_runtime_call(cm, bf16 ? CG_RT_hlo_rt_gemm_indexed_bf16 : CG_RT_hlo_rt_gemm_indexed_f16, args,
                    10 + rounding_arg, "");
  }
  if (!bf16)
    dot_finish(f, in, c, out, n);
}

/* The f32 kernel's call: bf16/f16 operands converted to f32 copies first, a bf16/f16 result
 * rounded once from the f32 product (in `scratch`, or a scratch of its own when NULL).  False
 * (nothing emitted) without memory for the offset tables. */
static bool dot_gemm_f32(cg_function *f, ir_instr *in, const dot_plan *pp, LLVMValueRef out, LLVMValueRef scratch) {
  cg_module *cm = f->cm;
  dot_plan p = *pp;
  const ir_shape *l = in->operands[0]->shape, *r = in->operands[1]->shape;
  LLVMValueRef a = dot_operand(f, in, 0), b = a ? dot_operand(f, in, 1) : NULL;
  int64_t final_n = 1;
  for (int64_t i = 0; i < in->shape->rank; i++)
    final_n *= in->shape->dims[i];
  LLVMValueRef final_out = out;
  if (a && b && in->shape->et != IR_F32 && in->shape->et != IR_F64)
    out = scratch ? scratch : dot_scratch_f32(f, in, DOT_SLOT_PRODUCT, final_n);
  if (!a || !b || !out)
    return true; /* the error is recorded */
  bool wide = in->shape->et == IR_F64;
  int64_t st[6];
  if (dot_strides(in, &p, st)) {
    LLVMValueRef args[14] = {f->ctx_arg,     cg_i64(cm, p.batch), cg_i64(cm, p.m),     cg_i64(cm, p.n),
                             cg_i64(cm, p.k), a,                   cg_i64(cm, st[0]),   cg_i64(cm, st[1]),
                             cg_i64(cm, st[2]), b,                 cg_i64(cm, st[3]),   cg_i64(cm, st[4]),
                             cg_i64(cm, st[5]), out};
    cg_runtime_call(cm, wide ? CG_RT_hlo_rt_gemm_strided_f64 : CG_RT_hlo_rt_gemm_strided_f32, args, 14, "");
    dot_finish(f, in, out, final_out, final_n);
    return true;
  }
  if (2 * p.batch + p.m + 2 * p.k + p.n > DOT_MAX_TABLE)
    return false;
  LLVMValueRef ao = offsets_global(f, l, &p.lb, &p.lm, &p.lk, "dot.lhs.offsets");
  LLVMValueRef bo = ao ? offsets_global(f, r, &p.rb, &p.rk, &p.rn, "dot.rhs.offsets") : NULL;
  if (!bo)
    return false; /* out of memory: the loop nest needs none */
  LLVMValueRef args[10] = {f->ctx_arg, cg_i64(cm, p.batch), cg_i64(cm, p.m), cg_i64(cm, p.n), cg_i64(cm, p.k),
                           a,          ao,                  b,               bo,              out};
  cg_runtime_call(cm, wide ? CG_RT_hlo_rt_gemm_indexed_f64 : CG_RT_hlo_rt_gemm_indexed_f32, args, 10, "");
  dot_finish(f, in, out, final_out, final_n);
  return true;
}

bool cg_dot_gemm(cg_function *f, ir_instr *in, LLVMValueRef out) {
  dot_plan p;
  int64_t st[6];
  if (!dot_plan_make(in, &p))
    return false;
  if (!dot_strides(in, &p, st) && 2 * p.batch + p.m + 2 * p.k + p.n > DOT_MAX_TABLE)
    return false; /* neither strides nor tables of a sane size: the loop nest */
  if (!dot_half(in))
    return dot_gemm_f32(f, in, &p, out, NULL);
  LLVMValueRef scratch = NULL; /* a half-precision result's f32 product */
  if (in->shape->et != IR_F32 && !(scratch = dot_scratch_f32(f, in, DOT_SLOT_PRODUCT, p.batch * p.m * p.n)))
    return true; /* the error is recorded */
  dot_gemm_half(f, in, &p, out, scratch);
  return true;
}
