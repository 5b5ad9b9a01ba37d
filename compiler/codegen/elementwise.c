/* elementwise.c — one element of every elementwise operation with XLA's CPU numerics: float
 * and integer math (integer division by zero, shifts out of range, NaN-propagating min/max,
 * pow of integers), complex arithmetic, compare (total order included), select, clamp,
 * convert and stochastic-convert: the elementwise families' rules, each with its element
 * function (lower.c's table names them), and cg_elementwise_apply / cg_elementwise_value,
 * which loops and fusions call.  A new elementwise op's rule goes here.  It calls the floor, types.c, vmath.c and the runtime's declarations, and reads the
 * rule table (never calls a lowering).
 * Tests: codegen_test.c, ops_test.c, the golden suites (unary_*, binary_*, compare_*, ...).
 */
#include <stdlib.h>
#include <string.h>

#include "codegen/cg_internal.h"
#include "codegen/ops.h"
#include "codegen/vmath.h"
#include "hlo/rt.h"

/* ---- helpers ------------------------------------------------------------------------------ */

static LLVMValueRef call_math(cg_function *f, const char *intrinsic, const char *libm32, const char *libm64,
                              LLVMValueRef *args, int n) {
  cg_module *cm = f->cm;
  LLVMTypeRef t = LLVMTypeOf(args[0]);
  if (intrinsic) {
    LLVMValueRef fn = cg_intrinsic(cm, intrinsic, t, n);
    LLVMTypeRef ft = LLVMGlobalGetValueType(fn);
    return LLVMBuildCall2(cm->b, ft, fn, args, (unsigned)n, "");
  }
  bool half = t == cm->f16;
  LLVMValueRef *a = args, conv[2];
  if (half) { /* compute f16 math in f32, as XLA's CPU backend does */
    for (int i = 0; i < n; i++)
      conv[i] = LLVMBuildFPExt(cm->b, args[i], cm->f32, "");
    a = conv;
    t = cm->f32;
  }
  const char *name = t == cm->f64 ? libm64 : libm32;
  LLVMTypeRef ats[2] = {t, t};
  LLVMTypeRef ft = LLVMFunctionType(t, ats, (unsigned)n, 0);
  LLVMValueRef r = LLVMBuildCall2(cm->b, ft, cg_libm_fn(cm, name, ft), a, (unsigned)n, "");
  return half ? LLVMBuildFPTrunc(cm->b, r, cm->f16, "") : r;
}

static LLVMValueRef fconst(LLVMTypeRef t, double v) { return LLVMConstReal(t, v); }


/* ---- complex ------------------------------------------------------------------------------ */

/* A complex function from the runtime (hlo_rt_complex_op), values passed through stack slots. */
static LLVMValueRef complex_runtime(cg_function *f, int op, LLVMValueRef a, LLVMValueRef c) {
  cg_module *cm = f->cm;
  LLVMBuilderRef b = cm->b;
  LLVMTypeRef t = LLVMTypeOf(a);
  bool dbl = LLVMStructGetTypeAtIndex(t, 0) == cm->f64;
  LLVMValueRef sa = cg_entry_alloca(f, t, "cslot"), sc = cg_entry_alloca(f, t, "cslot"), so = cg_entry_alloca(f, t, "cslot");
  LLVMBuildStore(b, a, sa);
  if (c)
    LLVMBuildStore(b, c, sc);
  LLVMValueRef args[5] = {LLVMConstInt(cm->i32, (unsigned long long)op, 0), LLVMConstInt(cm->i32, dbl, 0), sa,
                          c ? sc : LLVMConstNull(cm->ptr), so};
  cg_runtime_call(cm, CG_RT_hlo_rt_complex_op, args, 5, "");
  return LLVMBuildLoad2(b, t, so, "cres");
}

static LLVMValueRef cre(cg_module *cm, LLVMValueRef z) { return LLVMBuildExtractValue(cm->b, z, 0, "re"); }
static LLVMValueRef cim(cg_module *cm, LLVMValueRef z) { return LLVMBuildExtractValue(cm->b, z, 1, "im"); }
static LLVMValueRef cmake(cg_module *cm, LLVMTypeRef t, LLVMValueRef re, LLVMValueRef im) {
  LLVMValueRef z = LLVMGetUndef(t);
  z = LLVMBuildInsertValue(cm->b, z, re, 0, "");
  return LLVMBuildInsertValue(cm->b, z, im, 1, "");
}

static LLVMValueRef fabs_of(cg_function *f, LLVMValueRef x) { return call_math(f, "llvm.fabs", NULL, NULL, &x, 1); }
static LLVMValueRef copysign_of(cg_function *f, LLVMValueRef mag, LLVMValueRef sgn) {
  return call_math(f, "llvm.copysign", NULL, NULL, (LLVMValueRef[]){mag, sgn}, 2);
}
static LLVMValueRef fcmp(cg_function *f, LLVMRealPredicate p, LLVMValueRef a, LLVMValueRef c) {
  return LLVMBuildFCmp(f->cm->b, p, a, c, "");
}
static LLVMValueRef sel(cg_function *f, LLVMValueRef c, LLVMValueRef a, LLVMValueRef d) {
  return LLVMBuildSelect(f->cm->b, c, a, d, "");
}

