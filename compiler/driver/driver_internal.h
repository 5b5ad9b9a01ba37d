/* driver_internal.h — what the driver's files share and nothing else sees: stage timing
 * for --time-passes (pipeline.c owns the table) and the C header writer (header.c).
 */
#ifndef HLOC_DRIVER_INTERNAL_H
#define HLOC_DRIVER_INTERNAL_H

#include "driver/driver.h"

#define DRV_MAX_TIMINGS 32

/* One row per stage, in the order the stages ran; stage names are static strings. */
typedef struct drv_timings {
  int n;
  struct { const char *stage; double ms; } rows[DRV_MAX_TIMINGS];
} drv_timings;

/* Monotonic clock in milliseconds. */
double drv_now_ms(void);

/* Records that `stage` ran from t0 until now, when o->time_passes: into o->timings, or
 * printed to stderr at once when o->timings is NULL. */
void drv_time_stage(const drv_options *o, const char *stage, double t0);

/* Writes the C header of m's typed entry point to `path` ("-": standard output). */
HLO_MUST_USE hlo_status drv_write_header(const ir_module *m, const drv_options *o, const char *path);

#endif
