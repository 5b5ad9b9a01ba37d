/* literal_io.h — hlorun's HLO literals: inline --input literals ("f32[2,2] {{1,2},{3,4}}",
 * read with the front end's literal parser) and results printed in the format of XLA's
 * literal printer (Literal::ToString).  Buffers are dense row-major leaves as the ABI lays
 * them out (hlo/abi.h).  Tests: tools/literal_io_test.c, tests/hlorun_cli.cmake.
 */
#ifndef HLOC_TOOLS_LITERAL_IO_H
#define HLOC_TOOLS_LITERAL_IO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "hlo/abi.h"
#include "hlo/status.h"

/* "f32[2,3]" for a leaf (no layout), into buf. */
void litio_shape_text(int32_t dtype, int rank, const int64_t *dims, char *buf, size_t cap);

/* Does an --input argument read as an inline literal (an element type, then '[')? */
bool litio_looks_inline(const char *arg);

/* Parses the inline literal `text` for parameter leaf k (described by d) into dst, which holds
 * d->byte_size bytes.  INVALID_ARGUMENT, one line naming the argument, the parameter and the
 * column, when the text is no literal or its shape is not the parameter's. */
HLO_MUST_USE hlo_status litio_parse_input(const char *text, int k, const hlo_array_desc *d, void *dst);

/* Prints one result leaf as XLA's literal printer does, then a newline:
 *   f32[] 1.5        f32[3] {1, 2, 3}        f32[2,2] {\n  { 1, 2 },\n  { 3, 4 }\n}
 * (pred array elements as 1/0, rank > 3 with index comments).  Fails on a write error. */
HLO_MUST_USE hlo_status litio_print(const hlo_array_desc *d, const void *data, FILE *out);

#endif