/* (ar + i ai) / (br + i bi) by Smith's algorithm (divide by the larger of |br|, |bi|), then
 * XLA's corner cases when that gives NaN + NaN i: a zero divisor (infinities signed like
 * the dividend), an infinite dividend over a finite divisor, a finite dividend over an
 * infinite divisor (zeros). */
static LLVMValueRef complex_divide(cg_function *f, LLVMTypeRef t, LLVMValueRef ar, LLVMValueRef ai, LLVMValueRef br,
                                   LLVMValueRef bi) {
  LLVMBuilderRef b = f->cm->b;
  LLVMTypeRef et = LLVMTypeOf(ar);
  LLVMValueRef zero = fconst(et, 0.0), one = fconst(et, 1.0), inf = fconst(et, 1.0 / 0.0);
  /* |br| < |bi|: q = br/bi, den = bi + br*q; else q = bi/br, den = br + bi*q */
  LLVMValueRef small_re = fcmp(f, LLVMRealOLT, fabs_of(f, br), fabs_of(f, bi));
  LLVMValueRef q1 = LLVMBuildFDiv(b, br, bi, ""), d1 = LLVMBuildFAdd(b, bi, LLVMBuildFMul(b, q1, br, ""), "");
  LLVMValueRef q2 = LLVMBuildFDiv(b, bi, br, ""), d2 = LLVMBuildFAdd(b, br, LLVMBuildFMul(b, q2, bi, ""), "");
  LLVMValueRef re1 = LLVMBuildFDiv(b, LLVMBuildFAdd(b, LLVMBuildFMul(b, q1, ar, ""), ai, ""), d1, "");
  LLVMValueRef im1 = LLVMBuildFDiv(b, LLVMBuildFSub(b, LLVMBuildFMul(b, q1, ai, ""), ar, ""), d1, "");
  LLVMValueRef re2 = LLVMBuildFDiv(b, LLVMBuildFAdd(b, LLVMBuildFMul(b, q2, ai, ""), ar, ""), d2, "");
  LLVMValueRef im2 = LLVMBuildFDiv(b, LLVMBuildFSub(b, ai, LLVMBuildFMul(b, q2, ar, ""), ""), d2, "");
  LLVMValueRef re = sel(f, small_re, re1, re2), im = sel(f, small_re, im1, im2);
  LLVMValueRef both_nan = LLVMBuildAnd(b, fcmp(f, LLVMRealUNO, re, re), fcmp(f, LLVMRealUNO, im, im), "");
  /* 1: zero divisor, a dividend that is not NaN + NaN i */
  LLVMValueRef zero_den = LLVMBuildAnd(b, LLVMBuildAnd(b, fcmp(f, LLVMRealOEQ, br, zero), fcmp(f, LLVMRealOEQ, bi, zero), ""),
                                       LLVMBuildOr(b, fcmp(f, LLVMRealORD, ar, zero), fcmp(f, LLVMRealORD, ai, zero), ""), "");
  LLVMValueRef sinf = copysign_of(f, inf, br);
  LLVMValueRef z_re = LLVMBuildFMul(b, sinf, ar, ""), z_im = LLVMBuildFMul(b, sinf, ai, "");
  /* 2: infinite dividend, finite divisor */
  LLVMValueRef br_fin = fcmp(f, LLVMRealONE, fabs_of(f, br), inf), bi_fin = fcmp(f, LLVMRealONE, fabs_of(f, bi), inf);
  LLVMValueRef ar_inf = fcmp(f, LLVMRealOEQ, fabs_of(f, ar), inf), ai_inf = fcmp(f, LLVMRealOEQ, fabs_of(f, ai), inf);
  LLVMValueRef inf_num = LLVMBuildAnd(b, LLVMBuildOr(b, ar_inf, ai_inf, ""), LLVMBuildAnd(b, br_fin, bi_fin, ""), "");
  LLVMValueRef ar1 = copysign_of(f, sel(f, ar_inf, one, zero), ar), ai1 = copysign_of(f, sel(f, ai_inf, one, zero), ai);
  LLVMValueRef n_re = LLVMBuildFMul(b, inf, LLVMBuildFAdd(b, LLVMBuildFMul(b, ar1, br, ""), LLVMBuildFMul(b, ai1, bi, ""), ""), "");
  LLVMValueRef n_im = LLVMBuildFMul(b, inf, LLVMBuildFSub(b, LLVMBuildFMul(b, ai1, br, ""), LLVMBuildFMul(b, ar1, bi, ""), ""), "");
  /* 3: finite dividend, infinite divisor */
  LLVMValueRef ar_fin = fcmp(f, LLVMRealONE, fabs_of(f, ar), inf), ai_fin = fcmp(f, LLVMRealONE, fabs_of(f, ai), inf);
  LLVMValueRef br_inf = fcmp(f, LLVMRealOEQ, fabs_of(f, br), inf), bi_inf = fcmp(f, LLVMRealOEQ, fabs_of(f, bi), inf);
  LLVMValueRef inf_den = LLVMBuildAnd(b, LLVMBuildOr(b, br_inf, bi_inf, ""), LLVMBuildAnd(b, ar_fin, ai_fin, ""), "");
  LLVMValueRef br1 = copysign_of(f, sel(f, br_inf, one, zero), br), bi1 = copysign_of(f, sel(f, bi_inf, one, zero), bi);
  LLVMValueRef d_re = LLVMBuildFMul(b, zero, LLVMBuildFAdd(b, LLVMBuildFMul(b, ar, br1, ""), LLVMBuildFMul(b, ai, bi1, ""), ""), "");
  LLVMValueRef d_im = LLVMBuildFMul(b, zero, LLVMBuildFSub(b, LLVMBuildFMul(b, ai, br1, ""), LLVMBuildFMul(b, ar, bi1, ""), ""), "");
  LLVMValueRef fix_re = sel(f, zero_den, z_re, sel(f, inf_num, n_re, sel(f, inf_den, d_re, re)));
  LLVMValueRef fix_im = sel(f, zero_den, z_im, sel(f, inf_num, n_im, sel(f, inf_den, d_im, im)));
  return cmake(f->cm, t, sel(f, both_nan, fix_re, re), sel(f, both_nan, fix_im, im));
}

