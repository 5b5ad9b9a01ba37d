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

/* How the data of a parsed .npy image is stored. */
typedef struct npy_layout {
  size_t data_offset; /* of the data from the start of the image */
  bool fortran;       /* column-major with rank > 1: must be transposed */
  bool swap;          /* big-endian with items of more than one byte: must be byte-swapped */
} npy_layout;

/* Reads `path`; on success the caller frees out->data. */
HLO_MUST_USE hlo_status npy_read(const char *path, npy_array *out);
/* Parses an in-memory .npy image (`name` is used in messages). */
HLO_MUST_USE hlo_status npy_parse(const char *name, const unsigned char *bytes, size_t n, npy_array *out);
/* Parses the header of the image bytes[0..n) and checks that the data fits: out->data points
 * into bytes (not owned), as stored; out_layout says how it differs from row-major
 * little-endian.  Nothing is allocated. */
HLO_MUST_USE hlo_status npy_parse_header(const char *name, const unsigned char *bytes, size_t n, npy_array *out,
                                         npy_layout *out_layout);
/* Copies stored->nbytes bytes of data as npy_parse_header located it into dst, row-major and
 * little-endian. */
void npy_copy_normalized(const npy_array *stored, const npy_layout *layout, void *dst);
/* Writes a version 1.0 little-endian C-order file with dtype descr (e.g. "<f4"). */
HLO_MUST_USE hlo_status npy_write(const char *path, const char *descr, int rank, const int64_t *dims,
                                  const void *data, int64_t nbytes);
/* "f32"-style text of an array's dtype+shape for messages, e.g. "f64[2,3]" or "<u2[4]". */
void npy_describe(const npy_array *a, char *buf, size_t cap);

#endif
