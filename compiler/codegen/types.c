/* types.c — the type layer of the code generator: each element type's storage and compute
 * LLVM types, loads and stores that convert between them (bf16 and the 8- and 4-bit floats are
 * f32 values between a load and a store; pred is i1 in registers and a byte in memory;
 * sub-byte integers are one per byte), rounding a computed value to what a buffer holds, and
 * convert's element conversion (saturating float -> int, NaN -> 0).  It calls only the floor
 * (emit.c) and the runtime's declarations (rt_abi.c); every lowering file calls it.
 * Tests: codegen_test.c, the golden suites (convert_*, move_*, the narrow-float cases).
 */
#include <string.h>

#include "codegen/cg_internal.h"

bool cg_is_float_type(ir_etype et) {
  return et == IR_F16 || et == IR_BF16 || et == IR_F32 || et == IR_F64 || cg_is_f8(et);
}

static LLVMValueRef complex_of(cg_module *cm, LLVMTypeRef t, LLVMValueRef re, LLVMValueRef im) {
  LLVMValueRef z = LLVMGetUndef(t);
  z = LLVMBuildInsertValue(cm->b, z, re, 0, "");
  return LLVMBuildInsertValue(cm->b, z, im, 1, "");
}

/* ---- types ------------------------------------------------------------------------------ */

LLVMTypeRef cg_storage_type(cg_module *cm, ir_etype et) {
  switch (ir_etype_table[et].storage_bytes) {
  case 1: return cm->i8;
  case 2: return et == IR_F16 ? cm->f16 : cm->i16;
  case 4: return et == IR_F32 ? cm->f32 : cm->i32;
  case 8: return et == IR_F64 ? cm->f64 : et == IR_C64 ? LLVMStructTypeInContext(cm->ctx, (LLVMTypeRef[]){cm->f32, cm->f32}, 2, 0) : cm->i64;
  case 16: return LLVMStructTypeInContext(cm->ctx, (LLVMTypeRef[]){cm->f64, cm->f64}, 2, 0);
  default: return cm->i8;
  }
}

LLVMTypeRef cg_compute_type(cg_module *cm, ir_etype et) {
  switch (et) {
  case IR_PRED: return cm->i1;
  case IR_S1: case IR_U1: case IR_S2: case IR_U2: case IR_S4: case IR_U4:
    /* sub-byte integers compute at their width (so they wrap like XLA's), stored in a byte */
    return LLVMIntTypeInContext(cm->ctx, (unsigned)ir_etype_table[et].bits);
  case IR_S8: case IR_U8: return cm->i8;
  case IR_S16: case IR_U16: return cm->i16;
  case IR_S32: case IR_U32: return cm->i32;
  case IR_S64: case IR_U64: return cm->i64;
  case IR_F16: return cm->f16;
  case IR_BF16: return cm->f32;
  case IR_F32: return cm->f32;
  case IR_F64: return cm->f64;
  case IR_C64: case IR_C128: return cg_storage_type(cm, et);
  case IR_F8E4M3FN: case IR_F8E5M2: case IR_F8E4M3: case IR_F8E3M4: case IR_F8E4M3FNUZ: case IR_F8E5M2FNUZ:
  case IR_F8E4M3B11FNUZ: case IR_F4E2M1FN: case IR_F8E8M0FNU:
    return cm->f32; /* 8-bit (and 4-bit) floats compute in f32, converted by the runtime on load and store */
  default: return NULL;
  }
}

bool cg_is_f8(ir_etype et) {
  return ir_etype_is_float(et) && ir_etype_table[et].storage_bytes == 1;
}

/* 8-bit float bits <-> f32 through hlo_rt_f8_to_f32 / hlo_rt_f32_to_f8 (hlo/rt.h). */
static LLVMValueRef f8_convert(cg_function *f, ir_etype et, LLVMValueRef v, bool load) {
  cg_module *cm = f->cm;
  LLVMValueRef args[2] = {LLVMConstInt(cm->i32, (unsigned long long)et, 0), v};
  return cg_runtime_call(cm, load ? CG_RT_hlo_rt_f8_to_f32 : CG_RT_hlo_rt_f32_to_f8, args, 2, load ? "f8" : "f8bits");
}

static LLVMValueRef elem_ptr(cg_function *f, ir_etype et, LLVMValueRef base, LLVMValueRef index) {
  return LLVMBuildGEP2(f->cm->b, cg_storage_type(f->cm, et), base, &index, 1, "ep");
}

