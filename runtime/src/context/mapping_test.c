/* mapping_test.c — hlo_map_file (mapping.c): a region at an offset that is not page-aligned
 * holds the file's bytes there, an empty region, a region past the end and a missing file are
 * refused with their codes. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "hlo/runtime.h"
#include "unit_check.h"

int main(void) {
  char path[] = "/tmp/hloc-mapping-XXXXXX";
  int fd = mkstemp(path);
  CHECK(fd >= 0);
  enum { N = 5000 };
  float *v = malloc(N * sizeof *v);
  for (int i = 0; i < N; i++)
    v[i] = (float)i * 0.5f;
  CHECK(write(fd, v, N * sizeof *v) == (ssize_t)(N * sizeof *v));
  close(fd);

  hlo_mapping *m = NULL;
  expect_ok(hlo_map_file(path, 4 * 1100, 4 * 2000, &m)); /* 4400: not a page boundary */
  const float *got = hlo_mapping_data(m);
  CHECK(got != NULL && ((uintptr_t)got & 3) == 0);
  CHECK(got && got[0] == 550.0f && got[1999] == (float)3099 * 0.5f);
  hlo_unmap(m);

  expect_ok(hlo_map_file(path, 8, 0, &m));
  CHECK(m && hlo_mapping_data(m) != NULL);
  hlo_unmap(m);

  hlo_status s = hlo_map_file(path, 4 * (N - 10), 4 * 11, &m);
  CHECK(s && hlo_status_code_of(s) == HLO_OUT_OF_RANGE && m == NULL);
  hlo_status_free(s);
  s = hlo_map_file("/no/such/weights.bin", 0, 4, &m);
  CHECK(s && hlo_status_code_of(s) == HLO_NOT_FOUND && strstr(hlo_status_message(s), "cannot open"));
  hlo_status_free(s);
  hlo_unmap(NULL);

  unlink(path);
  free(v);
  printf("%s\n", failures ? "FAILED" : "1 passed, 0 failed");
  return failures != 0;
}
