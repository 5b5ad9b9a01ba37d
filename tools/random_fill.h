/* random_fill.h — hlorun --random-inputs: deterministic parameter values at memory speed.
 * Element i of parameter k is a pure function of (seed, k, i) — a counter-based generator
 * (the SplitMix64 finaliser of a per-parameter key plus the index of a 64-bit word, each word
 * giving 1 to 8 elements) — so the values do not depend on how many threads write them.
 * Floats uniform in [-1, 1) (complex: imaginary part half the real part), integers in [0, 8)
 * (less for the sub-byte types that cannot hold 7), pred 0/1 (docs/cli.md "Inputs").
 * Tests: tests/hlorun_inputs.cmake (same bytes with 1 and 3 threads; value ranges).
 */
#ifndef HLOC_TOOLS_RANDOM_FILL_H
#define HLOC_TOOLS_RANDOM_FILL_H

#include <stdint.h>

#include "hlo/abi.h"
#include "hlo/status.h"

/* Fills every parameter leaf i with params[i] != NULL (desc->params[i].byte_size bytes) on
 * `threads` threads (0: one per CPU); the blocks are shared out whatever the leaf sizes. */
HLO_MUST_USE hlo_status random_fill_params(uint64_t seed, const hlo_module_desc *desc, void *const *params,
                                           int threads);

#endif