/* sqrt in polar form like XLA: sqrt(|z|) * (cos(t/2) + i sin(t/2)), t = atan2(im, re), with
 * its infinity/NaN rules; sqrt(0) = 0. */
static LLVMValueRef complex_sqrt(cg_function *f, LLVMTypeRef t, LLVMValueRef a, LLVMValueRef c) {
  LLVMBuilderRef b = f->cm->b;
  LLVMTypeRef et = LLVMTypeOf(a);
  LLVMValueRef zero = fconst(et, 0.0), inf = fconst(et, 1.0 / 0.0), ninf = fconst(et, -1.0 / 0.0);
  LLVMValueRef nan = fconst(et, 0.0 / 0.0);
  LLVMValueRef mod = call_math(f, NULL, "hypotf", "hypot", (LLVMValueRef[]){a, c}, 2);
  LLVMValueRef r = call_math(f, "llvm.sqrt", NULL, NULL, &mod, 1);
  LLVMValueRef half = LLVMBuildFMul(b, call_math(f, NULL, "atan2f", "atan2", (LLVMValueRef[]){c, a}, 2), fconst(et, 0.5), "");
  LLVMValueRef co = call_math(f, "llvm.cos", NULL, NULL, &half, 1), si = call_math(f, "llvm.sin", NULL, NULL, &half, 1);
  LLVMValueRef abs_c = fabs_of(f, c);
  LLVMValueRef c_inf = fcmp(f, LLVMRealOEQ, abs_c, inf);
  LLVMValueRef re = sel(f, LLVMBuildOr(b, c_inf, fcmp(f, LLVMRealOEQ, a, inf), ""), inf,
                        sel(f, LLVMBuildAnd(b, fcmp(f, LLVMRealOEQ, a, ninf), fcmp(f, LLVMRealONE, abs_c, inf), ""), zero,
                            LLVMBuildFMul(b, r, co, "")));
  LLVMValueRef im = sel(f, LLVMBuildOr(b, c_inf, fcmp(f, LLVMRealOEQ, a, ninf), ""), copysign_of(f, inf, c),
                        sel(f, fcmp(f, LLVMRealUNO, r, r), nan,
                            sel(f, fcmp(f, LLVMRealOEQ, si, zero), si, LLVMBuildFMul(b, r, si, ""))));
  LLVMValueRef is0 = fcmp(f, LLVMRealOEQ, r, zero);
  return cmake(f->cm, t, sel(f, is0, zero, re), sel(f, is0, zero, im));
}

static LLVMValueRef complex_binary(cg_function *f, ir_instr *in, LLVMValueRef a, LLVMValueRef c) {
  cg_module *cm = f->cm;
  LLVMBuilderRef b = cm->b;
  LLVMTypeRef t = LLVMTypeOf(a);
  LLVMValueRef ar = cre(cm, a), ai = cim(cm, a), br = cre(cm, c), bi = cim(cm, c);
  switch (in->op) {
  case IR_OP_ADD: return cmake(cm, t, LLVMBuildFAdd(b, ar, br, ""), LLVMBuildFAdd(b, ai, bi, ""));
  case IR_OP_SUBTRACT: return cmake(cm, t, LLVMBuildFSub(b, ar, br, ""), LLVMBuildFSub(b, ai, bi, ""));
  case IR_OP_MULTIPLY:
    return cmake(cm, t, LLVMBuildFSub(b, LLVMBuildFMul(b, ar, br, ""), LLVMBuildFMul(b, ai, bi, ""), ""),
                 LLVMBuildFAdd(b, LLVMBuildFMul(b, ar, bi, ""), LLVMBuildFMul(b, ai, br, ""), ""));
  case IR_OP_DIVIDE: return complex_divide(f, t, ar, ai, br, bi);
  case IR_OP_POWER: return complex_runtime(f, HLO_RT_C_POW, a, c);
  case IR_OP_COMPARE: {
    LLVMValueRef e = LLVMBuildAnd(b, LLVMBuildFCmp(b, LLVMRealOEQ, ar, br, ""), LLVMBuildFCmp(b, LLVMRealOEQ, ai, bi, ""), "");
    return in->attrs.u.compare.dir == IR_CMP_EQ ? e : LLVMBuildNot(b, e, "");
  }
  default:
    cg_fail(cm, in, "'%s' on complex numbers cannot be compiled yet", ir_opcode_table[in->op].spelling);
    return LLVMGetUndef(t);
  }
}