/* bf16 bits -> float */
static LLVMValueRef bf16_to_f32(cg_function *f, LLVMValueRef bits) {
  LLVMBuilderRef b = f->cm->b;
  LLVMValueRef w = LLVMBuildShl(b, LLVMBuildZExt(b, bits, f->cm->i32, ""), LLVMConstInt(f->cm->i32, 16, 0), "");
  return LLVMBuildBitCast(b, w, f->cm->f32, "bf16");
}

/* float -> bf16 bits, round to nearest even; NaN stays a quiet NaN. */
static LLVMValueRef f32_to_bf16(cg_function *f, LLVMValueRef v) {
  cg_module *cm = f->cm;
  LLVMBuilderRef b = cm->b;
  LLVMValueRef w = LLVMBuildBitCast(b, v, cm->i32, "");
  LLVMValueRef lsb = LLVMBuildAnd(b, LLVMBuildLShr(b, w, LLVMConstInt(cm->i32, 16, 0), ""), LLVMConstInt(cm->i32, 1, 0), "");
  LLVMValueRef rounded = LLVMBuildAdd(b, w, LLVMBuildAdd(b, LLVMConstInt(cm->i32, 0x7FFF, 0), lsb, ""), "");
  LLVMValueRef hi = LLVMBuildTrunc(b, LLVMBuildLShr(b, rounded, LLVMConstInt(cm->i32, 16, 0), ""), cm->i16, "");
  LLVMValueRef qnan = LLVMBuildOr(b, LLVMBuildTrunc(b, LLVMBuildLShr(b, w, LLVMConstInt(cm->i32, 16, 0), ""), cm->i16, ""),
                                  LLVMConstInt(cm->i16, 0x40, 0), "");
  LLVMValueRef isnan = LLVMBuildFCmp(b, LLVMRealUNO, v, v, "");
  return LLVMBuildSelect(b, isnan, qnan, hi, "bf16");
}

/* The bf16 bits v was widened from, when v is bf16_to_f32 of a loaded or moved value, or a
 * select between two such (not a computed value); NULL otherwise.  cg_store writes them back as
 * they were: a value that is only moved keeps its exact bits, a signalling NaN's too, as XLA's
 * copies keep them, and a pure data-movement loop needs no conversion. */
LLVMValueRef cg_bf16_source_bits(cg_function *f, LLVMValueRef v) {
  if (LLVMIsASelectInst(v)) {
    LLVMValueRef t = cg_bf16_source_bits(f, LLVMGetOperand(v, 1));
    LLVMValueRef e = t ? cg_bf16_source_bits(f, LLVMGetOperand(v, 2)) : NULL;
    return e ? LLVMBuildSelect(f->cm->b, LLVMGetOperand(v, 0), t, e, "bf16.moved") : NULL;
  }
  if (!LLVMIsABitCastInst(v))
    return NULL;
  LLVMValueRef shl = LLVMGetOperand(v, 0);
  if (!LLVMIsAInstruction(shl) || LLVMGetInstructionOpcode(shl) != LLVMShl)
    return NULL;
  LLVMValueRef wide = LLVMGetOperand(shl, 0), amount = LLVMGetOperand(shl, 1);
  if (!LLVMIsAZExtInst(wide) || !LLVMIsAConstantInt(amount) || LLVMConstIntGetZExtValue(amount) != 16)
    return NULL;
  LLVMValueRef bits = LLVMGetOperand(wide, 0);
  return LLVMTypeOf(bits) == f->cm->i16 ? bits : NULL;
}

LLVMValueRef cg_bf16_widen(cg_function *f, LLVMValueRef bits) { return bf16_to_f32(f, bits); }

LLVMValueRef cg_load(cg_function *f, ir_etype et, LLVMValueRef base, LLVMValueRef index) {
  cg_module *cm = f->cm;
  LLVMValueRef v = LLVMBuildLoad2(cm->b, cg_storage_type(cm, et), elem_ptr(f, et, base, index), "v");
  if (et == IR_PRED)
    return LLVMBuildICmp(cm->b, LLVMIntNE, v, LLVMConstInt(cm->i8, 0, 0), "p");
  if (et == IR_BF16)
    return bf16_to_f32(f, v);
  if (ir_etype_is_int(et) && ir_etype_table[et].bits < 8)
    return LLVMBuildTrunc(cm->b, v, cg_compute_type(cm, et), "sub");
  if (cg_is_f8(et))
    return f8_convert(f, et, v, true);
  return v;
}

