/* ops.h — entry points of the CODEGEN-OPS files that the lowering in control.c calls: the
 * matrix-multiply path of dot (dot.c).  Additive to cg_internal.h; the per-family table still
 * dispatches dot to cg_lower_dot, which asks cg_dot_gemm first.
 */
#ifndef HLOC_CODEGEN_OPS_H
#define HLOC_CODEGEN_OPS_H

#include <stdbool.h>

#include "codegen/cg_internal.h"

/* Emits `in` (a dot) as one call of the runtime's blocked matrix product writing `out` when it
 * is an f32 or f64 product (both operands and the result of that type) of at least 32768
 * multiply-adds per batch; returns false, emitting nothing, for every other dot. */
bool cg_dot_gemm(cg_function *f, ir_instr *in, LLVMValueRef out);

#endif