static LLVMValueRef complex_unary(cg_function *f, ir_instr *in, LLVMValueRef z) {
  cg_module *cm = f->cm;
  LLVMBuilderRef b = cm->b;
  LLVMTypeRef t = LLVMTypeOf(z);
  LLVMValueRef re = cre(cm, z), im = cim(cm, z);
  const char *hyp32 = "hypotf", *hyp64 = "hypot";
  switch (in->op) {
  case IR_OP_REAL: return re;
  case IR_OP_IMAG: return im;
  case IR_OP_NEGATE: return cmake(cm, t, LLVMBuildFNeg(b, re, ""), LLVMBuildFNeg(b, im, ""));
  case IR_OP_ABS: return call_math(f, NULL, hyp32, hyp64, (LLVMValueRef[]){re, im}, 2);
  case IR_OP_EXP: {
    LLVMValueRef e = call_math(f, "llvm.exp", NULL, NULL, &re, 1);
    return cmake(cm, t, LLVMBuildFMul(b, e, call_math(f, "llvm.cos", NULL, NULL, &im, 1), ""),
                 LLVMBuildFMul(b, e, call_math(f, "llvm.sin", NULL, NULL, &im, 1), ""));
  }
  case IR_OP_LOG: {
    LLVMValueRef r = call_math(f, NULL, hyp32, hyp64, (LLVMValueRef[]){re, im}, 2);
    return cmake(cm, t, call_math(f, "llvm.log", NULL, NULL, &r, 1),
                 call_math(f, NULL, "atan2f", "atan2", (LLVMValueRef[]){im, re}, 2));
  }
  case IR_OP_SQRT: return complex_sqrt(f, t, re, im);
  case IR_OP_SIN: return complex_runtime(f, HLO_RT_C_SIN, z, NULL);
  case IR_OP_COS: return complex_runtime(f, HLO_RT_C_COS, z, NULL);
  case IR_OP_TAN: return complex_runtime(f, HLO_RT_C_TAN, z, NULL);
  case IR_OP_TANH: return complex_runtime(f, HLO_RT_C_TANH, z, NULL);
  case IR_OP_SINH: return complex_runtime(f, HLO_RT_C_SINH, z, NULL);
  case IR_OP_COSH: return complex_runtime(f, HLO_RT_C_COSH, z, NULL);
  case IR_OP_ASIN: return complex_runtime(f, HLO_RT_C_ASIN, z, NULL);
  case IR_OP_ACOS: return complex_runtime(f, HLO_RT_C_ACOS, z, NULL);
  case IR_OP_ATAN: return complex_runtime(f, HLO_RT_C_ATAN, z, NULL);
  case IR_OP_ASINH: return complex_runtime(f, HLO_RT_C_ASINH, z, NULL);
  case IR_OP_ACOSH: return complex_runtime(f, HLO_RT_C_ACOSH, z, NULL);
  case IR_OP_ATANH: return complex_runtime(f, HLO_RT_C_ATANH, z, NULL);
  case IR_OP_EXPM1: return complex_runtime(f, HLO_RT_C_EXPM1, z, NULL);
  case IR_OP_LOG1P: return complex_runtime(f, HLO_RT_C_LOG1P, z, NULL);
  case IR_OP_RSQRT: return complex_runtime(f, HLO_RT_C_RSQRT, z, NULL);
  case IR_OP_SIGN: return complex_runtime(f, HLO_RT_C_SIGN, z, NULL);
  case IR_OP_LOGISTIC: return complex_runtime(f, HLO_RT_C_LOGISTIC, z, NULL);
  case IR_OP_CBRT: return complex_runtime(f, HLO_RT_C_CBRT, z, NULL);
  default:
    cg_fail(cm, in, "'%s' on complex numbers cannot be compiled", ir_opcode_table[in->op].spelling);
    return LLVMGetUndef(t);
  }
}

/* ---- integer and float elementwise ---------------------------------------------------------- */

static LLVMValueRef int_divrem(cg_function *f, ir_opcode op, LLVMValueRef a, LLVMValueRef c, bool is_signed) {
  cg_module *cm = f->cm;
  LLVMBuilderRef b = cm->b;
  LLVMTypeRef t = LLVMTypeOf(a);
  unsigned bits = LLVMGetIntTypeWidth(t);
  LLVMValueRef zero = LLVMConstInt(t, 0, 0), one = LLVMConstInt(t, 1, 0);
  LLVMValueRef by_zero = LLVMBuildICmp(b, LLVMIntEQ, c, zero, "");
  LLVMValueRef overflow = LLVMConstInt(cm->i1, 0, 0);
  if (is_signed) {
    LLVMValueRef min = LLVMConstInt(t, 1ull << (bits - 1), 0);
    overflow = LLVMBuildAnd(b, LLVMBuildICmp(b, LLVMIntEQ, a, min, ""),
                            LLVMBuildICmp(b, LLVMIntEQ, c, LLVMConstAllOnes(t), ""), "");
  }
  LLVMValueRef unsafe = LLVMBuildOr(b, by_zero, overflow, "");
  LLVMValueRef safe_c = LLVMBuildSelect(b, unsafe, one, c, "");
  if (op == IR_OP_DIVIDE) {
    LLVMValueRef q = is_signed ? LLVMBuildSDiv(b, a, safe_c, "") : LLVMBuildUDiv(b, a, safe_c, "");
    /* x/0 = -1 (all ones); INT_MIN/-1 = INT_MIN */
    return LLVMBuildSelect(b, by_zero, LLVMConstAllOnes(t), LLVMBuildSelect(b, overflow, a, q, ""), "");
  }
  LLVMValueRef r = is_signed ? LLVMBuildSRem(b, a, safe_c, "") : LLVMBuildURem(b, a, safe_c, "");
  return LLVMBuildSelect(b, by_zero, a, LLVMBuildSelect(b, overflow, zero, r, ""), "");
}

