/* shape.h — the verifier and shape inference for every op of the operation semantics,
 * including XLA's broadcasting rules and hloc's extensions (docs/broadcasting.md).
 *
 * Input: a parsed module (shapes as written; NULL where omitted).  Output: every shape set,
 * checked against the inferred one; diagnostics name the instruction and what is wrong:
 *   model.hlo:12:3: error: %dot.4: lhs contracting dimension 1 has size 3 but rhs
 *   contracting dimension 0 has size 4
 * Tests: testdata/verify/err, testdata/broadcast, shape_test.c.
 */
#ifndef HLOC_SHAPE_SHAPE_H
#define HLOC_SHAPE_SHAPE_H

#include <stdbool.h>

#include "hlo/status.h"
#include "ir/diag.h"
#include "ir/ir.h"

typedef struct shape_options {
  bool strict;  /* --strict: reject every extension exactly where XLA's verifier would */
  /* The module is about to be compiled: an async chain must also agree with the computation it
   * runs and be complete (XLA's verifier).  Without it the chain is checked as XLA's parser
   * checks it, so that the incomplete and late-bound chains of XLA's parser tests parse and
   * print (--emit=none, --emit=hlo). */
  bool async_chains;
} shape_options;

/* Verifies the whole module (structure, operand counts, element types, attributes, called
 * computation signatures, result shapes).  Sets omitted shapes to the inferred ones.
 * Returns false when any error was added to diags. */
bool shape_verify_module(ir_module *m, const shape_options *opts, ir_diag_list *diags);

/* Infers the result shape of `in` from its operands and attributes (operand shapes must be
 * set).  Returns NULL and adds a diagnostic when the instruction is invalid. */
ir_shape *shape_infer(ir_instr *in, const shape_options *opts, ir_diag_list *diags);

/* Broadcasting: the shape two operand shapes broadcast to under `attrs` (NULL = plain XLA
 * implicit rules), with the extensions allowed unless opts->strict.  NULL + diagnostic when
 * incompatible.  `what` names the instruction in messages (e.g. "%add.3").  The result has
 * lhs's element type and no layout (callers set compare's pred / complex's type); it lives
 * in m's arena. */
ir_shape *shape_broadcast_binary(ir_module *m, const ir_shape *lhs, const ir_shape *rhs,
                                 const ir_broadcast_attrs *attrs, const shape_options *opts,
                                 const char *what, ir_loc loc, ir_diag_list *diags);

/* The bidirectional rule (OpenVINO): numpy-style right-aligned broadcast of `operand` with
 * the dimensions `target`, used by broadcast(x), auto_broadcast=bidirectional; under
 * opts->strict (opts may be NULL) that attribute, an hloc extension XLA does not know, is
 * rejected. */
ir_shape *shape_broadcast_to_target(ir_module *m, const ir_shape *operand, const ir_i64_list *target,
                                    const shape_options *opts, const char *what, ir_loc loc, ir_diag_list *diags);

/* For a verified instruction that broadcasts implicitly (an OPF_BROADCASTS binary/compare
 * op, or broadcast with auto_broadcast=bidirectional): where each dimension of operand
 * `which` lands in the result, written to out_map (room for the operand's rank); -1 marks a
 * trailing size-1 dimension that pdpd ignores.  A dimension of size 1 that lands on a larger
 * one is a degenerate broadcast.  False when the operand's rank does not fit its rule. */
bool shape_broadcast_operand_map(const ir_instr *in, int which, int64_t *out_map);

#endif
