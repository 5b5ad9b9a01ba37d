/* linalg.c — lowers cholesky and triangular-solve to hlo_rt_cholesky / hlo_rt_triangular_solve
 * (runtime/src/kernels/rt_linalg.c).  f32, f64, c64 and c128 buffers go to the runtime as they are;
 * f16 and bf16 are widened into f32 scratch buffers first and rounded back afterwards.
 * Tests: testdata/golden/cholesky_*, triangular_solve_*, conformance triangular-solve.
 */
#include "codegen/cg_internal.h"
#include "hlo/rt.h"

/* The runtime's element kind for et; -1 for f16/bf16 (computed through f32). */
static int la_kind(ir_etype et) {
  switch (et) {
  case IR_F32: return HLO_RT_LA_F32;
  case IR_F64: return HLO_RT_LA_F64;
  case IR_C64: return HLO_RT_LA_C64;
  case IR_C128: return HLO_RT_LA_C128;
  default: return -1;
  }
}

static bool la_supported(cg_function *f, ir_instr *in) {
  ir_etype et = in->shape->et;
  if (la_kind(et) >= 0 || et == IR_F16 || et == IR_BF16)
    return true;
  cg_fail(f->cm, in, "%s of %s elements: only f16, bf16, f32, f64, c64 and c128 are defined",
          ir_opcode_table[in->op].spelling, ir_etype_table[et].spelling);
  return false;
}

/* Copies n elements from src (type from) to dst (type to), converting. */
static void convert_copy(cg_function *f, LLVMValueRef dst, ir_etype to, LLVMValueRef src, ir_etype from, int64_t n) {
  cg_loop l = cg_loop_begin(f, cg_i64(f->cm, n), "la.cvt");
  LLVMValueRef v = cg_load(f, from, src, l.i);
  cg_store(f, to, dst, l.i, cg_convert(f, v, from, to));
  cg_loop_end(f, &l);
}

/* A buffer of s's elements in the runtime's type: the leaf itself, or an f32 copy. */
static LLVMValueRef widen(cg_function *f, const ir_shape *s, LLVMValueRef leaf, bool copy) {
  if (la_kind(s->et) >= 0)
    return leaf;
  ir_shape w = *s;
  w.et = IR_F32;
  LLVMValueRef buf = cg_alloc_leaf(f, &w);
  int64_t n;
  ir_shape_num_elements(s, &n);
  if (copy)
    convert_copy(f, buf, IR_F32, leaf, s->et, n);
  return buf;
}

static void narrow(cg_function *f, const ir_shape *s, LLVMValueRef leaf, LLVMValueRef buf) {
  if (la_kind(s->et) >= 0)
    return;
  int64_t n;
  ir_shape_num_elements(s, &n);
  convert_copy(f, leaf, s->et, buf, IR_F32, n);
}

static LLVMValueRef i32c(cg_module *cm, int64_t v) { return LLVMConstInt(cm->i32, (unsigned long long)v, 1); }

static int64_t batch_of(const ir_shape *s) {
  int64_t b = 1;
  for (int d = 0; d + 2 < s->rank; d++)
    b *= s->dims[d];
  return b;
}

static int32_t kind_of(ir_etype et) { return la_kind(et) >= 0 ? la_kind(et) : HLO_RT_LA_F32; }

void cg_lower_cholesky(cg_function *f, ir_instr *in) {
  cg_module *cm = f->cm;
  if (!la_supported(f, in))
    return;
  const ir_shape *s = in->shape;
  cg_value r = cg_result_value(f, in);
  LLVMValueRef a = widen(f, s, f->values[in->operands[0]->id].leaves[0], true);
  LLVMValueRef out = widen(f, s, r.leaves[0], false);
  LLVMValueRef args[7] = {f->ctx_arg, i32c(cm, kind_of(s->et)), cg_i64(cm, batch_of(s)),
                          cg_i64(cm, s->rank ? s->dims[s->rank - 1] : 1), a, out,
                          i32c(cm, in->attrs.u.cholesky.lower)};
  cg_fail_if_status(f, cg_runtime_call(cm, CG_RT_hlo_rt_cholesky, args, 7, "st"));
  narrow(f, s, r.leaves[0], out);
  f->values[in->id] = r;
}

void cg_lower_triangular_solve(cg_function *f, ir_instr *in) {
  cg_module *cm = f->cm;
  if (!la_supported(f, in))
    return;
  const ir_shape *sa = in->operands[0]->shape, *s = in->shape;
  cg_value r = cg_result_value(f, in);
  LLVMValueRef a = widen(f, sa, f->values[in->operands[0]->id].leaves[0], true);
  LLVMValueRef b = widen(f, s, f->values[in->operands[1]->id].leaves[0], true);
  LLVMValueRef out = widen(f, s, r.leaves[0], false);
  const int64_t *d = s->dims;
  int rk = s->rank;
  LLVMValueRef args[13] = {f->ctx_arg, i32c(cm, kind_of(s->et)), cg_i64(cm, batch_of(s)),
                           cg_i64(cm, sa->dims[sa->rank - 1]), cg_i64(cm, d[rk - 2]), cg_i64(cm, d[rk - 1]), a, b,
                           out, i32c(cm, in->attrs.u.triangular_solve.left_side),
                           i32c(cm, in->attrs.u.triangular_solve.lower),
                           i32c(cm, in->attrs.u.triangular_solve.unit_diagonal),
                           i32c(cm, (int)in->attrs.u.triangular_solve.transpose_a)};
  cg_fail_if_status(f, cg_runtime_call(cm, CG_RT_hlo_rt_triangular_solve, args, 13, "st"));
  narrow(f, s, r.leaves[0], out);
  f->values[in->id] = r;
}