static LLVMValueRef int_shift(cg_function *f, ir_opcode op, LLVMValueRef a, LLVMValueRef c) {
  LLVMBuilderRef b = f->cm->b;
  LLVMTypeRef t = LLVMTypeOf(a);
  unsigned bits = LLVMGetIntTypeWidth(t);
  LLVMValueRef too_far = LLVMBuildICmp(b, LLVMIntUGE, c, LLVMConstInt(t, bits, 0), "");
  LLVMValueRef safe = LLVMBuildSelect(b, too_far, LLVMConstInt(t, 0, 0), c, "");
  if (op == IR_OP_SHIFT_LEFT)
    return LLVMBuildSelect(b, too_far, LLVMConstInt(t, 0, 0), LLVMBuildShl(b, a, safe, ""), "");
  if (op == IR_OP_SHIFT_RIGHT_LOGICAL)
    return LLVMBuildSelect(b, too_far, LLVMConstInt(t, 0, 0), LLVMBuildLShr(b, a, safe, ""), "");
  LLVMValueRef fill = LLVMBuildAShr(b, a, LLVMConstInt(t, bits - 1, 0), "");
  return LLVMBuildSelect(b, too_far, fill, LLVMBuildAShr(b, a, safe, ""), "");
}

/* mulhi: the high half of the full product, computed at twice the width (sign-extended for
 * signed types, zero-extended for unsigned; docs/ops.md note 3). */
static LLVMValueRef int_mulhi(cg_function *f, LLVMValueRef a, LLVMValueRef c, bool is_signed) {
  LLVMBuilderRef b = f->cm->b;
  LLVMTypeRef t = LLVMTypeOf(a);
  unsigned bits = LLVMGetIntTypeWidth(t);
  LLVMTypeRef wide = LLVMIntTypeInContext(f->cm->ctx, 2 * bits);
  LLVMValueRef wa = is_signed ? LLVMBuildSExt(b, a, wide, "") : LLVMBuildZExt(b, a, wide, "");
  LLVMValueRef wc = is_signed ? LLVMBuildSExt(b, c, wide, "") : LLVMBuildZExt(b, c, wide, "");
  LLVMValueRef hi = LLVMBuildLShr(b, LLVMBuildMul(b, wa, wc, ""), LLVMConstInt(wide, bits, 0), "");
  return LLVMBuildTrunc(b, hi, t, "mulhi");
}

static LLVMValueRef int_pow(cg_function *f, LLVMValueRef base, LLVMValueRef e) {
  /* Exponentiation by squaring over 6 bits; negative exponents give 1 for base 1, else 0. */
  LLVMBuilderRef b = f->cm->b;
  LLVMTypeRef t = LLVMTypeOf(base);
  LLVMValueRef one = LLVMConstInt(t, 1, 0), zero = LLVMConstInt(t, 0, 0);
  LLVMValueRef acc = one, x = base, k = e;
  for (int i = 0; i < 6; i++) {
    LLVMValueRef bit = LLVMBuildICmp(b, LLVMIntEQ, LLVMBuildAnd(b, k, one, ""), one, "");
    acc = LLVMBuildSelect(b, bit, LLVMBuildMul(b, acc, x, ""), acc, "");
    x = LLVMBuildMul(b, x, x, "");
    k = LLVMBuildLShr(b, k, one, "");
  }
  LLVMValueRef neg = LLVMBuildICmp(b, LLVMIntSLT, e, zero, "");
  LLVMValueRef base_one = LLVMBuildICmp(b, LLVMIntEQ, base, one, "");
  return LLVMBuildSelect(b, neg, LLVMBuildSelect(b, base_one, one, zero, ""), acc, "");
}

