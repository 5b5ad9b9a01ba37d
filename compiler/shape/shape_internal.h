/* shape_internal.h — what the verifier (verify.c) and the per-family inference rules
 * (infer_*.c) share: the context, the diagnostic helpers, small shape utilities
 * (infer_common.c) and the dispatch table, one row per op family (STYLE.md 6):
 *   [IR_FAM_BINARY] = { .infer = shape_infer_binary },
 * A rule returns the inferred result shape, or NULL: with a diagnostic when the instruction
 * is invalid, without one when the family's result is defined by the written shape (the
 * verifier then requires the shape to be written).
 */
#ifndef HLOC_SHAPE_INTERNAL_H
#define HLOC_SHAPE_INTERNAL_H

#include <stdarg.h>
#include <stddef.h>

#include "shape/shape.h"

/* Most dimensions a shape may have in inference scratch arrays (XLA allows far fewer in
 * practice); larger ranks are a diagnostic, never an overflow. */
enum { SHAPE_MAX_RANK = 64, SHAPE_MAX_OPERANDS = 4096 };

typedef struct shape_ctx {
  ir_module *m;
  const shape_options *opts;
  ir_diag_list *diags;
  int errors_at_start_of_instr;
  /* In a computation that an async chain runs, checked as XLA's parser checks it (not
   * async_chains): a written result shape is kept even where it is not the inferred one. */
  bool keep_written_shapes;
} shape_ctx;

typedef ir_shape *(*shape_infer_fn)(shape_ctx *x, ir_instr *in);

typedef struct shape_family_rule {
  shape_infer_fn infer;
} shape_family_rule;

/* The dispatch table (verify.c), indexed by ir_family. */
extern const shape_family_rule shape_family_rules[IR_FAM_COUNT];

/* Infers the result shape of `in` through the table (operands' and callees' shapes known). */
ir_shape *shape_infer_instr(shape_ctx *x, ir_instr *in);

/* ---- diagnostics and helpers (infer_common.c) ------------------------------------------ */

/* Adds "%name: message" at the instruction.  Always returns NULL so rules can
 * `return shape_fail(x, in, ...)`. */
ir_shape *shape_fail(shape_ctx *x, const ir_instr *in, const char *fmt, ...) HLO_PRINTF(3, 4);
/* Same, for boolean checks: always returns false. */
bool shape_error(shape_ctx *x, const ir_instr *in, const char *fmt, ...) HLO_PRINTF(3, 4);

/* "f32[2,3]" (no layout) into buf; "(none)" for NULL. */
const char *shape_str(const ir_shape *s, char *buf, size_t cap);
const char *shape_et_name(ir_etype t);
/* "token", "a tuple" or the shape: how messages name an unexpected operand. */
const char *shape_kind_str(const ir_shape *s, char *buf, size_t cap);

/* Operand k's shape, or NULL when there is no operand k. */
static inline const ir_shape *shape_operand(const ir_instr *in, int k) {
  return k >= 0 && k < in->n_operands ? in->operands[k]->shape : NULL;
}
static inline bool shape_is_array(const ir_shape *s) { return s && ir_etype_is_array(s->et); }
static inline bool shape_is_scalar_of(const ir_shape *s, ir_etype et) {
  return s && s->et == et && s->rank == 0;
}
static inline bool shape_is_token(const ir_shape *s) { return s && s->et == IR_TOKEN; }

/* Requires operand k to exist and be an array; diagnostic otherwise. */
bool shape_need_array(shape_ctx *x, ir_instr *in, int k);
/* Requires exactly n operands / at least n operands (variadic families). */
bool shape_need_operands(shape_ctx *x, ir_instr *in, int n);
bool shape_need_min_operands(shape_ctx *x, ir_instr *in, int n);
/* Requires exactly n called computations; `what` names them ("to_apply"). */
bool shape_need_called(shape_ctx *x, ir_instr *in, int n, const char *what);

/* Array shape constructors in the module arena. */
ir_shape *shape_array(shape_ctx *x, ir_etype et, int rank, const int64_t *dims);
ir_shape *shape_tuple_of(shape_ctx *x, ir_shape *const *elems, int n);
/* A copy of `s` with another element type (arrays). */
ir_shape *shape_with_et(shape_ctx *x, const ir_shape *s, ir_etype et);
/* The operands' shapes as a tuple (n > 1) or the single shape (n == 1). */
ir_shape *shape_operands_collated(shape_ctx *x, ir_instr *in, int first, int n);

/* Same element type, rank and dims; tuples recursively; layouts and dynamic markers ignored. */
bool shape_compatible(const ir_shape *a, const ir_shape *b);

/* Each entry of l in [0, bound), no repeats; `sorted` also requires increasing order.
 * On failure writes the offending entry to *out_bad and returns false. */
bool shape_dims_valid(const ir_i64_list *l, int64_t bound, bool sorted, int64_t *out_bad);
bool shape_list_has(const ir_i64_list *l, int64_t v);
/* Product of dims with overflow check; false on overflow. */
bool shape_elements(const ir_shape *s, int64_t *out_n);

/* The reduction-computation rule shared by reduce, reduce-window, scatter, all-reduce,
 * select-and-scatter's scatter: `c` takes 2n scalars (accumulators of types ets, then
 * inputs of types ets) and returns a scalar (n == 1) or a tuple of n scalars of those types.
 * `role` names the computation in messages ("reducer"). */
bool shape_check_reducer(shape_ctx *x, ir_instr *in, const ir_computation *c, const ir_etype *ets, int n,
                         const char *role);

/* Output size of one windowed dimension (padding, base and window dilation, stride);
 * -1 when size/stride/dilations are below 1, -2 on overflow. */
