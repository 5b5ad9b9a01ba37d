/* hlo/status.h — the status type every fallible function of hloc and libhlort returns.
 *
 * NULL means success.  Anything else is a heap record owned by whoever receives it: read it
 * with hlo_status_code()/hlo_status_message(), then release it with hlo_status_free().
 * Thread-safe: a status is an independent value.  Depends on the C library only.
 */
#ifndef HLO_STATUS_H
#define HLO_STATUS_H

#include <stdarg.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef enum hlo_status_code {
  HLO_OK = 0,
  HLO_INVALID_ARGUMENT = 1,   /* bad input from the user: text, .npy, flags */
  HLO_NOT_FOUND = 2,          /* missing file, symbol, custom-call target */
  HLO_UNIMPLEMENTED = 3,      /* a construct this build cannot run (names it) */
  HLO_RESOURCE_EXHAUSTED = 4, /* out of memory, queue full */
  HLO_FAILED_PRECONDITION = 5,/* infeed empty, channel misuse */
  HLO_OUT_OF_RANGE = 6,
  HLO_INTERNAL = 7,           /* a broken invariant inside hloc (a bug) */
  HLO_IO = 8,                 /* read/write failure */
  HLO_CANCELLED = 9,          /* hlo_context_cancel stopped the call (or hlorun --timeout) */
} hlo_status_code;

typedef struct hlo_status_rec *hlo_status;

#if defined(__GNUC__)
#define HLO_MUST_USE __attribute__((warn_unused_result))
#define HLO_PRINTF(f, a) __attribute__((format(printf, f, a)))
#else
#define HLO_MUST_USE
#define HLO_PRINTF(f, a)
#endif

/* Makes a status with a printf-formatted message.  Never returns NULL for a non-OK code:
 * when memory is short it returns a static "out of memory" record (freeing it is a no-op). */
HLO_MUST_USE hlo_status hlo_status_make(hlo_status_code code, const char *fmt, ...) HLO_PRINTF(2, 3);
HLO_MUST_USE hlo_status hlo_status_makev(hlo_status_code code, const char *fmt, va_list ap);

/* Prepends "context: " to the message of `s` (which it consumes); returns the result. */
HLO_MUST_USE hlo_status hlo_status_annotate(hlo_status s, const char *fmt, ...) HLO_PRINTF(2, 3);

hlo_status_code hlo_status_code_of(hlo_status s);
/* The message; "" for NULL.  Valid until hlo_status_free(s). */
const char *hlo_status_message(hlo_status s);
void hlo_status_free(hlo_status s);

#define HLO_RETURN_IF_ERROR(expr)        \
  do {                                   \
    hlo_status hlo_status_tmp_ = (expr); \
    if (hlo_status_tmp_)                 \
      return hlo_status_tmp_;            \
  } while (0)

#ifdef __cplusplus
}
#endif
#endif /* HLO_STATUS_H */