static LLVMValueRef compare_values(cg_function *f, ir_instr *in, ir_etype et, LLVMValueRef a, LLVMValueRef c) {
  cg_module *cm = f->cm;
  LLVMBuilderRef b = cm->b;
  ir_cmp_dir d = in->attrs.u.compare.dir;
  if (ir_etype_is_complex(et))
    return complex_binary(f, in, a, c);
  if (cg_is_float_type(et) && !(in->attrs.u.compare.has_type && in->attrs.u.compare.type == IR_CMPT_TOTALORDER)) {
    static const LLVMRealPredicate preds[] = {LLVMRealOEQ, LLVMRealUNE, LLVMRealOLT, LLVMRealOLE, LLVMRealOGT, LLVMRealOGE};
    return LLVMBuildFCmp(b, preds[d], a, c, "");
  }
  if (cg_is_float_type(et)) {
    /* Total order: compare sign-magnitude bit patterns mapped to two's complement. */
    LLVMTypeRef it = LLVMIntTypeInContext(cm->ctx, LLVMGetTypeKind(LLVMTypeOf(a)) == LLVMDoubleTypeKind ? 64
                                                   : LLVMGetTypeKind(LLVMTypeOf(a)) == LLVMHalfTypeKind ? 16 : 32);
    unsigned bits = LLVMGetIntTypeWidth(it);
    LLVMValueRef k[2];
    LLVMValueRef v[2] = {a, c};
    for (int i = 0; i < 2; i++) {
      LLVMValueRef w = LLVMBuildBitCast(b, v[i], it, "");
      LLVMValueRef mask = LLVMBuildLShr(b, LLVMBuildAShr(b, w, LLVMConstInt(it, bits - 1, 0), ""), LLVMConstInt(it, 1, 0), "");
      k[i] = LLVMBuildXor(b, w, mask, "");
    }
    static const LLVMIntPredicate preds[] = {LLVMIntEQ, LLVMIntNE, LLVMIntSLT, LLVMIntSLE, LLVMIntSGT, LLVMIntSGE};
    return LLVMBuildICmp(b, preds[d], k[0], k[1], "");
  }
  bool is_signed = ir_etype_is_signed(et);
  if (in->attrs.u.compare.has_type && in->attrs.u.compare.type == IR_CMPT_UNSIGNED)
    is_signed = false;
  static const LLVMIntPredicate spreds[] = {LLVMIntEQ, LLVMIntNE, LLVMIntSLT, LLVMIntSLE, LLVMIntSGT, LLVMIntSGE};
  static const LLVMIntPredicate upreds[] = {LLVMIntEQ, LLVMIntNE, LLVMIntULT, LLVMIntULE, LLVMIntUGT, LLVMIntUGE};
  return LLVMBuildICmp(b, (is_signed ? spreds : upreds)[d], a, c, "");
}

static LLVMValueRef float_binary(cg_function *f, ir_instr *in, LLVMValueRef a, LLVMValueRef c) {
  LLVMBuilderRef b = f->cm->b;
  switch (in->op) {
  case IR_OP_ADD: return LLVMBuildFAdd(b, a, c, "");
  case IR_OP_SUBTRACT: return LLVMBuildFSub(b, a, c, "");
  case IR_OP_MULTIPLY: return LLVMBuildFMul(b, a, c, "");
  case IR_OP_DIVIDE: return LLVMBuildFDiv(b, a, c, "");
  case IR_OP_REMAINDER: return LLVMBuildFRem(b, a, c, "");
  case IR_OP_MAXIMUM: return call_math(f, "llvm.maximum", NULL, NULL, (LLVMValueRef[]){a, c}, 2);
  case IR_OP_MINIMUM: return call_math(f, "llvm.minimum", NULL, NULL, (LLVMValueRef[]){a, c}, 2);
  case IR_OP_POWER: return cg_vmath_pow(f, a, c);
  case IR_OP_ATAN2: return call_math(f, NULL, "atan2f", "atan2", (LLVMValueRef[]){a, c}, 2);
  default:
    cg_fail(f->cm, in, "'%s' on floating-point numbers cannot be compiled", ir_opcode_table[in->op].spelling);
    return a;
  }
}

static LLVMValueRef int_binary(cg_function *f, ir_instr *in, ir_etype et, LLVMValueRef a, LLVMValueRef c) {
  LLVMBuilderRef b = f->cm->b;
  bool s = ir_etype_is_signed(et);
  switch (in->op) {
  case IR_OP_ADD: return et == IR_PRED ? LLVMBuildOr(b, a, c, "") : LLVMBuildAdd(b, a, c, "");
  case IR_OP_SUBTRACT: return LLVMBuildSub(b, a, c, "");
  case IR_OP_MULTIPLY: return et == IR_PRED ? LLVMBuildAnd(b, a, c, "") : LLVMBuildMul(b, a, c, "");
  case IR_OP_DIVIDE:
  case IR_OP_REMAINDER: return int_divrem(f, in->op, a, c, s);
  case IR_OP_MAXIMUM:
    return LLVMBuildSelect(b, LLVMBuildICmp(b, s ? LLVMIntSGE : LLVMIntUGE, a, c, ""), a, c, "");
  case IR_OP_MINIMUM:
    return LLVMBuildSelect(b, LLVMBuildICmp(b, s ? LLVMIntSLE : LLVMIntULE, a, c, ""), a, c, "");
  case IR_OP_AND: return LLVMBuildAnd(b, a, c, "");
  case IR_OP_OR: return LLVMBuildOr(b, a, c, "");
  case IR_OP_XOR: return LLVMBuildXor(b, a, c, "");
  case IR_OP_SHIFT_LEFT:
  case IR_OP_SHIFT_RIGHT_LOGICAL:
  case IR_OP_SHIFT_RIGHT_ARITHMETIC: return int_shift(f, in->op, a, c);
  case IR_OP_POWER: return int_pow(f, a, c);
  case IR_OP_MULHI: return int_mulhi(f, a, c, s);
  default:
    cg_fail(f->cm, in, "'%s' on integers cannot be compiled", ir_opcode_table[in->op].spelling);
    return a;
  }
}