int64_t shape_window_out(int64_t in, const ir_window_dim *w);

/* ---- the rules, one group per file ------------------------------------------------------ */

/* infer_elementwise.c */
ir_shape *shape_infer_constant(shape_ctx *x, ir_instr *in);
ir_shape *shape_infer_unary(shape_ctx *x, ir_instr *in);
ir_shape *shape_infer_binary(shape_ctx *x, ir_instr *in);
ir_shape *shape_infer_compare(shape_ctx *x, ir_instr *in);
ir_shape *shape_infer_select(shape_ctx *x, ir_instr *in);
ir_shape *shape_infer_clamp(shape_ctx *x, ir_instr *in);
ir_shape *shape_infer_convert(shape_ctx *x, ir_instr *in);
ir_shape *shape_infer_bitcast_convert(shape_ctx *x, ir_instr *in);
ir_shape *shape_infer_reduce_precision(shape_ctx *x, ir_instr *in);
ir_shape *shape_infer_stochastic_convert(shape_ctx *x, ir_instr *in);

/* infer_data.c */
ir_shape *shape_infer_iota(shape_ctx *x, ir_instr *in);
ir_shape *shape_infer_broadcast(shape_ctx *x, ir_instr *in);
ir_shape *shape_infer_reshape(shape_ctx *x, ir_instr *in);
ir_shape *shape_infer_dynamic_reshape(shape_ctx *x, ir_instr *in);
ir_shape *shape_infer_transpose(shape_ctx *x, ir_instr *in);
ir_shape *shape_infer_slice(shape_ctx *x, ir_instr *in);
ir_shape *shape_infer_dynamic_slice(shape_ctx *x, ir_instr *in);
ir_shape *shape_infer_dynamic_update_slice(shape_ctx *x, ir_instr *in);
ir_shape *shape_infer_concatenate(shape_ctx *x, ir_instr *in);
ir_shape *shape_infer_pad(shape_ctx *x, ir_instr *in);
ir_shape *shape_infer_reverse(shape_ctx *x, ir_instr *in);
ir_shape *shape_infer_copy(shape_ctx *x, ir_instr *in);
ir_shape *shape_infer_bitcast(shape_ctx *x, ir_instr *in);
ir_shape *shape_infer_gather(shape_ctx *x, ir_instr *in);
ir_shape *shape_infer_scatter(shape_ctx *x, ir_instr *in);
ir_shape *shape_infer_dimension_size(shape_ctx *x, ir_instr *in);
ir_shape *shape_infer_tuple(shape_ctx *x, ir_instr *in);
ir_shape *shape_infer_get_tuple_element(shape_ctx *x, ir_instr *in);

/* infer_reduce.c */
ir_shape *shape_infer_reduce(shape_ctx *x, ir_instr *in);
ir_shape *shape_infer_reduce_window(shape_ctx *x, ir_instr *in);
ir_shape *shape_infer_select_and_scatter(shape_ctx *x, ir_instr *in);
ir_shape *shape_infer_map(shape_ctx *x, ir_instr *in);
ir_shape *shape_infer_scan(shape_ctx *x, ir_instr *in);
ir_shape *shape_infer_sort(shape_ctx *x, ir_instr *in);
ir_shape *shape_infer_topk(shape_ctx *x, ir_instr *in);

/* infer_linalg.c */
ir_shape *shape_infer_dot(shape_ctx *x, ir_instr *in);
ir_shape *shape_infer_convolution(shape_ctx *x, ir_instr *in);
ir_shape *shape_infer_fft(shape_ctx *x, ir_instr *in);
ir_shape *shape_infer_cholesky(shape_ctx *x, ir_instr *in);
ir_shape *shape_infer_triangular_solve(shape_ctx *x, ir_instr *in);
ir_shape *shape_infer_batch_norm(shape_ctx *x, ir_instr *in);

/* infer_control.c */
ir_shape *shape_infer_parameter(shape_ctx *x, ir_instr *in);
ir_shape *shape_infer_while(shape_ctx *x, ir_instr *in);
ir_shape *shape_infer_conditional(shape_ctx *x, ir_instr *in);
ir_shape *shape_infer_call(shape_ctx *x, ir_instr *in);
ir_shape *shape_infer_fusion(shape_ctx *x, ir_instr *in);
ir_shape *shape_infer_custom_call(shape_ctx *x, ir_instr *in);
ir_shape *shape_infer_async(shape_ctx *x, ir_instr *in);
ir_shape *shape_infer_copy_async(shape_ctx *x, ir_instr *in);
ir_shape *shape_infer_opt_barrier(shape_ctx *x, ir_instr *in);
ir_shape *shape_infer_domain(shape_ctx *x, ir_instr *in);

/* infer_misc.c */
ir_shape *shape_infer_replica_id(shape_ctx *x, ir_instr *in);
ir_shape *shape_infer_token(shape_ctx *x, ir_instr *in);
ir_shape *shape_infer_collective(shape_ctx *x, ir_instr *in);
ir_shape *shape_infer_async_done(shape_ctx *x, ir_instr *in);
ir_shape *shape_infer_infeed(shape_ctx *x, ir_instr *in);
ir_shape *shape_infer_outfeed(shape_ctx *x, ir_instr *in);
ir_shape *shape_infer_send(shape_ctx *x, ir_instr *in);
ir_shape *shape_infer_recv(shape_ctx *x, ir_instr *in);
ir_shape *shape_infer_rng(shape_ctx *x, ir_instr *in);
ir_shape *shape_infer_rng_bit_generator(shape_ctx *x, ir_instr *in);
ir_shape *shape_infer_rng_state(shape_ctx *x, ir_instr *in);
ir_shape *shape_infer_misc(shape_ctx *x, ir_instr *in);

#endif
