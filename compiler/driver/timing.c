/* timing.c — the stage timer of --time-passes: a monotonic clock in milliseconds and one row
 * per stage (printed to stderr, or kept in the caller's drv_timings).  Called by the pipeline
 * (pipeline.c) and native emission (compile.c); calls nothing of the driver.
 * Tests: tests/hloc_cli.cmake (--time-passes).
 */
#include <stdio.h>
#include <time.h>

#include "driver/driver_internal.h"

double drv_now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

void drv_time_stage(const drv_options *o, const char *stage, double t0) {
  if (!o->time_passes)
    return;
  double ms = drv_now_ms() - t0;
  drv_timings *t = o->timings;
  if (!t) {
    fprintf(stderr, "time-passes: %-26s %9.3f ms\n", stage, ms);
  } else if (t->n < DRV_MAX_TIMINGS) {
    t->rows[t->n].stage = stage;
    t->rows[t->n++].ms = ms;
  }
}
