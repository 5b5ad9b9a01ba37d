/* shape_internal.h — what the verifier (verify.c) and the per-family inference rules
 * (infer_*.c) share: the context, the error helper, and one dispatch row per op family. */
#ifndef HLOC_SHAPE_INTERNAL_H
#define HLOC_SHAPE_INTERNAL_H

#include <stdarg.h>

#include "shape/shape.h"

typedef struct shape_ctx {
  ir_module *m;
  const shape_options *opts;
  ir_diag_list *diags;
  int errors_at_start_of_instr;
} shape_ctx;

/* Adds "%name: message" at the instruction. */
void shape_error(shape_ctx *x, const ir_instr *in, const char *fmt, ...) HLO_PRINTF(3, 4);

/* Infers the result shape of `in` (operands' and callees' shapes are known).  Returns NULL
 * with a diagnostic when the instruction is invalid, or NULL without one when the family
 * takes the written shape as given (the verifier then requires it to be written). */
ir_shape *shape_infer_instr(shape_ctx *x, ir_instr *in);

/* Structured ops (infer_ops.c). */
ir_shape *shape_infer_gather(shape_ctx *x, ir_instr *in);
ir_shape *shape_infer_scatter(shape_ctx *x, ir_instr *in);
ir_shape *shape_infer_reduce_window(shape_ctx *x, ir_instr *in);
ir_shape *shape_infer_select_and_scatter(shape_ctx *x, ir_instr *in);
ir_shape *shape_infer_convolution(shape_ctx *x, ir_instr *in);
ir_shape *shape_infer_fft(shape_ctx *x, ir_instr *in);
ir_shape *shape_infer_cholesky(shape_ctx *x, ir_instr *in);
ir_shape *shape_infer_triangular_solve(shape_ctx *x, ir_instr *in);
ir_shape *shape_infer_batch_norm(shape_ctx *x, ir_instr *in);
ir_shape *shape_infer_collective(shape_ctx *x, ir_instr *in);
ir_shape *shape_infer_infeed(shape_ctx *x, ir_instr *in);
ir_shape *shape_infer_outfeed(shape_ctx *x, ir_instr *in);
ir_shape *shape_infer_send_recv(shape_ctx *x, ir_instr *in);
ir_shape *shape_infer_rng(shape_ctx *x, ir_instr *in);
ir_shape *shape_infer_rng_bit_generator(shape_ctx *x, ir_instr *in);
ir_shape *shape_infer_fusion(shape_ctx *x, ir_instr *in);

#endif
