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
 * incompatible.  `what` names the instruction in messages (e.g. "%add.3"). */
ir_shape *shape_broadcast_binary(ir_module *m, const ir_shape *lhs, const ir_shape *rhs,
                                 const ir_broadcast_attrs *attrs, const shape_options *opts,
                                 const char *what, ir_loc loc, ir_diag_list *diags);

/* The bidirectional rule (OpenVINO): numpy-style right-aligned broadcast of `operand` with
 * the dimensions `target`; used by broadcast(x), auto_broadcast=bidirectional. */
ir_shape *shape_broadcast_bidirectional(ir_module *m, const ir_shape *operand, const ir_i64_list *target,
                                        const char *what, ir_loc loc, ir_diag_list *diags);

#endif
