/* rng.c — lowers rng, rng-bit-generator and rng-get-and-update-state to the runtime's
 * hlo_rt_rng, hlo_rt_rng_bits and hlo_rt_rng_state (runtime/src/kernels/rt_rng.c).  rng of f16/bf16
 * draws f32 values into a scratch buffer and rounds them; RNG_DEFAULT is PHILOX, as on XLA's
 * CPU backend.  Tests: testdata/golden/rng_*, conformance rng-bit-generator.
 */
#include "codegen/cg_internal.h"
#include "hlo/rt.h"

static LLVMValueRef i32c(cg_module *cm, int64_t v) { return LLVMConstInt(cm->i32, (unsigned long long)v, 1); }

/* Element types whose bits rng-bit-generator fills (XLA: any array type but pred, complex and
 * sub-byte types). */
static bool bits_type(ir_etype et) {
  int bytes = ir_etype_table[et].storage_bytes;
  return et != IR_PRED && !ir_etype_is_complex(et) && ir_etype_is_array(et) &&
         ir_etype_table[et].bits == 8 * bytes && (bytes == 1 || bytes == 2 || bytes == 4 || bytes == 8);
}

void cg_lower_rng_bit_generator(cg_function *f, ir_instr *in) {
  cg_module *cm = f->cm;
  const ir_shape *st = in->operands[0]->shape, *data = in->shape->elems[1];
  if (!bits_type(data->et)) {
    cg_fail(cm, in, "rng-bit-generator cannot produce %s elements", ir_etype_table[data->et].spelling);
    return;
  }
  ir_rng_algo alg = in->attrs.u.rng_bit_generator.algorithm;
  int64_t n_state = st->rank == 1 ? st->dims[0] : 0;
  if (st->et != IR_U64 || (alg == IR_RNG_ALG_THREE_FRY ? n_state != 2 : (n_state != 2 && n_state != 3))) {
    cg_fail(cm, in, "rng-bit-generator: the state must be u64[2]%s", alg == IR_RNG_ALG_THREE_FRY ? "" : " or u64[3]");
    return;
  }
  cg_value r = cg_result_value(f, in);
  int rank = data->rank;
  LLVMValueRef dims = cg_entry_alloca(f, LLVMArrayType2(cm->i64, (uint64_t)(rank ? rank : 1)), "dims");
  for (int d = 0; d < rank; d++)
    LLVMBuildStore(cm->b, cg_i64(cm, data->dims[d]),
                   LLVMBuildGEP2(cm->b, cm->i64, dims, (LLVMValueRef[]){cg_i64(cm, d)}, 1, ""));
  LLVMValueRef args[8] = {i32c(cm, alg == IR_RNG_ALG_THREE_FRY ? 0 : 1), f->values[in->operands[0]->id].leaves[0],
                          i32c(cm, n_state), r.leaves[0], r.leaves[1],
                          i32c(cm, ir_etype_table[data->et].storage_bytes), i32c(cm, rank), dims};
  cg_fail_if_status(f, cg_runtime_call(cm, CG_RT_hlo_rt_rng_bits, args, 8, "st"));
  f->values[in->id] = r;
}

void cg_lower_rng_state(cg_function *f, ir_instr *in) {
  cg_module *cm = f->cm;
  cg_value r = cg_result_value(f, in);
  cg_runtime_call(cm, CG_RT_hlo_rt_rng_state,
                  (LLVMValueRef[]){f->ctx_arg, cg_i64(cm, in->attrs.u.rng_state.delta), r.leaves[0]}, 3, "");
  f->values[in->id] = r;
}

/* rng's scalar bound k as the runtime reads it: the operand's buffer, or an f32 copy. */
static LLVMValueRef bound(cg_function *f, ir_instr *in, int k, bool widen) {
  ir_instr *op = in->operands[k];
  LLVMValueRef p = f->values[op->id].leaves[0];
  if (!widen)
    return p;
  LLVMValueRef w = cg_entry_alloca(f, f->cm->f32, "bound");
  LLVMValueRef v = cg_load(f, op->shape->et, p, cg_i64(f->cm, 0));
  cg_store(f, IR_F32, w, cg_i64(f->cm, 0), cg_convert(f, v, op->shape->et, IR_F32));
  return w;
}

void cg_lower_rng(cg_function *f, ir_instr *in) {
  cg_module *cm = f->cm;
  ir_etype et = in->shape->et;
  bool flt = ir_etype_is_float(et), wide = et == IR_F16 || et == IR_BF16;
  int bytes = ir_etype_table[et].storage_bytes;
  bool ok = flt ? (wide || et == IR_F32 || et == IR_F64)
                : et == IR_PRED || (ir_etype_is_int(et) && ir_etype_table[et].bits == 8 * bytes);
  if (!ok || (!flt && in->attrs.u.rng.distribution == IR_RNG_NORMAL)) {
    cg_fail(cm, in, "rng %s of %s elements is not defined", in->attrs.u.rng.distribution == IR_RNG_NORMAL ? "normal" : "uniform",
            ir_etype_table[et].spelling);
    return;
  }
  cg_value r = cg_result_value(f, in);
  int64_t n;
  ir_shape_num_elements(in->shape, &n);
  LLVMValueRef out = r.leaves[0];
  if (wide) {
    ir_shape w = *in->shape;
    w.et = IR_F32;
    out = cg_alloc_leaf(f, &w);
  }
  LLVMValueRef args[9] = {f->ctx_arg, i32c(cm, in->attrs.u.rng.distribution == IR_RNG_NORMAL), i32c(cm, flt),
                          i32c(cm, wide ? 4 : bytes), i32c(cm, ir_etype_is_signed(et)), bound(f, in, 0, wide),
                          bound(f, in, 1, wide), out, cg_i64(cm, n)};
  cg_runtime_call(cm, CG_RT_hlo_rt_rng, args, 9, "");
  if (wide) {
    cg_loop l = cg_loop_begin(f, cg_i64(cm, n), "rng.narrow");
    cg_store(f, et, r.leaves[0], l.i, cg_convert(f, cg_load(f, IR_F32, out, l.i), IR_F32, et));
    cg_loop_end(f, &l);
  }
  f->values[in->id] = r;
}
