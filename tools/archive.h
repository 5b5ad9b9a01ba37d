/* archive.h — collections of arrays that one --input expands to (docs/cli.md "Inputs"): a
 * .npz file (a zip of .npy members, stored or deflated, zip64 included; tools/npz.c), a
 * .safetensors file (tools/safetensors.c), a folder of .npy files (tools/inputs.c).  A file
 * is mapped read-only once; its members are located in the mapping, nothing is copied.
 * Every malformed file is a status with one line naming the file, never a crash.
 * Tests: tests/hlorun_inputs.cmake (fixtures made by tests/hlorun_inputs.py).
 */
#ifndef HLOC_TOOLS_ARCHIVE_H
#define HLOC_TOOLS_ARCHIVE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "hlo/status.h"
#include "npy.h"

/* A whole file mapped read-only (MAP_PRIVATE, PROT_READ); bytes is NULL for an empty file. */
typedef struct mapped_file {
  const unsigned char *bytes;
  size_t size;
} mapped_file;

/* Maps `path`, a regular file (INVALID_ARGUMENT naming it otherwise). */
HLO_MUST_USE hlo_status mapped_file_open(const char *path, mapped_file *out);
void mapped_file_close(mapped_file *m);

typedef enum member_kind {
  MEMBER_NPY,          /* an uncompressed .npy image in the archive's mapping (npz, stored) */
  MEMBER_NPY_DEFLATED, /* a deflated .npy image (npz, np.savez_compressed): inflated when read */
  MEMBER_RAW,          /* raw little-endian row-major data of a known type (safetensors) */
  MEMBER_FILE,         /* a .npy file of a folder, mapped when read */
} member_kind;

typedef struct archive_member {
  char *name;                 /* owned: npz and folders without ".npy"; safetensors the tensor name */
  member_kind kind;
  const unsigned char *bytes; /* NPY: the image; DEFLATED: the compressed stream; RAW: the data */
  uint64_t size;              /* of bytes */
  uint64_t inflated_size;     /* DEFLATED: of the image */
  uint32_t crc;               /* DEFLATED: CRC-32 of the image */
  int32_t etype;              /* RAW: the HLO element type (hlo/elemtypes.def) */
  int rank;                   /* RAW */
  int64_t dims[64];           /* RAW */
  char *path;                 /* FILE: owned path of the .npy file */
} archive_member;

typedef enum archive_kind { ARCHIVE_NPZ, ARCHIVE_SAFETENSORS, ARCHIVE_DIR } archive_kind;

typedef struct archive {
  archive_kind kind;
  char *path;                 /* owned, as given */
  mapped_file map;
  archive_member *members;    /* in the order they expand to parameters */
  int n_members;
} archive;

/* Opens a .npz file: members in the order of its central directory (np.savez's arr_0,
 * arr_1, ...).  A member with another compression method, encrypted, or not named *.npy is
 * refused; deflated members need zlib (HLOC_HAVE_ZLIB). */
HLO_MUST_USE hlo_status npz_open(const char *path, archive *out);
/* Inflates a MEMBER_NPY_DEFLATED into a 64-byte-aligned buffer of m->inflated_size bytes
 * (the caller frees *out), checking its size and CRC-32. */
HLO_MUST_USE hlo_status npz_inflate(const archive *a, const archive_member *m, unsigned char **out);
/* Opens a .safetensors file: members in the order of their data_offsets. */
HLO_MUST_USE hlo_status safetensors_open(const char *path, archive *out);
void archive_close(archive *a);

#endif