static LLVMValueRef float_unary(cg_function *f, ir_instr *in, ir_etype et, LLVMValueRef x) {
  cg_module *cm = f->cm;
  LLVMBuilderRef b = cm->b;
  LLVMTypeRef t = LLVMTypeOf(x);
  switch (in->op) {
  case IR_OP_ABS: return call_math(f, "llvm.fabs", NULL, NULL, &x, 1);
  case IR_OP_NEGATE: return LLVMBuildFNeg(b, x, "");
  case IR_OP_CEIL: return call_math(f, "llvm.ceil", NULL, NULL, &x, 1);
  case IR_OP_FLOOR: return call_math(f, "llvm.floor", NULL, NULL, &x, 1);
  case IR_OP_ROUND_AFZ: return call_math(f, "llvm.round", NULL, NULL, &x, 1);
  case IR_OP_ROUND_EVEN: return call_math(f, "llvm.roundeven", NULL, NULL, &x, 1);
  case IR_OP_SQRT: return call_math(f, "llvm.sqrt", NULL, NULL, &x, 1);
  case IR_OP_RSQRT: return cg_vmath_rsqrt(f, x);
  case IR_OP_EXP: return cg_vmath_exp(f, x);
  case IR_OP_LOG: return cg_vmath_log(f, x);
  case IR_OP_SIN: return cg_vmath_sin(f, x);
  case IR_OP_COS: return cg_vmath_cos(f, x);
  case IR_OP_TAN: return call_math(f, NULL, "tanf", "tan", &x, 1);
  case IR_OP_TANH: return cg_vmath_tanh(f, x);
  case IR_OP_EXPM1: return cg_vmath_expm1(f, x);
  case IR_OP_LOG1P: return cg_vmath_log1p(f, x);
  case IR_OP_CBRT: return call_math(f, NULL, "cbrtf", "cbrt", &x, 1);
  case IR_OP_ERF: return cg_vmath_erf(f, x);
  case IR_OP_ACOS: return call_math(f, NULL, "acosf", "acos", &x, 1);
  case IR_OP_ASIN: return call_math(f, NULL, "asinf", "asin", &x, 1);
  case IR_OP_ATAN: return call_math(f, NULL, "atanf", "atan", &x, 1);
  case IR_OP_ACOSH: return call_math(f, NULL, "acoshf", "acosh", &x, 1);
  case IR_OP_ASINH: return call_math(f, NULL, "asinhf", "asinh", &x, 1);
  case IR_OP_ATANH: return call_math(f, NULL, "atanhf", "atanh", &x, 1);
  case IR_OP_COSH: return call_math(f, NULL, "coshf", "cosh", &x, 1);
  case IR_OP_SINH: return call_math(f, NULL, "sinhf", "sinh", &x, 1);
  case IR_OP_LOGISTIC: return cg_vmath_logistic(f, x);
  case IR_OP_SIGN: {
    /* -1, +1, keep ±0 and NaN */
    LLVMValueRef one = call_math(f, "llvm.copysign", NULL, NULL, (LLVMValueRef[]){fconst(t, 1.0), x}, 2);
    LLVMValueRef keep = LLVMBuildFCmp(b, LLVMRealUEQ, x, fconst(t, 0.0), "");
    return LLVMBuildSelect(b, keep, x, one, "");
  }
  case IR_OP_IS_FINITE: {
    LLVMValueRef a = call_math(f, "llvm.fabs", NULL, NULL, &x, 1);
    return LLVMBuildFCmp(b, LLVMRealOLT, a, fconst(t, et == IR_F16 ? 65520.0 : 1.0 / 0.0), "");
  }
  case IR_OP_REAL: return x;
  case IR_OP_IMAG: return fconst(t, 0.0);
  default:
    cg_fail(cm, in, "'%s' on floating-point numbers cannot be compiled", ir_opcode_table[in->op].spelling);
    return x;
  }
}

static LLVMValueRef int_unary(cg_function *f, ir_instr *in, ir_etype et, LLVMValueRef x) {
  cg_module *cm = f->cm;
  LLVMBuilderRef b = cm->b;
  LLVMTypeRef t = LLVMTypeOf(x);
  LLVMValueRef zero = LLVMConstInt(t, 0, 0);
  switch (in->op) {
  case IR_OP_NOT: return LLVMBuildNot(b, x, "");
  case IR_OP_NEGATE: return LLVMBuildNeg(b, x, "");
  case IR_OP_ABS:
    if (!ir_etype_is_signed(et))
      return x;
    return LLVMBuildSelect(b, LLVMBuildICmp(b, LLVMIntSLT, x, zero, ""), LLVMBuildNeg(b, x, ""), x, "");
  case IR_OP_SIGN:
    if (!ir_etype_is_signed(et))
      return LLVMBuildZExt(b, LLVMBuildICmp(b, LLVMIntNE, x, zero, ""), t, "");
    return LLVMBuildSelect(b, LLVMBuildICmp(b, LLVMIntSLT, x, zero, ""), LLVMConstAllOnes(t),
                           LLVMBuildZExt(b, LLVMBuildICmp(b, LLVMIntNE, x, zero, ""), t, ""), "");
  case IR_OP_POPCNT: return call_math(f, "llvm.ctpop", NULL, NULL, &x, 1);
  case IR_OP_CLZ: {
    LLVMValueRef fn = cg_intrinsic(cm, "llvm.ctlz", t, 2);
    return LLVMBuildCall2(b, LLVMGlobalGetValueType(fn), fn, (LLVMValueRef[]){x, LLVMConstInt(cm->i1, 0, 0)}, 2, "");
  }
  default:
    cg_fail(cm, in, "'%s' on integers cannot be compiled", ir_opcode_table[in->op].spelling);
    return x;
  }
}

