/* status.c — heap status records (see hlo/status.h).  A static record stands in when
 * allocation itself fails, so that reporting an error can never fail. */
#include "hlo/status.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct hlo_status_rec {
  hlo_status_code code;
  int is_static;
  char *message;
};

static struct hlo_status_rec oom_status = {HLO_RESOURCE_EXHAUSTED, 1, "out of memory"};

hlo_status hlo_status_makev(hlo_status_code code, const char *fmt, va_list ap) {
  if (!fmt)
    fmt = ""; /* not a format: an empty message (GCC's sanitizer builds see a possible NULL) */
  va_list ap2;
  va_copy(ap2, ap);
  int n = vsnprintf(NULL, 0, fmt, ap2);
  va_end(ap2);
  if (n < 0)
    n = 0;
  struct hlo_status_rec *s = malloc(sizeof *s);
  char *msg = malloc((size_t)n + 1);
  if (!s || !msg) {
    free(s);
    free(msg);
    return &oom_status;
  }
  vsnprintf(msg, (size_t)n + 1, fmt, ap);
  s->code = code == HLO_OK ? HLO_INTERNAL : code;
  s->is_static = 0;
  s->message = msg;
  return s;
}

hlo_status hlo_status_make(hlo_status_code code, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  hlo_status s = hlo_status_makev(code, fmt, ap);
  va_end(ap);
  return s;
}

hlo_status hlo_status_annotate(hlo_status s, const char *fmt, ...) {
  if (!s)
    return NULL;
  char prefix[512];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(prefix, sizeof prefix, fmt, ap);
  va_end(ap);
  hlo_status out = hlo_status_make(s->code, "%s: %s", prefix, s->message);
  hlo_status_free(s);
  return out;
}

/* Exported from every model .so (which is built with hidden visibility), so that a caller
 * that loads only the model (ctypes, python/) can read and free the statuses it returns. */
#define HLO_PUBLIC __attribute__((visibility("default")))

HLO_PUBLIC hlo_status_code hlo_status_code_of(hlo_status s) { return s ? s->code : HLO_OK; }

HLO_PUBLIC const char *hlo_status_message(hlo_status s) { return s ? s->message : ""; }

HLO_PUBLIC void hlo_status_free(hlo_status s) {
  if (!s || s->is_static)
    return;
  free(s->message);
  free(s);
}
