/* literal.h — element values: encoding a number written in HLO text into an element type's
 * storage (with range checks and round-to-nearest-even for narrow floats), and decoding
 * storage back to a double for printing and comparison.  Pure functions, no allocation.
 * Tests: compiler/ir/literal_test.c.
 */
#ifndef HLOC_IR_LITERAL_H
#define HLOC_IR_LITERAL_H

#include <stdbool.h>
#include <stdint.h>

#include "ir/ir.h"

typedef enum ir_lit_status {
  IR_LIT_OK,
  IR_LIT_OUT_OF_RANGE,   /* finite value outside the type's range, or integer overflow */
  IR_LIT_BAD_TYPE,       /* e.g. a fractional value for an integer type */
  IR_LIT_BAD_PAYLOAD,    /* NaN payload that the type cannot hold */
} ir_lit_status;

/* Encodes a floating-point value (d, or NaN with `payload` when nonzero) into `out`
 * (storage_bytes of et).  et must be a float or complex-component type. */
ir_lit_status ir_lit_encode_float(ir_etype et, double d, uint64_t payload, void *out);
/* Encodes an integer (v, or the unsigned u when is_unsigned) into an integer/pred type. */
ir_lit_status ir_lit_encode_int(ir_etype et, int64_t v, uint64_t u, bool is_unsigned, void *out);
/* Decodes one float element (f16, bf16, f32, f64, f8 family) to double. */
double ir_lit_decode_float(ir_etype et, const void *p);
/* The raw bits of one float element, zero-extended. */
uint64_t ir_lit_float_bits(ir_etype et, const void *p);
/* Mantissa (fraction) bit count of a float type; used for NaN payload checks and printing. */
int ir_lit_mantissa_bits(ir_etype et);

#endif
