/* ops.h — entry points of the CODEGEN-OPS files that control.c, data.c, lower.c and fused.c
 * call: the matrix-multiply path of dot (dot.c, also with a kOutput fusion's epilogue),
 * sub-byte bitcast-convert (convert_bits.c) and stochastic-convert's element function
 * (stochastic_convert.c).
 * Additive to cg_internal.h; the lowering rules cg_rule_dot and cg_rule_data (lower.c) call
 * cg_lower_dot and cg_lower_data, which ask these first.
 */
#ifndef HLOC_CODEGEN_OPS_H
#define HLOC_CODEGEN_OPS_H

#include <stdbool.h>

#include "codegen/cg_internal.h"

/* Emits `in` (a dot) as one call of the runtime's blocked matrix product writing `out` when it
 * is an f32 or f64 product (both operands and the result of that type) of at least 32768
 * multiply-adds per batch; returns false, emitting nothing, for every other dot. */
bool cg_dot_gemm(cg_function *f, ir_instr *in, LLVMValueRef out);
/* Whether cg_dot_gemm_epilogue takes dot `in`: an all-f32 or all-f64 product for the kernel
 * whose index groups are each one strided dimension (no offset tables, no conversions). */
bool cg_dot_gemm_epilogue_ok(const ir_instr *in);
/* Emits `in` into `out` as one call of the kernel that runs epi(epi_arg, begin, end) (an
 * hlo_rt_range_fn over elements of `out`, in place) on each part of the result once it is
 * final; false, emitting nothing, when cg_dot_gemm_epilogue_ok(in) is false. */
bool cg_dot_gemm_epilogue(cg_function *f, ir_instr *in, LLVMValueRef out, LLVMValueRef epi, LLVMValueRef epi_arg);

/* Emits a bitcast-convert whose operand or result element type is narrower than a byte
 * (convert_bits.c) writing `out`; returns false, emitting nothing, when both are a byte or
 * wider (a byte copy is right for those). */
bool cg_bitcast_convert_bits(cg_function *f, ir_instr *in, LLVMValueRef out);

/* One element of stochastic-convert `in`: operand value x (compute type) and random bits r
 * (stochastic_convert.c); a result type XLA does not define fails `in` with a clear error. */
LLVMValueRef cg_stochastic_convert(cg_function *f, ir_instr *in, LLVMValueRef x, LLVMValueRef r);

#endif
