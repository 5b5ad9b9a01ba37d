/* npy.h — reading and writing NumPy .npy files (format versions 1.0, 2.0, 3.0; little- and
 * big-endian; C and Fortran order) as dense row-major little-endian buffers of an HLO element
 * type's storage (hlo/elemtypes.def).  Every malformed input is a status with one clear line,
 * never a crash.  Tests: tools/npy_test.c.
 */
#ifndef HLOC_TOOLS_NPY_H
#define HLOC_TOOLS_NPY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "hlo/status.h"

typedef struct npy_array {
  char kind;          /* 'b' bool, 'i' signed, 'u' unsigned, 'f' float, 'c' complex, 'V' raw */
  int itemsize;       /* bytes per element */
  int rank;
  int64_t dims[64];
  void *data;         /* row-major, little-endian; malloc'd, owned by the array */
  int64_t nbytes;
} npy_array;

/* Reads `path`; on success the caller frees out->data. */
HLO_MUST_USE hlo_status npy_read(const char *path, npy_array *out);
/* Parses an in-memory .npy image (`name` is used in messages). */
HLO_MUST_USE hlo_status npy_parse(const char *name, const unsigned char *bytes, size_t n, npy_array *out);
/* Writes a version 1.0 little-endian C-order file with dtype descr (e.g. "<f4"). */
HLO_MUST_USE hlo_status npy_write(const char *path, const char *descr, int rank, const int64_t *dims,
                                  const void *data, int64_t nbytes);
/* "f32"-style text of an array's dtype+shape for messages, e.g. "f64[2,3]" or "<u2[4]". */
void npy_describe(const npy_array *a, char *buf, size_t cap);

#endif
