/* concurrency_test.c — one loaded model.so run at once from 8 threads, each with its own
 * context and inputs, 50 calls each: every result must be exactly the formula's (thread k,
 * call c: n = 100 + 7k + c, x[j] = j + k, so y[j] = x[j] + n/2, exact in f32).  Usage:
 * concurrency_test COUNTER.so
 */
#include <pthread.h>

#include "model_util.h"

enum { THREADS = 8, CALLS = 50 };

typedef struct worker {
  hlo_generic_entry run;
  int k;
  int bad;
} worker;

static void *work(void *arg) {
  worker *w = arg;
  hlo_context_options o;
  hlo_context_options_init(&o);
  o.num_threads = 2;
  hlo_context *ctx = NULL;
  if (hlo_context_create(&o, &ctx)) {
    w->bad++;
    return NULL;
  }
  float x[COUNTER_LEN], y[COUNTER_LEN];
  for (int j = 0; j < COUNTER_LEN; j++)
    x[j] = (float)(j + w->k);
  for (int c = 0; c < CALLS; c++) {
    int64_t n = 100 + 7 * w->k + c, i = -1;
    hlo_status s = call_counter(w->run, ctx, n, x, &i, y);
    if (s || i != n)
      w->bad++;
    hlo_status_free(s);
    for (int j = 0; j < COUNTER_LEN; j++)
      if (y[j] != x[j] + (float)n * 0.5f)
        w->bad++;
  }
  hlo_context_destroy(ctx);
  return NULL;
}

int main(int argc, char **argv) {
  CHECK(argc == 2);
  hlo_generic_entry run = load_counter(argv[1]);
  pthread_t t[THREADS];
  worker w[THREADS];
  for (int k = 0; k < THREADS; k++) {
    w[k] = (worker){.run = run, .k = k};
    CHECK(pthread_create(&t[k], NULL, work, &w[k]) == 0);
  }
  int bad = 0;
  for (int k = 0; k < THREADS; k++) {
    CHECK(pthread_join(t[k], NULL) == 0);
    bad += w[k].bad;
  }
  printf("concurrency_test: %d threads x %d calls, %d wrong\n", THREADS, CALLS, bad);
  CHECK(bad == 0);
  return 0;
}
