/* unit_check.h — the runtime unit tests' checks (channels_test.c, collectives_test.c,
 * context_test.c): CHECK(cond) counts a failure and names the line; expect_ok(s) counts a
 * non-NULL status and frees it.  Each test's main returns failures != 0. */
#ifndef HLO_RUNTIME_UNIT_CHECK_H
#define HLO_RUNTIME_UNIT_CHECK_H

#include <stdio.h>

#include "hlo/status.h"

static int failures;

#define CHECK(cond)                                                            \
  do {                                                                         \
    if (!(cond)) {                                                             \
      fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, #cond); \
      failures++;                                                              \
    }                                                                          \
  } while (0)

static inline void expect_ok(hlo_status s) {
  if (s) {
    fprintf(stderr, "unexpected error: %s\n", hlo_status_message(s));
    hlo_status_free(s);
    failures++;
  }
}

#endif
