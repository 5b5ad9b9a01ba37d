/* literal_fuzz.c — libFuzzer entry point over hlorun's inline literal reader
 * (tools/literal_io.c litio_parse_input, which runs compiler/ir/literal.c through the front
 * end) and the result printer (litio_print).  The first two bytes pick the parameter's element
 * type and shape (rank <= 3, dims <= 4); the rest, up to a NUL, is the --input argument.
 * Oracle: no crash, leak or sanitizer report; what parses prints.  Build and run:
 * docs/testing.md.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hlo/abi.h"
#include "literal_io.h"

static const int32_t dtypes[] = {HLO_DTYPE_IR_PRED, HLO_DTYPE_IR_S8,   HLO_DTYPE_IR_S32, HLO_DTYPE_IR_S64,
                                 HLO_DTYPE_IR_U8,   HLO_DTYPE_IR_U64,  HLO_DTYPE_IR_F16, HLO_DTYPE_IR_BF16,
                                 HLO_DTYPE_IR_F32,  HLO_DTYPE_IR_F64,  HLO_DTYPE_IR_C64, HLO_DTYPE_IR_C128,
                                 HLO_DTYPE_IR_S4,   HLO_DTYPE_IR_U4,   HLO_DTYPE_IR_F8E4M3FN, HLO_DTYPE_IR_F8E5M2};
static const int bytes_of[] = {1, 1, 4, 8, 1, 8, 2, 2, 4, 8, 8, 16, 1, 1, 1, 1};

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size < 2)
    return 0;
  int t = data[0] & 15, rank = (data[1] >> 6) & 3;
  int64_t dims[3] = {(data[1] & 3) + 1, ((data[1] >> 2) & 3) + 1, ((data[1] >> 4) & 3) + 1};
  int64_t n = 1;
  for (int i = 0; i < rank; i++)
    n *= dims[i];
  hlo_array_desc d = {.dtype = dtypes[t], .rank = rank, .dims = dims, .byte_size = n * bytes_of[t], .name = "p"};
  char *arg = strndup((const char *)data + 2, size - 2);
  void *dst = malloc((size_t)d.byte_size);
  if (!arg || !dst)
    abort();
  hlo_status s = litio_parse_input(arg, 0, &d, dst);
  if (!s) {
    FILE *sink = fopen("/dev/null", "w");
    s = litio_print(&d, dst, sink);
    fclose(sink);
  }
  hlo_status_free(s);
  free(dst);
  free(arg);
  return 0;
}
