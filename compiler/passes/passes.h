/* passes.h — module-to-module rewrites, run in the order compiler/driver/pipeline.c lists.
 * Each pass states its precondition; each leaves a module that verifies.  Tests: the dumps
 * that tests/hloc_cli_cases.sh checks, the golden suites, and the passes' unit tests
 * (canonicalize_broadcasts_test.c).
 */
#ifndef HLOC_PASSES_PASSES_H
#define HLOC_PASSES_PASSES_H

#include "hlo/status.h"
#include "ir/ir.h"

/* Pre: verified.  Rewrites every implicit broadcast (scalar, degenerate dims,
 * broadcast_dimensions, auto_broadcast) into explicit broadcast/reshape instructions, so that
 * every elementwise op afterwards has operands of its result's dimensions. */
HLO_MUST_USE hlo_status pass_canonicalize_broadcasts(ir_module *m);

/* Pre: verified.  Fills elided constants (constant({...})) with deterministic values and
 * returns how many it filled in *out_count (callers say so on stderr). */
HLO_MUST_USE hlo_status pass_fill_elided_constants(ir_module *m, int *out_count);

/* The most operands a concatenate may have inside a fused loop kernel (one branch each). */
enum { FUSION_KERNEL_MAX_CONCAT_OPERANDS = 32 };

/* Whether a fused loop kernel can compute x element by element from its operands: an
 * elementwise op, broadcast, transpose, slice, reverse, iota, pad, dynamic-slice, a reshape,
 * bitcast or copy that keeps the element type, a concatenate of at most
 * FUSION_KERNEL_MAX_CONCAT_OPERANDS operands, an array constant, or a single-input reduce
 * (fusible.c: the one fusibility predicate, which code generation asks too). */
bool fusion_member_ok(const ir_instr *x);

/* The most elements a reduce computed inline folds per result element. */
enum { FUSION_INLINE_REDUCE_MAX = 8 };

/* Whether reduce x is small enough to compute inline, inside the loop of a fusion that reads
 * it, at each element read (the sum over an N-body difference's 3 components): one real-typed
 * input, at most FUSION_INLINE_REDUCE_MAX elements per result element (all unrolled), a
 * reducer that is one binary op of its two parameters (fusible.c; fusion.c joins such a
 * reduce to its users' group, fused.c computes it there). */
bool fusion_inline_reduce_ok(const ir_instr *x);

/* The most inputs of a variadic reduce a loop kernel folds. */
enum { FUSION_VARIADIC_MAX = 16 };

/* Whether x is a variadic reduce (argmax: values and their indices) that a loop kernel
 * computes: 2 to FUSION_VARIADIC_MAX real array inputs of one shape, scalar initial values,
 * the minor dimension reduced (fusible.c; fused.c emits it, reading its inputs' buffers or,
 * inside a fusion, computing its iota inputs; fusion.c fuses iota inputs into it). */
bool fusion_variadic_reduce_ok(const ir_instr *x);

/* Pre: verified, broadcasts canonical.  Groups elementwise and data-movement producers with
 * their consumers (and reduces with their producers) into `fusion` instructions calling new
 * fused computations (kinds kLoop and kInput); fusions already written are kept. */
HLO_MUST_USE hlo_status pass_fusion(ir_module *m);

/* Pre: verified, broadcasts canonical.  Rewrites ragged-dot (group masks + dot) and
 * scaled-dot (block-scaled operands + dot) into dot and elementwise ops, as XLA's
 * RaggedDotRewriter and ScaledDotRewriter do; HLO_UNIMPLEMENTED for group_sizes layouts those
 * rewrites do not define. */
HLO_MUST_USE hlo_status pass_expand_dots(ir_module *m);

/* Pre: verified.  Rewrites shuffle (mode=rotate: slices + concatenate; mode=permute: one
 * gather of single elements) as XLA's ShuffleExpander does; HLO_UNIMPLEMENTED (naming it) for
 * attributes that do not fit or a mode XLA does not expand. */
HLO_MUST_USE hlo_status pass_expand_shuffle(ir_module *m);

/* Pre: verified, broadcasts canonical.  Tracks the sizes set-dimension-size and
 * dynamic-reshape give bounded dynamic dimensions and pads as XLA's DynamicPadder does:
 * get-dimension-size becomes the size, reduce and dot read their operands with the padding
 * masked to the identity; other readers of a sized operand are refused (HLO_UNIMPLEMENTED). */
HLO_MUST_USE hlo_status pass_dynamic_padder(ir_module *m);

/* Pre: verified.  When the header states neither replica_count nor several partitions, sets
 * m->inferred_replica_count to one more than the largest replica id the collectives name (0
 * when they name none above 0) and returns it in *out_count (callers say so on stderr). */
HLO_MUST_USE hlo_status pass_infer_replica_count(ir_module *m, int *out_count);

/* Pre: verified.  Makes each dot read a transposed operand where it lies: dot(a,
 * transpose(b)) becomes dot(a, b) with b's dimension numbers, when the operand's free
 * dimensions keep their order (fold_dot_transposes.c). */
HLO_MUST_USE hlo_status pass_fold_dot_transposes(ir_module *m);

/* Pre: verified.  Removes unused side-effect-free instructions. */
HLO_MUST_USE hlo_status pass_dce(ir_module *m);

#endif