void cg_store(cg_function *f, ir_etype et, LLVMValueRef base, LLVMValueRef index, LLVMValueRef v) {
  cg_module *cm = f->cm;
  if (et == IR_PRED)
    v = LLVMBuildZExt(cm->b, v, cm->i8, "");
  else if (et == IR_BF16) {
    LLVMValueRef bits = cg_bf16_source_bits(f, v);
    v = bits ? bits : f32_to_bf16(f, v);
  } else if (ir_etype_is_int(et) && ir_etype_table[et].bits < 8) /* sign/zero-extend in its byte */
    v = ir_etype_is_signed(et) ? LLVMBuildSExt(cm->b, v, cm->i8, "") : LLVMBuildZExt(cm->b, v, cm->i8, "");
  else if (cg_is_f8(et))
    v = f8_convert(f, et, v, false);
  LLVMBuildStore(cm->b, v, elem_ptr(f, et, base, index));
}

LLVMValueRef cg_round_to(cg_function *f, ir_etype et, LLVMValueRef v) {
  if (et == IR_BF16)
    return bf16_to_f32(f, f32_to_bf16(f, v));
  if (cg_is_f8(et))
    return f8_convert(f, et, f8_convert(f, et, v, false), true);
  return v;
}

/* ---- conversion ------------------------------------------------------------------------------- */

LLVMValueRef cg_fp_to_int_sat(cg_function *f, LLVMValueRef v, LLVMTypeRef t, bool is_signed) {
  cg_module *cm = f->cm;
  /* LLVM 19 lowers llvm.fpto[su]i.sat on half with AVX512-FP16's vcvttph2[u]w, which gives
   * the "integer indefinite" value (INT_MIN) for NaN instead of 0.  Every half is exact in
   * f32, so widening first gives the same answer on every CPU. */
  if (LLVMGetTypeKind(LLVMTypeOf(v)) == LLVMHalfTypeKind)
    v = LLVMBuildFPExt(cm->b, v, cm->f32, "");
  const char *name = is_signed ? "llvm.fptosi.sat" : "llvm.fptoui.sat";
  LLVMTypeRef tys[2] = {t, LLVMTypeOf(v)};
  LLVMValueRef fn = LLVMGetIntrinsicDeclaration(cm->mod, LLVMLookupIntrinsicID(name, strlen(name)), tys, 2);
  return LLVMBuildCall2(cm->b, LLVMGlobalGetValueType(fn), fn, &v, 1, "");
}

LLVMValueRef cg_convert(cg_function *f, LLVMValueRef v, ir_etype from, ir_etype to) {
  cg_module *cm = f->cm;
  LLVMBuilderRef b = cm->b;
  LLVMTypeRef tt = cg_compute_type(cm, to);
  if (from == to || (from == IR_BF16 && to == IR_F32) || (from == IR_F32 && to == IR_BF16))
    return v;
  bool ff = cg_is_float_type(from), tf = cg_is_float_type(to);
  if (ir_etype_is_complex(to)) {
    LLVMTypeRef ct = cg_compute_type(cm, ir_etype_component(to));
    if (ir_etype_is_complex(from)) {
      LLVMValueRef re = LLVMBuildExtractValue(b, v, 0, "re"), im = LLVMBuildExtractValue(b, v, 1, "im");
      return complex_of(cm, tt, LLVMBuildFPCast(b, re, ct, ""), LLVMBuildFPCast(b, im, ct, ""));
    }
    return complex_of(cm, tt, cg_convert(f, v, from, ir_etype_component(to)), LLVMConstReal(ct, 0));
  }
  if (ir_etype_is_complex(from))
    return cg_convert(f, LLVMBuildExtractValue(b, v, 0, "re"), ir_etype_component(from), to);
  if (to == IR_PRED)
    return ff ? LLVMBuildFCmp(b, LLVMRealUNE, v, LLVMConstReal(LLVMTypeOf(v), 0), "")
              : LLVMBuildICmp(b, LLVMIntNE, v, LLVMConstInt(LLVMTypeOf(v), 0, 0), "");
  if (from == IR_PRED)
    return tf ? LLVMBuildUIToFP(b, v, tt, "") : LLVMBuildZExt(b, v, tt, "");
  if (ff && tf) /* bf16 and the 8-bit floats are already f32 values here */
    return LLVMBuildFPCast(b, v, tt, "");
  if (ff)
    return cg_fp_to_int_sat(f, v, tt, ir_etype_is_signed(to));
  if (tf)
    return ir_etype_is_signed(from) ? LLVMBuildSIToFP(b, v, tt, "") : LLVMBuildUIToFP(b, v, tt, "");
  return LLVMBuildIntCast2(b, v, tt, ir_etype_is_signed(from), "");
}