/* ---- elementwise --------------------------------------------------------------------------------- */

static LLVMValueRef operand_at(cg_function *f, ir_instr *in, int k, LLVMValueRef i) {
  ir_instr *op = in->operands[k];
  LLVMValueRef idx = op->shape->rank == 0 ? cg_i64(f->cm, 0) : i; /* scalar operands (select/clamp) */
  return cg_load(f, op->shape->et, f->values[op->id].leaves[0], idx);
}

/* ---- element functions of the elementwise rules ------------------------------------------- */

static LLVMValueRef element_unary(cg_function *f, ir_instr *in, LLVMValueRef *v) {
  ir_etype et = in->operands[0]->shape->et;
  if (ir_etype_is_complex(et))
    return complex_unary(f, in, v[0]);
  return cg_is_float_type(et) ? float_unary(f, in, et, v[0]) : int_unary(f, in, et, v[0]);
}

static LLVMValueRef element_binary(cg_function *f, ir_instr *in, LLVMValueRef *v) {
  cg_module *cm = f->cm;
  ir_etype et = in->operands[0]->shape->et;
  if (in->op == IR_OP_COMPLEX)
    return cmake(cm, cg_compute_type(cm, in->shape->et), v[0], v[1]);
  if (ir_etype_is_complex(et))
    return complex_binary(f, in, v[0], v[1]);
  return cg_is_float_type(et) ? float_binary(f, in, v[0], v[1]) : int_binary(f, in, et, v[0], v[1]);
}

static LLVMValueRef element_compare(cg_function *f, ir_instr *in, LLVMValueRef *v) {
  return compare_values(f, in, in->operands[0]->shape->et, v[0], v[1]);
}

static LLVMValueRef element_select(cg_function *f, ir_instr *in, LLVMValueRef *v) {
  (void)in;
  return LLVMBuildSelect(f->cm->b, v[0], v[1], v[2], "");
}

static LLVMValueRef element_clamp(cg_function *f, ir_instr *in, LLVMValueRef *v) {
  cg_module *cm = f->cm;
  ir_etype vt = in->operands[1]->shape->et;
  LLVMValueRef lo = v[0], x = v[1], hi = v[2];
  if (cg_is_float_type(vt)) {
    LLVMValueRef m = call_math(f, "llvm.maximum", NULL, NULL, (LLVMValueRef[]){lo, x}, 2);
    return call_math(f, "llvm.minimum", NULL, NULL, (LLVMValueRef[]){hi, m}, 2);
  }
  bool s = ir_etype_is_signed(vt);
  LLVMValueRef m = LLVMBuildSelect(cm->b, LLVMBuildICmp(cm->b, s ? LLVMIntSGE : LLVMIntUGE, lo, x, ""), lo, x, "");
  return LLVMBuildSelect(cm->b, LLVMBuildICmp(cm->b, s ? LLVMIntSLE : LLVMIntULE, hi, m, ""), hi, m, "");
}

static LLVMValueRef element_convert(cg_function *f, ir_instr *in, LLVMValueRef *v) {
  return cg_convert(f, v[0], in->operands[0]->shape->et, in->shape->et);
}

static LLVMValueRef element_stochastic_convert(cg_function *f, ir_instr *in, LLVMValueRef *v) {
  return cg_stochastic_convert(f, in, v[0], v[1]);
}

LLVMValueRef cg_elementwise_apply(cg_function *f, ir_instr *in, LLVMValueRef *v) {
  const cg_lower_rule *r = cg_lower_rules[in->op];
  if (!r->element) {
    cg_fail(f->cm, in, "not an elementwise instruction");
    return NULL;
  }
  return r->element(f, in, v);
}

LLVMValueRef cg_elementwise_value(cg_function *f, ir_instr *in, LLVMValueRef i) {
  LLVMValueRef v[3] = {NULL, NULL, NULL};
  for (int k = 0; k < in->n_operands && k < 3; k++)
    v[k] = operand_at(f, in, k, i);
  return cg_elementwise_apply(f, in, v);
}

/* ---- the elementwise families' rules (lower.c's table names them) ---------------------- */

/* One loop, an outlined kernel or a fused kernel over the element function (cg_lower_elementwise). */
const cg_lower_rule cg_rule_unary = {.lower = cg_lower_elementwise, .element = element_unary};
const cg_lower_rule cg_rule_binary = {.lower = cg_lower_elementwise, .element = element_binary};
const cg_lower_rule cg_rule_compare = {.lower = cg_lower_elementwise, .element = element_compare};
const cg_lower_rule cg_rule_select = {.lower = cg_lower_elementwise, .element = element_select};
const cg_lower_rule cg_rule_clamp = {.lower = cg_lower_elementwise, .element = element_clamp};
const cg_lower_rule cg_rule_convert = {.lower = cg_lower_elementwise, .element = element_convert};
const cg_lower_rule cg_rule_stochastic_convert = {.lower = cg_lower_elementwise,
                                                  .element = element_stochastic_convert};
