/* stochastic_convert.c — stochastic-convert(x, random) from a floating-point type to a signed
 * integer type, as XLA's CPU pipeline runs it (its StochasticConvertDecomposer rewrites the op
 * into elementwise HLO; the semantics document has no section on it):
 *   t = floor(|x|), frac = |x| - t (in f32 for f16), fixed = unsigned(frac * 2^bits(random));
 *   y = t + (random < fixed ? 1 : 0), negated when x < 0 (wrapping like XLA's add/negate);
 *   x <= min(T) gives min(T), x >= max(T) gives max(T); NaN gives 0.
 * So the random bits, read as a fraction in [0, 1), decide rounding up or down: a fraction of
 * the way from t to t + 1 rounds away from zero with that probability.  Conversions are the
 * saturating ones of convert.  Other result types are refused, as XLA refuses them.
 * Called per element from the elementwise and fused paths (lower.c cg_elementwise_apply).
 */
#include <math.h>
#include <string.h>

#include "codegen/ops.h"

static LLVMValueRef fcall(cg_function *f, const char *name, LLVMValueRef x) {
  LLVMValueRef fn = cg_intrinsic(f->cm, name, LLVMTypeOf(x), 1);
  return LLVMBuildCall2(f->cm->b, LLVMGlobalGetValueType(fn), fn, &x, 1, "");
}

LLVMValueRef cg_stochastic_convert(cg_function *f, ir_instr *in, LLVMValueRef x, LLVMValueRef r) {
  cg_module *cm = f->cm;
  LLVMBuilderRef b = cm->b;
  ir_etype to = in->shape->et, rt = in->operands[1]->shape->et;
  if (!ir_etype_is_signed(to)) {
    cg_fail(cm, in, "stochastic-convert to %s: XLA defines it only for signed integer results "
                    "(its StochasticConvertDecomposer refuses the others)", ir_etype_table[to].spelling);
    return LLVMConstNull(cg_compute_type(cm, to));
  }
  LLVMTypeRef ft = LLVMTypeOf(x), it = cg_compute_type(cm, to), rty = LLVMTypeOf(r);
  int rbits = ir_etype_table[rt].bits, tbits = ir_etype_table[to].bits;
  LLVMValueRef neg = LLVMBuildFCmp(b, LLVMRealOLT, x, LLVMConstReal(ft, 0.0), "neg");
  LLVMValueRef a = fcall(f, "llvm.fabs", x);
  LLVMValueRef t = fcall(f, "llvm.floor", a);
  LLVMValueRef frac = LLVMBuildFSub(b, a, t, "frac");
  if (LLVMGetTypeKind(ft) == LLVMHalfTypeKind) /* 2^16 is not an f16 */
    frac = LLVMBuildFPExt(b, frac, cm->f32, "");
  LLVMValueRef fixed = LLVMBuildFMul(b, frac, LLVMConstReal(LLVMTypeOf(frac), ldexp(1.0, rbits)), "");
  LLVMValueRef up = LLVMBuildICmp(b, LLVMIntULT, r, cg_fp_to_int_sat(f, fixed, rty, false), "up");
  LLVMValueRef ti = cg_fp_to_int_sat(f, t, it, true);
  ti = LLVMBuildSelect(b, up, LLVMBuildAdd(b, ti, LLVMConstInt(it, 1, 0), ""), ti, "");
  LLVMValueRef y = LLVMBuildSelect(b, neg, LLVMBuildNeg(b, ti, ""), ti, "");
  double lo = -ldexp(1.0, tbits - 1), hi = ldexp(1.0, tbits - 1) - 1.0;
  LLVMValueRef min = LLVMConstInt(it, 1ull << (tbits - 1), 0), max = LLVMConstInt(it, (1ull << (tbits - 1)) - 1, 0);
  y = LLVMBuildSelect(b, LLVMBuildFCmp(b, LLVMRealOLE, x, LLVMConstReal(ft, lo), ""), min, y, "");
  return LLVMBuildSelect(b, LLVMBuildFCmp(b, LLVMRealOGE, x, LLVMConstReal(ft, hi), ""), max, y, "stoch");
}
