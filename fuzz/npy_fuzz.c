/* npy_fuzz.c — libFuzzer entry point over the .npy reader (tools/npy.c, npy_parse): every byte
 * string is a file image.  Oracle: no crash, leak or sanitizer report; a parsed array's byte
 * count agrees with its element size times its dimensions.  Build and run: docs/testing.md.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "npy.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  npy_array a;
  hlo_status s = npy_parse("fuzz.npy", data, size, &a);
  if (s) {
    hlo_status_free(s);
    return 0;
  }
  int64_t n = a.itemsize;
  for (int i = 0; i < a.rank; i++)
    n *= a.dims[i];
  if (n != a.nbytes) {
    fprintf(stderr, "npy_parse: nbytes %lld, dims say %lld\n", (long long)a.nbytes, (long long)n);
    abort();
  }
  char buf[128];
  npy_describe(&a, buf, sizeof buf);
  free(a.data);
  return 0;
}
