/* vmath.h — vectorizable elementary functions for the elementwise lowering (vmath.c).
 * Each function emits branch-free scalar LLVM IR at the builder's position for one value x
 * (float, double or half; half computes in float) and returns the result of x's type.  No
 * libm call is emitted, except where vmath.c says so (f64 erf and f64 pow), so LLVM's loop
 * vectorizer can turn a loop over them into AVX2/AVX-512 code.  Accuracy: docs/ops.md,
 * measured by vmath_test.c.
 */
#ifndef HLOC_CODEGEN_VMATH_H
#define HLOC_CODEGEN_VMATH_H

#include "codegen/cg_internal.h"

LLVMValueRef cg_vmath_exp(cg_function *f, LLVMValueRef x);   /* f32: results below FLT_MIN flush to +0 (XLA) */
LLVMValueRef cg_vmath_expm1(cg_function *f, LLVMValueRef x);
LLVMValueRef cg_vmath_log(cg_function *f, LLVMValueRef x);
LLVMValueRef cg_vmath_log1p(cg_function *f, LLVMValueRef x);
LLVMValueRef cg_vmath_tanh(cg_function *f, LLVMValueRef x);
LLVMValueRef cg_vmath_erf(cg_function *f, LLVMValueRef x);
LLVMValueRef cg_vmath_logistic(cg_function *f, LLVMValueRef x);
LLVMValueRef cg_vmath_sin(cg_function *f, LLVMValueRef x);
LLVMValueRef cg_vmath_cos(cg_function *f, LLVMValueRef x);
LLVMValueRef cg_vmath_rsqrt(cg_function *f, LLVMValueRef x);
/* x^y with C99's special cases (pow(x, ±0) = 1, pow(1, y) = 1, pow(-1, ±inf) = 1, ...). */
LLVMValueRef cg_vmath_pow(cg_function *f, LLVMValueRef x, LLVMValueRef y);

#endif
